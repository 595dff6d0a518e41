"""Packed keys as one well-mixed 64-bit number: who owns a state, and the sort order of spilled runs.

Why a mixed hash and not the key itself: packed keys put the first variables in the low bits, and
``key % N`` would then split the space by a few variables' values (e.g. the position of a
single moving blank), which loads the shards unevenly.  splitmix64 (Steele, Lea, Flood 2014)
spreads every input bit over the whole word with three multiply-xorshift steps.

The per-row work of a round (owners, first occurrences, the split into buckets) is compiled with
``nogil``: shards running as threads (``executor=threads``) then do it at the same time, where the
numpy versions (a dozen array passes per hash, a sort of row views per deduplication) held the
interpreter lock between passes; the per-row helpers are inlined into the loops (see hashset.py).
``splitmix64`` stays in numpy as the readable reference; its compiled form (``owner_hash``,
``shard_of``) is in encodings/hashset.py, where the kernels' drivers route successors too; the
tests compare both.
"""

from __future__ import annotations

import threading

import numba as nb
import numpy as np

from ...encodings.hashset import hash_row, owner_hash, probe, shard_of
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


@nb.njit(cache=True, nogil=True)
def _owners(K, n, out):  # pragma: no cover - compiled
    for r in range(K.shape[0]):
        out[r] = shard_of(owner_hash(K, r), n)


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


@nb.njit(cache=True, nogil=True)
def _taken(K, P, A, SK, used, pos, n_pos, OK, OP, OA, at, T_slots, T_keys):  # pragma: no cover - compiled
    """The rows of K whose key is neither in the state table nor in the scratch set, each added to
    the set as it is met and copied with its parent's key and action to ``OK``, ``OP``, ``OA``
    from row ``at`` on; the slots taken are listed in ``pos[n_pos:]``.  The set holds the keys
    in its slots (``SK``, ``used``), not row indices, so that several arrays share it.  Returns
    (rows kept, slots taken so far)."""
    W = K.shape[1]
    mask = np.uint64(used.shape[0] - 1)
    count = 0
    for r in range(K.shape[0]):
        if T_slots.shape[0] and T_slots[probe(T_slots, T_keys, K, r)] != -1:
            continue
        s = hash_row(K, r, W) & mask
        seen = False
        while used[s] and not seen:
            seen = True
            for w in range(W):
                if SK[s, w] != K[r, w]:
                    seen = False
                    s = (s + np.uint64(1)) & mask
                    break
        if seen:
            continue
        used[s] = 1
        for w in range(W):
            SK[s, w] = K[r, w]
            OK[at + count, w] = K[r, w]
            OP[at + count, w] = P[r, w]
        OA[at + count] = A[r]
        pos[n_pos] = s
        n_pos += 1
        count += 1
    return count, n_pos


@nb.njit(cache=True, nogil=True)
def _clear(used, pos, n):  # pragma: no cover - compiled
    for i in range(n):
        used[pos[i]] = 0


# This thread's scratch tables, kept between calls and left empty by each: a fresh one per call
# (``np.full``) cost its allocation, fill and page faults on every round, and shards running as
# threads each took those at once (docs/distributed.md, "Measured").  Only tables up to KEEP
# slots are kept: the memory budget does not count them, and a larger one (a large round, or a
# prepared layer's batch) is used once on as much work as it has slots, so its allocation is
# paid for there.
_SCRATCH = threading.local()
KEEP = 1 << 20


def _slots(size: int) -> np.ndarray:
    """``size`` slots of row indices, all -1 (first_rows: 8 bytes a slot, whatever the key's width)."""
    if size > KEEP:
        return np.full(size, -1, dtype=np.int64)
    have = getattr(_SCRATCH, "slots", None)
    if have is None or have.shape[0] < size:
        have = _SCRATCH.slots = np.full(size, -1, dtype=np.int64)
    return have[:size]


