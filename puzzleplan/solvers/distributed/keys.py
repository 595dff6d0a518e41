"""Packed keys as one well-mixed 64-bit number: who owns a state, and the sort order of spilled runs.

Why a mixed hash and not the key itself: packed keys put the first variables in the low bits, and
``key % N`` would then split the space by a few variables' values (e.g. the position of a
single moving blank), which loads the shards unevenly.  splitmix64 (Steele, Lea, Flood 2014)
spreads every input bit over the whole word with three multiply-xorshift steps, in plain numpy.
"""

from __future__ import annotations

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


def owner(K: np.ndarray, n_shards: int) -> np.ndarray:
    """The shard (0..n_shards-1) that owns each key row."""
    if n_shards == 1:
        return np.zeros(K.shape[0], dtype=np.int64)
    return (key_hash(K) % np.uint64(n_shards)).astype(np.int64)


def first_rows(K: np.ndarray) -> np.ndarray:
    """Indices (ascending) of the first occurrence of each distinct row of ``K``."""
    n = K.shape[0]
    if n <= 1:
        return np.arange(n, dtype=np.int64)
    if K.shape[1] == 1:
        _, idx = np.unique(K[:, 0], return_index=True)
    else:
        rows = np.ascontiguousarray(K).view(np.dtype((np.void, 8 * K.shape[1]))).ravel()
        _, idx = np.unique(rows, return_index=True)
    idx.sort()
    return idx.astype(np.int64)
