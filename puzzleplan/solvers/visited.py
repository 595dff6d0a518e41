"""The closed/visited set: an open-addressing hash table over packed keys.

States get dense integer ids in insertion order; per-state data (parent,
action, g) lives in flat arrays indexed by id, owned by the engine.  Keys
are rows of ``W`` uint64 words (see encodings.packing), hashed and compared
in compiled code, never as Python objects.
"""

from __future__ import annotations

import numpy as np

from ..encodings.hashset import insert_rows, lookup_rows, rehash

_EMPTY = -1


class StateTable:
    """Packed keys with dense ids; grows by doubling, load factor <= 1/2."""

    def __init__(self, n_words: int, capacity: int = 1 << 12):
        cap = 1 << max(4, int(capacity - 1).bit_length())
        self.n_words = n_words
        self.keys = np.zeros((cap, n_words), dtype=np.uint64)
        self.slots = np.full(2 * cap, _EMPTY, dtype=np.int64)
        self.size = 0

    def reserve(self, extra: int) -> None:
        need = self.size + extra
        if need <= self.keys.shape[0]:
            return
        cap = self.keys.shape[0]
        while cap < need:
            cap *= 2
        keys = np.zeros((cap, self.n_words), dtype=np.uint64)
        keys[: self.size] = self.keys[: self.size]
        self.keys = keys
        self.slots = np.full(2 * cap, _EMPTY, dtype=np.int64)
        rehash(self.slots, self.keys, self.size)

    def insert(self, K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ids, new) for each key row; duplicates inside K get one id, the first marked new."""
        n = K.shape[0]
        self.reserve(n)
        ids = np.empty(n, dtype=np.int64)
        new = np.empty(n, dtype=np.bool_)
        if n:
            self.size = insert_rows(self.slots, self.keys, self.size, np.ascontiguousarray(K), ids, new)
        return ids, new

    def lookup(self, K: np.ndarray) -> np.ndarray:
        ids = np.empty(K.shape[0], dtype=np.int64)
        if K.shape[0]:
            lookup_rows(self.slots, self.keys, np.ascontiguousarray(K), ids)
        return ids

    @property
    def nbytes(self) -> int:
        return int(self.keys.nbytes + self.slots.nbytes)


def grow(a: np.ndarray, need: int, keep: int, fill: int | None = None) -> np.ndarray:
    """``a`` itself if it has ``need`` rows, else a copy with capacity doubled until it does.

    The first ``keep`` rows are carried over; new rows hold ``fill`` (or garbage when None).
    """
    if need <= a.shape[0]:
        return a
    cap = max(a.shape[0], 1)
    while cap < need:
        cap *= 2
    shape = (cap, *a.shape[1:])
    b = np.empty(shape, dtype=a.dtype) if fill is None else np.full(shape, fill, dtype=a.dtype)
    b[:keep] = a[:keep]
    return b


class Growable:
    """A 1-D array indexed by state id that grows with the table."""

    def __init__(self, dtype: type, fill: int = 0, capacity: int = 1 << 12):
        self.a = np.full(capacity, fill, dtype=dtype)
        self.fill = fill

    def ensure(self, n: int) -> None:
        self.a = grow(self.a, n, self.a.shape[0], self.fill)
