"""IDA*: depth-first iterations with a growing f-bound, in compiled code.

Memory is linear in the depth, which is what the 15- and 24-puzzle need.
The depth-first loop keeps an explicit stack in arrays so it can stop after
a node budget and resume: time limits are checked between slices without
losing the iteration.  Successors equal to the grandparent are skipped
(the usual inverse-move pruning, stated generically); when the model has
zero-cost actions the whole current path is checked, so zero-cost cycles
cannot trap the search.
"""

from __future__ import annotations

import numpy as np

from ..encodings.compiled import register_driver
from ..encodings.kernel import CompiledKernel, Kernel
from ..lang.errors import OptionError
from .result import Clock, Limits, Result

SLICE = 200_000


_DFS = """
@njit(cache=True)
def idastar_dfs(TABS, LO, HI, costs, bound, budget, st, path, gs, acts,
                succ, sacts, cnt, cur, par, hbuf, full_path_check):
    # One slice of a bounded DFS.  st = [depth, status, nodes, next_bound]; status 0 running,
    # 1 found, 2 exhausted, 3 depth capacity reached.
    d = st[0]
    V = path.shape[1]
    maxd = path.shape[0] - 1
    done = 0
    while d >= 0:
        if done >= budget:
            st[0] = d
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
            if f2 < st[3]:
                st[3] = f2
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
            st[0] = d
            st[1] = 3
            return
        for v in range(V):
            path[d + 1, v] = succ[d, j, v]
        gs[d + 1] = g2
        acts[d + 1] = a
        done += 1
        st[2] += 1
        goal(path[d + 1:d + 2], hbuf, TABS)
        if hbuf[0] != 0:
            st[0] = d + 1
            st[1] = 1
            return
        m, _nxt = expand(path[d + 1:d + 2], 0, succ[d + 1], par, sacts[d + 1], TABS, LO, HI)
        if m < 0:           # a successor outside a domain: the model error bfs and astar raise too
            st[0] = d + 1
            st[1] = 4
            return
        cnt[d + 1] = m
        cur[d + 1] = 0
        d += 1
    st[0] = -1
    st[1] = 2
"""
register_driver("idastar_dfs", _DFS)


def _warm(k: CompiledKernel) -> None:
    """Compile (or load from disk) the DFS loop now, so search time excludes start-up."""
    V, n = k.n_vars, k._mod.N_ACTIONS
    i1 = np.zeros(2, dtype=np.int64)
    st = np.zeros(4, dtype=np.int64)
    k._mod.idastar_dfs(k._tabs, k._lo, k._hi, k.costs, 0, 0, st, np.zeros((2, V), dtype=np.int64), i1, i1,
                       np.zeros((2, n, V), dtype=np.int64), np.zeros((2, n), dtype=np.int64), i1, i1,
                       np.zeros(n, dtype=np.int64), np.zeros(1, dtype=np.int64), False)


