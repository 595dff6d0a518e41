"""Builders a model file uses to declare a transition model.

A model is plain Python: it creates variables, then declares action
*schemas* as functions of their parameters.  Grounding (in ``puzzleplan.ir``)
calls each schema once per parameter combination, so inside a schema the
parameters are ordinary Python values and the result is an expression over
state variables only.  That keeps the language small (no quantifiers) while
parameters still range over cells, pieces and directions.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import caller_location, model_error
from .expr import Expr, ExprLike, lift, var
from .look import Look


@dataclass(frozen=True)
class VarInfo:
    name: str
    lo: int
    hi: int
    init: int
    aux: bool = False  # bookkeeping (e.g. "last piece moved"), not part of the configuration


@dataclass(frozen=True)
class When:
    """A conditional effect: the assignments happen only if ``cond`` holds in the pre-state."""

    cond: ExprLike
    assign: Mapping[Expr, ExprLike]


@dataclass
class Act:
    """What an action schema returns for one parameter combination.

    ``effects`` maps variables to new values (all right-hand sides read the
    pre-state); ``When`` items add conditional assignments, applied after the
    unconditional ones, later ones winning.  ``cost`` may depend on the state:
    grounding then splits the action by cost value, so every ground action
    has a constant cost.
    """

    guard: ExprLike = True
    effects: Mapping[Expr, ExprLike] = field(default_factory=dict)
    cost: ExprLike = 1
    label: str | None = None
    when: Sequence[When] = ()


SchemaFn = Callable[..., "Act | None"]


@dataclass
class Schema:
    name: str
    params: dict[str, tuple[Any, ...]]
    fn: Callable[..., Act | None]
    origin: tuple[str | None, int | None] = (None, None)   # model file and line of m.action(...)

    def combinations(self) -> Iterable[dict[str, Any]]:
        keys = list(self.params)
        for values in itertools.product(*(self.params[k] for k in keys)):
            yield dict(zip(keys, values))


@dataclass
class Heuristic:
    expr: Expr
    admissible: bool
    origin: tuple[str | None, int | None] = (None, None)


@dataclass(frozen=True)
class Pattern:
    """A domain abstraction declared by ``Model.pattern``: on the variables ``vars`` (indices) the
    values ``keep`` stay distinct and every other value becomes one "other" value.  Moving a
    value of ``free`` costs nothing in this pattern; the others of ``keep`` are its *charged*
    values.  See docs/heuristics.md for why the distances of the abstract task are admissible.
    """

    name: str
    vars: tuple[int, ...]
    keep: tuple[int, ...]
    free: tuple[int, ...] = ()
    origin: tuple[str | None, int | None] = (None, None)

    @property
    def charged(self) -> tuple[int, ...]:
        return tuple(v for v in self.keep if v not in self.free)


@dataclass(frozen=True)
class Corrals:
    """What ``Model.corrals`` declared: the walking agent, the objects it pushes (variable
    indices) and the target values the goal asks to be covered.  docs/architecture.md ("Corral
    pruning") has the argument that makes the pruning built on it keep an optimal plan."""

    agent: int
    objects: tuple[int, ...]
    targets: tuple[int, ...]
    origin: tuple[str | None, int | None] = (None, None)


# Domains and costs the engines can hold: packed keys, cost sums and kernel arithmetic are int64.
MAX_ABS_VALUE = 2**40
MAX_COST = 2**31 - 1


class Model:
    """A transition model under construction: variables, actions, goal, extras."""

    def __init__(self, name: str):
        self.name = name
        self.origin = caller_location()       # where the model file made it (for "declares no goal")
        self.token = object()                 # tells this model's variables from another model's
        self.var_nodes: list[Expr] = []
        self.variables: list[VarInfo] = []
        self.schemas: list[Schema] = []
        self.goal_expr: Expr | None = None
        self.goal_origin: tuple[str | None, int | None] = (None, None)
        self.heuristic_decl: Heuristic | None = None
        self.groups: list[list[tuple[int, ...]]] = []
        self.views: dict[str, list[Expr]] = {}
        self.renderer: Callable[[Sequence[int]], str] | None = None
        self.info: dict[str, Any] = {}
        self.aux_slack: int | None = None
        self.walk_schemas: tuple[str, ...] = ()
        self.walk_reversible = False
        self.pattern_decls: list[Pattern] = []
        self.additive_groups: list[tuple[str, ...]] = []
        self.corral_decl: Corrals | None = None

    # variables ------------------------------------------------------------
    def var(self, name: str, lo: int, hi: int, init: int, aux: bool = False) -> Expr:
        lo, hi, init = (_integer(x, f"variable {name!r}: {what}")
                        for x, what in ((lo, "lower bound"), (hi, "upper bound"), (init, "initial value")))
        if any(v.name == name for v in self.variables):
            raise model_error(f"variable {name!r} declared twice")
        if not lo <= hi:
            raise model_error(f"variable {name!r}: empty domain {lo}..{hi}")
        if not lo <= init <= hi:
            raise model_error(f"variable {name!r}: initial value {init} outside {lo}..{hi}")
        if max(-lo, hi) > MAX_ABS_VALUE:
            raise model_error(f"variable {name!r}: domain {lo}..{hi} too large (values must lie "
                              f"within -2**40..2**40)")
        self.variables.append(VarInfo(name, lo, hi, init, aux))
        node = var(len(self.variables) - 1, self.token)
        self.var_nodes.append(node)
        return node

    def vars(self, name: str, lo: int, hi: int, init: Sequence[int]) -> list[Expr]:
        return [self.var(f"{name}[{i}]", lo, hi, v) for i, v in enumerate(init)]

    def grid(self, name: str, lo: int, hi: int, init: Sequence[Sequence[int]]) -> list[list[Expr]]:
        return [[self.var(f"{name}[{r},{c}]", lo, hi, v) for c, v in enumerate(row)]
                for r, row in enumerate(init)]

    # actions ----------------------------------------------------------------
    def action(self, name: str, **params: Iterable[Any]) -> Callable[[SchemaFn], SchemaFn]:
        """Decorator: ``@m.action("move", p=range(n), d=DIRS)`` over ``def move(p, d) -> Act | None``."""

        origin = caller_location()

        def deco(fn: SchemaFn) -> SchemaFn:
            self.schemas.append(Schema(name, {k: tuple(v) for k, v in params.items()}, fn, origin))
            return fn

        return deco

    # goal, heuristic, symmetry, views, display ---------------------------------
    def goal(self, cond: ExprLike) -> None:
        self.goal_origin = caller_location()
        self.goal_expr = _lifted(cond, "goal")

    def heuristic(self, h: ExprLike, admissible: bool = True) -> None:
        """Declare an integer estimate of the remaining cost; ``admissible`` = never overestimates."""
        self.heuristic_decl = Heuristic(_lifted(h, "heuristic"), admissible, caller_location())

    def pattern(self, vars: Sequence[Expr], keep: Iterable[int], free: Iterable[int] = (),
                name: str | None = None) -> str:
        """Declare a pattern database: the task seen with only the values ``keep`` of ``vars``
        told apart (all their other values collapse into one), solved exactly backwards from the
        goal; its distances are an admissible estimate, combined with the model's heuristic by
        max.  ``free``: kept values whose moves cost nothing here (e.g. an empty cell every move
        swaps with), so that patterns with disjoint charged values can be added (:meth:`patterns`).
        Returns the pattern's name.  The engines build the table when a search starts (cached on disk).
        """
        where = caller_location()
        idx = self._state_vars(vars, "pattern() takes a list of state variables", "pattern()")
        if not idx or len(set(idx)) != len(idx):
            raise model_error("pattern() needs distinct state variables, at least one")
        kept = tuple(_integer(k, "pattern keep value") for k in keep)
        frees = tuple(_integer(k, "pattern free value") for k in free)
        if not kept or len(set(kept)) != len(kept):
            raise model_error("pattern(): keep= needs distinct values, at least one")
        if not set(frees) <= set(kept):
            raise model_error(f"pattern(): free values {sorted(set(frees) - set(kept))} are not kept")
        name = name or f"pattern{len(self.pattern_decls) + 1}"
        if any(p.name == name for p in self.pattern_decls):
            raise model_error(f"pattern {name!r} declared twice")
        self.pattern_decls.append(Pattern(name, tuple(idx), kept, frees, where))
        return name

    def _state_vars(self, vs: Sequence[Expr], not_vars: str, who: str) -> list[int]:
        """The indices of ``vs``, which must be this model's state variables (a model error
        ``not_vars`` for anything else, and one naming ``who`` for another model's variables)."""
        idx = []
        for v in vs:
            if not isinstance(v, Expr) or v.op != "var":
                raise model_error(not_vars)
            i = int(v.val)  # type: ignore[arg-type]
            if not (0 <= i < len(self.var_nodes) and self.var_nodes[i] is v):
                raise model_error(f"{who} takes this model's state variables")
            idx.append(i)
        return idx

    def patterns(self, names: Sequence[str], additive: bool = True) -> None:
        """Declare that the patterns ``names`` are added, not maxed: sound when no action moves
        charged values of two of them at once (checked when the tables are built)."""
        known = {p.name for p in self.pattern_decls}
        missing = [n for n in names if n not in known]
        if missing:
            raise model_error(f"patterns(): no pattern named {', '.join(map(repr, missing))}")
        if not additive:
            return
        taken = {n for g in self.additive_groups for n in g}
        if taken & set(names):
            raise model_error(f"patterns(): {sorted(taken & set(names))} already in an additive group")
        self.additive_groups.append(tuple(names))

    def interchangeable(self, objects: Sequence[Sequence[Expr]]) -> None:
        """Objects (tuples of variables) whose values may be permuted without changing the puzzle.

        Engines store states with each group's objects sorted, so positions of
        three identical soldiers count once, not 3! times.
        """
        objs: list[tuple[int, ...]] = []
        for o in objects:
            idx = []
            for v in o:
                if not isinstance(v, Expr) or v.op != "var":
                    raise model_error("interchangeable objects must be tuples of state variables")
                idx.append(int(v.val))  # type: ignore[arg-type]
            objs.append(tuple(idx))
        if len(objs) > 1:
            self.groups.append(objs)

    def walks(self, *schemas: str, reversible: bool = False) -> None:
        """Declare the action schemas that are an agent's free walking (player-reachability).

        Uniform-cost search and A* then expand a state by closing it under these actions (a
        breadth-first walk, its length times their cost) and applying every other action from
        each state reached: one stored state per push instead of one per square walked.  Any
        subset of the actions gives the same optimum (a plan is walks separated by other
        actions), so the declaration is about speed, not meaning; the walk actions must share
        one cost.  ``reversible``: every walk can be walked back (an undirected grid walk);
        with zero-cost walks the engines then store one representative per walking region
        (Sokoban's normalised player position).  SAT, CP-SAT, bfs and Fast Downward keep the
        unit-step form.
        """
        if not schemas:
            raise model_error("walks() needs at least one action schema name")
        self.walk_schemas = tuple(schemas)
        self.walk_reversible = bool(reversible)

    def corrals(self, agent: Expr, objects: Sequence[Expr], targets: Iterable[int]) -> None:
        """Declare the shape that PI-corral pruning needs: ``agent`` walks (``walks``) over the
        same values that ``objects`` take; every other action is a push, which moves the agent
        from ``p`` onto the square ``x`` of one object and that object from ``x`` to ``y``, and
        needs ``y`` free of objects; objects block walks; and the goal holds exactly when every
        value in ``targets`` holds an object (as many targets as objects).

        Like ``walks`` it is about speed, not meaning: with zero-cost reversible walks, A* and
        uniform-cost search may then expand only the pushes into one "PI-corral" (a walled-off
        area whose boundary boxes can only be pushed into it, each such push reachable now),
        which keeps an optimal plan (docs/architecture.md, "Corral pruning").  The push shape is
        checked on the ground actions when a search uses it; the rest is the model's claim.
        """
        idx = self._state_vars([agent, *objects], "corrals() takes state variables: the agent and the "
                               "objects", "corrals()")
        if len(set(idx)) != len(idx) or len(idx) < 2:
            raise model_error("corrals() needs an agent and at least one object, all distinct")
        tg = tuple(_integer(t, "corrals() target value") for t in targets)
        if len(set(tg)) != len(tg) or len(tg) != len(idx) - 1:
            raise model_error(f"corrals() needs as many distinct targets as objects ({len(idx) - 1}), "
                              f"got {len(tg)}")
        self.corral_decl = Corrals(idx[0], tuple(idx[1:]), tg, caller_location())

    def aux_bound(self, slack: int) -> None:
        """Declare: two states equal but for their aux variables have optimal costs-to-go within ``slack``.

        True of a "last piece moved" memory that only makes a continuation free
        (``slack=1``: after one step both states agree again).  Breadth-first
        search then drops a state whose configuration was already reached
        ``slack`` or more cheaper -- a dominance prune that keeps the optimum.
        """
        if slack < 0:
            raise model_error("aux_bound slack must be >= 0")
        self.aux_slack = int(slack)

    def view(self, name: str, exprs: Sequence[ExprLike]) -> list[Expr]:
        """A named derived quantity (e.g. an occupancy grid computed from piece positions)."""
        es = [lift(e) for e in exprs]
        self.views[name] = es
        return es

    def display(self, fn: Callable[[Sequence[int]], str]) -> Callable[[Sequence[int]], str]:
        """Register how a state (values in variable order) is drawn as text."""
        self.renderer = fn
        return fn

    def look(self, rows: int, cols: int, **options: Any) -> Look:
        """Declare the board picture (``lang/look.py``): add layers to the returned ``Look``.

        Kept in ``info["look"]`` so that grounding carries it to the task unchanged.
        """
        lk = Look(rows, cols, **options)
        self.info["look"] = lk
        return lk


def _integer(x: Any, what: str) -> int:
    """``x`` as a Python int (numpy integers included); anything else is the model file's error."""
    import operator

    if isinstance(x, Expr):
        raise model_error(f"{what} must be a constant integer, got {x!r}")
    try:
        return int(operator.index(x))
    except TypeError:
        raise model_error(f"{what} must be an integer, got {type(x).__name__} {x!r}") from None


def _lifted(x: ExprLike, what: str) -> Expr:
    try:
        return lift(x)
    except TypeError as e:
        raise model_error(f"{what}: {e}") from None


@dataclass(frozen=True)
class Option:
    """A model option settable with ``-O name=value``."""

    name: str
    default: Any
    help: str = ""
    choices: tuple[Any, ...] | None = None
    type: type = str

    def convert(self, text: str) -> Any:
        from .errors import OptionError

        try:
            value = self.type(text)
        except ValueError:
            raise OptionError(f"option {self.name}: {text!r} is not a valid {self.type.__name__}") from None
        if self.choices is not None and value not in self.choices:
            raise OptionError(
                f"option {self.name}: {text!r} is not one of {', '.join(map(str, self.choices))}"
            )
        return value


@dataclass
class ModelSpec:
    """What a model file provides, gathered by the loader."""

    name: str
    options: list[Option] = field(default_factory=list)
    parse: Callable[..., Any] | None = None
    build: Callable[..., Any] | None = None
    doc: str = ""
