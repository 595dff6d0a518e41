# numba kernel: argument types come from the arrays at compile time, annotations would be ignored
# ruff: noqa: ANN001
"""bfs's whole layered 0-1 BFS as one compiled loop, copied into each task's kernel module.

``WORK`` holds the current layer, in order, and grows at its end as zero-cost successors join the
layer; cost-1 successors wait in ``CK``/``CP``/``CA`` until the layer is closed under zero-cost
moves, and then become the next layer.  The loop returns to Python (``solvers.bfs``) only to grow
arrays, to let the clock be read, on a goal, when the reachable states are exhausted, on a domain
violation, or when the stored states reach the state limit while more are to be stored (the limit
is exact, never passed): the ``BFS_RET_*`` codes.  With an aux_bound declared (and not
enumerating), states whose configuration was reached ``slack`` or more cheaper are dropped (the
dominance prune of ``lang.Model.aux_bound``).

Everything the loop carries between two calls is in the int64 array ``st`` of ``BFS_SLOTS``
slots, named by the ``BFS_*`` indices below (``solvers.bfs`` reads and writes the same names):

==================  =================================================================
``BFS_WPOS``        next position of ``WORK`` to expand
``BFS_WEND``        end of the current layer in ``WORK``
``BFS_G``           the current layer's distance
``BFS_SIZE``        states stored
``BFS_NCAND``       cost-1 candidates waiting in ``CK``/``CP``/``CA``
``BFS_EXPANDED``    states expanded
``BFS_GENERATED``   successors generated
``BFS_GOAL_ID``     the first goal state's id (-1: none yet)
``BFS_GOAL_COST``   its distance
``BFS_ENUMERATE``   1: go on after a goal (count every reachable state)
``BFS_NLAYERS``     closed layers written to ``LAYERS`` (each layer's end in ``WORK``)
``BFS_BAD_ROW``     on ``BFS_RET_DOMAIN``: the successor row outside a domain
``BFS_BAD_ACTION``  on ``BFS_RET_DOMAIN``: its action
``BFS_SLACK``       the aux_bound slack (-1: no dominance prune)
``BFS_NCONFIGS``    configurations stored (the prune's table)
``BFS_PRUNED``      successors dropped by the prune
``BFS_MAX_STATES``  stop when more states than this are to be stored
==================  =================================================================
"""

from numba import njit

from puzzleplan.encodings.drivers._kernel_api import N_ACTIONS, canon_pack, expand, goal, unpack_rows
from puzzleplan.encodings.hashset import insert_one, visit_config

BFS_WPOS = 0
BFS_WEND = 1
BFS_G = 2
BFS_SIZE = 3
BFS_NCAND = 4
BFS_EXPANDED = 5
BFS_GENERATED = 6
BFS_GOAL_ID = 7
BFS_GOAL_COST = 8
BFS_ENUMERATE = 9
BFS_NLAYERS = 10
BFS_BAD_ROW = 11
BFS_BAD_ACTION = 12
BFS_SLACK = 13
BFS_NCONFIGS = 14
BFS_PRUNED = 15
BFS_MAX_STATES = 16
BFS_SLOTS = 17

BFS_RET_EXHAUSTED = 0     # no state left to expand: every reachable state is stored
BFS_RET_GOAL = 1          # a goal was found (and not enumerating)
BFS_RET_DOMAIN = 2        # a successor lies outside a variable's domain
BFS_RET_GROW = 3          # an array is too small for the next step: grow it and call again
BFS_RET_CLOCK = 4         # the budget of expansions is spent: read the clock and call again
BFS_RET_STATE_LIMIT = 5   # the states stored reached BFS_MAX_STATES with more to store


