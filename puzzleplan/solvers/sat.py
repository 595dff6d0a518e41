"""Engine ``sat``: bounded-horizon planning as satisfiability on one incremental solver.

Phase 1 (horizon search): the CNF of :mod:`puzzleplan.encodings.sat` grows one
step at a time on a single ``pysat`` solver; horizon ``T`` is tested by
*assuming* the goal literal at ``T`` and "no noop at ``T-1``" (so exactly
``T`` actions), ``T = 0, 1, 2, ...``.  The first satisfiable ``T`` is the
shortest plan length; the unsatisfiable calls before it are the proof.
With unit costs and an admissible heuristic in the model, every state
``s_t`` of a ``T``-step plan satisfies ``h(s_t) <= T - t``; option
``heuristic=True`` assumes those literals too (sound pruning).  It is off by
default: encoding ``h`` at every step (pairwise sums) costs more than it
prunes -- measured 2x slower on 24-move 8-puzzles and on fayaa-117.

Phase 2 (costs other than unit): the plan cost ``C`` is bounded with an
incremental totalizer (``pysat.card.ITotalizer``) over per-step cost
literals, and ``sum <= C - 1`` is assumed until unsatisfiable; then the
horizon grows by one step (the totalizer is extended with that step's cost
literals) and the cost is minimised again, up to a horizon ``H``:

* all costs >= ``cmin`` >= 1: a plan of cost < ``C`` has at most
  ``(C - 1) // cmin`` steps, so ``H = max(T, (C - 1) // cmin)`` (shrinking as
  ``C`` improves) makes the result a proof of optimality ("optimal");
* zero-cost actions: a cheaper plan may contain any number of free steps.
  The engine then computes ``Z``, the longest loop-free run of zero-cost
  actions (:mod:`puzzleplan.encodings.runbound`, a recurrence-diameter
  bound by SAT, given ``run_bound_s`` seconds, default 15 or a quarter of
  the time limit).  Some cheapest plan repeats no state, so a plan of cost
  ``<= C - 1`` has at most ``K = (C - 1) // c+`` paid steps and ``K + 1``
  free runs of at most ``Z`` steps, the first, from the initial state, of at
  most ``Z0 <= Z``: ``H = K + K Z + Z0`` makes the result "optimal".  When
  ``Z`` is not established in time (e.g. a pigeonhole-like
  proof on crowded piece puzzles) the result is "solved": cost minimal over
  plans of at most ``H`` steps, ``H`` = option ``horizon`` or ``2 T``
  (reported in the message).  Cost 0 is optimal anyway.
  Cheaper plans found on the way are kept (anytime): a time limit in phase 2
  returns the best plan with status "solved".

The bfs hint (option ``hint``, default on for unit and 0/1 costs).  Unit costs: one
question ("a plan of at most ``C - 1`` steps?", goal at that horizon, noops allowed) beats
the chain of exact horizons once a plan of ``C`` steps is known, when it is asked of a
formula of its own with the goal fixed (:func:`_refute_below`).  So right after horizon 0
``bfs`` gets ``QUICK_HINT_S`` seconds for a plan (:func:`.horizon.explicit_plan`), and if
it finds none, once the chain has run ``HINT_AFTER_S`` seconds a tenth of the time left.
UNSAT proves the plan optimal; a plan found instead is shorter, and the question is asked
below it.  Zero-cost actions (0/1 costs): at once; the plan's cost
and the run bound ``Z`` below give the horizon ``H`` a proof needs, and phase 2 starts
there instead of at the first plan's horizon.  Only bfs's plan is used, never its
verdict; figures in docs/architecture.md ("sat's hint").

Unsolvable tasks: a horizon search cannot stop by itself.  It stops with
"unsolvable" when the goal is impossible in the relaxed value-set
reachability fixpoint, or when every horizon up to ``N - 1`` is
unsatisfiable, ``N`` the number of states of the value-set
over-approximation (a loop-free plan visits at most ``N`` states), or when
the model declares a variant (:mod:`puzzleplan.lang.variant`: every action
lowers ``V`` by >= 1, ``V >= lo``) and every horizon up to ``V(init) - lo``
is unsatisfiable -- no plan is longer.  The declaration is verified
(:mod:`puzzleplan.encodings.variant`) when the horizon first reaches that
threshold, never trusted; unverified, it is ignored and the result says so.
With option ``horizon=H`` it stops after ``H`` with "unknown"; otherwise at
the time limit with "limit".

Options: ``incremental`` (default true; false: a new formula and solver per
horizon, the baseline of the ``sat-incremental`` bench suite), ``solver`` (a pysat
solver name, default ``cadical195``),
``horizon`` (maximum horizon), ``run_bound_s`` (seconds for the zero-cost
run bound; 0 skips it), ``heuristic`` (use the admissible heuristic
as above), ``invariants`` (2-literal invariants, see
:func:`puzzleplan.encodings.invariants.mutex_invariants`), ``symmetry`` (canonical
states for interchangeable objects), ``max_pairs`` (encoding refusal limit), ``undo``
(default true: no action right after one it undoes, :mod:`puzzleplan.encodings.reversals`),
``hint`` (above; default on for unit and 0/1 costs).
The time limit covers invariant synthesis and encoding; SAT calls run in
conflict-budgeted slices so that they stop near the deadline.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from typing import Any

from pysat.card import ITotalizer
from pysat.solvers import Solver

from ..encodings.frontier import Layers, restrict_start, sat_layers
from ..encodings.runbound import RunBound, cost_lower_bound, horizon_for_cost
from ..encodings.sat import TOP, CnfPlan
from ..encodings.symmetry import concretise
from ..encodings.unrolled import State, start_sets
from ..lang.errors import OptionError
from . import horizon as horizon_mod
from .horizon import (
    LazyInvariants,
    Variant,
    explicit_plan,
    hint_after,
    opt_bool,
    opt_int,
    opt_seconds,
    run_bound,
    undo_pairs_for,
)
from .result import STOP, Clock, Limits, Result
from .satsolver import check_solver


class _Sat:
    """One incremental solver fed from a growing :class:`CnfPlan`, with time-limited calls."""

    SLICE_S = 0.25   # longest solver call between two looks at the clock (deadline, signals, memory)

    def __init__(self, enc: CnfPlan, name: str, clock: Clock):
        self.enc = enc
        self.clock = clock
        self.solver = Solver(name=name)
        self.calls = 0
        self.extra: dict[str, Any] = {}
        self.inv: LazyInvariants | None = None
        self.variant: Variant | None = None
        self.figures: dict[str, Any] = {}   # what the progress reports say besides time and conflicts
        self.sync()

    def sync(self) -> None:
        clauses = self.enc.drain()
        if clauses:
            self.solver.append_formula(clauses)
        self.clock.note_bytes(4 * self.enc.n_literals)

    def solve(self, assumptions: list[int]) -> bool | None:
        """True/False, or None when the time limit stopped the call.

        With a deadline, signals to answer (the CLI) or progress to report, the call runs in
        conflict-budgeted slices (``solve_limited``: pysat's CaDiCaL holds the interpreter during
        a call, so neither a timer thread nor a signal handler can interrupt it), each sized from
        the measured conflict rate to last at most ``SLICE_S`` and to end before the deadline;
        learnt clauses carry over between slices, and the clock (deadline, signal, memory,
        progress) is read between them.  ``expect_interrupt`` keeps pysat from installing its own SIGINT
        handler, whose KeyboardInterrupt ended in a traceback.
        """
        self.sync()
        assumptions = [a for a in assumptions if a != TOP]
        if -TOP in assumptions:
            return False
        self.calls += 1
        if (self.clock.deadline is None and not STOP.installed and self.clock.max_rss is None
                and self.clock.progress is None):
            return self.solver.solve(assumptions=assumptions)
        budget = 1000
        while True:
            if self.clock.out_of_time():
                return None
            left = self.clock.left()
            target = self.SLICE_S if left is None else min(self.SLICE_S, max(left / 2, 0.01))
            before = self._conflicts()
            t0 = time.perf_counter()
            self.solver.conf_budget(budget)
            try:
                r = self.solver.solve_limited(assumptions=assumptions, expect_interrupt=True)
            except Exception as e:   # pysat's CaDiCaL saw SIGINT itself ("Caught keyboard interrupt")
                if "interrupt" not in str(e).lower():
                    raise
                if STOP.signum is None:
                    STOP.request(signal.SIGINT)
                return None
            if r is not None:
                return r
            self.clock.report(**self.figures, conflicts=self._conflicts(), solver_calls=self.calls)
            spent = max(time.perf_counter() - t0, 1e-6)
            rate = max(self._conflicts() - before, 1) / spent
            budget = int(max(100, min(rate * target, 4 * budget)))

    def _conflicts(self) -> int:
        return int((self.solver.accum_stats() or {}).get("conflicts", 0))

    def true_lits(self) -> set[int]:
        model = self.solver.get_model() or []
        return {lit for lit in model if lit > 0}

    def stats(self, **extra: Any) -> dict[str, Any]:
        acc = self.solver.accum_stats() or {}
        return self.clock.stats(expanded=0, generated=0, conflicts=acc.get("conflicts", 0),
                                decisions=acc.get("decisions", 0), clauses=self.solver.nof_clauses(),
                                variables=self.solver.nof_vars(), solver_calls=self.calls,
                                **(self.inv.stats() if self.inv else {}),
                                **(self.variant.stats() if self.variant else {}), **self.extra, **extra)


# costs are thermometer-coded per step (encodings/sat.py, cost_inputs): one literal per unit
MAX_UNARY_COST = 1000


def solve(kernel: Any, limits: Limits, solver: str = "cadical195", horizon: int | None = None,
          heuristic: bool = False, invariants: bool = True, symmetry: bool = True,
          max_pairs: int = 200_000, run_bound_s: float | None = None, incremental: bool = True,
          undo: bool = True, hint: bool | None = None, frontier: int | None = None) -> Result:
    with STOP.held():     # pysat's C code must not see SIGINT: the slices poll for it instead
        return _solve(kernel, limits, solver, horizon, heuristic, invariants, symmetry, max_pairs,
                      run_bound_s, incremental, undo, hint, frontier)


def _solve(kernel: Any, limits: Limits, solver: str, horizon: int | None, heuristic: bool, invariants: bool,
           symmetry: bool, max_pairs: int, run_bound_s: float | None, incremental: bool,
           undo: bool, hint: bool | None, frontier: int | None) -> Result:
    task = kernel.task
    check_solver("sat", solver)
    horizon = opt_int("horizon", horizon, 1)
    heuristic = bool(opt_bool("heuristic", heuristic))
    invariants = bool(opt_bool("invariants", invariants))
    symmetry = bool(opt_bool("symmetry", symmetry))
    max_pairs = opt_int("max_pairs", max_pairs, 1) or 1
    run_bound_s = opt_seconds("run_bound_s", run_bound_s)
    incremental = bool(opt_bool("incremental", incremental))
    undo = bool(opt_bool("undo", undo))
    hint = opt_bool("hint", hint)   # horizon.hint_after: when it is asked for
    frontier = opt_int("frontier", frontier, 0)
    top = max((a.cost for a in task.actions), default=0)
    if top > MAX_UNARY_COST:
        raise OptionError(f"engine sat counts action costs in unary (up to {MAX_UNARY_COST}); this model "
                          f"has an action costing {top}: use cpsat, ucs or astar")
    clock = Clock(limits)
    inv = LazyInvariants(task, clock, invariants, symmetry)
    extra: dict[str, Any] = {}
    pairs = undo_pairs_for(task, undo, symmetry, extra)
    if not incremental:
        return _from_scratch(task, clock, inv, solver, max_pairs, symmetry, horizon, pairs, extra)
    enc = CnfPlan(task, max_pairs=max_pairs, symmetry=symmetry, undo=pairs)
    sat = _Sat(enc, solver, clock)
    sat.extra.update(extra)
    sat.inv = inv
    sat.variant = Variant(task, inv, clock)
    costs = [a.cost for a in task.actions]
    unit = task.cost_kind == "unit"
    use_h = bool(heuristic and unit and task.heuristic is not None and task.heuristic_admissible)
    hint_at = hint_after(task, hint, usable=horizon is None and not use_h)
    runs: list[RunBound] = []

    def bound_runs() -> RunBound:   # computed once, when first needed
        if not runs:
            runs.append(run_bound(task, inv, clock, run_bound_s))
        return runs[0]

    def fresh(steps: int, states: list[State] | None = None) -> CnfPlan:
        """The one refutation's own formula (see _refute_below), from the initial state or from one
        of ``states`` (a breadth-first layer, :mod:`puzzleplan.encodings.frontier`)."""
        invs = inv.get() if steps >= inv.EAGER_FROM or states else None
        if states is None:
            return CnfPlan(task, max_pairs=max_pairs, symmetry=symmetry, undo=pairs, invariants=invs)
        enc = CnfPlan(task, max_pairs=max_pairs, symmetry=symmetry, undo=pairs, invariants=invs,
                      start=start_sets(states), sorted_start=True)
        restrict_start(enc, states)
        return enc

    def layers(depth: int, cap: int, tick: Callable[[Layers], None] | None) -> Layers:
        return sat_layers(task, depth, cap, inv.get(), solver, stop=clock.out_of_time, tick=tick)

    def quick() -> tuple[int, list[int]] | None:   # as cpsat's: its own stat, hint_* only with a plan
        asked: dict[str, Any] = {}
        found = explicit_plan(kernel, clock, asked, horizon_mod.QUICK_HINT_S)
        if "hint_s" in asked:
            sat.extra["quick_hint_s"] = asked["hint_s"]
        if "hint_load_s" in asked:
            sat.extra["hint_load_s"] = asked["hint_load_s"]
        if found is not None:
            sat.extra.update(asked)
        return found

    asks_quick = hint_at is not None and unit and horizon_mod.QUICK_HINT_S > 0
    try:
        return _run(task, enc, sat, clock, costs, unit, use_h, horizon, bound_runs,
                    None if hint_at is None else (hint_at, lambda: explicit_plan(kernel, clock, sat.extra)),
                    quick if asks_quick else None, (fresh, solver, layers if symmetry else None, frontier))
    finally:
        sat.solver.delete()


def _from_scratch(task: Any, clock: Clock, inv: LazyInvariants, solver: str, max_pairs: int, symmetry: bool,
                  cap: int | None, pairs: list[tuple[int, int]], extra: dict[str, Any]) -> Result:
    """The baseline the incremental engine is measured against: a new formula and solver per horizon.

    Same encoding, same invariants (from horizon ``EAGER_FROM`` on), same assumptions; only
    the reuse of the solver (its learnt clauses and the already encoded steps) is missing.
    Unit costs only: the cost phase has no from-scratch counterpart here.
    """
    if task.cost_kind != "unit":
        raise OptionError("engine option incremental=false supports unit-cost tasks only")
    calls = conflicts = 0
    T = 0
    while True:
        enc = CnfPlan(task, max_pairs=max_pairs, symmetry=symmetry, undo=pairs,
                      invariants=inv.get() if T >= inv.EAGER_FROM else None)
        for _ in range(T):
            enc.extend()
        sat = _Sat(enc, solver, clock)
        g = enc.goal(T)
        r = False if g == -TOP else sat.solve([g] + ([-enc.noops[T - 1]] if T else []))
        calls += 1
        conflicts += int((sat.solver.accum_stats() or {}).get("conflicts", 0))
        stats = clock.stats(expanded=0, generated=0, conflicts=conflicts, solver_calls=calls, horizon=T,
                            incremental=False, **inv.stats(), **extra)
        if r:
            plan = concretise(task, enc.groups, enc.decode(sat.true_lits(), T))
            sat.solver.delete()
            how = (f"UNSAT at horizons 0..{T - 1} (a new solver per horizon)" if T
                   else "the initial state is a goal")
            return Result("optimal", "sat", len(plan), plan, stats, proof=how)
        sat.solver.delete()
        if r is None or clock.out_of_time():
            steps = T if r is None else T + 1
            msg = clock.bounded(stats, steps, f"no plan has fewer than {steps} steps")
            return Result("limit", "sat", stats=stats, message=msg)
        if clock.progress is not None:
            clock.report(horizon=T + 1, lower_bound=T + 1, conflicts=conflicts, solver_calls=calls)
        if cap is not None and T >= cap:
            return Result("unknown", "sat", stats=stats, proof=f"UNSAT at horizons 0..{T}",
                          message=f"no plan of at most {cap} steps (horizon cap)")
        T += 1


def _run(task: Any, enc: CnfPlan, sat: _Sat, clock: Clock, costs: list[int], unit: bool, use_h: bool,
         cap: int | None, bound_runs: Any, hint: tuple[float, Any] | None, quick: Any,
         fresh: tuple[Any, str, Any, int | None]) -> Result:
    """``hint``: (seconds after which to ask, the call that asks bfs for a plan), or None.
    ``quick``: unit costs, the small bfs asked once horizon 0 is refuted (None: not asked).
    ``fresh``: for the refutation, (a factory of formulas of a given length, from the start or from a
    frontier's states; the solver name; the frontier's layer enumeration, None without symmetry; the
    option ``frontier``)."""
    variant = sat.variant or Variant(task, LazyInvariants(task, clock, False, False), clock)
    hinted: tuple[int, list[int]] | None = None
    T = 0
    while True:
        g = enc.goal(T)
        if g != -TOP:
            assume = [g]
            if T >= 1:
                assume.append(-enc.noops[T - 1])
            if use_h:
                assume += [enc.heuristic_at_most(t, T - t) for t in range(T + 1)]
            sat.figures = {"horizon": T, "lower_bound": T * min(costs)}
            r = sat.solve(assume)
            if r is None:    # horizons 0..T-1 refuted: a plan has at least T steps
                return _cut(sat, clock, T, T, costs, f"during horizon {T}{variant.note()}")
            if r:
                break
        elif enc.fixpoint_at is not None and T > enc.fixpoint_at:  # refuted by the encoding alone
            _no_escape(task, enc, sat, T)
            return Result("unsolvable", "sat", stats=sat.stats(horizon=T),
                          proof="the goal is impossible in the relaxed value-set reachability fixpoint")
        if variant.threshold is not None and T >= variant.threshold and variant.result is None:
            if variant.verified():  # every plan has at most `threshold` steps: all refuted
                _no_escape(task, enc, sat, T)
                return Result("unsolvable", "sat", stats=sat.stats(horizon=T),
                              proof=f"UNSAT at horizons 0..{T}; {variant.result.describe()}")  # type: ignore[union-attr]
        if T + 1 >= enc.state_bound() and enc.fixpoint_at is not None:
            _no_escape(task, enc, sat, T)
            return Result("unsolvable", "sat", stats=sat.stats(horizon=T),
                          proof=f"UNSAT at horizons 0..{T}; a loop-free plan has fewer than "
                                f"{enc.state_bound()} steps (value-set state bound)")
        if cap is not None and T >= cap:
            return Result("unknown", "sat", stats=sat.stats(horizon=T),
                          message=f"no plan of at most {cap} steps (horizon cap)",
                          proof=f"UNSAT at horizons 0..{T}")
        if clock.out_of_time():  # horizons 0..T refuted
            return _cut(sat, clock, T, T + 1, costs, f"after horizon {T}{variant.note()}")
        # unit costs: a small bfs at once (QUICK_HINT_S); without a plan the full hint stays due
        if quick is not None:
            found, quick = quick(), None
            if found is not None and found[0] > 0:
                return _refute_below(task, fresh, sat, clock, *found, refuted=T)
        # the hint (horizon.hint_after); with zero-cost actions only when the run bound is known,
        # since only then does the plan's cost give a proof horizon
        if hint is not None and clock.elapsed() >= hint[0]:
            ask, hint = hint[1], None
            if unit or bound_runs().length is not None:
                found = ask()
                if found is not None and found[0] > 0:
                    if unit:
                        return _refute_below(task, fresh, sat, clock, *found, refuted=T)
                    hinted = found
                    T += 1                             # horizons 0..T-1 refuted, as after a plan at T
                    break
        if clock.progress is not None:
            clock.report(horizon=T + 1, lower_bound=(T + 1) * min(costs), conflicts=sat._conflicts(),
                         solver_calls=sat.calls)
        _extend(enc, sat)
        T += 1
    if hinted is not None:
        cost, plan = hinted
    else:
        plan = concretise(task, enc.groups, enc.decode(sat.true_lits(), T))
        cost = sum(costs[k] for k in plan)
        how = f"UNSAT at horizons 0..{T - 1}" if T else "the initial state is a goal"
        if use_h and T:
            how += " (with the admissible heuristic's bound h(s_t) <= T - t)"
        if unit or cost == 0:
            return Result("optimal", "sat", cost, plan, sat.stats(horizon=T), proof=how)
    hint_plan = plan

    # phase 2: minimise the cost, horizon by horizon from T, up to a horizon long enough
    # for a proof (positive costs; zero-cost runs of known length) or as long as allowed
    cmin = min(costs)
    cpos = min(c for c in costs if c > 0)

    runs = bound_runs() if cmin == 0 else RunBound(0, 0.0, 0)
    sat.extra["zero_cost_run"] = runs.length
    if runs.free_actions and runs.length is not None:
        enc.limit_free_runs(runs.length)
    sat.extra["run_bound_s"] = round(runs.seconds, 3)

    def proof_horizon() -> int | None:
        return None if runs.length is None else horizon_for_cost(cost - 1, cpos, runs.length, runs.first)

    def target() -> int:
        need = proof_horizon()
        if need is None:
            need = 2 * T if cap is None else cap
        need = max(T, need)
        return need if cap is None else min(need, cap)

    H = T
    found_at = clock.elapsed()
    tot: ITotalizer | None = None
    counted = 0  # steps whose cost literals the totalizer counts
    interrupted = False
    if hinted is not None:   # straight to the horizon the proof needs
        H = target()
        while enc.horizon < H and not interrupted:
            interrupted = clock.out_of_time()
            if not interrupted:
                _extend(enc, sat)
        H = min(H, enc.horizon)
    while not interrupted:
        inputs = [q for t in range(counted, H) for q in enc.cost_inputs(t)]
        counted = H
        if tot is None:
            tot = ITotalizer(lits=inputs, ubound=cost, top_id=enc.pool.top)
            fresh = tot.cnf.clauses
        elif inputs:
            tot.extend(lits=inputs, top_id=enc.pool.top)
            fresh = tot.cnf.clauses[-tot.nof_new:] if tot.nof_new else []
        else:
            fresh = []
        enc.pool.top = max(enc.pool.top, tot.top_id)
        for c in fresh:
            enc.add(list(c))
        g = enc.goal(H)
        sat.figures = {"horizon": H, "lower_bound": T * cmin, "best_cost": cost}
        while cost > 0 and g != -TOP:
            r = sat.solve([g, -tot.rhs[cost - 1]])
            if r is None:
                interrupted = True
                break
            if not r:
                break
            new = concretise(task, enc.groups, enc.decode(sat.true_lits(), H))
            new_cost = sum(costs[k] for k in new)
            assert new_cost < cost, "cardinality bound violated by a decoded plan"
            plan, cost = new, new_cost
            found_at = clock.elapsed()
        if interrupted or cost == 0 or H >= target():
            break
        if clock.out_of_time():
            interrupted = True
            break
        if clock.progress is not None:
            clock.report(horizon=H + 1, lower_bound=T * cmin, best_cost=cost, conflicts=sat._conflicts())
        _extend(enc, sat)
        H += 1
    if tot is not None:
        tot.delete()
    stats = sat.stats(horizon=H, first_horizon=T, best_found_s=round(found_at, 3))
    if interrupted:
        lower = T * min(costs)
        why = f"no plan has fewer than {T} steps"
        by_runs = cost_lower_bound(T - 1, cpos, runs.length, runs.first) if runs.free_actions else 0
        if by_runs > lower:   # a cheaper plan would have a loop-free version that short
            lower = by_runs
            why += (f", and one of cost < {lower} would have a loop-free version that short "
                    f"({runs.describe()})")
        stats["lower_bound"] = lower
        return Result("solved", "sat", cost, plan, stats,
                      message=f"{clock.reason()} while minimising the cost at horizon {H}; no plan costs "
                              f"less than {lower} ({why})")
    if cost == 0:
        return Result("optimal", "sat", cost, plan, stats, proof="cost 0")
    need = proof_horizon()
    if need is not None and H >= need:
        proof = (f"UNSAT at horizons 0..{T - 1}; cost <= {cost - 1} UNSAT at horizon {H}, and a loop-free "
                 f"plan of cost < {cost} has at most {need} steps")
        if runs.free_actions:
            proof += f" (at most {(cost - 1) // cpos} paid steps; {runs.describe()})"
        if hinted is not None and plan is hint_plan:
            proof += "; the plan came from the bfs hint"
        return Result("optimal", "sat", cost, plan, stats, proof=proof)
    why = (f"horizon cap {H} is below the {need} steps needed for a proof" if need is not None
           else f"zero-cost actions exist and {runs.describe()} within {runs.seconds:.1f} s")
    return Result("solved", "sat", cost, plan, stats,
                  message=f"cost {cost} is the least over plans of at most {H} steps; {why}")


def _extend(enc: CnfPlan, sat: _Sat) -> None:
    """One more step, with the lazy invariants posted first once the next horizon reaches ``EAGER_FROM``."""
    if sat.inv is not None and enc.horizon + 1 >= sat.inv.EAGER_FROM and not enc.invariants:
        enc.add_invariants(sat.inv.get())
    enc.extend()


def _refute_below(task: Any, fresh: tuple[Any, str, Any, int | None], chain: _Sat, clock: Clock,
                  cost: int, plan: list[int], refuted: int) -> Result:
    """Unit costs, horizons ``0..refuted`` refuted and a plan of ``cost`` steps in hand (the bfs hint).

    One question remains: "a plan of at most ``cost - 1`` steps?", asked of a formula of its
    own: the steps up to that horizon with noops allowed, and the goal there a unit clause
    rather than an assumption, on a new solver.  A fixed goal lets the solver simplify the
    last layers at the root level and eliminate variables, which an incremental formula whose
    later steps are still to come cannot; the chain's learnt clauses are not worth that
    (docs/architecture.md, "sat's hint": the 31-move 8-puzzles 0.80-0.84 s of solving with
    the goal assumed against 0.56-0.70 s fixed).  UNSAT proves the plan optimal.  A plan
    found instead is shorter (asserted), and the question is asked again below it.  A
    limit before the answer leaves the plan, with the chain's bound.

    The frontier (option ``frontier``, :mod:`puzzleplan.encodings.frontier`): the breadth-first
    layers up to depth ``k`` are enumerated by SAT first, and the question becomes "a path of at
    most ``H - k`` steps from a state of layer ``k``?" (:func:`.horizon.frontier_depth`: by
    default from 31 steps, ``k`` half of ``H``, so at least half of the refutation's steps stay in
    the one formula; ``frontier=K`` caps ``k`` at ``K``, 0 is off).  A goal met in the layers, or
    a path from the frontier, means a plan shorter than the hint: the question is then asked
    from the start as before.
    """
    make, name, layers_of, frontier = fresh
    hinted = plan
    proof = f"UNSAT at horizons 0..{refuted}; " if refuted > 0 else ""   # horizon 0: the start is no goal
    spent = {"conflicts": chain._conflicts(), "solver_calls": chain.calls}
    use_frontier = layers_of is not None and frontier != 0
    while True:
        H = cost - 1
        if H <= refuted:
            return Result("optimal", "sat", cost, plan, _merged(chain, None, spent, horizon=refuted),
                          proof=f"UNSAT at horizons 0..{refuted}"
                                + ("; the plan came from the bfs hint" if plan is hinted else ""))
        k, cap = horizon_mod.frontier_depth(H, frontier) if use_frontier else (0, 0)
        front: Layers | None = None
        if k > 0:
            front = layers_of(k, cap, horizon_mod.layer_report(clock, refuted + 1, horizon=H, best_cost=cost))
            chain.extra.update(frontier_depth=front.depth, frontier_states=front.states,
                               frontier_layer=len(front.layers[-1]), frontier_calls=front.calls,
                               frontier_s=round(front.seconds, 3))
            spent["solver_calls"] += front.calls
            spent["conflicts"] += front.conflicts
            if front.stopped == "limit":
                return _unproven(_merged(chain, None, spent, horizon=refuted), clock, cost, plan, refuted,
                                 "while enumerating the frontier's layers", front)
            if front.goal_at is not None or front.depth < 1 or not front.layers[-1]:
                front, use_frontier = None, False   # a shorter plan: ask from the start
        depth = 0 if front is None else front.depth
        enc = make(H) if front is None else make(H - depth, front.layers[-1])
        while enc.horizon < H - depth:
            if clock.out_of_time():
                return _unproven(_merged(chain, None, spent, horizon=refuted), clock, cost, plan, refuted,
                                 f"while encoding step {enc.horizon + 1}", front)
            enc.extend()
        g = enc.goal(H - depth)
        if g == -TOP:
            r: bool | None = False
            one = None
        else:
            enc.add([g])
            one = _Sat(enc, name, clock)
            one.inv, one.extra = chain.inv, chain.extra
            one.figures = {"horizon": H, "lower_bound": max(refuted, depth) + 1, "best_cost": cost}
            r = one.solve([])
        try:
            stats = _merged(chain, one, spent, horizon=H if r is False else refuted)
            if r is None:
                return _unproven(stats, clock, cost, plan, refuted,
                                 f"while refuting plans of at most {H} steps", front)
            if not r:
                source = "; the plan came from the bfs hint" if plan is hinted else ""
                how = f"no plan of at most {H} steps (UNSAT at horizon {H}, noops allowed)"
                if front is not None:
                    how = (f"no plan of at most {H} steps: breadth-first layers 0..{depth} enumerated by "
                           f"SAT ({front.states} states, none a goal; each layer closed by UNSAT), and no "
                           f"path of at most {H - depth} steps from the {len(front.layers[-1])} states at "
                           f"distance {depth} to a goal (UNSAT at horizon {H - depth}, noops allowed)")
                return Result("optimal", "sat", cost, plan, stats, proof=f"{proof}{how}{source}")
            assert one is not None
            if front is not None:      # a path from the frontier: some plan is shorter; ask from the start
                use_frontier = False
                continue
            new = concretise(task, enc.groups, enc.decode(one.true_lits(), H))
        finally:
            if one is not None:
                spent["conflicts"] += one._conflicts()
                spent["solver_calls"] += one.calls
                one.solver.delete()
        assert len(new) < cost, "a decoded plan is longer than its horizon"
        plan, cost = new, len(new)
        if cost == 0:
            return Result("optimal", "sat", 0, plan, _merged(chain, None, spent, horizon=H), proof="cost 0")


def _merged(chain: _Sat, one: _Sat | None, spent: dict[str, int], **extra: Any) -> dict[str, Any]:
    """The stats of a run that ended on a refutation's own solver: its size, everyone's conflicts."""
    stats = (one or chain).stats(**extra)
    if one is not None:
        stats["conflicts"] = spent["conflicts"] + one._conflicts()
        stats["solver_calls"] = spent["solver_calls"] + one.calls
    else:
        stats.update(spent)
    return stats


def _unproven(stats: dict[str, Any], clock: Clock, cost: int, plan: list[int], refuted: int,
              where: str, front: Layers | None = None) -> Result:
    """A limit before the last refutation: the plan stands, with the chain's bound, or the frontier's
    when its complete layers reach deeper (none of them holds a goal)."""
    why = f"UNSAT at horizons 0..{refuted}"
    if front is not None and front.goal_at is None and front.depth > refuted:
        refuted = front.depth
        why = f"breadth-first layers 0..{refuted} enumerated by SAT hold no goal"
    stats["lower_bound"] = refuted + 1
    return Result("solved", "sat", cost, plan, stats,
                  message=f"{clock.reason()} {where}; no plan has fewer than {refuted + 1} steps ({why})")


def _no_escape(task: Any, enc: CnfPlan, sat: _Sat, T: int) -> None:
    """Before ``unsolvable``: no state within ``T`` steps lets an action write outside a domain.

    The unrolled step treats such a write as impossible, so a model with that bug would otherwise be
    called unsolvable where the explicit engines stop with the model error (docs/language.md): ask
    the solver for a run of at most ``T`` steps that ends where an escape condition holds
    (``Task.domain_escapes``) and report it the way the kernels do.
    """
    from ..encodings.npkernel import DomainError

    escapes = task.domain_escapes()
    if not escapes:
        return
    found: list[tuple[int, int, int, int]] = []
    for t in range(T + 1):
        for i, j, cond in escapes:
            lit = enc.boolean(cond, t)
            if lit != -TOP:
                found.append((lit, i, j, t))
    if not found:
        return
    if any(lit == TOP for lit, *_ in found):
        lit, i, j, t = next(f for f in found if f[0] == TOP)
    else:
        sel = enc.pool.id(("escape-query", T))
        enc.add([-sel] + [lit for lit, *_ in found])
        r = sat.solve([sel])
        enc.add([-sel])
        if not r:        # refuted, or a limit: nothing found to report
            return
        true = sat.true_lits()
        lit, i, j, t = next(f for f in found if f[0] in true)
    act = task.actions[i]
    name = task.variables[act.effects[j].var].name
    raise DomainError(f"action {act.label} sets {name} outside its domain in a state reachable in {t} "
                      "steps (found by sat)")


def _cut(sat: _Sat, clock: Clock, T: int, steps: int, costs: list[int], where: str) -> Result:
    """A limit in the horizon search: every plan has at least ``steps`` steps (the horizons
    below were refuted), so no plan costs less than ``steps`` times the cheapest action."""
    stats = sat.stats(horizon=T)
    lower = steps * min(costs, default=0)
    msg = clock.bounded(stats, lower, f"no plan has fewer than {steps} steps") + f"; stopped {where}"
    return Result("limit", "sat", stats=stats, message=msg)
