# numba kernel: argument types come from the arrays at compile time, annotations would be ignored
# ruff: noqa: ANN001
"""One round of the distributed search's expansion as one compiled call, copied into each task's
kernel module: decode a batch of stored keys, test the goal, expand, canonicalise and pack the
successors, and group them by the shard that owns each (``solvers/distributed``).

Why one call: step by step, a round was seven calls (unpack, goal, expand, canon_pack, the costs,
route, and the arrays between), each of which released the interpreter lock and took it back;
shards running as threads then waited for each other at every one of them, and the kernel's
successor array (all successors' variables, unpacked) was allocated and faulted in once per
round.  Here the successors are made a slice at a time in a buffer of ``rows`` rows (at least
twice the task's number of actions), and only their packed keys are kept.

``info`` (int64) receives, by the ``DBFS_*`` indices below: the states expanded and the
successors generated; the first goal row of ``KW`` (-1: none, or not looked for); on a domain
violation, the row of ``KW`` whose expansion left a domain and the action (-1 otherwise).
Returns the successors' keys, their parents' keys, actions (int32) and action costs, grouped by
``2 * owner + (cost != 0)`` -- zero-cost ones first within an owner, in order of generation --
and the groups' bounds (``bounds[c]:bounds[c + 1]``), as ``keys.route`` does.
"""

import numpy as np
from numba import njit

from puzzleplan.encodings.drivers._kernel_api import N_ACTIONS, canon_pack, expand, goal, unpack_rows
from puzzleplan.encodings.hashset import owner_hash, shard_of

DBFS_EXPANDED = 0
DBFS_GENERATED = 1
DBFS_GOAL_ROW = 2
DBFS_BAD_ROW = 3
DBFS_BAD_ACTION = 4
DBFS_INFO = 5


@njit(cache=True, nogil=True)
def dbfs_expand(KW, TABS, LO, HI, COSTS, n_shards, find_goal, stop_at_goal,  # pragma: no cover - compiled
                rows, info) -> tuple:
    N = KW.shape[0]
    W = KW.shape[1]
    V = LO.shape[0]
    # a call of expand stops while N_ACTIONS more rows fit; a small batch takes small buffers (a
    # large one per call cost the first layers more than their work)
    cap_out = max(2 * N_ACTIONS, min(rows, N * N_ACTIONS))
    per = max(1, cap_out // 4)           # states decoded at a time
    S = np.empty((per, V), dtype=np.int64)
    G = np.empty(per, dtype=np.bool_)
    OUT = np.empty((cap_out, V), dtype=np.int64)
    PAR = np.empty(cap_out, dtype=np.int64)
    ACT = np.empty(cap_out, dtype=np.int64)
    K = np.empty((cap_out, W), dtype=np.uint64)
    ids = np.arange(N)
    cap = max(64, 4 * N)
    SK = np.empty((cap, W), dtype=np.uint64)      # successors in order of generation
    SP = np.empty(cap, dtype=np.int64)            # their parents' rows of KW
    SA = np.empty(cap, dtype=np.int64)
    SC = np.empty(cap, dtype=np.int64)            # their group
    m_all = 0
    bounds = np.zeros(2 * n_shards + 1, dtype=np.int64)
    info[DBFS_EXPANDED] = 0
    info[DBFS_GOAL_ROW] = -1
    info[DBFS_BAD_ROW] = -1
    info[DBFS_BAD_ACTION] = -1
    for lo in range(0, N, per):
        hi = min(N, lo + per)
        k = hi - lo
        unpack_rows(KW, ids[lo:hi], S[:k])
        if find_goal and info[DBFS_GOAL_ROW] < 0:
            goal(S[:k], G, TABS)
            for r in range(k):
                if G[r]:
                    info[DBFS_GOAL_ROW] = lo + r
                    break
            if info[DBFS_GOAL_ROW] >= 0 and stop_at_goal:
                break
        start = 0
        while start < k:
            m, start = expand(S[:k], start, OUT, PAR, ACT, TABS, LO, HI)
            if m < 0:
                info[DBFS_BAD_ROW] = lo + PAR[-1 - m]
                info[DBFS_BAD_ACTION] = ACT[-1 - m]
                break
            canon_pack(OUT[:m], K)
            if m_all + m > cap:
                cap = max(2 * cap, m_all + m)
                SK2 = np.empty((cap, W), dtype=np.uint64)
                SK2[:m_all] = SK[:m_all]
                SK = SK2
                SP = np.concatenate((SP[:m_all], np.empty(cap - m_all, dtype=np.int64)))
                SA = np.concatenate((SA[:m_all], np.empty(cap - m_all, dtype=np.int64)))
                SC = np.concatenate((SC[:m_all], np.empty(cap - m_all, dtype=np.int64)))
            for r in range(m):
                i = m_all + r
                for w in range(W):
                    SK[i, w] = K[r, w]
                SP[i] = lo + PAR[r]
                a = ACT[r]
                SA[i] = a
                c = 2 * shard_of(owner_hash(K, r), n_shards) if n_shards > 1 else 0
                if COSTS[a] != 0:
                    c += 1
                SC[i] = c
                bounds[c + 1] += 1
            m_all += m
        if info[DBFS_BAD_ROW] >= 0:
            break
        info[DBFS_EXPANDED] += k
    info[DBFS_GENERATED] = m_all
    for c in range(2 * n_shards):
        bounds[c + 1] += bounds[c]
    at = bounds[: 2 * n_shards].copy()
    OK = np.empty((m_all, W), dtype=np.uint64)
    OP = np.empty((m_all, W), dtype=np.uint64)
    OA = np.empty(m_all, dtype=np.int32)
    OS = np.empty(m_all, dtype=np.int64)
    for i in range(m_all):
        c = SC[i]
        j = at[c]
        at[c] += 1
        for w in range(W):
            OK[j, w] = SK[i, w]
            OP[j, w] = KW[SP[i], w]
        OA[j] = SA[i]
        OS[j] = COSTS[SA[i]]
    return OK, OP, OA, OS, bounds
