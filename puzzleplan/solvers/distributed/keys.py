"""Packed keys as one well-mixed 64-bit number: who owns a state, and the sort order of spilled runs.

Why a mixed hash and not the key itself: packed keys put the first variables in the low bits, and
``key % N`` would then split the space by a few variables' values (e.g. the position of a
single moving blank), which loads the shards unevenly.  splitmix64 (Steele, Lea, Flood 2014)
spreads every input bit over the whole word with three multiply-xorshift steps.

The per-row work of a round (owners, first occurrences, the split into buckets) is compiled with
``nogil``: shards running as threads (``executor=threads``) then do it at the same time, where the
numpy versions (a dozen array passes per hash, a sort of row views per deduplication) held the
interpreter lock between passes; the per-row helpers are inlined into the loops (see hashset.py).
``splitmix64`` stays in numpy as the readable reference; the tests compare both.
"""

from __future__ import annotations

import threading

import numba as nb
import numpy as np

from ...encodings.hashset import probe
from ..visited import StateTable

_NO_SLOTS = np.zeros(0, dtype=np.int32)
_NO_KEYS = np.zeros((0, 1), dtype=np.uint64)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser of each uint64 (wrapping arithmetic, as in the reference C code)."""
    z = np.asarray(x, dtype=np.uint64) + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def key_hash(K: np.ndarray) -> np.ndarray:
    """One uint64 per key row ``(n, W)``: splitmix64 chained over the words."""
    K = np.asarray(K, dtype=np.uint64)
    if K.ndim != 2:
        raise ValueError("keys must be a 2-D array (rows of words)")
    h = splitmix64(K[:, 0]) if K.shape[1] else np.zeros(K.shape[0], dtype=np.uint64)
    for j in range(1, K.shape[1]):
        h = splitmix64(h ^ K[:, j])
    return h


@nb.njit(cache=True, nogil=True, inline="always")
def _mix(z):  # pragma: no cover - compiled
    """``splitmix64`` of one word (its module constants are compile-time constants here)."""
    z = z + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@nb.njit(cache=True, nogil=True, inline="always")
def _row_hash(K, r):  # pragma: no cover - compiled
    """``key_hash`` of row r (the same chain of splitmix64 over the words)."""
    h = _mix(K[r, 0])
    for j in range(1, K.shape[1]):
        h = _mix(h ^ K[r, j])
    return h


@nb.njit(cache=True, nogil=True, inline="always")
def _shard_of(h, n):  # pragma: no cover - compiled
    """``(h >> 32) * n >> 32``: the hash's high half scaled to ``n`` shards (multiply-shift range
    reduction, Lemire 2019).  Not ``h % n``: a 64-bit division per successor was half the cost of
    routing a round (1.1 of 2 ms per 8-puzzle enumeration, paid by every worker)."""
    return np.int64(((h >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@nb.njit(cache=True, nogil=True)
def _owners(K, n, out):  # pragma: no cover - compiled
    for r in range(K.shape[0]):
        out[r] = _shard_of(_row_hash(K, r), n)


def owner(K: np.ndarray, n_shards: int) -> np.ndarray:
    """The shard (0..n_shards-1) that owns each key row: ``(key_hash(K) >> 32) * n_shards >> 32``
    (the high half of the hash scaled to the shard count; at most 2**32 shards)."""
    out = np.zeros(K.shape[0], dtype=np.int64)
    if n_shards > 1 and K.shape[0] and K.shape[1]:
        _owners(np.ascontiguousarray(K, dtype=np.uint64), n_shards, out)
    return out


@nb.njit(cache=True, nogil=True)
def _first(K, slots, out, T_slots, T_keys):  # pragma: no cover - compiled
    """The first row of each distinct key, by a scratch hash table of row indices (hashset.py's
    layout, over K itself); rows whose key the state table (``T_slots``, ``T_keys``; empty:
    none) holds are skipped.  The scratch table is all -1 on entry and is left so, for the next
    call: its entries are cleared newest first, so each is found along its probe sequence as the
    table stood when it went in (clearing an older one first could cut a newer one's chain)."""
    count = 0
    for r in range(K.shape[0]):
        if T_slots.shape[0] and T_slots[probe(T_slots, T_keys, K, r)] != -1:
            continue
        s = probe(slots, K, K, r)      # the scratch table's ids are rows of K itself
        if slots[s] == -1:
            slots[s] = r
            out[count] = r
            count += 1
    for i in range(count - 1, -1, -1):
        slots[probe(slots, K, K, out[i])] = -1
    return count


_SCRATCH = threading.local()


def _scratch(size: int) -> np.ndarray:
    """This thread's scratch table of ``size`` slots, all -1.  Kept between calls: a fresh one per
    call (``np.full``) cost its allocation, fill and page faults on every round, and shards running
    as threads each took those at once (docs/distributed.md, "Measured")."""
    have = getattr(_SCRATCH, "slots", None)
    if have is None or have.shape[0] < size:
        have = _SCRATCH.slots = np.full(size, -1, dtype=np.int64)
    return have[:size]


def release() -> None:
    """Drop this thread's scratch table (the end of a search: it can hold tens of MB)."""
    _SCRATCH.slots = None


def first_rows(K: np.ndarray, table: StateTable | None = None) -> np.ndarray:
    """Indices (ascending) of the first occurrence of each distinct row of ``K`` -- among the rows
    whose key ``table`` does not hold, when one is given (one pass: the table's lookup and the
    removal of repeats at once)."""
    n = K.shape[0]
    if table is not None and (table.size == 0 or not n):
        table = None
    if not K.shape[1]:       # keys without words are all the same key
        return np.arange(min(n, 0 if table is not None else 1), dtype=np.int64)
    if n <= 1 and table is None:
        return np.arange(n, dtype=np.int64)
    slots = _scratch(1 << int(2 * n - 1).bit_length())    # load at most a half
    out = np.empty(n, dtype=np.int64)
    T_slots, T_keys = (table.slots, table.keys) if table is not None else (_NO_SLOTS, _NO_KEYS)
    return out[: _first(np.ascontiguousarray(K, dtype=np.uint64), slots, out, T_slots, T_keys)]


@nb.njit(cache=True, nogil=True)
def _route(K, Kw, par, act, step, n, OK, OP, OA, OS, bounds):  # pragma: no cover - compiled
    m = 2 * n
    code = np.empty(K.shape[0], dtype=np.int64)
    for r in range(K.shape[0]):
        c = 2 * _shard_of(_row_hash(K, r), n) if n > 1 else 0
        code[r] = c + (1 if step[r] != 0 else 0)
        bounds[code[r] + 1] += 1
    for c in range(m):
        bounds[c + 1] += bounds[c]
    at = bounds[:m].copy()
    W = K.shape[1]
    for r in range(K.shape[0]):
        i = at[code[r]]
        at[code[r]] += 1
        for w in range(W):
            OK[i, w] = K[r, w]
            OP[i, w] = Kw[par[r], w]
        OA[i] = act[r]
        OS[i] = step[r]


def route(K: np.ndarray, Kw: np.ndarray, par: np.ndarray, act: np.ndarray, step: np.ndarray,
          n_shards: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Successors grouped for the exchange: by owner, zero-cost ones first within an owner, in
    their order otherwise (a stable sort on ``2 * owner + (step != 0)``).  Returns the keys, the
    parents' keys (``Kw[par]``), the actions (int32), the steps, and the groups' bounds
    (``bounds[c]:bounds[c + 1]`` for code c)."""
    n = K.shape[0]
    W = K.shape[1]
    OK = np.empty((n, W), dtype=np.uint64)
    OP = np.empty((n, W), dtype=np.uint64)
    OA = np.empty(n, dtype=np.int32)
    OS = np.empty(n, dtype=np.int64)
    bounds = np.zeros(2 * n_shards + 1, dtype=np.int64)
    _route(np.ascontiguousarray(K, dtype=np.uint64), np.ascontiguousarray(Kw, dtype=np.uint64),
           np.ascontiguousarray(par, dtype=np.int64), np.ascontiguousarray(act, dtype=np.int64),
           np.ascontiguousarray(step, dtype=np.int64), n_shards, OK, OP, OA, OS, bounds)
    return OK, OP, OA, OS, bounds


def warm() -> None:
    """Load the compiled helpers from numba's cache now (tens of ms each), not inside a timed layer."""
    K = np.arange(6, dtype=np.uint64).reshape(3, 2)
    owner(K, 2)
    first_rows(K)
    t = StateTable(2, 16)
    t.insert(K[:1])
    first_rows(K, t)
    z = np.zeros(3, dtype=np.int64)
    route(K, K, z, z, z, 2)
