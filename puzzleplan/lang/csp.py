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

from .errors import caller_location, model_error
from .expr import BOOL, TRUE, And, Count, Expr, ExprLike, Max, lift, var
from .look import Look
from .model import MAX_ABS_VALUE, VarInfo, _integer

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
        self.origin = caller_location()
        self.token = object()                 # tells this model's variables from another model's
        self.var_nodes: list[Expr] = []
        self.variables: list[VarInfo] = []
        self.constraints: list[Constraint] = []
        self.origins: list[tuple[str | None, int | None]] = []   # model file and line of each constraint
        self.objective: Expr | None = None
        self.objective_origin: tuple[str | None, int | None] = (None, None)
        self.sense = "min"
        self.renderer: Callable[[Sequence[int]], str] | None = None
        self.shape: tuple[int, int] | None = None   # rows x columns of the answer grid, if a grid
        self.info: dict[str, Any] = {}

    # variables --------------------------------------------------------------
    def var(self, name: str, lo: int, hi: int) -> Expr:
        """A decision variable with domain ``lo..hi``."""
        lo = _integer(lo, f"variable {name!r}: lower bound")
        hi = _integer(hi, f"variable {name!r}: upper bound")
        if any(v.name == name for v in self.variables):
            raise model_error(f"variable {name!r} declared twice")
        if not lo <= hi:
            raise model_error(f"variable {name!r}: empty domain {lo}..{hi}")
        if max(-lo, hi) > MAX_ABS_VALUE:
            raise model_error(f"variable {name!r}: domain {lo}..{hi} too large (values must lie "
                              f"within -2**40..2**40)")
        self.variables.append(VarInfo(name, lo, hi, lo))
        node = var(len(self.variables) - 1, self.token)
        self.var_nodes.append(node)
        return node

    def grid(self, name: str, rows: int, cols: int, lo: int, hi: int) -> list[list[Expr]]:
        """``rows x cols`` decision variables ``name[r,c]``; solutions are reported as this grid."""
        g = [[self.var(f"{name}[{r},{c}]", lo, hi) for c in range(cols)] for r in range(rows)]
        if self.shape is None and len(self.variables) == rows * cols:
            self.shape = (rows, cols)
        return g

    def given(self, x: Expr, value: int) -> None:
        """Fix a decision variable to ``value`` (narrows its domain; outside it is a ModelError)."""
        i = self._index(x, "given")
        v = self.variables[i]
        value = _integer(value, f"given for {v.name}")
        if not v.lo <= value <= v.hi:
            raise model_error(f"given {value} for {v.name} is outside its domain {v.lo}..{v.hi}")
        self.variables[i] = VarInfo(v.name, int(value), int(value), int(value))

    # constraints --------------------------------------------------------------
    def constraint(self, cond: ExprLike, label: str = "") -> None:
        e = _lifted(cond, f"constraint {label or '?'}")
        if e.kind != BOOL:
            raise model_error(f"constraint {label or '?'} is not a boolean expression")
        self._post(Constraint("expr", expr=e, label=label))

    def all_different(self, xs: Sequence[ExprLike], label: str = "") -> None:
        """Pairwise distinct values.  Items that are not plain decision variables (``q[r] + r`` on
        N-Queens' diagonals) are posted as the decomposition, one ``!=`` constraint per pair with
        an expression in it: every engine then handles them, with weaker propagation."""
        items = [_lifted(x, f"all_different {label or '?'}") for x in xs]
        if all(self._mine(x) for x in items):
            self._post(Constraint("alldiff", tuple(items), label=label))
            return
        name = label or "all_different"
        self._check(items, name)
        for i in range(len(items)):
            for j in range(i + 1, len(items)):
                self._post(Constraint("expr", expr=items[i] != items[j], label=f"{name} [{i},{j}]"))

    def records(self, xs: Sequence[ExprLike], k: int, label: str = "") -> None:
        """Exactly ``k`` items of ``xs`` are strictly greater than all items before them (items that
        are not plain decision variables: posted as ``records_count(xs) == k``)."""
        items = [_lifted(x, f"records {label or '?'}") for x in xs]
        k = _integer(k, f"records {label or '?'}: count")
        if all(self._mine(x) for x in items):
            self._post(Constraint("records", tuple(items), k=k, label=label))
            return
        self._check(items, label or "records")
        self._post(Constraint("expr", expr=records_count(items) == k, label=label))

    def minimize(self, e: ExprLike) -> None:
        self.objective, self.sense = _lifted(e, "objective"), "min"
        self.objective_origin = caller_location()

    # helpers -------------------------------------------------------------------
    def _post(self, c: Constraint) -> None:
        self.constraints.append(c)
        self.origins.append(caller_location())

    def _mine(self, x: Expr) -> bool:
        return x.op == "var" and 0 <= int(x.val) < len(self.var_nodes) \
            and self.var_nodes[int(x.val)] is x  # type: ignore[arg-type]

    def _index(self, x: object, what: str) -> int:
        if not isinstance(x, Expr) or not self._mine(x):
            raise model_error(f"{what}: expected a decision variable of this model, got {x!r}")
        return int(x.val)  # type: ignore[arg-type]

    def _check(self, items: list[Expr], what: str) -> None:
        """Expression items: integers over this model's variables only."""
        from .expr import walk

        for x in items:
            if x.kind != "int":
                raise model_error(f"{what}: item {x!r} is not an integer expression")
        for n in walk(items):
            if n.op == "var" and not self._mine(n):
                raise model_error(f"{what}: v{n.val} is not a variable of this model")

    def display(self, fn: Callable[[Sequence[int]], str]) -> Callable[[Sequence[int]], str]:
        """Register how an assignment (values in variable order) is drawn as text."""
        self.renderer = fn
        return fn

    def look(self, rows: int, cols: int, **options: Any) -> Look:
        """Declare the board picture (``lang/look.py``); kept in ``info["look"]`` for the task."""
        lk = Look(rows, cols, **options)
        self.info["look"] = lk
        return lk


def _lifted(x: object, what: str) -> Expr:
    try:
        return lift(x)  # type: ignore[arg-type]
    except TypeError as e:
        raise model_error(f"{what}: {e}") from None


__all__ = ["KINDS", "Constraint", "CspModel", "prefix_maxima", "records_count"]