@njit(cache=True, nogil=True)
def bfs_run(st, KEYS, SLOTS, PARENT, ACTION, COSTS, TABS, LO, HI,  # pragma: no cover - compiled
            WORK, NEXT, CK, CP, CA, LAYERS, S, G, OUT, PAR, ACT, K, budget,
            CKEYS, CSLOTS, CDIST, CM, SCR) -> int:
    W = KEYS.shape[1]
    rows = OUT.shape[0]
    slice_n = max(1, rows // N_ACTIONS)
    done = 0
    while True:
        wpos = st[BFS_WPOS]
        wend = st[BFS_WEND]
        if wpos >= wend:
            nc = st[BFS_NCAND]
            if (st[BFS_NLAYERS] >= LAYERS.shape[0] or st[BFS_SIZE] + nc > KEYS.shape[0]
                    or nc > NEXT.shape[0] or nc > WORK.shape[0]
                    or (st[BFS_SLACK] >= 0 and st[BFS_NCONFIGS] + nc > CKEYS.shape[0])):
                return BFS_RET_GROW
            LAYERS[st[BFS_NLAYERS]] = wend
            st[BFS_NLAYERS] += 1
            size = st[BFS_SIZE]
            cnt = 0
            for r in range(nc):
                if size >= st[BFS_MAX_STATES]:
                    st[BFS_SIZE] = size
                    return BFS_RET_STATE_LIMIT
                if st[BFS_SLACK] >= 0:
                    pruned, st[BFS_NCONFIGS] = visit_config(CSLOTS, CKEYS, st[BFS_NCONFIGS], CK, r, CM, CDIST,
                                                            st[BFS_G] + 1, st[BFS_SLACK], SCR)
                    if pruned:
                        st[BFS_PRUNED] += 1
                        continue
                sid, new, size = insert_one(SLOTS, KEYS, size, CK, r)
                if new:
                    PARENT[sid] = CP[r]
                    ACTION[sid] = CA[r]
                    NEXT[cnt] = sid
                    cnt += 1
            st[BFS_SIZE] = size
            st[BFS_NCAND] = 0
            if cnt == 0:
                return BFS_RET_EXHAUSTED
            for r in range(cnt):
                WORK[r] = NEXT[r]
            st[BFS_WPOS] = 0
            st[BFS_WEND] = cnt
            st[BFS_G] += 1
            continue
        if done >= budget or st[BFS_SIZE] > st[BFS_MAX_STATES]:
            return BFS_RET_CLOCK
        if (st[BFS_SIZE] + rows > KEYS.shape[0] or st[BFS_NCAND] + rows > CK.shape[0]
                or wend + rows > WORK.shape[0]
                or (st[BFS_SLACK] >= 0 and st[BFS_NCONFIGS] + rows > CKEYS.shape[0])):
            return BFS_RET_GROW
        hi = min(wend, wpos + slice_n)
        n = hi - wpos
        unpack_rows(KEYS, WORK[wpos:hi], S)
        if st[BFS_GOAL_ID] < 0:
            goal(S[:n], G, TABS)
            for r in range(n):
                if G[r]:
                    st[BFS_GOAL_ID] = WORK[wpos + r]
                    st[BFS_GOAL_COST] = st[BFS_G]
                    break
            if st[BFS_GOAL_ID] >= 0 and st[BFS_ENUMERATE] == 0:
                return BFS_RET_GOAL
        m, nxt = expand(S[:n], 0, OUT, PAR, ACT, TABS, LO, HI)
        if m < 0:
            st[BFS_BAD_ROW] = -1 - m
            st[BFS_BAD_ACTION] = ACT[-1 - m]
            return BFS_RET_DOMAIN
        canon_pack(OUT[:m], K)
        size = st[BFS_SIZE]
        nc = st[BFS_NCAND]
        for r in range(m):
            a = ACT[r]
            p = WORK[wpos + PAR[r]]
            if COSTS[a] == 0:
                if size >= st[BFS_MAX_STATES]:
                    st[BFS_SIZE] = size
                    st[BFS_NCAND] = nc
                    st[BFS_EXPANDED] += n
                    st[BFS_GENERATED] += m
                    return BFS_RET_STATE_LIMIT
                if st[BFS_SLACK] >= 0:
                    pruned, st[BFS_NCONFIGS] = visit_config(CSLOTS, CKEYS, st[BFS_NCONFIGS], K, r, CM, CDIST,
                                                            st[BFS_G], st[BFS_SLACK], SCR)
                    if pruned:
                        st[BFS_PRUNED] += 1
                        continue
                sid, new, size = insert_one(SLOTS, KEYS, size, K, r)
                if new:
                    PARENT[sid] = p
                    ACTION[sid] = a
                    WORK[wend] = sid
                    wend += 1
            else:
                for w in range(W):
                    CK[nc, w] = K[r, w]
                CP[nc] = p
                CA[nc] = a
                nc += 1
        st[BFS_SIZE] = size
        st[BFS_NCAND] = nc
        st[BFS_WPOS] = hi
        st[BFS_WEND] = wend
        st[BFS_EXPANDED] += n
        st[BFS_GENERATED] += m
        done += n
