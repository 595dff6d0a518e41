"""Constraint models: decision variables, constraints, an optional objective.

A transition model asks "which actions reach the goal"; a constraint model
asks "which assignment satisfies every constraint".  Both use the same
expression language, so a constraint is any boolean expression over the
decision variables, plus two *global* constraints that engines treat as
units because their decompositions propagate badly:

* ``all_different(xs)`` -- pairwise distinct values (Régin's alldifferent);
* ``records(xs, k)`` -- exactly ``k`` of ``xs`` are *records* (strictly
  greater than every earlier item; the first item always is one).  "How many
  buildings are seen from this side" is the records count of a line.

Every constraint can give its decomposition into plain expressions
(:meth:`Constraint.decomposition`), which is how encoders without a
dedicated rule post it and how the reference checker may read it; the
*violation measure* of a constraint (what a genetic algorithm minimises) is
defined here once, so that the vectorised evaluator and the plain-Python
checker agree by construction of the specification rather than by accident:

* a plain expression: 0 if true, 1 if false;
* ``all_different``: number of items minus number of distinct values (how
  many items repeat an earlier value);
* ``records``: 0 if the count is ``k``, else 1.

Givens are domains narrowed to one value (:meth:`CspModel.given`), so
every engine and the checker respect them without a separate concept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ModelError
from .expr import BOOL, TRUE, And, Count, Expr, ExprLike, Max, lift, var
from .look import Look
from .model import VarInfo

KINDS = ("expr", "alldiff", "records")


@dataclass(frozen=True)
class Constraint:
    """One constraint: ``kind`` is ``expr``, ``alldiff`` or ``records``.

    ``scope``: the decision variables of a global (``var`` nodes, in order);
    ``expr``: the boolean expression of an ``expr`` constraint; ``k``: the
    records count; ``label``: a name for messages and dumps.
    """

    kind: str
    scope: tuple[Expr, ...] = ()
    expr: Expr | None = None
    k: int = 0
    label: str = ""

    def decomposition(self) -> Expr:
        """The constraint as one boolean expression of the base language."""
        if self.kind == "expr":
            assert self.expr is not None
            return self.expr
        xs = self.scope
        if self.kind == "alldiff":
            return And(*[xs[i] != xs[j] for i in range(len(xs)) for j in range(i + 1, len(xs))]) \
                if len(xs) > 1 else TRUE
        return records_count(xs) == self.k


def prefix_maxima(xs: Sequence[ExprLike]) -> list[Expr]:
    """``m[i] = max(xs[0..i])`` as a chain of binary maxima (each one node over the previous)."""
    out: list[Expr] = []
    for i, x in enumerate(xs):
        out.append(lift(x) if i == 0 else Max(out[-1], x))
    return out


def records_count(xs: Sequence[ExprLike]) -> Expr:
    """Number of records of ``xs``: items strictly greater than every earlier item."""
    es = [lift(x) for x in xs]
    if not es:
        return lift(0)
    pm = prefix_maxima(es)
    return Count([TRUE] + [es[i] > pm[i - 1] for i in range(1, len(es))])


class CspModel:
    """A constraint model under construction."""

    def __init__(self, name: str):
        self.name = name
        self.variables: list[VarInfo] = []
        self.constraints: list[Constraint] = []
        self.objective: Expr | None = None
        self.sense = "min"
        self.renderer: Callable[[Sequence[int]], str] | None = None
        self.shape: tuple[int, int] | None = None   # rows x columns of the answer grid, if a grid
        self.info: dict[str, Any] = {}

    # variables --------------------------------------------------------------
    def var(self, name: str, lo: int, hi: int) -> Expr:
        """A decision variable with domain ``lo..hi``."""
        if any(v.name == name for v in self.variables):
            raise ModelError(f"variable {name!r} declared twice")
        if not lo <= hi:
            raise ModelError(f"variable {name!r}: empty domain {lo}..{hi}")
        self.variables.append(VarInfo(name, int(lo), int(hi), int(lo)))
        return var(len(self.variables) - 1)

    def grid(self, name: str, rows: int, cols: int, lo: int, hi: int) -> list[list[Expr]]:
        """``rows x cols`` decision variables ``name[r,c]``; solutions are reported as this grid."""
        g = [[self.var(f"{name}[{r},{c}]", lo, hi) for c in range(cols)] for r in range(rows)]
        if self.shape is None and len(self.variables) == rows * cols:
            self.shape = (rows, cols)
        return g

    def given(self, x: Expr, value: int) -> None:
        """Fix a decision variable to ``value`` (narrows its domain; outside it is a ModelError)."""
        i = _index(x)
        v = self.variables[i]
        if not v.lo <= value <= v.hi:
            raise ModelError(f"given {value} for {v.name} is outside its domain {v.lo}..{v.hi}")
        self.variables[i] = VarInfo(v.name, int(value), int(value), int(value))

    # constraints --------------------------------------------------------------
    def constraint(self, cond: ExprLike, label: str = "") -> None:
        e = lift(cond)
        if e.kind != BOOL:
            raise ModelError(f"constraint {label or '?'} is not a boolean expression")
        self.constraints.append(Constraint("expr", expr=e, label=label))

    def all_different(self, xs: Sequence[Expr], label: str = "") -> None:
        self.constraints.append(Constraint("alldiff", tuple(_as_var(x) for x in xs), label=label))

    def records(self, xs: Sequence[Expr], k: int, label: str = "") -> None:
        """Exactly ``k`` items of ``xs`` are strictly greater than all items before them."""
        self.constraints.append(Constraint("records", tuple(_as_var(x) for x in xs), k=int(k), label=label))

    def minimize(self, e: ExprLike) -> None:
        self.objective, self.sense = lift(e), "min"

    def display(self, fn: Callable[[Sequence[int]], str]) -> Callable[[Sequence[int]], str]:
        """Register how an assignment (values in variable order) is drawn as text."""
        self.renderer = fn
        return fn

    def look(self, rows: int, cols: int, **options: Any) -> Look:
        """Declare the board picture (``lang/look.py``); kept in ``info["look"]`` for the task."""
        lk = Look(rows, cols, **options)
        self.info["look"] = lk
        return lk


def _index(x: Expr) -> int:
    if not isinstance(x, Expr) or x.op != "var":
        raise ModelError("expected a decision variable")
    return int(x.val)  # type: ignore[arg-type]


def _as_var(x: Expr) -> Expr:
    _index(x)
    return x


__all__ = ["KINDS", "Constraint", "CspModel", "prefix_maxima", "records_count"]
