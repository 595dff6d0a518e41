"""Plain-Python checker for constraint tasks: the judge of every assignment an engine returns.

Independent of the encodings: one assignment at a time, the globals read
straight from their definitions (distinct values; records counted by a
running maximum), plain expressions by the reference interpreter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..ir.csp import CspConstraint, CspTask
from .reference import evaluate


def violation(c: CspConstraint, values: Sequence[int]) -> int:
    """The constraint's violation measure (see :mod:`puzzleplan.lang.csp`); 0 = satisfied."""
    if c.kind == "expr":
        return 0 if evaluate(c.expr, values) else 1  # type: ignore[arg-type]
    xs = [values[v] for v in c.scope]
    if c.kind == "alldiff":
        return len(xs) - len(set(xs))
    best = None
    seen = 0
    for x in xs:
        if best is None or x > best:
            seen += 1
            best = x
    return 0 if seen == c.k else 1


def violations(task: CspTask, values: Sequence[int]) -> int:
    """Total violation (what the genetic algorithm's fitness is the negative of)."""
    return sum(violation(c, values) for c in task.constraints)


@dataclass
class AssignmentCheck:
    ok: bool
    message: str = ""
    objective: int | None = None


def check_assignment(task: CspTask, values: Sequence[int]) -> AssignmentCheck:
    """Every variable inside its domain (givens included) and every constraint satisfied."""
    if len(values) != task.n_vars:
        return AssignmentCheck(False, f"{len(values)} values for {task.n_vars} variables")
    for x, v in zip(values, task.variables):
        if not isinstance(x, int) or not v.lo <= x <= v.hi:
            return AssignmentCheck(False, f"{v.name} = {x!r} outside {v.lo}..{v.hi}")
    for c in task.constraints:
        if violation(c, values):
            return AssignmentCheck(False, f"constraint {c.label or c.kind} is violated")
    obj = None if task.objective is None else evaluate(task.objective, values)
    return AssignmentCheck(True, "", obj)


__all__ = ["AssignmentCheck", "check_assignment", "violation", "violations"]
