"""The closed/visited set: an open-addressing hash table over packed keys.

States get dense integer ids in insertion order; per-state data (parent,
action, g) lives in flat arrays indexed by id, owned by the engine.  Keys
are rows of ``W`` uint64 words (see encodings.packing), hashed and compared
in compiled code, never as Python objects.
"""

from __future__ import annotations

import time

import numpy as np

from ..encodings.hashset import insert_rows, lookup_rows, rehash

_EMPTY = -1
ID32 = 1 << 30   # tables up to this capacity keep ids (slots, parents) in int32


def id_dtype(capacity: int) -> type:
    """int32 ids while the table holds at most ``ID32`` states: half the bytes of the slot and
    parent arrays, which are most of a search's memory beside the keys themselves."""
    return np.int32 if capacity <= ID32 else np.int64


def action_dtype(n_actions: int) -> type:
    """The narrowest signed type for action ids (and -1 for none)."""
    return np.int16 if n_actions < 1 << 15 else np.int32


_LOADED = False   # the table's compiled functions are loaded in this process


def load_compiled() -> float:
    """Seconds spent loading the table's compiled functions (from numba's cache) into this process;
    0.0 once they are loaded.

    The first call of any compiled function in a process pays for numba's start (about 0.2 s);
    callers that give a search a small time budget (the symbolic engines' quick bfs hint) load
    them before the budget starts, so that it is spent on the search itself."""
    global _LOADED
    if _LOADED:
        return 0.0
    _LOADED = True
    t0 = time.perf_counter()
    table = StateTable(1, 16)
    table.insert(np.zeros((1, 1), dtype=np.uint64))
    table.lookup(np.zeros((1, 1), dtype=np.uint64))
    table.reserve(table.keys.shape[0] + 1)    # rehash
    return time.perf_counter() - t0


def capacity_for(n: int, cap: int = 16) -> int:
    """The power-of-two capacity a table that doubles from ``cap`` has once it holds ``n`` rows."""
    while cap < n:
        cap *= 2
    return cap


class StateTable:
    """Packed keys with dense ids; grows by doubling, load factor <= 1/2."""

    def __init__(self, n_words: int, capacity: int = 1 << 12):
        cap = 1 << max(4, int(capacity - 1).bit_length())
        self.n_words = n_words
        self.keys = np.zeros((cap, n_words), dtype=np.uint64)
        self.slots = np.full(2 * cap, _EMPTY, dtype=id_dtype(cap))
        self.size = 0

    def reserve(self, extra: int) -> None:
        need = self.size + extra
        if need <= self.keys.shape[0]:
            return
        cap = capacity_for(need, self.keys.shape[0])
        keys = np.zeros((cap, self.n_words), dtype=np.uint64)
        keys[: self.size] = self.keys[: self.size]
        self.keys = keys
        del self.slots   # free the old slots before the new ones exist: one less array at the peak
        self.slots = np.full(2 * cap, _EMPTY, dtype=id_dtype(cap))
        rehash(self.slots, self.keys, self.size)

    def insert(self, K: np.ndarray, tight: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(ids, new) for each key row; duplicates inside K get one id, the first marked new.

        By default room for every row is made first (one doubling at most, while the load is
        still low).  ``tight``: the table doubles only when a key it lacks finds every row
        taken, so it grows for the batch's distinct new keys alone -- what astar and ucs count
        (``new_count``) when the whole batch would not fit the memory budget, so that the
        insertion allocates no more than they estimated."""
        n = K.shape[0]
        ids = np.empty(n, dtype=np.int64)
        new = np.empty(n, dtype=np.bool_)
        K = np.ascontiguousarray(K)
        if not tight:
            self.reserve(n)
        done = 0
        while done < n:
            self.size, step = insert_rows(self.slots, self.keys, self.size, K[done:], ids[done:],
                                          new[done:])
            done += step
            if done < n:
                self.reserve(1)
        return ids, new

    def lookup(self, K: np.ndarray) -> np.ndarray:
        ids = np.empty(K.shape[0], dtype=np.int64)
        if K.shape[0]:
            lookup_rows(self.slots, self.keys, np.ascontiguousarray(K), ids)
        return ids

    def new_count(self, K: np.ndarray) -> int:
        """How many distinct rows of ``K`` the table does not hold yet: engines ask before an
        insertion that could pass ``--max-states`` or the memory limit, so neither is passed."""
        miss = K[self.lookup(K) < 0]
        return int(np.unique(miss, axis=0).shape[0]) if miss.shape[0] > 1 else int(miss.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.keys.nbytes + self.slots.nbytes)

    def bytes_at(self, n: int) -> int:
        """Bytes of keys and slots once the table has grown to hold ``n`` states."""
        cap = capacity_for(n, self.keys.shape[0])
        return cap * (8 * self.n_words + 2 * np.dtype(id_dtype(cap)).itemsize)


def growth_peak(table: StateTable, per_state: tuple[Growable, ...], need: int) -> int:
    """Bytes at the peak of growing ``table`` and its per-state arrays to hold ``need`` states; 0
    when nothing grows (what is allocated already was let through before).  The grown arrays,
    the old keys while the table copies them (its old slots are freed first), and the largest
    old per-state array (they grow one at a time): what an engine asks before it inserts, so a
    doubling never passes the memory budget."""
    grows = need > table.keys.shape[0]
    if not grows and all(need <= a.a.shape[0] for a in per_state):
        return 0
    tab = table.bytes_at(need) + table.keys.nbytes if grows else table.nbytes
    after = sum(a.bytes_at(need) for a in per_state)
    copying = max((a.a.nbytes for a in per_state if need > a.a.shape[0]), default=0)
    return tab + after + copying


def grow(a: np.ndarray, need: int, keep: int, fill: int | None = None) -> np.ndarray:
    """``a`` itself if it has ``need`` rows, else a copy with capacity doubled until it does.

    The first ``keep`` rows are carried over; new rows hold ``fill`` (or garbage when None).
    """
    if need <= a.shape[0]:
        return a
    shape = (capacity_for(need, max(a.shape[0], 1)), *a.shape[1:])
    b = np.empty(shape, dtype=a.dtype) if fill is None else np.full(shape, fill, dtype=a.dtype)
    b[:keep] = a[:keep]
    return b


class Growable:
    """A 1-D array indexed by state id that grows with the table.

    With ``ids=True`` it holds state ids: int32 while the table is small enough
    (``id_dtype``), widened to int64 in place of overflowing."""

    def __init__(self, dtype: type, fill: int = 0, capacity: int = 1 << 12, ids: bool = False):
        self.ids = ids
        self.a = np.full(capacity, fill, dtype=id_dtype(capacity) if ids else dtype)
        self.fill = fill

    def ensure(self, n: int) -> None:
        if self.ids and self.a.dtype != id_dtype(n):
            self.a = self.a.astype(id_dtype(n))
        self.a = grow(self.a, n, self.a.shape[0], self.fill)

    def bytes_at(self, n: int) -> int:
        """Bytes once grown to hold ``n`` entries."""
        cap = capacity_for(n, self.a.shape[0])
        return cap * np.dtype(id_dtype(n) if self.ids else self.a.dtype).itemsize
