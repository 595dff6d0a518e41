# numba kernel: argument types come from the arrays at compile time, annotations would be ignored
# ruff: noqa: ANN001
"""idastar's bounded depth-first search as one compiled loop, copied into each task's kernel module.

One call runs one slice (at most ``budget`` nodes) of the DFS under the f-bound ``bound``; the
stack lives in arrays (``path``, ``gs``, ``acts``: the current path, its costs and actions;
``succ``/``sacts``/``cnt``/``cur``: each depth's successors and the next one to try), so the next
call resumes where this one stopped and ``solvers.idastar`` can read the clock in between.

``st`` has ``DFS_SLOTS`` int64 slots, named by the ``DFS_*`` indices below and read by
``solvers.idastar``: the current depth, the status (a ``DFS_*`` status code), the nodes expanded
in this iteration, and the smallest f above the bound seen (the next iteration's bound).
"""

from numba import njit

from puzzleplan.encodings.drivers._kernel_api import expand, goal, heuristic

DFS_DEPTH = 0
DFS_STATUS = 1
DFS_NODES = 2
DFS_NEXT_BOUND = 3
DFS_SLOTS = 4

DFS_RUNNING = 0       # the budget is spent: call again
DFS_FOUND = 1         # path[depth] is a goal
DFS_EXHAUSTED = 2     # no node within the bound is left
DFS_DEPTH_CAP = 3     # the path arrays are full
DFS_DOMAIN = 4        # a successor of path[depth] lies outside a variable's domain


@njit(cache=True, nogil=True)
def idastar_dfs(TABS, LO, HI, costs, bound, budget, st, path, gs, acts,  # pragma: no cover - compiled
                succ, sacts, cnt, cur, par, hbuf, full_path_check) -> None:
    d = st[DFS_DEPTH]
    V = path.shape[1]
    maxd = path.shape[0] - 1
    done = 0
    while d >= 0:
        if done >= budget:
            st[DFS_DEPTH] = d
            return
        if cur[d] >= cnt[d]:
            d -= 1
            continue
        j = cur[d]
        cur[d] += 1
        a = sacts[d, j]
        g2 = gs[d] + costs[a]
        heuristic(succ[d, j:j + 1], hbuf, TABS)
        f2 = g2 + hbuf[0]
        if f2 > bound:
            if f2 < st[DFS_NEXT_BOUND]:
                st[DFS_NEXT_BOUND] = f2
            continue
        if d >= 1:
            same = True
            for v in range(V):
                if succ[d, j, v] != path[d - 1, v]:
                    same = False
                    break
            if same:
                continue
        if full_path_check:
            seen = False
            for q in range(d + 1):
                same = True
                for v in range(V):
                    if succ[d, j, v] != path[q, v]:
                        same = False
                        break
                if same:
                    seen = True
                    break
            if seen:
                continue
        if d + 1 > maxd:
            st[DFS_DEPTH] = d
            st[DFS_STATUS] = DFS_DEPTH_CAP
            return
        for v in range(V):
            path[d + 1, v] = succ[d, j, v]
        gs[d + 1] = g2
        acts[d + 1] = a
        done += 1
        st[DFS_NODES] += 1
        goal(path[d + 1:d + 2], hbuf, TABS)
        if hbuf[0] != 0:
            st[DFS_DEPTH] = d + 1
            st[DFS_STATUS] = DFS_FOUND
            return
        m, _nxt = expand(path[d + 1:d + 2], 0, succ[d + 1], par, sacts[d + 1], TABS, LO, HI)
        if m < 0:           # a successor outside a domain: the model error bfs and astar raise too
            st[DFS_DEPTH] = d + 1
            st[DFS_STATUS] = DFS_DOMAIN
            return
        cnt[d + 1] = m
        cur[d + 1] = 0
        d += 1
    st[DFS_DEPTH] = -1
    st[DFS_STATUS] = DFS_EXHAUSTED
