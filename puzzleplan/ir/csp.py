"""The grounded constraint task: what every constraint engine and the checker read.

Like :class:`puzzleplan.ir.task.Task` for transition models, everything is
resolved to integers: variables with ``lo..hi`` domains (givens are domains
of one value), constraints whose globals name variable *indices*, and an
optional objective.  Expressions stay as the language's DAG.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..lang.csp import Constraint, CspModel
from ..lang.errors import ModelError
from ..lang.expr import BOOL, INT, Expr, to_text, walk
from ..lang.model import VarInfo


@dataclass(frozen=True)
class CspConstraint:
    """A grounded constraint: ``kind`` as in the language, ``scope`` as variable indices."""

    kind: str
    scope: tuple[int, ...]
    expr: Expr | None
    k: int
    label: str
    source: Constraint

    def decomposition(self) -> Expr:
        return self.source.decomposition()


@dataclass
class CspTask:
    name: str
    variables: list[VarInfo]
    constraints: list[CspConstraint]
    objective: Expr | None = None
    renderer: Callable[[Sequence[int]], str] | None = None
    shape: tuple[int, int] | None = None
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def n_vars(self) -> int:
        return len(self.variables)

    @property
    def names(self) -> list[str]:
        return [v.name for v in self.variables]

    @property
    def var_bounds(self) -> list[tuple[int, int]]:
        return [(v.lo, v.hi) for v in self.variables]

    def of_kind(self, kind: str) -> list[CspConstraint]:
        return [c for c in self.constraints if c.kind == kind]

    def permutation_groups(self) -> list[tuple[int, ...]]:
        """Disjoint all-different scopes whose variables must take *all* values of their domains.

        A scope of ``m`` variables whose domains' union has exactly ``m`` values is a
        permutation of that union (pigeonhole).  Engines may then represent it as one
        (genetic algorithm genes, propagation).  Chosen greedily in declaration order.
        """
        out: list[tuple[int, ...]] = []
        used: set[int] = set()
        for c in self.of_kind("alldiff"):
            if used.intersection(c.scope):
                continue
            union = set()
            for v in c.scope:
                union.update(range(self.variables[v].lo, self.variables[v].hi + 1))
            if len(union) == len(c.scope):
                out.append(c.scope)
                used.update(c.scope)
        return out

    def validate(self) -> None:
        """Invariants every constraint engine relies on (ModelError on the first broken one).

        1. Every variable has ``lo <= hi`` and a distinct name.
        2. Every expression refers only to existing variables; constraint expressions are
           boolean, the objective is an integer.
        3. Global scopes are non-empty lists of distinct existing variables; a records
           count ``k`` lies in ``1..len(scope)``.
        """
        names = set()
        for v in self.variables:  # 1
            if v.lo > v.hi:
                raise ModelError(f"variable {v.name}: empty domain {v.lo}..{v.hi}")
            if v.name in names:
                raise ModelError(f"variable name {v.name} used twice")
            names.add(v.name)
        nv = self.n_vars
        roots = [c.expr for c in self.constraints if c.expr is not None]
        if self.objective is not None:
            roots.append(self.objective)
            if self.objective.kind != INT:
                raise ModelError("the objective must be an integer expression")
        for n in walk(roots):  # 2
            if n.op == "var" and not 0 <= n.val < nv:  # type: ignore[operator]
                raise ModelError(f"expression refers to variable {n.val}, but there are {nv}")
        for c in self.constraints:
            if c.kind == "expr":
                if c.expr is None or c.expr.kind != BOOL:
                    raise ModelError(f"constraint {c.label or '?'} is not boolean")
                continue
            if not c.scope or len(set(c.scope)) != len(c.scope) or \
                    not all(0 <= v < nv for v in c.scope):  # 3
                raise ModelError(f"constraint {c.label or c.kind}: bad scope {list(c.scope)}")
            if c.kind == "records" and not 1 <= c.k <= len(c.scope):
                raise ModelError(f"constraint {c.label or c.kind}: records count {c.k} outside "
                                 f"1..{len(c.scope)}")

    def dump(self) -> str:
        names = self.names
        out = [f"constraint task {self.name}: {self.n_vars} variables, {len(self.constraints)} constraints"]
        for v in self.variables:
            out.append(f"  var {v.name} in {v.lo}..{v.hi}")
        for c in self.constraints:
            label = f" [{c.label}]" if c.label else ""
            if c.kind == "expr":
                out.append(f"  constraint{label} {to_text(c.expr, names)}")  # type: ignore[arg-type]
            elif c.kind == "alldiff":
                out.append(f"  all_different{label} " + " ".join(names[v] for v in c.scope))
            else:
                out.append(f"  records{label} {c.k} of " + " ".join(names[v] for v in c.scope))
        if self.objective is not None:
            out.append(f"  minimise {to_text(self.objective, names)}")
        return "\n".join(out)


def ground_csp(model: CspModel) -> CspTask:
    """Resolve a constraint model to indices and validate it; errors name the model file's line."""
    from ..ir.task import _Canonical

    origins = list(model.origins) + [model.origin] * (len(model.constraints) - len(model.origins))
    roots = [x for c in model.constraints for x in ((c.expr,) if c.expr is not None else c.scope)]
    if model.objective is not None:
        roots.append(model.objective)
    mine = {id(n) for n in model.var_nodes}

    def foreign(es: list[Expr]) -> bool:
        return any(n.op == "var" and id(n) not in mine for n in walk(es))

    if foreign(roots):  # name the first constraint (or the objective) that reads another model's variable
        for c, where in zip(model.constraints, origins):
            if foreign([c.expr] if c.expr is not None else list(c.scope)):
                raise ModelError(f"constraint {c.label or c.kind} reads a variable that is not one of "
                                 f"model {model.name}'s", *where)
        raise ModelError(f"the objective reads a variable that is not one of model {model.name}'s",
                         *model.objective_origin)
    canon = _Canonical(roots)
    cons = []
    for c in model.constraints:
        src = Constraint(c.kind, tuple(canon(x) for x in c.scope),
                         None if c.expr is None else canon(c.expr), c.k, c.label)
        scope = tuple(int(x.val) for x in c.scope)  # type: ignore[arg-type]
        cons.append(CspConstraint(c.kind, scope, src.expr, c.k, c.label, src))
    task = CspTask(model.name, list(model.variables), cons,
                   None if model.objective is None else canon(model.objective), model.renderer,
                   model.shape, dict(model.info))
    try:
        task.validate()
    except ModelError as e:
        if e.file is None:
            e.file, e.line = model.origin
        raise
    return task


__all__ = ["CspConstraint", "CspTask", "ground_csp"]
