"""Engine ``cpsat``: the unrolled planning model of :mod:`puzzleplan.encodings.cpsat` on OR-Tools CP-SAT.

Default strategy (no ``horizon`` option):

1. horizon search: for ``T = T0, T0+1, ...`` build the model "exactly ``T``
   actions reach the goal" and ask CP-SAT for feasibility.  ``T0`` is 0, or
   ``h(init)`` when costs are unit and the model's heuristic is declared
   admissible (no plan is shorter); with that heuristic the models also carry
   ``h(s_t) <= T - t``.  CP-SAT is not incremental, so each horizon is a new
   model; INFEASIBLE answers are the proof that no shorter plan exists.
2. cost: at the first feasible ``T`` the model "at most ``H`` steps" (noops at
   the end) is solved minimising the total cost, where ``H`` is ``T`` for unit
   costs, ``max(T, (C-1) // cmin)`` when every cost is at least ``cmin >= 1``
   (a cheaper plan cannot be longer), and ``2 T`` when zero-cost actions exist.

The result is "optimal" only when CP-SAT reports OPTIMAL *and* the horizon
covers every cheaper plan: unit or positive costs as above (or cost 0).
With zero-cost actions a longer plan could be cheaper, so the answer is
"solved" with the horizon in the message.  With ``horizon=H`` step 1 is
skipped and the cost is minimised over plans of at most ``H`` steps;
INFEASIBLE there is "unknown" (no plan of at most ``H`` steps).

Options: ``horizon``, ``workers`` (CP-SAT ``num_workers``, default 1: deterministic),
``seed`` (``random_seed``, default 0), ``heuristic`` (use the admissible heuristic).
The time limit covers model building too: each solve gets the remaining time.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..lang.errors import OptionError
from .result import Clock, Limits, Result

if TYPE_CHECKING:  # ortools is imported on first use: it costs ~0.3 s at start-up
    from ..encodings.cpsat import CpPlan


class _Runner:
    def __init__(self, clock: Clock, workers: int, seed: int):
        self.clock = clock
        self.workers = workers
        self.seed = seed
        self.conflicts = 0
        self.branches = 0
        self.models = 0
        self.size: dict[str, int] = {}
        self.extra: dict[str, Any] = {}

    def solve(self, plan: CpPlan) -> tuple[str, Any]:
        """CP-SAT status name and the solver (None when out of time before starting)."""
        from ortools.sat.python import cp_model

        self.models += 1
        self.size = plan.size()
        left = None if self.clock.deadline is None else self.clock.deadline - _now()
        if left is not None and left <= 0:
            return "UNKNOWN", None
        solver = cp_model.CpSolver()
        p = solver.parameters
        p.num_workers = self.workers
        p.random_seed = self.seed
        if left is not None:
            p.max_time_in_seconds = left
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


def _now() -> float:
    return time.perf_counter()


def solve(kernel: Any, limits: Limits, horizon: int | None = None, workers: int = 1, seed: int = 0,
          heuristic: bool = True, invariants: bool = True, symmetry: bool = True) -> Result:
    from ..encodings.cpsat import CpPlan, node_values
    from ..encodings.sat import mutex_invariants

    task = kernel.task
    if horizon is not None and int(horizon) < 0:
        raise OptionError("horizon must be >= 0")
    if int(workers) < 1:
        raise OptionError("workers must be >= 1")
    clock = Clock(limits)
    run = _Runner(clock, int(workers), int(seed))
    costs = [a.cost for a in task.actions]
    unit = task.cost_kind == "unit"
    cmin = min(costs, default=1)
    h_ok = bool(heuristic and unit and task.heuristic is not None and task.heuristic_admissible)
    inv = None
    if invariants:
        t0 = _now()
        inv = mutex_invariants(task, deadline=clock.deadline, symmetric=symmetry)
        run.extra = {"invariant_pairs": sum(len(p) for p in inv.values()) if inv else 0,
                     "invariants_s": round(_now() - t0, 3)}

    def build(T: int, **kw: Any) -> CpPlan:
        return CpPlan(task, T, invariants=inv, symmetry=symmetry, **kw)

    T: int
    first_how = ""
    if horizon is None:
        T = 0
        if h_ok:
            init = [frozenset((v,)) for v in task.init]  # h is symmetric: the real init will do
            T = min(node_values(task.heuristic, init, {}))  # type: ignore[arg-type]
        T0 = T
        while True:
            if clock.out_of_time():
                return Result("limit", "cpsat", stats=run.stats(horizon=T),
                              message=f"time limit before horizon {T}")
            model = build(T, exact=True, h_bound=h_ok, objective=False)
            status, solver = run.solve(model)
            if status in ("FEASIBLE", "OPTIMAL"):
                break
            if status != "INFEASIBLE":
                return Result("limit", "cpsat", stats=run.stats(horizon=T),
                              message=f"time limit during horizon {T}")
            T += 1
        first_how = (f"INFEASIBLE at horizons {T0}..{T - 1}" if T > T0 else "")
        if T0:
            first_how = (first_how + "; " if first_how else "") + f"admissible h(init) = {T0}"
        assert solver is not None
        plan = model.decode(solver)
        cost = sum(costs[k] for k in plan)
        if unit or cost == 0:
            return Result("optimal", "cpsat", cost, plan, run.stats(horizon=T),
                          proof=(first_how or "the initial state is a goal") +
                          (f"; a {T}-step plan" if T else ""))
        H = max(T, (cost - 1) // cmin) if cmin >= 1 else 2 * T
    else:
        H = int(horizon)
        T = -1
    if clock.out_of_time():
        return Result("limit", "cpsat", stats=run.stats(horizon=H), message="time limit before optimising")
    model = build(H, exact=False, objective=True)
    status, solver = run.solve(model)
    if status == "INFEASIBLE":
        return Result("unknown", "cpsat", stats=run.stats(horizon=H),
                      message=f"no plan of at most {H} steps", proof=f"INFEASIBLE at horizon {H}")
    if status not in ("FEASIBLE", "OPTIMAL"):
        return Result("limit", "cpsat", stats=run.stats(horizon=H), message=f"time limit at horizon {H}")
    assert solver is not None
    plan = model.decode(solver)
    cost = sum(costs[k] for k in plan)
    stats = run.stats(horizon=H, **({"first_horizon": T} if T >= 0 else {}))
    if status == "FEASIBLE":
        return Result("solved", "cpsat", cost, plan, stats,
                      message=f"time limit while minimising the cost at horizon {H}")
    if cost == 0:
        return Result("optimal", "cpsat", cost, plan, stats, proof="cost 0")
    if cmin >= 1 and (cost - 1) // cmin <= H:
        return Result("optimal", "cpsat", cost, plan, stats,
                      proof=f"CP-SAT OPTIMAL over plans of at most {H} steps; a plan of cost < {cost} "
                            f"has at most {(cost - 1) // cmin} steps")
    why = ("zero-cost actions exist, so a longer plan could be cheaper" if cmin == 0
           else f"a cheaper plan could need up to {(cost - 1) // cmin} steps")
    return Result("solved", "cpsat", cost, plan, stats,
                  message=f"cost {cost} is the least over plans of at most {H} steps; {why}")
