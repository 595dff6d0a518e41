"""IDA*: depth-first iterations with a growing f-bound, in compiled code.

Memory is linear in the depth, which is what the 15- and 24-puzzle need.
The depth-first loop keeps an explicit stack in arrays so it can stop after
a node budget and resume: time limits are checked between slices without
losing the iteration.  Successors equal to the grandparent are skipped
(the usual inverse-move pruning, stated generically); when the model has
zero-cost actions the whole current path is checked, so zero-cost cycles
cannot trap the search.  The loop itself is ``encodings/drivers/idastar_dfs.py``, compiled into
each task's kernel module.
"""

from __future__ import annotations

import numpy as np

from ..encodings.drivers.idastar_dfs import (
    DFS_DEPTH,
    DFS_DEPTH_CAP,
    DFS_DOMAIN,
    DFS_FOUND,
    DFS_NEXT_BOUND,
    DFS_NODES,
    DFS_RUNNING,
    DFS_SLOTS,
    DFS_STATUS,
)
from ..encodings.kernel import CompiledKernel, Kernel
from ..lang.errors import OptionError
from . import upgrade
from .result import Clock, Limits, Result

SLICE = 200_000


def _warm(k: CompiledKernel) -> None:
    """Compile (or load from disk) the DFS loop now, so search time excludes start-up."""
    V, n = k.n_vars, k._mod.N_ACTIONS
    i1 = np.zeros(2, dtype=np.int64)
    st = np.zeros(DFS_SLOTS, dtype=np.int64)
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
        st = np.zeros(DFS_SLOTS, dtype=np.int64)   # the loop's state: see encodings/drivers/idastar_dfs.py
        st[DFS_NEXT_BOUND] = np.iinfo(np.int64).max
        clock.note_bytes(succ.nbytes + path.nbytes)
        while st[DFS_STATUS] == DFS_RUNNING:
            done = expanded + int(st[DFS_NODES])
            budget = SLICE if clock.max_states is None else min(SLICE, clock.max_states - done)
            if budget <= 0 or clock.out_of_time() or clock.too_many(expanded + int(st[DFS_NODES])):
                expanded += int(st[DFS_NODES])
                iterations.append(bound)
                return _cut(clock, bound, sound, expanded, iterations)
            better = upgrade.poll(kernel)   # the compiled kernel, ready: the DFS arrays carry over
            if better is not None:
                _warm(better)  # type: ignore[arg-type]
                kernel = better  # type: ignore[assignment]
                mod, tabs = kernel._mod, kernel._tabs
            mod.idastar_dfs(tabs, kernel._lo, kernel._hi, costs, bound, budget,
                            st, path, gs, acts, succ, sacts, cnt, cur, par, hbuf, full_check)
            clock.report(f_bound=bound, depth=int(st[DFS_DEPTH]), expanded=expanded + int(st[DFS_NODES]),
                         iteration=len(iterations) + 1)
        expanded += int(st[DFS_NODES])
        iterations.append(bound)
        if st[DFS_STATUS] == DFS_DOMAIN:   # a successor outside a domain: raised as the other engines do
            d = int(st[DFS_DEPTH])
            kernel.expand(path[d:d + 1])
        if st[DFS_STATUS] == DFS_FOUND:
            d = int(st[DFS_DEPTH])
            plan = [int(a) for a in acts[1:d + 1]]
            if task.heuristic is not None and not task.heuristic_admissible:
                return Result("solved", "idastar", int(gs[d]), plan,
                              clock.stats(expanded=expanded, generated=expanded, iterations=iterations),
                              message="the model's heuristic is not declared admissible")
            return Result("optimal", "idastar", int(gs[d]), plan,
                          clock.stats(expanded=expanded, generated=expanded, iterations=iterations),
                          proof="iterative deepening on f (admissible heuristic)"
                          if task.heuristic is not None else "iterative deepening on cost")
        if st[DFS_STATUS] == DFS_DEPTH_CAP:
            stats = clock.stats(expanded=expanded, iterations=iterations)
            how = f"depth cap {depth_cap} reached"
            if sound:
                stats["lower_bound"] = bound
                how += f"; no plan costs less than {bound} (IDA* bound)"
            return Result("limit", "idastar", stats=stats, message=how)
        if st[DFS_NEXT_BOUND] == np.iinfo(np.int64).max:
            return Result("unsolvable", "idastar", proof="no path within any bound",
                          stats=clock.stats(expanded=expanded, iterations=iterations))
        # the iteration found nothing: every plan costs at least the next bound
        bound = int(st[DFS_NEXT_BOUND])
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
