"""Constraint task -> CP-SAT model, through the planning encoder's expression posting at step 0.

:class:`puzzleplan.encodings.cpsat.CpPlan` posts expressions over one
integer variable per state variable and step.  A constraint task needs only
step 0, with each variable free over its domain instead of fixed to an
initial value; :class:`CpCsp` sets up exactly that state and then reuses
``CpPlan``'s expression posting unchanged (``enforce`` for constraints,
``integer`` for the objective), so there is one CP-SAT expression encoder.
All-different is posted as CP-SAT's own ``AddAllDifferent``; a ``records``
global through its decomposition (prefix maxima, reified comparisons, a
linear count).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ortools.sat.python import cp_model

from ..ir.csp import CspTask
from ..ir.task import Task
from ..lang.expr import TRUE
from .cpsat import CpPlan


class CpCsp(CpPlan):
    """The CP-SAT model of a constraint task (``self.m``), variables ``self.x[0]``."""

    def __init__(self, task: CspTask, limit: int = 100_000):  # noqa: D107 -- no super().__init__: no horizon
        self.csp = task
        self.task = Task(task.name, list(task.variables), [], TRUE)
        self.T = 0
        self.limit = limit
        self.m = cp_model.CpModel()
        self.groups = []
        self.invariants = {}
        self.sets = [[frozenset(range(v.lo, v.hi + 1)) for v in task.variables]]
        self._memo = [{}]
        self._cache = {}
        self._single = {}
        self._tables = {}
        self.infeasible = False
        row: list[Any] = []
        for i, v in enumerate(task.variables):
            row.append(v.lo if v.lo == v.hi else self.m.new_int_var(v.lo, v.hi, f"x{i}"))
        self.x = [row]
        self.post = [row]
        self.acts, self.noops = [], []
        for c in task.constraints:
            if c.kind == "alldiff":
                self.m.add_all_different([row[v] for v in c.scope])
            else:
                self.enforce(c.decomposition(), 0, [])
        self.objective = None
        if task.objective is not None:
            obj, _ = self.integer(task.objective, 0)
            self.objective = obj
            if not isinstance(obj, int):
                self.m.minimize(obj)

    def decode_values(self, solver: cp_model.CpSolver) -> list[int]:
        return [x if isinstance(x, int) else int(solver.value(x)) for x in self.x[0]]

    def block(self, values: Sequence[int]) -> None:
        """Forbid one assignment (of the variables that are not fixed)."""
        free = [(x, v) for x, v in zip(self.x[0], values) if not isinstance(x, int)]
        if not free:
            self.m.add_bool_or([])
            return
        self.m.add_forbidden_assignments([x for x, _ in free], [[v for _, v in free]])


__all__ = ["CpCsp"]
