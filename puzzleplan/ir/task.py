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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..lang.errors import ModelError
from ..lang.expr import BOOL, INT, Expr, TableData, ToInt, bounds, to_text, var, walk
from ..lang.model import MAX_COST, Act, Corrals, Model, Pattern, VarInfo, When


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
    patterns: list[Pattern] = field(default_factory=list)           # Model.pattern (pattern databases)
    additive_patterns: list[tuple[str, ...]] = field(default_factory=list)   # Model.patterns(additive=True)
    corrals: Corrals | None = None          # Model.corrals (PI-corral pruning under macro walking)

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

    def action_roots(self, actions: Iterable[int] | None = None) -> list[Expr]:
        """Every expression the actions evaluate (guards, effect values, effect conditions), in
        action order: what a kernel generator or an abstraction must see, and nothing else.
        ``actions``: only these (indices), as a kernel function holding some actions needs."""
        roots: list[Expr] = []
        for a in self.actions if actions is None else (self.actions[k] for k in actions):
            roots.append(a.guard)
            for e in a.effects:
                roots.append(e.value)
                if e.cond is not None:
                    roots.append(e.cond)
        return roots

    @property
    def cost_kind(self) -> str:
        """``unit``, ``01`` or ``general``: which exact engines apply."""
        costs = {a.cost for a in self.actions}
        if costs <= {1}:
            return "unit"
        if costs <= {0, 1}:
            return "01"
        return "general"

    def validate(self, origins: Mapping[str, tuple[str | None, int | None]] | None = None) -> None:
        """Check the invariants every engine relies on; raise ModelError on the first broken one.

        ``origins`` maps an action schema's name, ``<goal>`` and ``<heuristic>`` to the model
        file and line that declared it (``ground`` passes them), so that the error names it.

        1. Every variable has ``lo <= init <= hi`` and a distinct name.
        2. Every expression refers only to existing variables.
        3. Guards and the goal are boolean; effect values and the heuristic are integers.
        4. Every ground action has a constant integer cost in 0..MAX_COST.
        5. Each effect's value can fall inside its variable's domain (interval
           bounds intersect); the exact check happens at run time, where kernels
           and the checker refuse out-of-domain successors.
        6. Effect conditions are boolean; no action assigns a variable twice
           unconditionally.
        7. Symmetry groups: objects in a group have equal arity, matching domains
           position by position, and no variable is in two objects.
        8. Walk actions (Model.walks) exist and share one cost.
        """
        where = origins or {}

        def err(message: str, key: str = "") -> ModelError:
            return ModelError(message, *where.get(key, (None, None)))

        nv = self.n_vars
        names = set()
        for v in self.variables:  # 1
            if not v.lo <= v.init <= v.hi:
                raise err(f"variable {v.name}: init {v.init} outside {v.lo}..{v.hi}", "<model>")
            if v.name in names:
                raise err(f"variable name {v.name} used twice", "<model>")
            names.add(v.name)
        roots: list[Expr] = [self.goal, *self.action_roots()]
        if self.heuristic is not None:
            roots.append(self.heuristic)
        for n in walk(roots):  # 2
            if n.op == "var" and not 0 <= n.val < nv:  # type: ignore[operator]
                raise err(f"expression refers to variable {n.val}, but there are {nv}", "<goal>")
        if self.goal.kind != BOOL:  # 3
            raise err("the goal must be a boolean expression", "<goal>")
        if self.heuristic is not None and self.heuristic.kind != INT:
            raise err("the heuristic must be an integer expression", "<heuristic>")
        vb = self.var_bounds
        for a in self.actions:
            if a.guard.kind != BOOL:
                raise err(f"action {a.label}: guard is not boolean", a.name)
            if not isinstance(a.cost, int) or not 0 <= a.cost <= MAX_COST:  # 4
                raise err(f"action {a.label}: cost {a.cost!r} is not an integer in 0..{MAX_COST}", a.name)
            plain: set[int] = set()
            for e in a.effects:
                if not 0 <= e.var < nv:
                    raise err(f"action {a.label}: assigns unknown variable {e.var}", a.name)
                if e.value.kind != INT:
                    name = self.variables[e.var].name
                    raise err(f"action {a.label}: value for {name} is not an integer", a.name)
                lo, hi = bounds(e.value, vb)  # 5
                v = self.variables[e.var]
                if hi < v.lo or lo > v.hi:
                    raise err(
                        f"action {a.label}: value {to_text(e.value, self.names)} can never lie in "
                        f"{v.name}'s domain {v.lo}..{v.hi}", a.name
                    )
                if e.cond is None:  # 6
                    if e.var in plain:
                        raise err(f"action {a.label}: assigns {v.name} twice", a.name)
                    plain.add(e.var)
                elif e.cond.kind != BOOL:
                    raise err(f"action {a.label}: effect condition is not boolean", a.name)
        used: set[int] = set()
        for g in self.groups:  # 7
            arity = len(g[0])
            for obj in g:
                if len(obj) != arity:
                    raise err("interchangeable objects of one group differ in arity", "<model>")
                for k, vi in enumerate(obj):
                    if vi in used:
                        name = self.variables[vi].name
                        raise err(f"variable {name} is in two interchangeable objects", "<model>")
                    used.add(vi)
                    ref = self.variables[g[0][k]]
                    if (self.variables[vi].lo, self.variables[vi].hi) != (ref.lo, ref.hi):
                        raise err("interchangeable objects have different domains", "<model>")
        if self.walk_actions:  # 8
            if not all(0 <= i < len(self.actions) for i in self.walk_actions):
                raise err("a walk action index is out of range", "<model>")
            wc = {self.actions[i].cost for i in self.walk_actions}
            if len(wc) > 1:
                raise err(f"walk actions must share one cost; they cost {sorted(wc)}", "<model>")

    def domain_escapes(self) -> list[tuple[int, int, Expr]]:
        """``(action, effect, condition)`` for every effect whose interval bounds leave its
        variable's domain: the condition (guard, effect condition, value out of range) holds
        exactly in the states where applying the action is the model error of docs/language.md.

        For engines that do not generate successors one by one (``sat``, ``cpsat``): reaching a
        state where some condition holds is the model error the kernels raise.
        """
        from ..lang.expr import And, Or

        vb = self.var_bounds
        out: list[tuple[int, int, Expr]] = []
        for i, a in enumerate(self.actions):
            for j, e in enumerate(a.effects):
                v = self.variables[e.var]
                lo, hi = bounds(e.value, vb)
                if v.lo <= lo and hi <= v.hi:
                    continue
                parts = [a.guard] + ([e.cond] if e.cond is not None else [])
                escape = And(*parts, Or(e.value < v.lo, e.value > v.hi))
                if not (escape.is_const and not escape.val):
                    out.append((i, j, escape))
        return out

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
        for p in self.patterns:
            add = next((g for g in self.additive_patterns if p.name in g), None)
            out.append(f"  pattern {p.name} on " + ",".join(names[i] for i in p.vars)
                       + f" keep {list(p.keep)} free {list(p.free)}"
                       + (f" (added with {', '.join(n for n in add if n != p.name)})" if add else ""))
        if self.corrals is not None:
            c = self.corrals
            out.append(f"  corrals: agent {names[c.agent]}, objects " + ",".join(names[i] for i in c.objects)
                       + f", targets {list(c.targets)}")
        for a in self.actions:
            out.append(f"  action {a.label} cost {a.cost}")
            # "guard", not "when": When is the language's word for conditional effects
            out.append(f"    guard {to_text(a.guard, names)}")
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
                  **({"val": _json_val(n.val)} if n.val is not None else {})} for n in nodes]
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
    per possible value ``k`` with guard ``guard & (c == k)``.  Errors name the
    model file's line that declared the schema, the goal or the model.
    """
    from ..lang.expr import And, Max, lift

    where: dict[str, tuple[str | None, int | None]] = {"<model>": model.origin, "<goal>": model.goal_origin}
    if model.heuristic_decl is not None:
        where["<heuristic>"] = model.heuristic_decl.origin
    for s in model.schemas:
        where.setdefault(s.name, s.origin)
    if model.goal_expr is None:
        raise ModelError(f"model {model.name} declares no goal (call m.goal(...) in build)", *model.origin)

    vb = [(v.lo, v.hi) for v in model.variables]
    actions: list[GroundAction] = []
    for schema in model.schemas:
        origin = schema.origin

        def err(message: str) -> ModelError:
            return ModelError(f"action schema {schema.name}: {message}", *origin)  # noqa: B023

        def origin_msg(message: str) -> tuple[str, str | None, int | None]:
            return (message, *origin)  # noqa: B023

        def lifted(x: object, what: str) -> Expr:
            try:
                return lift(x)  # type: ignore[arg-type]
            except TypeError as e:
                raise err(f"{what}: {e}") from None

        for params in schema.combinations():
            try:
                act = schema.fn(**params)
            except TypeError as e:
                if e.__traceback__ is not None and e.__traceback__.tb_next is None:  # the call itself failed
                    raise err(f"cannot be called with its parameters {sorted(params)}: {e}") from None
                raise
            if act is None:
                continue
            if not isinstance(act, Act):
                raise err(f"returned {type(act).__name__}, not Act")
            guard = lifted(act.guard, "guard")
            if guard.is_const and not guard.val:
                continue
            if not isinstance(act.effects, Mapping):
                raise err(f"effects must be a dict {{variable: value}}, not {type(act.effects).__name__}")
            effects: list[Effect] = []
            for target, value in act.effects.items():
                effects.append(Effect(_var_index(model, target, err), lifted(value, "effect value")))
            if not isinstance(act.when, (list, tuple)):
                raise err("when= takes a list of When(cond, {variable: value})")
            for w in act.when:
                if not isinstance(w, When) or not isinstance(w.assign, Mapping):
                    raise err("when= takes a list of When(cond, {variable: value})")
                c = lifted(w.cond, "When condition")
                if c.is_const and not c.val:
                    continue
                for target, value in w.assign.items():
                    effects.append(Effect(_var_index(model, target, err), lifted(value, "effect value"),
                                          None if c.is_const else c))
            label = act.label or (schema.name + "(" + ",".join(f"{k}={v}" for k, v in params.items()) + ")")
            pitems = tuple(params.items())
            cost = lifted(act.cost, "cost")
            if cost.kind == BOOL:
                cost = lifted(ToInt(cost), "cost")
            if cost.is_const:
                if not 0 <= cost.val <= MAX_COST:  # type: ignore[operator]
                    raise ModelError(*origin_msg(f"action {label}: cost {cost.val} is not in 0..{MAX_COST}"))
                actions.append(GroundAction(schema.name, label, guard, tuple(effects), int(cost.val), pitems))
                continue
            lo, hi = bounds(cost, vb)
            if hi > MAX_COST or hi - max(lo, 0) >= MAX_COST_VALUES:
                raise ModelError(*origin_msg(
                    f"action {label}: cost {to_text(cost)} may take values up to {hi}; a state-dependent "
                    f"cost is split into one action per value, at most {MAX_COST_VALUES:,} values up to "
                    f"{MAX_COST}"))
            for k in range(max(lo, 0), hi + 1):
                g = And(guard, cost == k)
                if g.is_const and not g.val:
                    continue
                actions.append(GroundAction(schema.name, label, g, tuple(effects), k, pitems))
            if lo < 0:
                g = And(guard, cost < 0)
                if not (g.is_const and not g.val):
                    raise ModelError(*origin_msg(f"action {label}: cost can be negative"))
    _check_owner(model, actions, where)
    heuristic = model.heuristic_decl.expr if model.heuristic_decl else None
    canon = _Canonical([model.goal_expr, *([heuristic] if heuristic is not None else []),
                        *(x for a in actions for x in (a.guard, *(e.value for e in a.effects),
                                                       *(e.cond for e in a.effects if e.cond is not None))),
                        *(x for es in model.views.values() for x in es)])
    actions = [GroundAction(a.name, a.label, canon(a.guard),
                            tuple(Effect(e.var, canon(e.value), None if e.cond is None else canon(e.cond))
                                  for e in a.effects), a.cost, a.params) for a in actions]
    heuristic = canon(heuristic) if heuristic is not None else None
    if heuristic is not None and heuristic.kind == INT and bounds(heuristic, vb)[0] < 0:
        # costs are >= 0, so max(h, 0) is admissible whenever h is; no engine sees a negative estimate
        heuristic = Max(heuristic, 0)
    task = Task(
        name=model.name,
        variables=list(model.variables),
        actions=actions,
        goal=canon(model.goal_expr),
        heuristic=heuristic,
        heuristic_admissible=bool(model.heuristic_decl and model.heuristic_decl.admissible),
        groups=[list(g) for g in model.groups],
        views={k: [canon(x) for x in es] for k, es in model.views.items()},
        renderer=model.renderer,
        info=dict(model.info),
        aux_slack=model.aux_slack if any(v.aux for v in model.variables) else None,
        walk_actions=[i for i, a in enumerate(actions) if a.name in model.walk_schemas],
        walk_reversible=model.walk_reversible,
        patterns=list(model.pattern_decls),
        additive_patterns=list(model.additive_groups),
        corrals=model.corral_decl,
    )
    unknown = set(model.walk_schemas) - {s.name for s in model.schemas}
    if unknown:
        raise ModelError(f"walks() names no action schema {', '.join(sorted(unknown))}", *model.origin)
    task.validate(where)
    return task


def _json_val(val: object) -> object:
    """A node's payload for JSON: a large table (a pattern database) by its size and content
    digest, not millions of numbers (the certificate's task digest reads this)."""
    if isinstance(val, TableData):
        return {"table_sha1": val.digest, "size": len(val), "dtype": val.dtype}
    return val


# A state-dependent cost becomes one ground action per value it can take (interval bounds).
MAX_COST_VALUES = 10_000


def _var_index(model: Model, target: object, err: Callable[[str], ModelError]) -> int:
    if isinstance(target, Expr) and target.op == "var":
        i = int(target.val)  # type: ignore[arg-type]
        if not (0 <= i < len(model.var_nodes) and model.var_nodes[i] is target):
            raise err(f"effect target v{i} is a variable of another model")
        return i
    raise err(f"effect target {target!r} is not a state variable of this model")


class _Canonical:
    """Maps a model's expressions onto the same structure over plain variable nodes.

    A model's variables carry the model (so that another model's variable is caught above);
    the task's do not, so that tasks of the same structure share nodes and a task's JSON node
    table rebuilds the very same objects.
    """

    def __init__(self, roots: list[Expr]):
        self.memo: dict[int, Expr] = {}
        self.keep = roots            # the memo is keyed by id: keep the originals alive meanwhile
        for n in walk(roots):
            if n.op == "var":
                out = var(n.val)  # type: ignore[arg-type]
            else:
                args = tuple(self.memo[id(a)] for a in n.args)
                out = n if all(x is y for x, y in zip(args, n.args)) else Expr(n.op, args, n.val, n.kind)
            self.memo[id(n)] = out

    def __call__(self, e: Expr) -> Expr:
        return self.memo[id(e)]


def _check_owner(model: Model, actions: list[GroundAction],
                 where: Mapping[str, tuple[str | None, int | None]]) -> None:
    """Every variable in the goal, the heuristic and the actions is one this model declared.

    Variables are numbered per model, so another model's variable 0 would silently read this
    model's variable 0: refuse it, naming the part of the model that uses it.
    """
    mine = {id(n) for n in model.var_nodes}
    parts: list[tuple[str, str, list[Expr]]] = [("<goal>", "the goal", [model.goal_expr])]  # type: ignore[list-item]
    if model.heuristic_decl is not None:
        parts.append(("<heuristic>", "the heuristic", [model.heuristic_decl.expr]))
    for a in actions:
        parts.append((a.name, f"action {a.label}", [a.guard] + [e.value for e in a.effects]
                      + [e.cond for e in a.effects if e.cond is not None]))
    roots = [r for _, _, rs in parts for r in rs]
    if all(id(n) in mine for n in walk(roots) if n.op == "var"):
        return
    for key, what, rs in parts:
        for n in walk(rs):
            if n.op == "var" and id(n) not in mine:
                raise ModelError(f"{what} reads a variable that is not one of model {model.name}'s "
                                 f"(v{n.val} of another model, or made by hand)",
                                 *where.get(key, (None, None)))