def _key_set(size: int, W: int, rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``size`` slots for keys of ``W`` words (none used) and room for ``rows`` slot numbers
    (fresh_parts: 8 W + 1 bytes a slot)."""
    if size > KEEP:
        return (np.zeros((size, W), dtype=np.uint64), np.zeros(size, dtype=np.uint8),
                np.empty(rows, dtype=np.int64))
    have = getattr(_SCRATCH, "keys", None)
    if have is None or have[1].shape[0] < size or have[0].shape[0] < size * W or have[2].shape[0] < rows:
        n = max(size, have[1].shape[0] if have is not None else 0)
        have = _SCRATCH.keys = (np.zeros(n * W, dtype=np.uint64), np.zeros(n, dtype=np.uint8),
                                np.empty(max(rows, n // 2), dtype=np.int64))
    keys, used, pos = have
    return keys[: size * W].reshape(size, W), used[:size], pos


def release() -> None:
    """Drop this thread's scratch tables (the end of a search)."""
    _SCRATCH.slots = _SCRATCH.keys = None


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
    slots = _slots(1 << int(2 * n - 1).bit_length())    # load at most a half
    out = np.empty(n, dtype=np.int64)
    T_slots, T_keys = (table.slots, table.keys) if table is not None else (_NO_SLOTS, _NO_KEYS)
    return out[: _first(np.ascontiguousarray(K, dtype=np.uint64), slots, out, T_slots, T_keys)]


def fresh_parts(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]], table: StateTable | None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows of the parts' (keys, parents' keys, actions), joined end to end, that
    :func:`first_rows` of the joined keys keeps, with their parents and actions -- without joining
    the parts: one compiled call per part looks its keys up and copies the kept rows.  A shard
    receives one bucket from every shard; joining them first copied every successor once more,
    and separate lookups and copies each released and took back the interpreter lock, which
    shards running as threads then waited for in turn.  ``parts``: at least one."""
    n = sum(int(p[0].shape[0]) for p in parts)
    W = parts[0][0].shape[1] if parts else 0
    if not W or n <= 1:
        K, P, A = (np.concatenate([p[c] for p in parts]) for c in range(3))
        keep = first_rows(K, table)
        return K[keep], P[keep], A[keep]
    if table is not None and table.size == 0:
        table = None
    OK = np.empty((n, W), dtype=np.uint64)
    OP = np.empty((n, W), dtype=np.uint64)
    OA = np.empty(n, dtype=parts[0][2].dtype)
    SK, used, pos = _key_set(1 << int(2 * n - 1).bit_length(), W, n)    # load at most a half
    T_slots, T_keys = (table.slots, table.keys) if table is not None else (_NO_SLOTS, _NO_KEYS)
    at = taken = 0
    try:
        for K, P, A in parts:
            K, P = np.ascontiguousarray(K, dtype=np.uint64), np.ascontiguousarray(P, dtype=np.uint64)
            count, taken = _taken(K, P, np.ascontiguousarray(A), SK, used, pos, taken, OK, OP, OA, at,
                                  T_slots, T_keys)
            at += count
    finally:
        _clear(used, pos, taken)
    # shrunk in place (realloc), not sliced: the candidates are held until their layer closes and
    # counted by their size, so a view would hide the rows dropped here
    OK.resize((at, W), refcheck=False)
    OP.resize((at, W), refcheck=False)
    OA.resize((at,), refcheck=False)
    return OK, OP, OA


@nb.njit(cache=True, nogil=True)
def _route(K, Kw, par, act, step, n, OK, OP, OA, OS, bounds):  # pragma: no cover - compiled
    m = 2 * n
    code = np.empty(K.shape[0], dtype=np.int64)
    for r in range(K.shape[0]):
        c = 2 * shard_of(owner_hash(K, r), n) if n > 1 else 0
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
    fresh_parts([(K, K, z.astype(np.int32)), (K[:1], K[:1], z[:1].astype(np.int32))], t)
