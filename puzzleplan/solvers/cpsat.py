"""Engine ``cpsat``: the unrolled planning model of :mod:`puzzleplan.encodings.cpsat` on OR-Tools CP-SAT.

Each model says "a plan of at most ``H`` steps reaches the goal" (noops only at
the end) and minimises the total cost.  CP-SAT is not incremental, so every
horizon is a fresh model; rather than one model per step, the default
strategy grows the horizon geometrically until a model is feasible:

    H = L, then max(H + 1, ceil(1.5 H)), ...

where ``L`` is a lower bound on the plan length: ``ceil(h(init) / max cost)``
when the model's heuristic is declared admissible (``h`` bounds the cost, and
each step costs at most the maximum), else 0.  An INFEASIBLE answer at ``H``
proves that no plan has at most ``H`` steps.  At the first feasible ``H``
CP-SAT minimises the cost over all plans of at most ``H`` steps.  (Measured
against the alternatives: one model per step, ``T = 0, 1, 2, ...``, builds
and presolves many models; bisecting the horizon after a first plan needs
several hard INFEASIBLE proofs near the optimum.  One OPTIMAL solve at a
slightly longer horizon was the fastest, e.g. 9 s against 20 s on a 31-move
8-puzzle, 21 s against 55 s on fayaa-117.)  With an admissible heuristic the
models carry the cuts ``cost(prefix) + h(s_t) <= cost`` (and
``h(s_t) <= H - t`` for unit costs).

Claims (CP-SAT status OPTIMAL with cost ``C`` at horizon ``H``):

* "optimal" when every action costs at least ``cmin >= 1`` and
  ``(C - 1) // cmin <= H`` (a cheaper plan would have fitted; for unit costs
  always, since ``C <= H``); when ``(C - 1) // cmin > H`` the horizon is raised
  to that bound and a cheaper plan is looked for there (INFEASIBLE: optimal);
* "optimal" when ``C = 0``;
* with zero-cost actions the same argument with the zero-cost run bound
  ``Z`` of :mod:`puzzleplan.encodings.runbound` (as in the ``sat`` engine):
  a cheaper loop-free plan has at most ``K + K Z + Z0`` steps, ``K =
  (C - 1) // c+``, ``Z0 <= Z`` the bound on the first run, from the initial state;
  the horizon is raised to that bound once.  When ``Z`` is
  not established in time: "solved", the cost minimised once more at the
  next horizon of the schedule (slack for free steps), and the message
  gives the horizon it is minimal for.

Once a plan of cost ``C`` is known and ``H`` is the horizon within which any
cheaper loop-free plan fits, the *proof model* only asks "a plan of cost
``<= C - 1`` within ``H`` steps?", with no objective (measured much faster to
refute than a minimising model); a plan found there is cheaper, and the question
is asked again at its own, shorter, horizon.  With unit or 0/1 costs the plan that
fixes ``C`` comes by default from a small ``bfs`` run on the same kernel (option
``hint``, :func:`.horizon.explicit_plan`), which spares the horizon schedule; only its
plan is used, never its verdict.

Two CP-SAT models of the unrolled task (option ``encoding``): integer state
variables (:mod:`puzzleplan.encodings.cpsat`, with the heuristic's cuts) or the
``sat`` engine's clauses (:mod:`puzzleplan.encodings.cpclauses`); ``auto`` takes
the clauses for the proof models when costs are 0/1 and no cuts are posted,
the integers otherwise (figures in docs/architecture.md).

Without a plan, the horizon grows until it reaches the number of states of
the relaxed reachability fixpoint (the ``sat`` engine's bound): INFEASIBLE
there proves the task unsolvable.  When the model declares a variant
(:mod:`puzzleplan.lang.variant`), the schedule stops at its threshold
``V(init) - lo`` on the way: INFEASIBLE there proves the task unsolvable
once the declaration is verified (:mod:`puzzleplan.encodings.variant`; as in
``sat``, checked only then, and ignored if it fails).  With ``horizon=H``
only that horizon is solved; INFEASIBLE is "unknown" (no plan of at most
``H`` steps).  A time limit after a plan was found gives
"solved" with the best plan.

Options: ``horizon``, ``workers`` (CP-SAT ``num_workers``, default 1:
deterministic), ``seed`` (``random_seed``, default 0), ``heuristic`` (use the
model's heuristic when it is declared admissible; by default only when no
action costs 0: on 0/1 costs the cuts were measured slower, see
docs/architecture.md.  The cuts trust that declaration in *every* state, as
A* does -- a 0/1-cost heuristic that ignores free continuations would make
them cut off optimal plans),
``run_bound_s`` (seconds for the zero-cost run bound, see ``sat``),
``invariants`` (2-literal invariants
from :func:`puzzleplan.encodings.invariants.mutex_invariants`), ``symmetry``
(canonical states for interchangeable objects), ``undo`` (default true: no action right
after one it undoes, :mod:`puzzleplan.encodings.reversals`), ``linearization`` (CP-SAT's
``linearization_level``, default 0: no LP relaxation.  The unrolled models are boolean-heavy
and their LP bound is weak, so the LP's cost per node does not pay; measured against CP-SAT's
default 1 in docs/architecture.md).  ``encoding`` (``auto``, ``int``, ``clauses``, above) and ``hint``
(default: on for unit and 0/1 costs).
The time limit covers invariant synthesis and model building: each solve gets the time that is left.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

from ..encodings.runbound import RunBound, cost_lower_bound, horizon_for_cost
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
    state_bound,
    undo_pairs_for,
)
from .result import STOP, Clock, Limits, Result

if TYPE_CHECKING:  # ortools is imported on first use: it costs ~0.3 s at start-up
    from ..encodings.cpsat import CpPlan


class _Runner:
    def __init__(self, clock: Clock, workers: int, seed: int, linearization: int = 0):
        self.clock = clock
        self.workers = workers
        self.seed = seed
        self.linearization = linearization
        self.conflicts = 0
        self.branches = 0
        self.models = 0
        self.size: dict[str, int] = {}
        self.extra: dict[str, Any] = {}
        self.figures: dict[str, Any] = {}   # what the progress reports say besides time and conflicts

    def solve(self, plan: CpPlan, seconds: float | None = None) -> tuple[str, Any]:
        """CP-SAT status name and the solver (None when out of time before starting).

        ``seconds``: stop sooner than the deadline (status UNKNOWN or FEASIBLE then).
        """
        from ortools.sat.python import cp_model

        self.models += 1
        self.size = plan.size()
        left = None if self.clock.deadline is None else self.clock.deadline - time.perf_counter()
        if left is not None and left <= 0:
            return "UNKNOWN", None
        solver = cp_model.CpSolver()
        p = solver.parameters
        p.num_workers = self.workers
        p.random_seed = self.seed
        p.linearization_level = self.linearization
        if seconds is not None:
            left = seconds if left is None else min(left, seconds)
        if left is not None:
            p.max_time_in_seconds = left
        p.catch_sigint_signal = False   # our handlers decide (Stop); CP-SAT took SIGINT as a time limit
        if self.clock.out_of_time():
            return "UNKNOWN", None
        t0 = time.perf_counter()

        def tick() -> None:   # CP-SAT releases the GIL: report from the watch thread while it works
            self.clock.report(**self.figures, conflicts=self.conflicts, models=self.models,
                              solve_s=round(time.perf_counter() - t0, 3))

        # a signal, the deadline or --max-memory stops it
        with self.clock.watch(solver.stop_search, tick=tick if self.clock.progress is not None else None):
            status = solver.solve(plan.m)
        self.conflicts += solver.num_conflicts
        self.branches += solver.num_branches
        name = solver.status_name(status)
        if name == "MODEL_INVALID":
            raise RuntimeError("CP-SAT rejected the model: " + plan.m.validate())
        return name, solver

    def stats(self, **extra: Any) -> dict[str, Any]:
        return self.clock.stats(expanded=0, generated=0, conflicts=self.conflicts, branches=self.branches,
                                models=self.models, **self.size, **self.extra, **extra)


# the CP-SAT model of the unrolled task: auto picks per task (see solve)
ENCODINGS = ("auto", "int", "clauses")

# the longest horizon jump after a plan is found, as a multiple of the current horizon: the step
# bound that the cost implies (horizon_for_cost) can be millions when costs are weighted
GROWTH = 16


def solve(kernel: Any, limits: Limits, horizon: int | None = None, workers: int = 1, seed: int = 0,
          heuristic: bool | None = None, invariants: bool = True, symmetry: bool = True,
          run_bound_s: float | None = None, undo: bool = True, linearization: int = 0,
          encoding: str = "auto", hint: bool | None = None, frontier: int | None = None) -> Result:
    from ..encodings.cpclauses import CpClauses
    from ..encodings.cpfrontier import cp_layers
    from ..encodings.cpsat import BuildStopped, CpPlan
    from ..encodings.unrolled import node_values

    task = kernel.task
    horizon = opt_int("horizon", horizon, 1)
    workers = opt_int("workers", workers, 1) or 1
    seed = opt_int("seed", seed) or 0
    invariants = bool(opt_bool("invariants", invariants))
    symmetry = bool(opt_bool("symmetry", symmetry))
    run_bound_s = opt_seconds("run_bound_s", run_bound_s)
    undo = bool(opt_bool("undo", undo))
    linearization = opt_int("linearization", linearization) or 0   # the registry checks 0..2
    frontier = opt_int("frontier", frontier, 0)
    clock = Clock(limits)
    run = _Runner(clock, workers, seed, linearization)
    pairs = undo_pairs_for(task, undo, symmetry, run.extra)
    costs = [a.cost for a in task.actions]
    cmin, cmax = min(costs, default=1), max(costs, default=1)
    cpos = min((c for c in costs if c > 0), default=1)
    runs: list[RunBound] = []  # computed once, when a plan's cost first needs it
    heuristic = opt_bool("heuristic", heuristic)
    if encoding not in ENCODINGS:
        raise OptionError(f"engine cpsat: encoding={encoding!r} is not one of {', '.join(ENCODINGS)}")
    if encoding == "clauses" and heuristic:
        raise OptionError("engine cpsat: the heuristic's cuts need encoding=int (the clause model has no "
                          "integer cost-to-go to bound)")
    if heuristic is None:   # the cuts slowed every 0/1-cost model measured (docs/architecture.md)
        heuristic = cmin > 0 and encoding != "clauses"
    admissible = bool(heuristic and task.heuristic is not None and task.heuristic_admissible)
    # auto: the clauses refute the proof models of 0/1 costs faster, the integers find plans
    # faster on crowded piece puzzles (docs/architecture.md): each where it was measured better
    proof_encoding = encoding
    if encoding == "auto":
        encoding = "int"
        proof_encoding = "clauses" if task.cost_kind == "01" and not admissible else "int"
    models_by: dict[str, int] = {}
    run.extra["models_by_encoding"] = models_by
    inv = LazyInvariants(task, clock, invariants, symmetry)
    variant = Variant(task, inv, clock)

    lower = 0
    if admissible and cmax > 0:
        h0 = min(node_values(task.heuristic, [frozenset((v,)) for v in task.init], {}))  # type: ignore[arg-type]
        lower = math.ceil(h0 / cmax)

    def build(H: int, proof: bool = False, **kw: Any) -> CpPlan | CpClauses:
        free_run = runs[0].length if runs and runs[0].free_actions else None
        invs = inv.get() if H >= inv.EAGER_FROM else inv.value
        run.extra.update(inv.stats())
        which = proof_encoding if proof else encoding
        models_by[which] = models_by.get(which, 0) + 1
        if which == "clauses":
            return CpClauses(task, H, invariants=invs, symmetry=symmetry, free_run=free_run, undo=pairs,
                             stop=clock.out_of_time, **kw)
        # unit costs: the proof model ("a shorter plan than the one in hand?") goes without the
        # heuristic's cuts: the 31-move 8-puzzle's refutation took 0.56 s without them against
        # 0.87 s with, Hua Rong Dao's within 5 % either way (docs/architecture.md)
        cuts = admissible and not (proof and task.cost_kind == "unit")
        return CpPlan(task, H, heuristic=cuts, invariants=invs, symmetry=symmetry, free_run=free_run,
                      undo=pairs, stop=clock.out_of_time, **kw)

    def out_of_time(H: int, best: tuple[int, list[int]] | None = None) -> Result:
        steps = max(refuted + 1, 0)        # horizons up to `refuted` hold no plan
        lower = steps * cmin
        if best is not None:
            why = ""
            if runs and runs[0].free_actions:   # a cheaper plan would have a loop-free version that short
                by_runs = cost_lower_bound(refuted, cpos, runs[0].length, runs[0].first)
                if by_runs > lower:
                    lower = by_runs
                    why = (f" (no plan has at most {refuted} steps, and one of cost < {lower} would have a "
                           f"loop-free version that short: {runs[0].describe()})")
            stats = run.stats(horizon=H, lower_bound=lower)
            return Result("solved", "cpsat", best[0], best[1], stats,
                          message=f"{clock.reason()} while looking for a cheaper plan at horizon {H}; "
                                  f"no plan costs less than {lower}{why}")
        stats = run.stats(horizon=H, **variant.stats())
        msg = clock.bounded(stats, lower, f"no plan has fewer than {steps} steps")
        return Result("limit", "cpsat", stats=stats, message=f"{msg}; stopped at horizon {H}{variant.note()}")

    def run_length() -> int | None:
        if cmin > 0:
            return 0
        if not runs:
            runs.append(run_bound(task, inv, clock, run_bound_s))
            run.extra.update(zero_cost_run=runs[0].length, run_bound_s=round(runs[0].seconds, 3))
        return runs[0].length

    def proof_horizon(cost: int) -> int:
        """Steps within which some plan cheaper than ``cost`` fits, if any exists (run bound known)."""
        z = run_length()
        assert z is not None
        return horizon_for_cost(cost - 1, cpos, z, runs[0].first if runs else None)

    def zero_cost_result(cost: int, plan: list[int], H: int) -> Result:
        return Result("solved", "cpsat", cost, plan, run.stats(horizon=H),
                      message=f"cost {cost} is the least over plans of at most {H} steps; zero-cost "
                              f"actions exist, and {runs[0].describe() if runs else 'no run bound'}")

    bounds: list[int] = []

    def fixpoint_states() -> int:
        """States in the relaxed reachability fixpoint's value sets (as the ``sat`` engine uses)."""
        if not bounds:
            bounds.append(state_bound(task, symmetry))
        return bounds[0]

    def bound_note() -> str:
        return f" ({runs[0].describe()})" if runs and runs[0].free_actions else ""

    fixed = horizon is not None
    H = horizon if horizon is not None else lower
    refuted = lower - 1  # largest horizon known to hold no plan
    best: tuple[int, list[int]] | None = None  # a plan whose cost we try to beat at a longer horizon
    # at the horizon a proof needs, only "is there a cheaper plan?" is asked: a feasibility model
    # refutes faster than one that also minimises (61 s against > 130 s, docs/architecture.md)
    proving = False
    hint_at = hint_after(task, opt_bool("hint", hint), usable=not fixed)
    hint = hint_at is not None
    hinted: list[int] | None = None
    quick = horizon_mod.QUICK_HINT_S
    if hint and task.cost_kind == "unit" and quick > 0:   # a small bfs first; the full one stays due
        asked: dict[str, Any] = {}
        found = explicit_plan(kernel, clock, asked, seconds=quick)
        if "hint_s" in asked:
            run.extra["quick_hint_s"] = asked["hint_s"]
        if "hint_load_s" in asked:
            run.extra["hint_load_s"] = asked["hint_load_s"]
        if found is not None and found[0] > 0:
            run.extra.update(asked)
            best, proving, hinted, hint = found, True, found[1], False
            H = proof_horizon(best[0])
    # the frontier (encodings/cpfrontier.py): unit costs, int proof models, symmetry on (the layers'
    # states are canonical); off for good once a layer meets the goal or a path leaves the frontier
    use_frontier = frontier != 0 and symmetry and task.cost_kind == "unit" and proof_encoding == "int"
    while True:
        # the run bound first: without it no proof horizon follows from the hint's cost
        if hint and best is None and clock.elapsed() >= (hint_at or 0.0):
            hint = False
            if run_length() is not None and (found := explicit_plan(kernel, clock, run.extra)) is not None \
                    and found[0] > 0:
                best, proving, hinted = found, True, found[1]
                H = proof_horizon(best[0])
        if clock.out_of_time():
            return out_of_time(H, best)
        run.figures = {"horizon": H, "lower_bound": max(refuted + 1, 0) * cmin}
        if best is not None:
            run.figures["best_cost"] = best[0]
        clock.report(**run.figures, conflicts=run.conflicts)
        front = None
        k, cap = horizon_mod.frontier_depth(H, frontier) if use_frontier and proving else (0, 0)
        if k > 0:
            assert best is not None     # the frontier is asked only while proving a plan
            front = cp_layers(task, k, cap, inv.get(), stop=clock.out_of_time,
                              tick=horizon_mod.layer_report(clock, max(refuted + 1, 0), horizon=H,
                                                            best_cost=best[0]))
            run.extra.update(frontier_depth=front.depth, frontier_states=front.states,
                             frontier_layer=len(front.layers[-1]), frontier_models=front.calls,
                             frontier_s=round(front.seconds, 3))
            run.conflicts += front.conflicts
            if front.goal_at is None:    # no plan within the complete layers' depth
                refuted = max(refuted, front.depth)
            if front.stopped == "limit":
                return out_of_time(H, best)
            if front.goal_at is not None or front.depth < 1 or not front.layers[-1]:   # ask from the start
                front, use_frontier = None, False
        depth = 0 if front is None else front.depth
        try:
            with STOP.held():   # the clause model's totalizers are pysat's C code
                if front is None:
                    model = build(H, proof=proving, max_cost=None if best is None else best[0] - 1,
                                  objective=not proving)
                else:
                    model = build(H - depth, proof=True, objective=False, start_states=front.layers[-1])
        except BuildStopped:
            return out_of_time(H, best)
        # unit costs with the hint still due: the schedule's model stops when it is due
        due = max(hint_at - clock.elapsed(), 0.05) if hint and best is None and hint_at else None
        status, solver = run.solve(model, due)
        if due is not None and status in ("UNKNOWN", "FEASIBLE") and not clock.out_of_time():
            hint_at = 0.0   # the hint now, or the plan this model found
            if status == "FEASIBLE":
                plan = model.decode(solver)
                best, proving, hint = (sum(costs[k] for k in plan), plan), True, False
                if best[0] == 0:
                    return Result("optimal", "cpsat", 0, plan, run.stats(horizon=H), proof="cost 0")
                H = proof_horizon(best[0])
            continue
        if front is not None and best is not None and status == "INFEASIBLE":
            cost, plan = best
            source = "; the plan came from the bfs hint" if plan is hinted else ""
            return Result("optimal", "cpsat", cost, plan, run.stats(horizon=H - depth),
                          proof=f"no plan of cost <= {cost - 1} (at most {H} steps): breadth-first layers "
                                f"0..{depth} enumerated "
                                f"by CP-SAT ({front.states} states, none a goal; each layer's enumeration "
                                f"complete), and no path of at most {H - depth} steps from the "
                                f"{len(front.layers[-1])} states at distance {depth} to a goal (INFEASIBLE)"
                                f"{source}")
        if front is not None and status in ("FEASIBLE", "OPTIMAL"):   # a shorter plan: from the start
            use_frontier = False
            continue
        if proving and status in ("FEASIBLE", "OPTIMAL"):   # a cheaper plan: prove that one instead
            plan = model.decode(solver)
            cost = sum(costs[k] for k in plan)
            assert best is not None and cost < best[0], "the cost bound was violated by a decoded plan"
            best = (cost, plan)
            if cost == 0:
                return Result("optimal", "cpsat", cost, plan, run.stats(horizon=H), proof="cost 0")
            H = proof_horizon(cost)
            continue
        if status == "INFEASIBLE":
            if best is not None and run_length() is None:  # no cheaper plan within the slack horizon
                return zero_cost_result(*best, H)
            if best is not None:  # no cheaper plan within the steps any cheaper plan needs
                cost, plan = best
                source = "; the plan came from the bfs hint" if plan is hinted else ""
                return Result("optimal", "cpsat", cost, plan, run.stats(horizon=H),
                              proof=f"no plan of cost <= {cost - 1} within {H} steps (INFEASIBLE), "
                                    f"and a cheaper loop-free plan has at most {H} steps"
                                    f"{bound_note()}{source}")
            vt = variant.threshold
            if vt is not None and H >= vt and variant.result is None and variant.verified():
                _no_escape(task, H, run)
                return Result("unsolvable", "cpsat", stats=run.stats(horizon=H, **variant.stats()),
                              proof=f"INFEASIBLE at horizon {H}; "
                                    f"{variant.result.describe()}")  # type: ignore[union-attr]
            if fixed:
                return Result("unknown", "cpsat", stats=run.stats(horizon=H, **variant.stats()),
                              message=f"no plan of at most {H} steps{variant.note()}",
                              proof=f"INFEASIBLE at horizon {H}")
            refuted = H
            if H + 1 >= fixpoint_states():  # a loop-free plan would have fitted
                _no_escape(task, H, run)
                return Result("unsolvable", "cpsat", stats=run.stats(horizon=H),
                              proof=f"INFEASIBLE at horizon {H}; a loop-free plan has fewer than "
                                    f"{fixpoint_states()} steps (value-set state bound)")
            nxt = min(max(H + 1, math.ceil(1.5 * H)), max(fixpoint_states() - 1, H + 1))
            if vt is not None and H < vt < nxt and variant.result is None:
                nxt = vt  # the variant's threshold: INFEASIBLE there is a proof (once verified)
            H = nxt
            continue
        if status not in ("FEASIBLE", "OPTIMAL"):
            return out_of_time(H, best)
        plan = model.decode(solver)
        cost = sum(costs[k] for k in plan)
        if status == "FEASIBLE":
            return out_of_time(H, (cost, plan))
        if cost == 0:
            return Result("optimal", "cpsat", cost, plan, run.stats(horizon=H), proof="cost 0")
        z = run_length()
        stats = run.stats(horizon=H)
        if z is not None:
            need = proof_horizon(cost)
            if need <= H:
                proof = f"CP-SAT OPTIMAL over plans of at most {H} steps; a cheaper plan has at most {need}"
                if refuted >= 0:
                    proof += f"; INFEASIBLE at horizon {refuted}"
                if lower:
                    proof += f"; admissible h(init) gives at least {lower} steps"
                return Result("optimal", "cpsat", cost, plan, stats, proof=proof + bound_note())
            if not fixed and need <= GROWTH * H + 64:
                best, H, proving = (cost, plan), need, True  # a cheaper plan could be longer: look there
                continue
            if not fixed:   # weighted costs (e.g. tie-breaks): the cost says little about the steps
                return Result("solved", "cpsat", cost, plan, stats,
                              message=f"cost {cost} is the least over plans of at most {H} steps; a cheaper "
                                      f"plan could need up to {need} steps, more than {GROWTH}x this "
                                      "horizon: not built")
            return Result("solved", "cpsat", cost, plan, stats,
                          message=f"cost {cost} is the least over plans of at most {H} steps; a cheaper "
                                  f"plan could need up to {need} steps")
        if not fixed and best is None:  # zero-cost steps: look for a cheaper, longer plan once
            best, H = (cost, plan), max(H + 1, math.ceil(1.5 * H))
            continue
        return zero_cost_result(cost, plan, H)


def _no_escape(task: Any, H: int, run: Any) -> None:
    """Before ``unsolvable``: no state within ``H`` steps lets an action write outside a domain.

    The unrolled step treats such a write as impossible; so that a model with that bug gets the
    model error the explicit engines raise (docs/language.md), one more model asks for a run of at
    most ``H`` steps that ends where an escape condition of ``Task.domain_escapes`` holds.
    """
    from dataclasses import replace

    from ..encodings.cpsat import CpPlan
    from ..encodings.npkernel import DomainError
    from ..lang.expr import Or

    escapes = task.domain_escapes()
    if not escapes:
        return
    probe = replace(task, goal=Or(*[cond for _, _, cond in escapes]), heuristic=None, walk_actions=[])
    status, _ = run.solve(CpPlan(probe, H, heuristic=False, objective=False, symmetry=False))
    if status in ("FEASIBLE", "OPTIMAL"):
        labels = sorted({task.actions[i].label for i, _, _ in escapes})
        more = ", ..." if len(labels) > 3 else ""
        raise DomainError(f"an action ({', '.join(labels[:3])}{more}) sets a variable outside its domain "
                          f"in a state reachable within {H} steps (found by cpsat)")

