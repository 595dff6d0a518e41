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
def _copy_row(S, i, OUT, m):  # pragma: no cover - compiled
    for j in range(S.shape[1]):
        OUT[m, j] = S[i, j]
