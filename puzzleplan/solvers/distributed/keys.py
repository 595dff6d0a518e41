"""Packed keys as one well-mixed 64-bit number: who owns a state, and the sort order of spilled runs.

Why a mixed hash and not the key itself: packed keys put the first variables in the low bits, and
``key % N`` would then split the space by a few variables' values (e.g. the position of a
single moving blank), which loads the shards unevenly.  splitmix64 (Steele, Lea, Flood 2014)
spreads every input bit over the whole word with three multiply-xorshift steps.

The per-row work of a round (owners, first occurrences, the split into buckets) is compiled with
``nogil``: shards running as threads (``executor=threads``) then do it at the same time, where the
numpy versions (a dozen array passes per hash, a sort of row views per deduplication) held the
interpreter lock between passes.  ``splitmix64`` stays in numpy as the readable reference; the
tests compare both.
"""

from __future__ import annotations

import numba as nb
import numpy as np

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
def _mix(z):  # pragma: no cover - compiled
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@nb.njit(cache=True, nogil=True)
def _row_hash(K, r):  # pragma: no cover - compiled
    """``key_hash`` of row r (the same chain of splitmix64 over the words)."""
    h = _mix(K[r, 0])
    for j in range(1, K.shape[1]):
        h = _mix(h ^ K[r, j])
    return h


@nb.njit(cache=True, nogil=True)
def _owners(K, n, out):  # pragma: no cover - compiled
    m = np.uint64(n)
    for r in range(K.shape[0]):
        out[r] = np.int64(_row_hash(K, r) % m)


def owner(K: np.ndarray, n_shards: int) -> np.ndarray:
    """The shard (0..n_shards-1) that owns each key row: ``key_hash(K) % n_shards``."""
    out = np.zeros(K.shape[0], dtype=np.int64)
    if n_shards > 1 and K.shape[0] and K.shape[1]:
        _owners(np.ascontiguousarray(K, dtype=np.uint64), n_shards, out)
    return out


@nb.njit(cache=True, nogil=True)
def _first(K, slots, out):  # pragma: no cover - compiled
    """Open addressing over a scratch table of row indices: the first row of each distinct key."""
    W = K.shape[1]
    mask = np.uint64(slots.shape[0] - 1)
    count = 0
    for r in range(K.shape[0]):
        s = _row_hash(K, r) & mask
        while True:
            q = slots[s]
            if q == -1:
                slots[s] = r
                out[count] = r
                count += 1
                break
            same = True
            for w in range(W):
                if K[q, w] != K[r, w]:
                    same = False
                    break
            if same:
                break
            s = (s + np.uint64(1)) & mask
    return count


def first_rows(K: np.ndarray) -> np.ndarray:
    """Indices (ascending) of the first occurrence of each distinct row of ``K``."""
    n = K.shape[0]
    if not K.shape[1]:       # keys without words are all the same key
        return np.arange(min(n, 1), dtype=np.int64)
    if n <= 1:
        return np.arange(n, dtype=np.int64)
    slots = np.full(1 << int(2 * n - 1).bit_length(), -1, dtype=np.int64)    # load at most a half
    out = np.empty(n, dtype=np.int64)
    return out[: _first(np.ascontiguousarray(K, dtype=np.uint64), slots, out)]


@nb.njit(cache=True, nogil=True)
def _groups(code, m, order, bounds):  # pragma: no cover - compiled
    for c in code:
        bounds[c + 1] += 1
    for c in range(m):
        bounds[c + 1] += bounds[c]
    at = bounds[:m].copy()
    for i in range(code.shape[0]):
        c = code[i]
        order[at[c]] = i
        at[c] += 1


def group_by(code: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """A stable counting sort of ``code`` (values 0..m-1): the order, and each value's start
    (``bounds[c]:bounds[c + 1]``) in it."""
    order = np.empty(code.shape[0], dtype=np.int64)
    bounds = np.zeros(m + 1, dtype=np.int64)
    _groups(np.ascontiguousarray(code, dtype=np.int64), m, order, bounds)
    return order, bounds


def warm() -> None:
    """Load the compiled helpers from numba's cache now (tens of ms each), not inside a timed layer."""
    K = np.arange(6, dtype=np.uint64).reshape(3, 2)
    owner(K, 2)
    first_rows(K)
    group_by(np.zeros(2, dtype=np.int64), 2)
