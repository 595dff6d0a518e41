"""Tiny compiled helpers the generated kernels call (inlined by numba)."""

from __future__ import annotations

import numba as nb


@nb.njit(cache=True)
def _tab(T, off, size, i, d):  # pragma: no cover - compiled
    """Total lookup in the table at ``T[off:off+size]``: ``d`` outside (the language's semantics)."""
    if 0 <= i < size:
        return T[off + i]
    return d


@nb.njit(cache=True)
def _emit(S, i, OUT, PAR, ACT, m, k):  # pragma: no cover - compiled
    """Start successor row m as a copy of state i, produced by action k."""
    for j in range(S.shape[1]):
        OUT[m, j] = S[i, j]
    PAR[m] = i
    ACT[m] = k


@nb.njit(cache=True)
def _first_outside(OUT, m, LO, HI):  # pragma: no cover - compiled
    """First successor row with a value outside its variable's domain, or -1."""
    for r in range(m):
        for j in range(OUT.shape[1]):
            if OUT[r, j] < LO[j] or OUT[r, j] > HI[j]:
                return r
    return -1


@nb.njit(cache=True)
def _bit(bits, size, i, d):  # pragma: no cover - compiled
    """Element lookup in a bit-parallel view: bit i of ``bits``, ``d`` outside 0..size-1."""
    if 0 <= i < size:
        return (bits >> i) & 1
    return d
