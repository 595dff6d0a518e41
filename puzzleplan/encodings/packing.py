"""Compact packed keys for states: each variable in ``bit_length(hi - lo)`` bits.

Duplicate detection hashes and compares these words instead of rows of
int64: a Hua Rong Dao state (10 pieces on 20 cells) is one 64-bit word, a
15-puzzle state too, a 24-puzzle state three (variables never straddle words).  The layout is a pure function
of the domains, so keys from different kernels of one task agree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from ..ir.task import Task


@dataclass(frozen=True)
class Layout:
    lo: np.ndarray        # (V,) int64
    word: np.ndarray      # (V,) int64: which uint64 word holds the variable
    shift: np.ndarray     # (V,) uint64: bit offset inside the word
    mask: np.ndarray      # (V,) uint64: (1 << width) - 1
    n_words: int
    config_mask: np.ndarray  # (W,) uint64: bits of non-aux variables

    @property
    def bits(self) -> int:
        return int(sum(int(m).bit_length() for m in self.mask))


def layout_for(task: Task) -> Layout:
    lo, word, shift, mask = [], [], [], []
    w, s = 0, 0
    cfg: list[int] = [0]
    for v in task.variables:
        width = max(1, (v.hi - v.lo).bit_length())
        if width > 64:
            raise ValueError(f"variable {v.name}: domain too large to pack")
        if s + width > 64:
            w, s = w + 1, 0
            cfg.append(0)
        lo.append(v.lo)
        word.append(w)
        shift.append(s)
        mask.append((1 << width) - 1)
        if not v.aux:
            cfg[w] |= ((1 << width) - 1) << s
        s += width
    return Layout(
        lo=np.array(lo, dtype=np.int64),
        word=np.array(word, dtype=np.int64),
        shift=np.array(shift, dtype=np.uint64),
        mask=np.array(mask, dtype=np.uint64),
        n_words=w + 1,
        config_mask=np.array(cfg, dtype=np.uint64),
    )


def pack_np(S: np.ndarray, lay: Layout) -> np.ndarray:
    """Plain numpy packing (used by the numpy backend and to test the compiled one)."""
    S = np.asarray(S, dtype=np.int64)
    K = np.zeros((S.shape[0], lay.n_words), dtype=np.uint64)
    vals = (S - lay.lo).astype(np.uint64) << lay.shift
    for j in range(S.shape[1]):
        K[:, lay.word[j]] |= vals[:, j]
    return K


def unpack_np(K: np.ndarray, lay: Layout) -> np.ndarray:
    cols = (K[:, lay.word] >> lay.shift) & lay.mask
    return cols.astype(np.int64) + lay.lo


@nb.njit(cache=True, nogil=True)
def pack_nb(S, lo, word, shift, n_words, K) -> None:  # pragma: no cover - compiled
    for i in range(S.shape[0]):
        for w in range(n_words):
            K[i, w] = np.uint64(0)
        for j in range(S.shape[1]):
            K[i, word[j]] |= np.uint64(S[i, j] - lo[j]) << shift[j]


@nb.njit(cache=True, nogil=True)
def unpack_nb(K, lo, word, shift, mask, S) -> None:  # pragma: no cover - compiled
    for i in range(K.shape[0]):
        for j in range(S.shape[1]):
            S[i, j] = np.int64((K[i, word[j]] >> shift[j]) & mask[j]) + lo[j]


@nb.njit(cache=True, nogil=True, inline="always")
def object_key(row, obj_vars, o, arity, lo, span) -> int:  # pragma: no cover - compiled
    """Object ``o``'s value tuple in state ``row`` as one mixed-radix number: the order in which
    canonicalisation sorts a group's objects (this and ``interp.canon_pack``).  Inlined into its
    callers: a call per object made ``canonicalise_nb`` about 1.5x slower."""
    k = np.int64(0)
    for t in range(arity):
        v = obj_vars[o, t]
        k = k * span[v] + (row[v] - lo[v])
    return k


@nb.njit(cache=True, nogil=True)
def canonicalise_nb(S, obj_vars, grp_start, arity, lo, span) -> None:  # pragma: no cover - compiled
    """Sort each group's objects by their value tuples (insertion sort: groups are small)."""
    n_groups = grp_start.shape[0] - 1
    keys = np.empty(obj_vars.shape[0], dtype=np.int64)
    vals = np.empty(obj_vars.shape, dtype=np.int64)
    tmpv = np.empty(obj_vars.shape[1], dtype=np.int64)
    for i in range(S.shape[0]):
        row = S[i]
        for g in range(n_groups):
            a, b = grp_start[g], grp_start[g + 1]
            ar = arity[g]
            for o in range(a, b):
                keys[o] = object_key(row, obj_vars, o, ar, lo, span)
                for t in range(ar):
                    vals[o, t] = S[i, obj_vars[o, t]]
            # insertion sort of objects a..b by key, moving value tuples along
            for o in range(a + 1, b):
                k = keys[o]
                p = o - 1
                while p >= a and keys[p] > k:
                    p -= 1
                if p + 1 != o:
                    for t in range(ar):
                        tmpv[t] = vals[o, t]
                    for q in range(o, p + 1, -1):
                        keys[q] = keys[q - 1]
                        for t in range(ar):
                            vals[q, t] = vals[q - 1, t]
                    keys[p + 1] = k
                    for t in range(ar):
                        vals[p + 1, t] = tmpv[t]
            for o in range(a, b):
                for t in range(ar):
                    S[i, obj_vars[o, t]] = vals[o, t]


def group_arrays(task: Task) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Flat arrays describing the symmetry groups for ``canonicalise_nb``."""
    objs: list[tuple[int, ...]] = []
    start = [0]
    arity = []
    for g in task.groups:
        objs.extend(g)
        start.append(len(objs))
        arity.append(len(g[0]))
    width = max(arity) if arity else 1
    obj_vars = np.zeros((max(len(objs), 1), width), dtype=np.int64)
    for i, o in enumerate(objs):
        obj_vars[i, : len(o)] = o
    lo = np.array([v.lo for v in task.variables], dtype=np.int64)
    span = np.array([v.hi - v.lo + 1 for v in task.variables], dtype=np.int64)
    return obj_vars, np.array(start, dtype=np.int64), np.array(arity or [1], dtype=np.int64), lo, span
