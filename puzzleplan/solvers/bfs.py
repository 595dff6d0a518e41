"""Layer-batched breadth-first search; a 0-1 BFS when some actions cost 0.

Layer g holds every state at distance exactly g.  Zero-cost successors join
the layer being expanded (they are at the same distance); cost-1 successors
are collected and become layer g+1 once layer g is closed under zero-cost
moves.  So the first layer holding a goal state gives the optimum, for
unit and for 0/1 costs alike -- the property Hua Rong Dao's "moves" metric
(consecutive steps of one piece are free) needs.

With the compiled kernel one batch (decode, goal test, expand, canonicalise,
pack, insert) is a single compiled call, so narrow frontiers over hundreds of
layers cost microseconds of Python each; the loop is
``encodings/drivers/bfs_run.py``.  With the numpy kernel the same algorithm
runs as whole-array numpy steps.
"""

from __future__ import annotations

import numpy as np

from ..encodings.drivers.bfs_run import (
    BFS_BAD_ACTION,
    BFS_ENUMERATE,
    BFS_EXPANDED,
    BFS_G,
    BFS_GENERATED,
    BFS_GOAL_COST,
    BFS_GOAL_ID,
    BFS_MAX_STATES,
    BFS_NCAND,
    BFS_NCONFIGS,
    BFS_NLAYERS,
    BFS_PRUNED,
    BFS_RET_CLOCK,
    BFS_RET_DOMAIN,
    BFS_RET_GROW,
    BFS_RET_STATE_LIMIT,
    BFS_SIZE,
    BFS_SLACK,
    BFS_SLOTS,
    BFS_WEND,
)
from ..encodings.hashset import insert_new, visit_config
from ..encodings.kernel import CompiledKernel, DomainError, Kernel
from ..lang.errors import OptionError
from . import upgrade
from .plan import chain, concretise
from .result import STOP, Clock, Limits, Result
from .visited import Growable, StateTable, action_dtype, capacity_for, grow

CHUNK = 1 << 16
CHUNK_NEAR = 1 << 13   # with a deadline or signals to answer: shorter numpy batches between two looks
OUT_ROWS = 1 << 13
BUDGET = 1 << 12   # states expanded between two looks at the clock (a few milliseconds)


class _Search:
    """State shared by both batch implementations: table, parents, counters, limits."""

    def __init__(self, kernel: Kernel, limits: Limits, enumerate_all: bool):
        self.kernel = kernel
        self.enumerate_all = enumerate_all
        self.clock = Clock(limits)
        self.table = StateTable(kernel.n_words)
        self.parent = Growable(np.int64, -1, ids=True)
        self.action = Growable(action_dtype(len(kernel.task.actions)), -1)
        self.cand = _Candidates(kernel.n_words, self.parent.a.dtype, self.action.a.dtype)
        self.expanded = 0
        self.generated = 0
        self.goal_id = -1
        self.goal_cost: int | None = None
        self.status: str | None = None
        self.buffers: tuple[np.ndarray, ...] | None = None
        self.extra: dict[str, int] = {}

    def room(self, extra: int) -> None:
        self.table.reserve(extra)
        self.parent.ensure(self.table.keys.shape[0])
        self.action.ensure(self.table.keys.shape[0])
        if self.cand.P.dtype != self.parent.a.dtype:
            self.cand.P = self.cand.P.astype(self.parent.a.dtype)

    def affords(self, extra_states: int, extra_bytes: int = 0) -> bool:
        """Whether ``extra_states`` more stored states and ``extra_bytes`` more buffers stay under
        the memory limit, counting the moments a doubling array and its copy are both alive.

        Asked before growing anything, so a search stops at the limit (status "limit", closed
        layers as the bound) rather than one doubling past it."""
        cap = self.clock.max_bytes
        if cap is None:
            return True
        t, par, act = self.table, self.parent, self.action
        base = self.cand.nbytes + extra_bytes
        need = t.size + extra_states
        if need <= t.keys.shape[0]:
            ok = base + t.nbytes + par.a.nbytes + act.a.nbytes <= cap
            self.clock.memory_refused |= not ok
            return ok
        new_keys = capacity_for(need, t.keys.shape[0]) * t.keys.itemsize * t.n_words
        peak = max(t.nbytes + new_keys + par.a.nbytes + act.a.nbytes,          # keys copied
                   t.bytes_at(need) + par.a.nbytes + par.bytes_at(need) + act.a.nbytes,
                   t.bytes_at(need) + par.bytes_at(need) + act.a.nbytes + act.bytes_at(need))
        ok = base + peak <= cap
        self.clock.memory_refused |= not ok
        return ok

    def found(self, state_id: int, g: int) -> None:
        self.goal_id, self.goal_cost = state_id, g
        if not self.enumerate_all:
            self.status = "optimal"

    def note_memory(self, extra: int) -> None:
        self.clock.note_bytes(self.table.nbytes + self.parent.a.nbytes + self.action.a.nbytes + extra)


