# numba kernel: argument types come from the arrays at compile time, annotations would be ignored
# ruff: noqa: ANN001
"""Every shard's part of a bfs layer in one compiled call, the shards in parallel (``prange``):
store the successors each shard was sent, then expand its new states and group their successors
by owner, as ``dbfs_expand`` does (``solvers/distributed/compiled_round.py`` calls it).

Why: shards running as Python threads met twice per layer, and each meeting woke a sleeping
thread on the other core (about 23 µs on the VM of docs/distributed.md) and passed the
interpreter lock back and forth between their Python steps; a layer of a few thousand states
then took two workers as long as one.  Inside one ``prange`` loop the shards' work never takes the
lock, and numba's OpenMP workers wait for the next loop spinning, not sleeping.

Per shard ``j`` (one list entry each): the table (``SLOTS``, ``KEYS``, and the parents' keys and
actions ``PKS``, ``ACTS``, indexed by state id), grown here (by doubling, as
``solvers.visited.StateTable.reserve``) when the arriving states may not fit; the lists then hold
the new arrays.  Arriving: from every shard ``i``, rows ``IB[i][2j + 1]:IB[i][2j + 2]`` of
``IK[i]``, ``IP[i]``, ``IA[i]`` (the cost-paying group a ``dbfs_expand`` call made for ``j``;
zero-cost groups must be empty: the caller takes another path for those).  A state not stored
yet is stored (the first of repeats) and becomes one of the layer's new states, ids
``INFO[j, LAYER_FIRST]`` on; the first ``limit`` of them are expanded into ``OK[j]``, ``OP[j]``,
``OA[j]``, ``OC[j]``, ``OB[j]`` (``dbfs_expand``'s outputs).  ``FIND[j]``: look for a goal among
them; ``stop_at_goal``: and expand nothing after it.  ``INFO[j]`` by the ``LAYER_*`` indices (the
caller sets ``LAYER_SIZE`` to the table's size before the call).  Returns how many shards met a
successor outside a variable's domain (``LAYER_BAD_ROW``).
"""

import numpy as np
from numba import njit, prange

from puzzleplan.encodings.drivers._kernel_api import dbfs_expand
from puzzleplan.encodings.drivers.dbfs_expand import (
    DBFS_BAD_ACTION,
    DBFS_BAD_ROW,
    DBFS_EXPANDED,
    DBFS_GENERATED,
    DBFS_GOAL_ROW,
    DBFS_INFO,
)
from puzzleplan.encodings.hashset import insert_one, rehash

LAYER_FIRST = 0        # the table's size before the layer: the new states are ids FIRST..SIZE
LAYER_SIZE = 1         # in: the table's size; out: its size after storing the new states
LAYER_EXPANDED = 2
LAYER_GENERATED = 3
LAYER_GOAL_ROW = 4     # the first goal among the expanded new states (-1: none)
LAYER_BAD_ROW = 5      # a new state whose expansion left a domain (-1: none)
LAYER_BAD_ACTION = 6
LAYER_GREW = 7         # 1: the table's arrays were replaced by larger ones (the lists hold them)
LAYER_ZERO_OUT = 8     # zero-cost successors made (for any shard)
LAYER_INFO = 9


@njit(cache=True, nogil=True, parallel=True)
def dbfs_layer(SLOTS, KEYS, PKS, ACTS, IK, IP, IA, IB, TABS, LO, HI, COSTS,  # pragma: no cover - compiled
               FIND, stop_at_goal, rows, limit, OK, OP, OA, OC, OB, INFO) -> int:
    # the body is a call: numba's parfor pass hoists what looks loop-invariant out of a prange
    # body (a scratch array allocated per shard would be shared by the threads)
    for j in prange(len(SLOTS)):
        dbfs_layer_shard(np.int64(j), SLOTS, KEYS, PKS, ACTS, IK, IP, IA, IB, TABS, LO, HI, COSTS,
                         FIND, stop_at_goal, rows, limit, OK, OP, OA, OC, OB, INFO)
    bad = 0
    for j in range(len(SLOTS)):
        if INFO[j, LAYER_BAD_ROW] >= 0:
            bad += 1
    return bad


@njit(cache=True, nogil=True)
def dbfs_layer_shard(j, SLOTS, KEYS, PKS, ACTS, IK, IP, IA, IB, TABS, LO, HI, COSTS,  # pragma: no cover
                     FIND, stop_at_goal, rows, limit, OK, OP, OA, OC, OB, INFO) -> None:
    n = len(SLOTS)
    size = INFO[j, LAYER_SIZE]
    first = size
    arriving = 0
    for i in range(n):
        arriving += IB[i][2 * j + 2] - IB[i][2 * j + 1]
    keys = KEYS[j]
    slots = SLOTS[j]
    pk = PKS[j]
    act = ACTS[j]
    INFO[j, LAYER_GREW] = 0
    cap = keys.shape[0]
    while cap < size + arriving:
        cap *= 2
    if cap > keys.shape[0]:
        grown = np.zeros((cap, keys.shape[1]), dtype=np.uint64)
        grown[:size] = keys[:size]
        keys = grown
        slots = np.full(2 * cap, -1, dtype=slots.dtype)
        rehash(slots, keys, size)
        KEYS[j] = keys
        SLOTS[j] = slots
        INFO[j, LAYER_GREW] = 1
    if pk.shape[0] < cap:
        grown_pk = np.zeros((cap, pk.shape[1]), dtype=np.uint64)
        grown_pk[:size] = pk[:size]
        pk = grown_pk
        grown_act = np.full(cap, -1, dtype=act.dtype)
        grown_act[:size] = act[:size]
        act = grown_act
        PKS[j] = pk
        ACTS[j] = act
        INFO[j, LAYER_GREW] = 1
    W = keys.shape[1]
    for i in range(n):
        K = IK[i]
        P = IP[i]
        A = IA[i]
        for r in range(IB[i][2 * j + 1], IB[i][2 * j + 2]):
            sid, new, size = insert_one(slots, keys, size, K, r)
            if new:
                for w in range(W):
                    pk[sid, w] = P[r, w]
                act[sid] = A[r]
    INFO[j, LAYER_FIRST] = first
    INFO[j, LAYER_SIZE] = size
    m = min(size - first, limit)
    info = np.empty(DBFS_INFO, dtype=np.int64)
    k, p, a, c, b = dbfs_expand(keys[first: first + m], TABS, LO, HI, COSTS, n, FIND[j] != 0,
                                stop_at_goal, rows, info)
    OK[j] = k
    OP[j] = p
    OA[j] = a
    OC[j] = c
    OB[j] = b
    INFO[j, LAYER_EXPANDED] = info[DBFS_EXPANDED]
    INFO[j, LAYER_GENERATED] = info[DBFS_GENERATED]
    INFO[j, LAYER_GOAL_ROW] = info[DBFS_GOAL_ROW]
    INFO[j, LAYER_BAD_ROW] = info[DBFS_BAD_ROW]
    INFO[j, LAYER_BAD_ACTION] = info[DBFS_BAD_ACTION]
    zero = 0
    for i in range(n):
        zero += b[2 * i + 1] - b[2 * i]
    INFO[j, LAYER_ZERO_OUT] = zero
