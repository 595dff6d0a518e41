"""Tiny compiled helpers the generated kernels call (inlined by numba)."""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def _tab(T, off, size, i, d):  # pragma: no cover - compiled
    """Total lookup in the table at ``T[off:off+size]``: ``d`` outside (the language's semantics)."""
    if 0 <= i < size:
        return T[off + i]
    return d


@nb.njit(cache=True, nogil=True)
def _tab8(T, off, size, i, d):  # pragma: no cover - compiled
    """Total lookup in a table of bytes packed 8 to a word from ``T[off]`` (little-endian):
    how a large table of small values (a pattern database) lives in the int64 ``TABS``."""
    if 0 <= i < size:
        return (T[off + (i >> 3)] >> ((i & 7) << 3)) & 255
    return d


@nb.njit(cache=True, nogil=True)
def _emit(S, i, OUT, PAR, ACT, m, k):  # pragma: no cover - compiled
    """Start successor row m as a copy of state i, produced by action k."""
    for j in range(S.shape[1]):
        OUT[m, j] = S[i, j]
    PAR[m] = i
    ACT[m] = k


@nb.njit(cache=True, nogil=True)
def _first_outside(OUT, m, LO, HI):  # pragma: no cover - compiled
    """First successor row with a value outside its variable's domain, or -1."""
    for r in range(m):
        for j in range(OUT.shape[1]):
            if OUT[r, j] < LO[j] or OUT[r, j] > HI[j]:
                return r
    return -1


@nb.njit(cache=True, nogil=True)
def _bit(bits, size, i, d):  # pragma: no cover - compiled
    """Element lookup in a bit-parallel view: bit i of ``bits``, ``d`` outside 0..size-1."""
    if 0 <= i < size:
        return (bits >> i) & 1
    return d


@nb.njit(cache=True, nogil=True)
def _assign(C, n):  # pragma: no cover - compiled
    """Cheapest assignment of n rows to distinct columns, costs ``C[i*n + j]`` (Hungarian, O(n^3)).

    The compiled twin of ``lang.expr.min_assignment``; tests compare both with brute force.
    """
    big = np.int64(1) << 60
    u = np.zeros(n + 1, dtype=np.int64)
    v = np.zeros(n + 1, dtype=np.int64)
    match = np.zeros(n + 1, dtype=np.int64)
    way = np.zeros(n + 1, dtype=np.int64)
    minv = np.empty(n + 1, dtype=np.int64)
    used = np.empty(n + 1, dtype=np.bool_)
    for i in range(1, n + 1):
        match[0] = i
        j0 = 0
        for j in range(n + 1):
            minv[j] = big
            used[j] = False
        while True:
            used[j0] = True
            i0 = match[j0]
            delta = big
            j1 = 0
            for j in range(1, n + 1):
                if not used[j]:
                    cur = C[(i0 - 1) * n + j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j] = cur
                        way[j] = j0
                    if minv[j] < delta:
                        delta = minv[j]
                        j1 = j
            for j in range(n + 1):
                if used[j]:
                    u[match[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if match[j0] == 0:
                break
        while j0 != 0:
            j1 = way[j0]
            match[j0] = match[j1]
            j0 = j1
    total = np.int64(0)
    for j in range(1, n + 1):
        total += C[(match[j] - 1) * n + j - 1]
    return total


@nb.njit(cache=True, nogil=True)
def assign_rows(M, n) -> np.ndarray:  # pragma: no cover - compiled
    """``_assign`` for every row of M (one flattened n x n cost matrix per row)."""
    out = np.empty(M.shape[0], dtype=np.int64)
    for r in range(M.shape[0]):
        out[r] = _assign(M[r], n)
    return out
