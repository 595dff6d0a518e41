"""Constraint task -> CNF, through the planning encoder's expression encoding at step 0.

:class:`puzzleplan.encodings.sat.CnfPlan` encodes expressions over
value-indexed ("direct", Walsh 2000) literals of the state variables at a
step ``t``.  Given ``start=`` value sets, step 0 holds *free* variables
with an exactly-one constraint over their values -- which is what a
decision variable is.  So a constraint task becomes a task without actions
whose step-0 variables are the decision variables, and every plain
constraint (and the decomposition of a ``records`` global, a chain of
prefix maxima and comparisons) is one call of ``enc.boolean(expr, 0)``
asserted as a unit clause: no second expression encoder exists.

All-different gets a dedicated encoding: for each value, at most one of
the scope's "x == value" literals (pairwise or Sinz's sequential counter,
via ``CnfPlan.at_most_one``), and when the scope must be a permutation of
its values (as many values as variables) also *at least one* -- the
redundant "every value is used somewhere" clauses that make hidden singles
a matter of unit propagation (the usual Latin-square/sudoku encoding,
Lynce & Ouaknine, "Sudoku as a SAT problem", ISAIM 2006).

Blocking clauses (one clause forbidding a found assignment) give solution
counting and uniqueness checks on one incremental solver.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ir.csp import CspTask
from ..ir.task import Task
from ..lang.expr import TRUE
from .sat import TOP, CnfPlan


class CspCnf:
    """The CNF of a constraint task: ``clauses`` (drain once), ``lits[v][value]``, ``decode``, ``block``."""

    def __init__(self, task: CspTask, max_pairs: int = 200_000):
        self.task = task
        shell = Task(task.name, list(task.variables), [], TRUE)
        self.enc = CnfPlan(shell, max_pairs=max_pairs, full_frame=False, symmetry=False,
                           start=[range(v.lo, v.hi + 1) for v in task.variables])
        self.lits = self.enc.x[0]
        perm = {s for s in task.permutation_groups()}
        for c in task.constraints:
            if c.kind == "alldiff":
                self._all_different(c.scope, c.scope in perm or self._is_permutation(c.scope))
            else:
                self.enc.add([self.enc.boolean(c.decomposition(), 0)])

    def _is_permutation(self, scope: Sequence[int]) -> bool:
        values = set()
        for v in scope:
            values.update(self.lits[v])
        return len(values) == len(scope)

    def _all_different(self, scope: Sequence[int], permutation: bool) -> None:
        by_value: dict[int, list[int]] = {}
        for v in scope:
            for val, lit in self.lits[v].items():
                by_value.setdefault(val, []).append(lit)
        for lits in by_value.values():
            if sum(1 for lit in lits if lit == TOP) > 1:
                self.enc.add([])  # two givens with one value: unsatisfiable
                continue
            self.enc.at_most_one(lits)
            if permutation:
                self.enc.add(list(lits))

    def clauses(self) -> list[list[int]]:
        """Clauses added since the last call."""
        return self.enc.drain()

    def decode(self, true_lits: set[int]) -> list[int]:
        out = []
        for d in self.lits:
            out.append(next(val for val, lit in d.items() if lit == TOP or lit in true_lits))
        return out

    def block(self, values: Sequence[int]) -> list[int]:
        """The clause "not this assignment" (over the variables that are not fixed)."""
        return [-self.lits[v][x] for v, x in enumerate(values) if self.lits[v][x] != TOP]

    @property
    def n_vars(self) -> int:
        return self.enc.pool.top


__all__ = ["CspCnf"]
