"""Best-first search batched by f-value buckets: ``astar`` and ``ucs``.

Open states live in buckets keyed by (f, g); the engine repeatedly expands
the bucket with the smallest f and, among those, the largest g (deep states
first: with a good heuristic this is what keeps the last f-layer short).  A batch
takes at most ``width`` states of a bucket, the newest first, so that inside
one f layer the search dives: the children of a batch, one g deeper, come
next, and the goal at the end of a path is met before the whole layer is
swept breadth-first (a last layer can hold tens of millions of states;
measurements in docs/architecture.md, "Width").  Among states of equal f and
g, a macro kernel of a pushing model puts those with the most objects frozen
on targets, then on targets, first (``tiebreak``; "Tie-break" there).  The order inside a layer
never matters for optimality: every state of smaller f is expanded first.
A state is re-opened when a cheaper path to it turns up, so the result is
optimal for any admissible heuristic, consistent or not, and for any
non-negative integer costs (zero included).  With no heuristic (``ucs``) the
buckets are Dial's buckets of uniform-cost search.  ``weight`` > 1 orders by
g + floor(weight * h) (weighted A*): the first plan comes sooner, and it costs at
most weight times the optimum, since a state of an optimal path waits on the
open list with f at most weight times its g + h, which is at most the optimum.
A model that declares walk schemas is searched over post-action states by
default (``solvers.macro``).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from ..encodings.kernel import Kernel
from ..lang.errors import OptionError
from . import upgrade
from .macro import MacroKernel
from .plan import chain, concretise
from .result import NO_PLAN, STOP, Clock, Limits, OutOfTime, Result
from .visited import Growable, StateTable, action_dtype, growth_peak

INF = np.iinfo(np.int64).max // 4
CHUNK = 1 << 16
CHUNK_NEAR = 1 << 13   # with a deadline or signals to answer: shorter batches between two looks
MACRO_BATCH = 2048  # smallest batch worth a macro expansion (closure + mover kernel calls)
WIDTH = 16384       # most states taken from one (f, g) bucket per batch: the last f layer dives


def solve(kernel: Kernel, limits: Limits, use_heuristic: bool = True, name: str = "astar",
          macro: bool = True, macro_backend: str | None = None, min_batch: int = 0,
          width: int | None = None, frozen: bool = True, pairs: bool = True,
          tiebreak: bool = True, weight: float = 1.0) -> Result:
    task = kernel.task
    w = Fraction(weight).limit_denominator(1000)
    if w < 1:    # the CLI range-checks it; a library caller's keyword gets the same exit-31 error
        raise OptionError(f"engine {name}: option weight={weight} is below 1")
    mk = (MacroKernel(kernel, backend=macro_backend, frozen=frozen, pairs=pairs)
          if macro and task.walk_actions else None)
    min_batch = min_batch or (MACRO_BATCH if mk is not None else 1)
    width = WIDTH if width is None else width
    width = max(width, min_batch) if width else 0
    if mk is not None:
        kernel = mk  # type: ignore[assignment]
    heuristic = use_heuristic and task.heuristic is not None
    clock = Clock(limits)
    chunk = CHUNK if clock.deadline is None and not STOP.installed else CHUNK_NEAR
    if mk is not None:
        mk.clock = clock
    table = StateTable(kernel.n_words)
    parent = Growable(np.int64, -1, ids=True)
    action = Growable(action_dtype(len(task.actions)), -1)
    gval = Growable(np.int64, INF)
    closed_at = Growable(np.int64, INF)   # g at which the state was last expanded

    S0 = kernel.canonical(kernel.init_state())
    ids, _ = table.insert(kernel.pack(S0))
    gval.ensure(1)
    gval.a[ids] = 0
    h0 = int(kernel.heuristic(S0)[0]) if heuristic else 0
    weighted = heuristic and w != 1
    cut = NO_PLAN if task.heuristic_admissible else INF   # a bound this high proves "no plan"
    # a bucket's key inside its f layer: g * tie_range + the kernel's tie-break (macro kernels of
    # pushing models count objects frozen on targets, then on targets); the largest key goes first
    tie = mk.tiebreak if (mk is not None and tiebreak and mk.tie_range > 1) else None
    tie_range = mk.tie_range if tie is not None else 1
    key0 = int(tie(S0)[0]) if tie is not None else 0
    f0 = _scaled(h0, w)
    buckets: dict[int, dict[int, list[np.ndarray]]] = {f0: {key0: [ids]}} if h0 < cut else {}
    expanded = generated = reopened = 0
    status = None
    goal_id, goal_cost = -1, None
    f_layers: dict[int, int] = {}

    while buckets and status is None:
        f = min(buckets)
        by_g = buckets[f]
        # the deepest g-bucket of the least f; shallower ones join while the batch is small (a
        # batch costs a fixed overhead per kernel call: tiny buckets, as macro walking makes, are
        # dominated by it).  Every state in the batch has f = f_min, so a goal in it is optimal.
        picked: list[np.ndarray] = []
        n_picked = 0
        while by_g and n_picked < min_batch:
            key = max(by_g)
            g = key // tie_range
            ids_g = _take(by_g, key, width - n_picked if width else 0)
            ids_g = ids_g[(gval.a[ids_g] == g) & (closed_at.a[ids_g] > g)]
            picked.append(ids_g)
            n_picked += ids_g.size
        if not by_g:
            del buckets[f]
        batch = np.unique(np.concatenate(picked)) if len(picked) > 1 else picked[0]
        if batch.size == 0:
            continue
        for lo in range(0, batch.size, chunk):
            better = upgrade.poll(kernel) if mk is None else None
            if better is not None:      # the compiled kernel, ready: states pack the same way
                kernel = better
            part = batch[lo: lo + chunk]
            gp = gval.a[part]
            S = kernel.unpack(table.keys[part])
            try:
                hit = np.flatnonzero(kernel.goal(S))
            except OutOfTime:
                status = "limit"
                break
            if hit.size:
                goal_id, goal_cost, status = int(part[hit[0]]), int(gp[hit[0]]), "goal"
                break
            if clock.out_of_time() or clock.too_many(table.size):
                status = "limit"
                break
            if clock.progress is not None:   # the frontier count is not free: only when someone listens
                open_n = sum(a.size for by in buckets.values() for arrs in by.values() for a in arrs)
                where = {"weighted_key": f} if weighted else {"f_bound": f}   # a weighted key bounds nothing
                clock.report(**where, expanded=expanded, generated=generated, states=table.size,
                             frontier=open_n)
            closed_at.ensure(table.size)
            reopened += int(np.count_nonzero(closed_at.a[part] < INF))
            closed_at.a[part] = gp
            try:
                succ, par, act, cost = kernel.expand_costs(S)
                K = kernel.canon_pack(succ) if succ.shape[0] else None
            except OutOfTime:      # a macro batch can take minutes: stop inside it, at the deadline
                status = "limit"
                break
            expanded += part.size
            generated += succ.shape[0]
            f_layers[f] = f_layers.get(f, 0) + part.size
            if K is None:
                continue
            g2 = gp[par] + cost
            fits, tight = _fits(clock, table, (parent, action, gval, closed_at), K, succ.nbytes * 2)
            if not fits:
                status = "limit"
                break
            sids, _ = table.insert(K, tight=tight)
            for arr in (parent, action, gval, closed_at):
                arr.ensure(table.size)
            # keep, per state id, the cheapest new path; only improvements go on
            order = np.lexsort((g2, sids))
            sids, g2, order = sids[order], g2[order], order
            first = np.ones(sids.size, dtype=bool)
            first[1:] = sids[1:] != sids[:-1]
            sids, g2, order = sids[first], g2[first], order[first]
            better = g2 < gval.a[sids]
            if not better.any():
                continue
            sids, g2, order = sids[better], g2[better], order[better]
            gval.a[sids] = g2
            parent.a[sids] = part[par[order]]
            action.a[sids] = act[order]
            nxt = succ[order]
            h2 = kernel.heuristic(nxt) if heuristic else np.zeros(sids.size, dtype=np.int64)
            live = h2 < cut
            if not live.all():
                sids, g2, h2, nxt = sids[live], g2[live], h2[live], nxt[live]
            if weighted:    # no pathmax: it would hold a layer's children at its f, deepest first
                f2 = g2 + _scaled(h2, w)
            else:           # pathmax keeps f monotone for inconsistent heuristics
                f2 = np.maximum(g2 + h2, f)
            k2 = g2 * tie_range + tie(nxt) if tie is not None else g2
            for fv in np.unique(f2):
                sel_f = f2 == fv
                for kv in np.unique(k2[sel_f]):
                    sel = sel_f & (k2 == kv)
                    buckets.setdefault(int(fv), {}).setdefault(int(kv), []).append(sids[sel])
            clock.note_bytes(table.nbytes + sum(a.a.nbytes for a in (parent, action, gval, closed_at))
                             + succ.nbytes * 2)

    # weighted runs expand by g + floor(W h): their layers are named so, not as f layers (which
    # readers take for lower bounds)
    layers_as = "weighted_layers" if weighted else "f_layers"
    stats = clock.stats(expanded=expanded, generated=generated, states=table.size, reopened=reopened,
                        **{layers_as: {int(k): v for k, v in sorted(f_layers.items())}})
    if mk is not None:
        stats["macro"] = {"walk_states": mk.walk_states, "normalised": mk.normalise,
                          "walk_graph": mk.graph is not None, "kernel": mk.mover.backend}
        if mk.corrals is not None:
            stats["macro"]["corrals"] = {"pruned": mk.corrals.pruned_states, "dead": mk.corrals.dead_states}
        if mk.frozen is not None:
            stats["macro"]["frozen"] = {"bounded": mk.frozen.bounded, "dead": mk.frozen.dead,
                                        "sets": len(mk.frozen.cache)}
        if mk.pairs is not None:
            stats["macro"]["pairs"] = {"dead": mk.pairs.dead_states, "raised": mk.pairs.raised}
    if status == "goal":
        ids_chain, acts = chain(parent.a, action.a, goal_id)
        keys = table.keys[np.array(ids_chain)]
        if mk is not None:
            plan = mk.concretise(keys, acts, [int(x) for x in gval.a[np.array(ids_chain)]])
        else:
            plan = concretise(kernel, keys, acts)
        if heuristic and not task.heuristic_admissible:
            return Result("solved", name, goal_cost, plan, stats,
                          message="the model's heuristic is not declared admissible")
        if weighted:
            bound = max(h0, -(-goal_cost * w.denominator // w.numerator))   # ceil(cost / weight)
            stats["lower_bound"] = bound
            return Result("solved", name, goal_cost, plan, stats, message=(
                f"weighted A* (weight {float(w):g}): the cost is at most {float(w):g} times the "
                f"optimum, so no plan costs less than {bound}"))
        proof = "admissible heuristic, f-ordered expansion" if heuristic else "uniform-cost order"
        return Result("optimal", name, goal_cost, plan, stats, proof=proof)
    if status == "limit":
        if heuristic and not task.heuristic_admissible:
            return Result("limit", name, stats=stats, message=clock.reason())
        if weighted:    # the weighted f of the open list bounds nothing; h at the start does
            return Result("limit", name, stats=stats,
                          message=clock.bounded(stats, h0, "the heuristic at the start"))
        # every state with f below it is closed: no plan is cheaper
        return Result("limit", name, stats=stats,
                      message=clock.bounded(stats, int(f), "f-bound of the open list"))
    return Result("unsolvable", name, stats=stats, proof="reachable states exhausted")


def _scaled(h: Any, w: Fraction) -> Any:
    """floor(w * h), exactly, for an int or an int64 array: split so that no product is more than
    about w * h (a tie-broken metric's h can be near 2^40, and w's numerator up to 10^5)."""
    q, r = divmod(h, w.denominator)
    return q * w.numerator + r * w.numerator // w.denominator


def _take(by_g: dict[int, list[np.ndarray]], g: int, most: int) -> np.ndarray:
    """The distinct ids of the newest ``most`` entries of bucket ``g`` (all of them when ``most`` is
    0), the rest left in place.  Newest first makes a capped bucket a depth-first stack: the
    children of the last batch, one g deeper, are taken before the older states of this g."""
    stack = by_g[g]
    if not most:
        del by_g[g]
        return np.unique(np.concatenate(stack))
    take: list[np.ndarray] = []
    n = 0
    while stack and n < most:
        a = stack.pop()
        if a.size > most - n:
            stack.append(a[:a.size - (most - n)])
            a = a[a.size - (most - n):]
        take.append(a)
        n += a.size
    if not stack:
        del by_g[g]
    return np.unique(np.concatenate(take))


def _fits(clock: Clock, table: StateTable, per_state: tuple[Growable, ...], K: np.ndarray,
          transient: int) -> tuple[bool, bool]:
    """(fits, tight): whether inserting ``K`` keeps the stored states within ``--max-states``
    and, where the table or its per-state arrays must grow, the grown arrays (and the old ones a
    doubling copies) plus this batch's arrays within the memory budget; and whether that holds
    only when the batch's known keys are not counted, in which case the insertion must be
    ``tight`` (grow for the new keys alone).  Asked before the insertion, so neither limit is
    passed by a doubling (as bfs's ``affords``)."""
    n = K.shape[0]
    if clock.max_states is None and clock.max_bytes is None:
        return True, False
    new = n
    if not clock.room(table.size, new):
        new = table.new_count(K)
        if not clock.room(table.size, new):
            return False, False
    if clock.max_bytes is None:
        return True, False

    def peak(new_rows: int) -> int:
        grown = growth_peak(table, per_state, table.size + new_rows)
        return grown + transient if grown else 0

    if peak(new) <= clock.max_bytes:
        return True, new < n
    if new == n:
        new = table.new_count(K)
    ok = peak(new) <= clock.max_bytes
    clock.memory_refused |= not ok
    return ok, True