class _Candidates:
    """Cost-1 successors of the current layer: keys, parent ids, actions (grown by doubling)."""

    def __init__(self, n_words: int, pdtype: np.dtype, adtype: np.dtype, cap: int = 1 << 12):
        self.K = np.empty((cap, n_words), dtype=np.uint64)
        self.P = np.empty(cap, dtype=pdtype)
        self.A = np.empty(cap, dtype=adtype)
        self.n = 0

    def growth_bytes(self, extra: int) -> int:
        """Bytes the arrays would add to hold ``extra`` more rows (0 if they have room)."""
        need = self.n + extra
        if need <= self.K.shape[0]:
            return 0
        row = self.K.itemsize * self.K.shape[1] + self.P.itemsize + self.A.itemsize
        return capacity_for(need, self.K.shape[0]) * row

    def ensure(self, extra: int) -> None:
        need = self.n + extra
        self.K, self.P, self.A = (grow(x, need, self.n) for x in (self.K, self.P, self.A))

    def add(self, K: np.ndarray, P: np.ndarray, A: np.ndarray) -> None:
        self.ensure(len(K))
        self.K[self.n: self.n + len(K)] = K
        self.P[self.n: self.n + len(K)] = P
        self.A[self.n: self.n + len(K)] = A
        self.n += len(K)

    @property
    def nbytes(self) -> int:
        return int(self.K.nbytes + self.P.nbytes + self.A.nbytes)


def solve(kernel: Kernel, limits: Limits, enumerate_all: bool = False) -> Result:
    task = kernel.task
    if task.cost_kind == "general":
        raise OptionError("engine bfs is exact for unit and 0/1 action costs only; "
                          "this model has larger costs: use ucs or astar")
    if isinstance(kernel, CompiledKernel):
        _warm(kernel)  # compile the driver before the clock starts: search time excludes start-up
    run = _Search(kernel, limits, enumerate_all)
    root_ids, _ = run.table.insert(kernel.canon_pack(kernel.init_state()))
    if isinstance(kernel, CompiledKernel):
        return _result(run, _run_compiled(run, int(root_ids[0])))
    batch = _numpy_batch
    chunk = CHUNK if run.clock.deadline is None and not STOP.installed else CHUNK_NEAR
    frontier = root_ids
    layers: list[int] = []
    cand = run.cand
    g = 0
    while frontier.size and run.status is None:
        layer_size = frontier.size
        work = frontier
        cand.n = 0
        while work.size and run.status is None:
            fresh: list[np.ndarray] = []
            for lo in range(0, work.size, chunk):
                if run.clock.out_of_time() or run.clock.too_many(run.table.size):
                    run.status = "limit"
                    break
                fresh.append(batch(run, work[lo: lo + chunk], g, cand))
                if run.status is not None:
                    break
            work = np.concatenate(fresh) if fresh else np.zeros(0, dtype=np.int64)
            layer_size += work.size
        if run.status is not None:
            break
        layers.append(layer_size)
        if not run.affords(cand.n) and not _drop_known(run):
            run.status = "limit"
            break
        if not run.clock.room(run.table.size, cand.n) and \
                not run.clock.room(run.table.size, run.table.new_count(cand.K[: cand.n])):
            run.status = "limit"
            break
        run.room(cand.n)
        new = np.empty(cand.n, dtype=np.int64)
        size, count = insert_new(run.table.slots, run.table.keys, run.table.size, cand.K, cand.n,
                                 cand.P, cand.A, run.parent.a, run.action.a, new)
        run.table.size = size
        run.note_memory(cand.nbytes)
        frontier = new[:count]
        g += 1
        run.clock.report(depth=g, frontier=int(frontier.size), states=run.table.size, expanded=run.expanded,
                         generated=run.generated)
    return _result(run, layers)


def _warm(k: CompiledKernel) -> None:
    """Call ``bfs_run`` once with a zero budget: numba compiles it (or loads it from disk) now,
    for the array types the search will pass (int32 ids, the task's action id type)."""
    V, W = k.n_vars, k.n_words
    i1, u2 = np.zeros(4, dtype=np.int64), np.zeros((4, W), dtype=np.uint64)
    i32, a1 = np.zeros(4, dtype=np.int32), np.zeros(4, dtype=action_dtype(len(k.task.actions)))
    st = np.zeros(BFS_SLOTS, dtype=np.int64)
    st[BFS_WEND] = 1
    k._mod.bfs_run(st, u2, np.full(8, -1, dtype=np.int32), i32, a1, k.costs, k._tabs, k._lo, k._hi,
                   i1, i1, u2, i32, a1, i1, np.zeros((4, V), dtype=np.int64), np.zeros(4, dtype=np.bool_),
                   np.zeros((4, V), dtype=np.int64), i1, i1, u2, 0, u2, np.full(8, -1, dtype=np.int32), i1,
                   np.zeros(W, dtype=np.uint64), np.zeros((1, W), dtype=np.uint64))
    t = StateTable(W, 16)
    t.insert(np.zeros((1, W), dtype=np.uint64))
    t.reserve(64)
    visit_config(t.slots, t.keys, t.size, u2, 0, np.zeros(W, dtype=np.uint64), np.zeros(64, dtype=np.int64),
                 0, 0, np.zeros((1, W), dtype=np.uint64))


