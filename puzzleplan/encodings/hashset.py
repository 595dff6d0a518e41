"""Compiled open-addressing hash set over packed state keys (rows of uint64 words).

States get dense ids in insertion order; ``keys[id]`` holds the key and
``slots`` maps hash slots to ids (-1 = empty).  Engines keep per-state data
(parent, action, g) in flat arrays indexed by id.  These are plain compiled
functions over arrays so generated kernels can call them inside their own
loops (see compiled.py's fused BFS step).

The per-row helpers (``hash_row``, ``_probe``, ``insert_one``, ``visit_config``) are inlined
into their callers (``inline="always"``, numba's IR-level inlining).  As ordinary calls between
separately cached functions they were not inlined, and a lookup in a table that fits in the L1
cache took about 60 ns instead of 11 (docs/architecture.md, "The hash set's helpers inlined").
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True, inline="always")
def hash_row(K, i, W) -> np.uint64:  # pragma: no cover - compiled
    h = np.uint64(0x9E3779B97F4A7C15)
    for w in range(W):
        h ^= K[i, w]
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(31)
    return h


@nb.njit(cache=True, nogil=True)
def insert_rows(slots, keys, size, K, ids, new) -> tuple[int, int]:  # pragma: no cover - compiled
    """Insert rows of K while the table has room; ids[i] = id of the row's state, new[i] =
    whether it was absent.  Returns (size, the first row not handled): a key the table lacks
    met when every row of ``keys`` is taken, or K's length.  Stopping there lets the caller
    grow the table only for keys that are new, never for a batch's known ones.  (The caller
    resumes on views of K, ids and new: a loop from a start index instead of 0 cost 28 %, its
    indices no longer known to be non-negative.)"""
    cap = keys.shape[0]
    for i in range(K.shape[0]):
        if size == cap and slots[_probe(slots, keys, K, i)] == -1:
            return size, i
        ids[i], new[i], size = insert_one(slots, keys, size, K, i)
    return size, K.shape[0]


@nb.njit(cache=True, nogil=True)
def lookup_rows(slots, keys, K, ids) -> None:  # pragma: no cover - compiled
    for i in range(K.shape[0]):
        ids[i] = slots[_probe(slots, keys, K, i)]


@nb.njit(cache=True, nogil=True)
def rehash(slots, keys, size) -> None:  # pragma: no cover - compiled
    W = keys.shape[1]
    mask = np.uint64(slots.shape[0] - 1)
    for sid in range(size):
        s = hash_row(keys, sid, W) & mask
        while slots[s] != -1:
            s = (s + np.uint64(1)) & mask
        slots[s] = sid



@nb.njit(cache=True, nogil=True, inline="always")
def insert_one(slots, keys, size, K, r) -> tuple[int, bool, int]:  # pragma: no cover - compiled
    """Insert row r of K: (id, was_new, new size)."""
    s = _probe(slots, keys, K, r)
    sid = slots[s]
    if sid != -1:
        return sid, False, size
    slots[s] = size
    for w in range(K.shape[1]):
        keys[size, w] = K[r, w]
    return size, True, size + 1


@nb.njit(cache=True, nogil=True, inline="always")
def _probe(slots, keys, K, r) -> int:  # pragma: no cover - compiled
    """The slot holding row r's key, or the empty slot where it belongs (linear probing)."""
    W = K.shape[1]
    mask = np.uint64(slots.shape[0] - 1)
    s = hash_row(K, r, W) & mask
    while True:
        sid = slots[s]
        if sid == -1:
            return s
        same = True
        for w in range(W):
            if keys[sid, w] != K[r, w]:
                same = False
                break
        if same:
            return s
        s = (s + np.uint64(1)) & mask


probe = _probe    # for other compiled helpers over a table (solvers/distributed/keys.py)


@nb.njit(cache=True, nogil=True)
def insert_new(slots, keys, size, K, n, par, act, PARENT, ACTION, NEW) -> tuple[int, int]:  # noqa: E501
    """Insert the first n rows of K; record parent/action of new states; NEW gets their ids.

    Returns (new size, number of new states)."""
    count = 0
    for r in range(n):
        sid, new, size = insert_one(slots, keys, size, K, r)
        if new:
            PARENT[sid] = par[r]
            ACTION[sid] = act[r]
            NEW[count] = sid
            count += 1
    return size, count


@nb.njit(cache=True, nogil=True)
def insert_keyed(slots, keys, size, KS, PS, AS, PK, ACT) -> tuple[int, np.ndarray]:  # pragma: no cover
    """Insert the rows of the key arrays ``KS`` (a tuple: the parts, in order); a new state's parent
    key (the row of ``PS``'s part) and action go to ``PK[id]`` and ``ACT[id]``.  Returns the new
    size and the new states' keys (ids from the old size on, in order).  One call for all parts:
    shards running as threads took turns on the interpreter lock after each call."""
    first = size
    W = keys.shape[1]
    for j in range(len(KS)):
        K, P, A = KS[j], PS[j], AS[j]
        for r in range(K.shape[0]):
            sid, new, size = insert_one(slots, keys, size, K, r)
            if new:
                for w in range(W):
                    PK[sid, w] = P[r, w]
                ACT[sid] = A[r]
    return size, keys[first:size].copy()


@nb.njit(cache=True, nogil=True, inline="always")
def visit_config(slots, keys, size, K, r, mask, DIST, d, slack, scratch) -> tuple[bool, int]:  # noqa: E501
    """Dominance test on configurations (keys with aux bits masked out).

    Returns (pruned, new size): pruned when the configuration of row r was
    already reached at a distance <= d - slack; otherwise it is recorded at d
    (if new) and the state must be kept.
    """
    W = K.shape[1]
    for w in range(W):
        scratch[0, w] = K[r, w] & mask[w]
    s = _probe(slots, keys, scratch, 0)
    sid = slots[s]
    if sid != -1:
        return DIST[sid] <= d - slack, size
    slots[s] = size
    for w in range(W):
        keys[size, w] = scratch[0, w]
    DIST[size] = d
    return False, size + 1


# ----------------------------------------------------------------------------- shard owners
# The distributed search (solvers/distributed/keys.py) hands every state to the shard that owns
# its key; these helpers live here, beside the table's own hash, because the engine drivers
# (encodings/drivers/) route successors inside the kernel's compiled loop and may import only
# from the encodings layer.  ``solvers.distributed.keys.key_hash`` is their numpy reference.

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@nb.njit(cache=True, nogil=True, inline="always")
def mix64(z) -> np.uint64:  # pragma: no cover - compiled
    """splitmix64's finaliser of one word (Steele, Lea, Flood 2014)."""
    z = z + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@nb.njit(cache=True, nogil=True, inline="always")
def owner_hash(K, r) -> np.uint64:  # pragma: no cover - compiled
    """splitmix64 chained over the words of row r: the hash that decides a key's shard (a stronger
    mix than ``hash_row``'s, which only spreads a table's slots)."""
    h = mix64(K[r, 0])
    for j in range(1, K.shape[1]):
        h = mix64(h ^ K[r, j])
    return h


@nb.njit(cache=True, nogil=True, inline="always")
def shard_of(h, n) -> np.int64:  # pragma: no cover - compiled
    """``(h >> 32) * n >> 32``: the hash's high half scaled to ``n`` shards (multiply-shift range
    reduction, Lemire 2019).  Not ``h % n``: a 64-bit division per successor was half the cost of
    routing a round (1.1 of 2 ms in the enumeration measured in docs/distributed.md, paid by every
    worker)."""
    return np.int64(((h >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))