def solve(kernel: Kernel, limits: Limits, max_depth: int = 10_000) -> Result:
    if not isinstance(kernel, CompiledKernel):
        raise OptionError("engine idastar needs a compiled loop (--kernel numba or interpreted)")
    task = kernel.task
    mod, tabs = kernel._mod, kernel._tabs
    _warm(kernel)
    clock = Clock(limits)
    costs = kernel.costs
    root = kernel.init_state()
    if kernel.goal(root)[0]:
        return Result("optimal", "idastar", 0, [], clock.stats(expanded=0, generated=0, iterations=0),
                      proof="the initial state is a goal")
    full_check = bool((costs == 0).any())
    n_act = mod.N_ACTIONS
    V = task.n_vars
    bound = int(kernel.heuristic(root)[0])
    expanded = 0
    iterations = []
    positive = costs[costs > 0]
    # an iteration's bound is a lower bound on the optimum once the ones before it are exhausted,
    # as long as the heuristic never overestimates (no heuristic: h = 0)
    sound = task.heuristic is None or task.heuristic_admissible
    while True:
        if full_check or positive.size == 0:
            depth_cap = max_depth
        else:
            depth_cap = min(max_depth, bound // int(positive.min()) + 2)
        path = np.zeros((depth_cap + 1, V), dtype=np.int64)
        path[0] = root[0]
        gs = np.zeros(depth_cap + 1, dtype=np.int64)
        acts = np.full(depth_cap + 1, -1, dtype=np.int64)
        succ = np.zeros((depth_cap + 1, n_act, V), dtype=np.int64)
        sacts = np.zeros((depth_cap + 1, n_act), dtype=np.int64)
        cnt = np.zeros(depth_cap + 1, dtype=np.int64)
        cur = np.zeros(depth_cap + 1, dtype=np.int64)
        par = np.zeros(n_act, dtype=np.int64)
        hbuf = np.zeros(1, dtype=np.int64)
        m, _ = mod.expand(path[0:1], 0, succ[0], par, sacts[0], tabs, kernel._lo, kernel._hi)
        if m < 0:
            kernel.expand(root)     # raises DomainError naming the action and the variables
        cnt[0] = m
        st = np.array([0, 0, 0, np.iinfo(np.int64).max], dtype=np.int64)
        clock.note_bytes(succ.nbytes + path.nbytes)
        while st[1] == 0:
            done = expanded + int(st[2])
            budget = SLICE if clock.max_states is None else min(SLICE, clock.max_states - done)
            if budget <= 0 or clock.out_of_time() or clock.too_many(expanded + int(st[2])):
                expanded += int(st[2])
                iterations.append(bound)
                return _cut(clock, bound, sound, expanded, iterations)
            mod.idastar_dfs(tabs, kernel._lo, kernel._hi, costs, bound, budget,
                            st, path, gs, acts, succ, sacts, cnt, cur, par, hbuf, full_check)
            clock.report(f_bound=bound, depth=int(st[0]), expanded=expanded + int(st[2]),
                         iteration=len(iterations) + 1)
        expanded += int(st[2])
        iterations.append(bound)
        if st[1] == 4:   # the DFS met a successor outside a domain: raise it as the other engines do
            d = int(st[0])
            kernel.expand(path[d:d + 1])
        if st[1] == 1:
            d = int(st[0])
            plan = [int(a) for a in acts[1:d + 1]]
            if task.heuristic is not None and not task.heuristic_admissible:
                return Result("solved", "idastar", int(gs[d]), plan,
                              clock.stats(expanded=expanded, generated=expanded, iterations=iterations),
                              message="the model's heuristic is not declared admissible")
            return Result("optimal", "idastar", int(gs[d]), plan,
                          clock.stats(expanded=expanded, generated=expanded, iterations=iterations),
                          proof="iterative deepening on f (admissible heuristic)"
                          if task.heuristic is not None else "iterative deepening on cost")
        if st[1] == 3:
            stats = clock.stats(expanded=expanded, iterations=iterations)
            how = f"depth cap {depth_cap} reached"
            if sound:
                stats["lower_bound"] = bound
                how += f"; no plan costs less than {bound} (IDA* bound)"
            return Result("limit", "idastar", stats=stats, message=how)
        if st[3] == np.iinfo(np.int64).max:
            return Result("unsolvable", "idastar", proof="no path within any bound",
                          stats=clock.stats(expanded=expanded, iterations=iterations))
        bound = int(st[3])   # the iteration found nothing: every plan costs at least the next bound
        if clock.out_of_time() or clock.too_many(expanded) or not clock.room(expanded, 1):
            return _cut(clock, bound, sound, expanded, iterations)


def _cut(clock: Clock, bound: int, sound: bool, expanded: int, iterations: list[int]) -> Result:
    """A limit (time, ``--max-states`` as expanded nodes, a signal) inside or after an iteration:
    every iteration before the current one was exhausted, so no plan costs less than its bound."""
    stats = clock.stats(expanded=expanded, generated=expanded, iterations=iterations)
    if not sound:
        return Result("limit", "idastar", stats=stats,
                      message=f"{clock.reason()}; the model's heuristic is not declared admissible")
    return Result("limit", "idastar", stats=stats,
                  message=clock.bounded(stats, bound, "IDA* bound: every cheaper iteration exhausted"))
