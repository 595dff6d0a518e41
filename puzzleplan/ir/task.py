"""The grounded, integer-indexed task every engine and encoder consumes.

Like Fast Downward's SAS+ task, everything is resolved to integers: variable
indices with ``lo..hi`` domains, ground actions with constant costs, a goal
expression and symmetry groups of variable-index tuples.  Expressions stay
as the language's DAG (they are already index-based), so the numpy kernel,
the compiled kernel, the SAT/CP-SAT encoders and the reference checker all
read one object.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..lang.errors import ModelError
from ..lang.expr import BOOL, INT, Expr, bounds, to_text, walk
from ..lang.model import Act, Model, VarInfo


@dataclass(frozen=True)
class Effect:
    var: int
    value: Expr
    cond: Expr | None = None  # None = unconditional


@dataclass(frozen=True)
class GroundAction:
    name: str
    label: str
    guard: Expr
    effects: tuple[Effect, ...]
    cost: int
    params: tuple[tuple[str, Any], ...] = ()


@dataclass
class Task:
    name: str
    variables: list[VarInfo]
    actions: list[GroundAction]
    goal: Expr
    heuristic: Expr | None = None
    heuristic_admissible: bool = False
    groups: list[list[tuple[int, ...]]] = field(default_factory=list)
    views: dict[str, list[Expr]] = field(default_factory=dict)
    renderer: Callable[[Sequence[int]], str] | None = None
    info: dict[str, Any] = field(default_factory=dict)
    aux_slack: int | None = None   # see lang.Model.aux_bound
    walk_actions: list[int] = field(default_factory=list)   # ground actions of the walk schemas (Model.walks)
    walk_reversible: bool = False

    @property
    def n_vars(self) -> int:
        return len(self.variables)

    @property
    def init(self) -> list[int]:
        return [v.init for v in self.variables]

    @property
    def var_bounds(self) -> list[tuple[int, int]]:
        return [(v.lo, v.hi) for v in self.variables]

    @property
    def names(self) -> list[str]:
        return [v.name for v in self.variables]

    @property
    def cost_kind(self) -> str:
        """``unit``, ``01`` or ``general``: which exact engines apply."""
        costs = {a.cost for a in self.actions}
        if costs <= {1}:
            return "unit"
        if costs <= {0, 1}:
            return "01"
        return "general"

    def validate(self) -> None:
        """Check the invariants every engine relies on; raise ModelError on the first broken one.

        1. Every variable has ``lo <= init <= hi`` and a distinct name.
        2. Every expression refers only to existing variables.
        3. Guards and the goal are boolean; effect values and the heuristic are integers.
        4. Every ground action has a constant integer cost >= 0.
        5. Each effect's value can fall inside its variable's domain (interval
           bounds intersect); the exact check happens at run time, where kernels
           and the checker refuse out-of-domain successors.
        6. Effect conditions are boolean; no action assigns a variable twice
           unconditionally.
        7. Symmetry groups: objects in a group have equal arity, matching domains
           position by position, and no variable is in two objects.
        8. Walk actions (Model.walks) exist and share one cost.
        """
        nv = self.n_vars
        names = set()
        for v in self.variables:  # 1
            if not v.lo <= v.init <= v.hi:
                raise ModelError(f"variable {v.name}: init {v.init} outside {v.lo}..{v.hi}")
            if v.name in names:
                raise ModelError(f"variable name {v.name} used twice")
            names.add(v.name)
        roots: list[Expr] = [self.goal]
        for a in self.actions:
            roots.append(a.guard)
            for e in a.effects:
                roots.append(e.value)
                if e.cond is not None:
                    roots.append(e.cond)
        if self.heuristic is not None:
            roots.append(self.heuristic)
        for n in walk(roots):  # 2
            if n.op == "var" and not 0 <= n.val < nv:  # type: ignore[operator]
                raise ModelError(f"expression refers to variable {n.val}, but there are {nv}")
        if self.goal.kind != BOOL:  # 3
            raise ModelError("the goal must be a boolean expression")
        if self.heuristic is not None and self.heuristic.kind != INT:
            raise ModelError("the heuristic must be an integer expression")
        vb = self.var_bounds
        for a in self.actions:
            if a.guard.kind != BOOL:
                raise ModelError(f"action {a.label}: guard is not boolean")
            if not isinstance(a.cost, int) or a.cost < 0:  # 4
                raise ModelError(f"action {a.label}: cost {a.cost!r} is not an integer >= 0")
            plain: set[int] = set()
            for e in a.effects:
                if not 0 <= e.var < nv:
                    raise ModelError(f"action {a.label}: assigns unknown variable {e.var}")
                if e.value.kind != INT:
                    name = self.variables[e.var].name
                    raise ModelError(f"action {a.label}: value for {name} is not an integer")
                lo, hi = bounds(e.value, vb)  # 5
                v = self.variables[e.var]
                if hi < v.lo or lo > v.hi:
                    raise ModelError(
                        f"action {a.label}: value {to_text(e.value, self.names)} can never lie in "
                        f"{v.name}'s domain {v.lo}..{v.hi}"
                    )
                if e.cond is None:  # 6
                    if e.var in plain:
                        raise ModelError(f"action {a.label}: assigns {v.name} twice")
                    plain.add(e.var)
                elif e.cond.kind != BOOL:
                    raise ModelError(f"action {a.label}: effect condition is not boolean")
        used: set[int] = set()
        for g in self.groups:  # 7
            arity = len(g[0])
            for obj in g:
                if len(obj) != arity:
                    raise ModelError("interchangeable objects of one group differ in arity")
                for k, vi in enumerate(obj):
                    if vi in used:
                        name = self.variables[vi].name
                        raise ModelError(f"variable {name} is in two interchangeable objects")
                    used.add(vi)
                    ref = self.variables[g[0][k]]
                    if (self.variables[vi].lo, self.variables[vi].hi) != (ref.lo, ref.hi):
                        raise ModelError("interchangeable objects have different domains")
        if self.walk_actions:  # 8
            if not all(0 <= i < len(self.actions) for i in self.walk_actions):
                raise ModelError("a walk action index is out of range")
            wc = {self.actions[i].cost for i in self.walk_actions}
            if len(wc) > 1:
                raise ModelError(f"walk actions must share one cost; they cost {sorted(wc)}")

    # human and machine readable forms -------------------------------------------
    def dump(self) -> str:
        names = self.names
        out = [f"task {self.name}: {self.n_vars} variables, {len(self.actions)} ground actions, "
               f"costs {self.cost_kind}"]
        for v in self.variables:
            out.append(f"  var {v.name} in {v.lo}..{v.hi} init {v.init}{' (aux)' if v.aux else ''}")
        for g in self.groups:
            out.append("  interchangeable: " + " ".join("(" + ",".join(names[i] for i in o) + ")" for o in g))
        if self.walk_actions:
            schemas = sorted({self.actions[i].name for i in self.walk_actions})
            out.append(f"  walks ({'reversible' if self.walk_reversible else 'one-way'}): "
                       + ", ".join(schemas) + f" ({len(self.walk_actions)} ground actions)")
        for a in self.actions:
            out.append(f"  action {a.label} cost {a.cost}")
            out.append(f"    when {to_text(a.guard, names)}")
            for e in a.effects:
                cond = f" if {to_text(e.cond, names)}" if e.cond is not None else ""
                out.append(f"    {names[e.var]} := {to_text(e.value, names)}{cond}")
        out.append(f"  goal {to_text(self.goal, names)}")
        if self.heuristic is not None:
            out.append(f"  heuristic{' (admissible)' if self.heuristic_admissible else ''} "
                       f"{to_text(self.heuristic, names)}")
        return "\n".join(out)

    def to_json(self) -> str:
        """The whole task as JSON: expressions as a node table, so shared nodes stay shared."""
        roots: list[Expr] = [self.goal]
        for a in self.actions:
            roots.append(a.guard)
            roots.extend(e.value for e in a.effects)
            roots.extend(e.cond for e in a.effects if e.cond is not None)
        if self.heuristic is not None:
            roots.append(self.heuristic)
        nodes = walk(roots)
        ids = {id(n): i for i, n in enumerate(nodes)}
        table = [{"op": n.op, "kind": n.kind, "args": [ids[id(a)] for a in n.args],
                  **({"val": n.val} if n.val is not None else {})} for n in nodes]
        doc = {
            "name": self.name,
            "variables": [{"name": v.name, "lo": v.lo, "hi": v.hi, "init": v.init, "aux": v.aux}
                          for v in self.variables],
            "nodes": table,
            "actions": [{"name": a.name, "label": a.label, "cost": a.cost, "guard": ids[id(a.guard)],
                         "effects": [{"var": e.var, "value": ids[id(e.value)],
                                      "cond": None if e.cond is None else ids[id(e.cond)]}
                                     for e in a.effects]} for a in self.actions],
            "goal": ids[id(self.goal)],
            "heuristic": None if self.heuristic is None else ids[id(self.heuristic)],
            "heuristic_admissible": self.heuristic_admissible,
            "groups": [[list(o) for o in g] for g in self.groups],
        }
        return json.dumps(doc)


def ground(model: Model) -> Task:
    """Instantiate every action schema for every parameter combination.

    A schema returning ``None`` or a guard that folds to ``False`` yields no
    ground action.  A state-dependent cost ``c`` is split: one ground action
    per possible value ``k`` with guard ``guard & (c == k)``.
    """
    if model.goal_expr is None:
        raise ModelError(f"model {model.name} declares no goal")
    from ..lang.expr import And, lift

    vb = [(v.lo, v.hi) for v in model.variables]
    actions: list[GroundAction] = []
    for schema in model.schemas:
        for params in schema.combinations():
            act = schema.fn(**params)
            if act is None:
                continue
            if not isinstance(act, Act):
                raise ModelError(f"action schema {schema.name} returned {type(act).__name__}, not Act")
            guard = lift(act.guard)
            if guard.is_const and not guard.val:
                continue
            effects: list[Effect] = []
            for target, value in act.effects.items():
                effects.append(Effect(_var_index(target, schema.name), lift(value)))
            for w in act.when:
                c = lift(w.cond)
                if c.is_const and not c.val:
                    continue
                for target, value in w.assign.items():
                    effects.append(Effect(_var_index(target, schema.name), lift(value),
                                          None if c.is_const else c))
            label = act.label or (schema.name + "(" + ",".join(f"{k}={v}" for k, v in params.items()) + ")")
            pitems = tuple(params.items())
            cost = lift(act.cost)
            if cost.is_const:
                actions.append(GroundAction(schema.name, label, guard, tuple(effects), int(cost.val), pitems))
                continue
            lo, hi = bounds(cost, vb)
            for k in range(max(lo, 0), hi + 1):
                g = And(guard, cost == k)
                if g.is_const and not g.val:
                    continue
                actions.append(GroundAction(schema.name, label, g, tuple(effects), k, pitems))
            if lo < 0:
                g = And(guard, cost < 0)
                if not (g.is_const and not g.val):
                    raise ModelError(f"action {label}: cost can be negative")
    task = Task(
        name=model.name,
        variables=list(model.variables),
        actions=actions,
        goal=model.goal_expr,
        heuristic=model.heuristic_decl.expr if model.heuristic_decl else None,
        heuristic_admissible=bool(model.heuristic_decl and model.heuristic_decl.admissible),
        groups=[list(g) for g in model.groups],
        views=dict(model.views),
        renderer=model.renderer,
        info=dict(model.info),
        aux_slack=model.aux_slack if any(v.aux for v in model.variables) else None,
        walk_actions=[i for i, a in enumerate(actions) if a.name in model.walk_schemas],
        walk_reversible=model.walk_reversible,
    )
    unknown = set(model.walk_schemas) - {s.name for s in model.schemas}
    if unknown:
        raise ModelError(f"walks() names no action schema {', '.join(sorted(unknown))}")
    task.validate()
    return task


def _var_index(target: object, schema: str) -> int:
    if isinstance(target, Expr) and target.op == "var":
        return int(target.val)  # type: ignore[arg-type]
    raise ModelError(f"action schema {schema}: effect target is not a state variable")