def _run_compiled(run: _Search, root: int) -> list[int]:
    """Drive ``bfs_run``: grow arrays when it asks, read the clock between slices."""
    k: CompiledKernel = run.kernel  # type: ignore[assignment]
    mod = k._mod
    rows = max(OUT_ROWS, 2 * mod.N_ACTIONS)
    V, W = k.n_vars, k.n_words
    cap = 1 << 12
    WORK = np.empty(cap, dtype=np.int64)
    WORK[0] = root
    NEXT = np.empty(cap, dtype=np.int64)
    CK, CP, CA = run.cand.K, run.cand.P, run.cand.A   # the cost-1 candidates, as in the numpy path
    LAYERS = np.empty(256, dtype=np.int64)
    S = np.empty((rows, V), dtype=np.int64)
    G = np.empty(rows, dtype=np.bool_)
    OUT = np.empty((rows, V), dtype=np.int64)
    PAR = np.empty(rows, dtype=np.int64)
    ACT = np.empty(rows, dtype=np.int64)
    K = np.empty((rows, W), dtype=np.uint64)
    st = np.zeros(BFS_SLOTS, dtype=np.int64)   # the loop's state: see encodings/drivers/bfs_run.py
    st[BFS_MAX_STATES] = run.clock.max_states if run.clock.max_states is not None else np.iinfo(np.int64).max
    slack = k.task.aux_slack
    prune = slack is not None and not run.enumerate_all
    st[BFS_WEND], st[BFS_SIZE], st[BFS_GOAL_ID] = 1, run.table.size, -1
    st[BFS_ENUMERATE] = int(run.enumerate_all)
    st[BFS_SLACK] = slack if prune else -1
    configs = StateTable(W, 1 << 12 if prune else 16)
    cdist = Growable(np.int64, 0)
    CM = k.layout.config_mask
    SCR = np.empty((1, W), dtype=np.uint64)
    if prune:
        cdist.ensure(configs.keys.shape[0])
        _, st[BFS_NCONFIGS] = visit_config(configs.slots, configs.keys, 0, run.table.keys, 0, CM, cdist.a,
                                           0, 0, SCR)
    run.room(rows)
    while True:
        code = mod.bfs_run(st, run.table.keys, run.table.slots, run.parent.a, run.action.a, k.costs,
                           k._tabs, k._lo, k._hi, WORK, NEXT, CK, CP, CA, LAYERS, S, G, OUT, PAR, ACT, K,
                           BUDGET, configs.keys, configs.slots, cdist.a, CM, SCR)
        run.table.size = int(st[BFS_SIZE])
        configs.size = int(st[BFS_NCONFIGS])
        bufs = WORK.nbytes + NEXT.nbytes + configs.nbytes + cdist.a.nbytes
        run.note_memory(bufs + run.cand.nbytes)
        if code == BFS_RET_GROW:
            nc, wend = int(st[BFS_NCAND]), int(st[BFS_WEND])
            run.cand.n = nc
            more = run.cand.growth_bytes(rows) + 8 * (WORK.shape[0] + NEXT.shape[0])
            if not run.affords(max(rows, nc), bufs + more):
                run.status = "limit"
                break
            run.room(max(rows, nc))
            run.cand.ensure(rows)
            CK, CP, CA = run.cand.K, run.cand.P, run.cand.A
            WORK = grow(WORK, max(wend, nc) + rows, wend)
            NEXT = grow(NEXT, max(nc, wend) + rows, 0)
            LAYERS = grow(LAYERS, int(st[BFS_NLAYERS]) + 256, int(st[BFS_NLAYERS]))
            if prune:
                configs.reserve(max(rows, nc))
                cdist.ensure(configs.keys.shape[0])
            continue
        if code == BFS_RET_CLOCK:
            if run.clock.out_of_time() or run.clock.too_many(run.table.size):
                run.status = "limit"
                break
            better = upgrade.poll(k)   # the compiled kernel, ready: same arrays, faster loop
            if better is not None:
                _warm(better)  # type: ignore[arg-type]
                k = better  # type: ignore[assignment]
                mod, run.kernel = k._mod, k
            run.clock.report(depth=int(st[BFS_G]), frontier=int(st[BFS_WEND]), next_layer=int(st[BFS_NCAND]),
                             states=run.table.size, expanded=int(st[BFS_EXPANDED]),
                             generated=int(st[BFS_GENERATED]))
            continue
        if code == BFS_RET_STATE_LIMIT:
            run.status = "limit"
            break
        if code == BFS_RET_DOMAIN:
            act = k.task.actions[int(st[BFS_BAD_ACTION])]
            raise DomainError(f"action {act.label} leads outside a variable's domain")
        break   # BFS_RET_GOAL or BFS_RET_EXHAUSTED
    run.expanded, run.generated = int(st[BFS_EXPANDED]), int(st[BFS_GENERATED])
    if prune:
        run.extra["pruned_by_aux_bound"] = int(st[BFS_PRUNED])
    if st[BFS_GOAL_ID] >= 0 and run.status is None:
        run.found(int(st[BFS_GOAL_ID]), int(st[BFS_GOAL_COST]))
    return [int(x) for x in LAYERS[: int(st[BFS_NLAYERS])]]


