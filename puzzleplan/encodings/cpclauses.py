"""The clause translation of the unrolled task, solved by CP-SAT: ``cpsat -E encoding=clauses``.

Why a second CP-SAT model: :class:`.cpsat.CpPlan` keeps one integer variable
per (state variable, step) so that arithmetic, sums and the heuristic's cuts
get CP-SAT's integer reasoning.  On tasks whose actions are long chains of
conditional writes that representation refutes slowly: one measured proof
model ("no plan of cost <= 5 within 30 steps") took 76 s as integers and 16 s
as these clauses, on the same CP-SAT; on a unit-cost piece-sliding model it was
the other way round (9.6 s against 49 s).  The engine picks per model it builds
(see :mod:`puzzleplan.solvers.cpsat`; the boards and figures are in
docs/architecture.md).

The clauses are those of :class:`.sat.CnfPlan` -- one-hot state literals,
guards, effects with their firing conditions, explanatory and converse frame
axioms, invariants, canonical states, no undo pairs, the free-run window --
posted as ``AddBoolOr``, and the cost counted in unary by a totalizer over
the per-step cost literals, bounded by ``max_cost`` (a clause) and minimised
(the sum of the count's literals).  So ``sat`` and
``cpsat`` share this translation: their agreement then checks the solvers and
the cost handling, not the encoding (``verify`` counts both as one paradigm
anyway).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ortools.sat.python import cp_model
from pysat.card import ITotalizer

from ..ir.task import Task
from .cpsat import PlanModel, check_stop
from .sat import TOP, CnfPlan
from .unrolled import Invariants


class CpClauses(PlanModel):
    """CP-SAT model of "a plan of at most ``horizon`` steps reaches the goal", from CNF.

    The same constructor contract as :class:`.cpsat.CpPlan` (``exact``, ``objective``,
    ``max_cost``, ``free_run``, ``undo``, ``symmetry``, ``invariants``, ``stop``), without the
    heuristic cuts: those need the integer model.
    """

    def __init__(self, task: Task, horizon: int, *, exact: bool = False, objective: bool = True,
                 symmetry: bool = True, invariants: Invariants | None = None, max_cost: int | None = None,
                 free_run: int | None = None, undo: Iterable[tuple[int, int]] = (),
                 stop: Callable[[], bool] | None = None):
        self.task = task
        self.T = horizon
        enc = CnfPlan(task, symmetry=symmetry, invariants=invariants, undo=undo)
        for t in range(horizon):
            check_stop(stop, f"building step {t} of {horizon}")
            enc.extend()
        if free_run is not None:
            enc.limit_free_runs(free_run)
        goal = enc.goal(horizon)
        # the cost in unary, by a totalizer over the per-step thermometer literals: as a linear
        # constraint the same bound took 65 s instead of 16 s to refute (docs/architecture.md)
        inputs = [q for t in range(horizon) for q in enc.cost_inputs(t)]
        count: list[int] = []
        if inputs:
            tot = ITotalizer(lits=inputs, ubound=len(inputs) if max_cost is None else max(max_cost, 0) + 1,
                             top_id=enc.pool.top)
            enc.pool.top = max(enc.pool.top, tot.top_id)
            for c in tot.cnf.clauses:
                enc.add(list(c))
            count = list(tot.rhs)            # count[k]: at least k + 1 cost units
            tot.delete()
        self.groups = enc.groups
        self.m = cp_model.CpModel()
        self._vars = [self.m.new_bool_var("") for _ in range(enc.pool.top)]   # 1 is TOP: unit clause
        self.infeasible = goal == -TOP
        units = [[goal]] if goal != -TOP else [[]]
        if exact and horizon > 0:
            units.append([-enc.noops[horizon - 1]])
        for i, clause in enumerate(enc.drain() + units):
            if i % 50_000 == 49_999:
                check_stop(stop, f"posting the clauses of {horizon} steps")
            self.m.add_bool_or([self.lit(x) for x in clause])
        self.acts = [{k: self.lit(x) for k, x in step.items()} for step in enc.acts]
        if max_cost is not None and max_cost < len(count):
            if max_cost < 0:
                self.infeasible = True
                self.m.add_bool_or([])
            else:
                self.m.add_bool_or([self.lit(-count[max_cost])])
        if objective and count:
            self.m.minimize(sum(self.lit(c) for c in count))

    def lit(self, x: int) -> Any:
        """The CP-SAT literal of CNF literal ``x``."""
        v = self._vars[abs(x) - 1]
        return v if x > 0 else ~v


__all__ = ["CpClauses"]