def _numpy_batch(run: _Search, part: np.ndarray, g: int, cand: _Candidates) -> np.ndarray:
    """The same batch as whole-array numpy steps (kernel 'numpy')."""
    k = run.kernel
    S = k.unpack(run.table.keys[part])
    if run.goal_cost is None:
        hit = np.flatnonzero(k.goal(S))
        if hit.size:
            run.found(int(part[hit[0]]), g)
            if run.status is not None:
                return np.zeros(0, dtype=np.int64)
    succ, par, act = k.expand(S)
    run.expanded += part.size
    run.generated += succ.shape[0]
    K = k.canon_pack(succ)
    zero = k.costs[act] == 0
    fresh = np.zeros(0, dtype=np.int64)
    n_zero = int(np.count_nonzero(zero))
    if not run.affords(n_zero, cand.growth_bytes(succ.shape[0] - n_zero) + succ.nbytes + K.nbytes):
        run.status = "limit"
        return fresh
    if n_zero and not run.clock.room(run.table.size, n_zero) and \
            not run.clock.room(run.table.size, run.table.new_count(K[zero])):
        run.status = "limit"
        return fresh
    if n_zero:
        ids, new = run.table.insert(K[zero])
        run.room(0)
        fresh = ids[new]
        run.parent.a[fresh] = part[par[zero]][new]
        run.action.a[fresh] = act[zero][new]
    one = ~zero
    cand.add(K[one], part[par[one]], act[one])
    run.note_memory(cand.nbytes + succ.nbytes)
    return fresh


def _drop_known(run: _Search) -> bool:
    """Drop the candidates already stored; True if the insertion then fits the memory limit.

    Only done when the limit is near: most candidates are usually stored already, and the
    growth the full count would ask for may not be needed at all."""
    c = run.cand
    keep = np.flatnonzero(run.table.lookup(c.K[: c.n]) < 0)
    c.K[: keep.size], c.P[: keep.size], c.A[: keep.size] = c.K[keep], c.P[keep], c.A[keep]
    c.n = int(keep.size)
    return run.affords(c.n)


def _result(run: _Search, layers: list[int]) -> Result:
    kernel, table = run.kernel, run.table
    stats = dict(expanded=run.expanded, generated=run.generated, states=table.size, layers=layers,
                 **run.extra)
    if run.enumerate_all and run.status is None:
        stats["reachable"] = table.size
        stats["configurations"] = _configurations(kernel, table)
    status = run.status or ("optimal" if run.goal_cost is not None else "unsolvable")
    result = Result(status, "bfs", stats=run.clock.stats(**stats))
    if run.goal_cost is not None and status != "limit":
        ids, acts = chain(run.parent.a, run.action.a, run.goal_id)
        result.plan = concretise(kernel, table.keys[np.array(ids)], acts)
        result.cost = run.goal_cost
        result.status = "optimal"
        result.proof = "bfs layers (exhaustive below the optimum)"
    elif status == "unsolvable":
        result.proof = "reachable states exhausted"
    elif status == "limit" and not run.enumerate_all:   # layers 0..g-1 closed without a goal
        result.message = run.clock.bounded(result.stats, len(layers), "closed bfs layers")
    elif status == "limit":
        result.message = run.clock.reason()
    return result


def _configurations(kernel: Kernel, table: StateTable) -> int:
    """Distinct reachable states once bookkeeping (aux) variables are ignored."""
    if not any(v.aux for v in kernel.task.variables):
        return table.size
    K = table.keys[: table.size] & kernel.layout.config_mask
    return int(np.unique(K, axis=0).shape[0])
