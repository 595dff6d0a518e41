"""Grounded task -> PDDL (domain + problem), so that any classical planner can solve it.

Why: PDDL is what every planner reads; with an exporter the optima our engines
report can be checked by a planner nobody on this team wrote (Fast Downward,
``solvers/fd.py``), and users can run their own planners on our puzzles.

The IR has finite-domain variables and ground actions whose guards and effect
values are arbitrary expressions; PDDL's simplest fragment (STRIPS with action
costs) has only propositions, conjunctions of positive preconditions, add and
delete lists.  The translation, per ground action:

* **One proposition per (variable, value)**: a unary predicate per variable,
  ``(v3-pos_a n5)`` = "variable 3 (``pos[A]``) has value 5"; values are the
  domain constants ``n5`` (``m1`` for -1).  One predicate per variable lets
  Fast Downward's invariant synthesis find that a variable has one value.
* **Splitting**: the variables the effects read (effect values and effect
  conditions) are fixed by enumerating their values, so every effect of a
  copy is a constant assignment.  Each copy substitutes its values into the
  guard (constants fold, ``element``/``ite`` pick their branch) and the
  residual guard is cut into conjuncts (``not`` pushed through ``or``).  A
  conjunct over one variable becomes the set of values it allows; a
  conjunct over several variables is split further over them while the
  copies of this action stay within ``max_split``.  Copies whose guard
  folds to false are dropped, as are copies whose effects would leave a
  variable's domain (the kernels raise an error on such a transition; the
  exporter counts them in the header instead).
* **Value sets** allowed by a one-variable conjunct (e.g. ``box[0] != 4``,
  a square being free) become a **membership proposition** of their own,
  ``(v1-box_0-not n4)``, or ``(v1-box_0-in s7)`` with a set constant ``s7``,
  kept up to date by every action that writes the variable: plain STRIPS,
  no negative preconditions.
* A written variable whose old value the copy does not know loses all its
  other value propositions (deleting a false atom is a no-op in STRIPS).
* Costs: ``:action-costs``, ``(increase (total-cost) c)`` per action.

Only where STRIPS does not suffice:

* **Derived predicates** (``:derived-predicates``, with
  ``:disjunctive-preconditions`` in their bodies): a guard conjunct over
  several variables that could not be split within ``max_split`` (e.g. the
  Zen garden's dead-end test on large boards) and a goal conjunct over
  several variables become a derived proposition defined by the disjunction
  of the value combinations that satisfy it.  Planners that do not support
  axioms (LM-cut in Fast Downward) then cannot be used: ``PddlTask.strips``
  says which case a task is in.
* Conditional effects are never emitted: an effect whose inputs cannot be
  split within ``max_split`` is a :class:`PddlError`.

Interchangeable objects (``task.groups``) are written **anonymously** where
that is exact: per group, ``(gI-name-at nK)`` "some object has value K" and
``(gI-name-free nK)`` "none has", so a planner's state is the canonical state
(labelled values plus each group's value set) and FD searches what our
engines search, not ``k!`` labelled copies.  A copy reads anonymously as "some
assignment of the group's values to its objects satisfies it": fixed objects'
values held, every other held value inside the set the remaining objects all
allow (objects allowed different sets are fixed by enumeration).  Exact when no
two objects of a group can ever share a value, which the exporter checks on
the initial state and on every copy's writes; otherwise, and for objects of
several variables, guards left to derived predicates, or goals that are not
symmetric, that group is labelled and the header says why (``symmetric=False``
labels all).

Plans map back through the action names: ``a<K>-<label>-<j>`` is copy ``j``
of ground action ``K`` (``PddlTask.actions`` holds the map explicitly).  An
action on an anonymous group moves *some* object; the plan is replayed from
the initial state to find which labelled one (``PddlTask.plan_from_names``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..ir.task import Task
from ..lang.errors import ModelError
from ..lang.expr import (
    INT,
    Abs,
    Add,
    And,
    Element,
    Expr,
    If,
    Max,
    Min,
    Not,
    Or,
    ToInt,
    _arith,
    _cmp,
    _divmod,
    const,
    variables_of,
)
from ..lang.ops import evaluate

DEFAULT_MAX_SPLIT = 256     # copies of one ground action
DEFAULT_MAX_DNF = 4096      # value combinations enumerated for one derived predicate


class PddlError(ModelError):
    """A task the exporter cannot write within its limits (one line, exit code of a model error)."""


@dataclass
class _Step:
    """A PDDL action over anonymous groups: the ground actions it was written for, its labelled writes
    and its moves (group, old value, new value)."""

    actions: list[int]
    writes: dict[int, int]
    moves: list[tuple[int, int, int]]


@dataclass
class PddlTask:
    """The written domain and problem, and what is needed to read a plan back."""

    domain: str
    problem: str
    actions: dict[str, int]             # PDDL action name -> ground action index (-1: bookkeeping)
    strips: bool                        # True: STRIPS + action costs only (no derived predicates)
    requirements: list[str]
    stats: dict[str, int] = field(default_factory=dict)
    # membership proposition -> (variable, the values for which it holds)
    membership: dict[str, tuple[int, frozenset[int]]] = field(default_factory=dict)
    # anonymous groups: group index (in task.groups) -> (predicate prefix, its objects' variables)
    groups: dict[int, tuple[str, list[int]]] = field(default_factory=dict)
    # PDDL action -> what it stands for, where it moves anonymous objects (read back by replay)
    steps: dict[str, _Step] = field(default_factory=dict)
    task: Task | None = field(default=None, repr=False)

    def plan_from_names(self, names: Iterable[str]) -> list[int]:
        """Ground-action indices for a planner's plan (action names, any case, with or without parens).

        With anonymous groups a PDDL action stands for "some object of the group at value x moves":
        which labelled object that is depends on the state, so the plan is replayed from the initial
        state and each step is matched to the ground action that does exactly that there.
        """
        out = []
        state = list(self.task.init) if self.task is not None and self.steps else None
        for step, raw in enumerate(names, start=1):
            name = raw.strip().strip("()").split()[0].lower() if raw.strip().strip("()") else ""
            if not name:
                continue
            if name not in self.actions:
                raise PddlError(f"the plan names action {name!r}, which the exported domain does not have")
            if self.actions[name] < 0:  # bookkeeping actions (pp-...) are no puzzle moves
                continue
            if state is None:
                out.append(self.actions[name])
                continue
            k, state = self._match(step, name, state)
            out.append(k)
        return out

    def _anonymous(self, state: Sequence[int]) -> tuple:
        """What the export's state knows of ``state``: labelled values, and each group's value set."""
        grouped = {v for _, vs in self.groups.values() for v in vs}
        return (tuple(x for v, x in enumerate(state) if v not in grouped),
                tuple(frozenset(state[v] for v in vs) for _, vs in self.groups.values()))

    def _match(self, step: int, name: str, state: list[int]) -> tuple[int, list[int]]:
        """The ground action that PDDL action ``name`` is in ``state``, and the successor it leads to."""
        assert self.task is not None
        task = self.task
        info = self.steps[name]
        want_state = list(state)
        for v, x in info.writes.items():
            want_state[v] = x
        labelled, sets = self._anonymous(want_state)
        sets = list(sets)
        order = list(self.groups)
        for gi, x, y in info.moves:
            i = order.index(gi)
            sets[i] = (sets[i] - {x}) | {y}
        want = (labelled, tuple(sets))
        cost = task.actions[info.actions[0]].cost
        tried = set(info.actions)
        for k in [*info.actions, *(k for k in range(len(task.actions)) if k not in tried)]:
            a = task.actions[k]
            if a.cost != cost or not evaluate(a.guard, state, {}):
                continue
            memo: dict[int, int] = {}
            new = list(state)
            for e in a.effects:
                if e.cond is None or evaluate(e.cond, state, memo):
                    new[e.var] = evaluate(e.value, state, memo)
            if self._anonymous(new) == want:
                return k, new
        raise PddlError(f"plan step {step} ({name}): no ground action does it from the replayed state "
                        "(is the model's interchangeable declaration right?)")


def read_plan(text: str) -> list[str]:
    """Action names of a plan file in the IPC format: one ``(name args)`` per line, ``;`` comments."""
    names = []
    for line in text.splitlines():
        line = line.split(";", 1)[0].strip()
        if line:
            names.append(line)
    return names


# ---------------------------------------------------------------------------------------------------
# partial evaluation: substitute known variable values and fold constants

def substitute(e: Expr, values: dict[int, int], memo: dict[int, Expr] | None = None) -> Expr:
    """``e`` with the variables in ``values`` replaced by constants, folded by the language's builders.

    ``element``/``table``/``ite`` with a constant selector keep only the selected branch, so a
    guard such as "the square the piece moves to is free" shrinks to one square's condition.
    """
    if memo is None:
        memo = {}
    got = memo.get(id(e))
    if got is not None:
        return got
    op = e.op
    r: Expr
    if op == "const":
        r = e
    elif op == "var":
        r = const(values[e.val]) if e.val in values else e  # type: ignore[index]
    elif op in ("ite_int", "ite_bool"):
        c = substitute(e.args[0], values, memo)
        if c.is_const:
            r = substitute(e.args[1] if c.val else e.args[2], values, memo)
        else:
            r = If(c, substitute(e.args[1], values, memo), substitute(e.args[2], values, memo))
    elif op == "and" or op == "or":
        parts = []
        stop = op == "or"  # the absorbing constant
        r = const(not stop)
        for a in e.args:
            s = substitute(a, values, memo)
            if s.is_const:
                if bool(s.val) == stop:
                    r = const(stop)
                    break
                continue
            parts.append(s)
        else:
            r = (And if op == "and" else Or)(*parts) if parts else const(not stop)
    elif op == "table":
        i = substitute(e.args[0], values, memo)
        vals: tuple[int, ...] = e.val  # type: ignore[assignment]
        if i.is_const:
            r = const(vals[i.val]) if 0 <= i.val < len(vals) else e.args[1]  # type: ignore[operator]
        else:
            r = Expr("table", (i, e.args[1]), vals, INT)
    elif op == "element":
        i = substitute(e.args[0], values, memo)
        items = e.args[2:]
        if i.is_const:
            k = int(i.val)  # type: ignore[arg-type]
            r = substitute(items[k] if 0 <= k < len(items) else e.args[1], values, memo)
        else:
            r = Element([substitute(x, values, memo) for x in items], i, substitute(e.args[1], values, memo))
    else:
        a = [substitute(x, values, memo) for x in e.args]
        r = _rebuild(e, a)
    memo[id(e)] = r
    return r


def _rebuild(e: Expr, a: list[Expr]) -> Expr:
    op = e.op
    if op == "add":
        return Add(*a)
    if op in ("sub", "mul"):
        return _arith(op, a[0], a[1])
    if op in ("floordiv", "mod"):
        return _divmod(op, a[0], int(a[1].val))  # type: ignore[arg-type]
    if op == "min":
        return Min(*a)
    if op == "max":
        return Max(*a)
    if op == "abs":
        return Abs(a[0])
    if op == "toint":
        return ToInt(a[0])
    if op in ("eq", "ne", "lt", "le", "gt", "ge"):
        return _cmp(op, a[0], a[1])
    if op == "not":
        return Not(a[0])
    if op == "neg":
        return _arith("sub", 0, a[0])
    raise PddlError(f"the PDDL exporter does not know the expression operator {op!r}")


def conjuncts(e: Expr) -> list[Expr]:
    """Top-level conjuncts, with ``not`` pushed through ``or`` (``!(a | b)`` -> ``!a``, ``!b``)."""
    out: list[Expr] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if x.op == "and":
            stack.extend(reversed(x.args))
        elif x.op == "not" and x.args[0].op == "or":
            stack.extend(Not(y) for y in reversed(x.args[0].args))
        elif x.op == "not" and x.args[0].op == "not":
            stack.append(x.args[0].args[0])
        else:
            out.append(x)
    return out


# ---------------------------------------------------------------------------------------------------

_NAME_BAD = re.compile(r"[^a-z0-9_]+")
_INDEX = re.compile(r"\[[^\]]*\]$")     # "pos[B]" -> "pos": a group's predicate names the array


def comment_text(text: str) -> str:
    """``text`` made safe for one ``;`` comment line: control characters are written as escapes.

    The header names the instance path, which may hold a newline: copied as it is, the rest of the
    path would start a line of PDDL (a syntax error, or worse, a definition a planner reads).
    """
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def _slug(text: str, limit: int = 24) -> str:
    s = _NAME_BAD.sub("_", text.lower()).strip("_")
    return s[:limit] or "x"


def _num(k: int) -> str:
    return f"n{k}" if k >= 0 else f"m{-k}"


@dataclass
class _Copy:
    action: int
    fixed: dict[int, int]                  # variables whose value the copy fixes (preconditions)
    sets: dict[int, frozenset[int]]        # one-variable conjuncts: allowed values
    derived: list[Expr]                    # conjuncts over several variables left to derived predicates
    writes: dict[int, int]                 # variable -> new value (only real changes are emitted)


class _Asymmetric(Exception):
    """A group that cannot be written anonymously: the export labels its objects (reason in the header)."""

    def __init__(self, group: int, reason: str):
        super().__init__(reason)
        self.group = group
        self.reason = reason


@dataclass(frozen=True)
class _GroupWay:
    """One way a condition holds on an anonymous group: values held, values not held, moves old -> new."""

    group: int
    held: list[int]
    free: list[int]
    moves: list[tuple[int, int]]


class _Exporter:
    def __init__(self, task: Task, max_split: int, max_dnf: int, sym: Sequence[int] = ()):
        self.task = task
        self.max_split = max_split
        self.max_dnf = max_dnf
        self.dom = [range(v.lo, v.hi + 1) for v in task.variables]
        self.pred = [f"v{i}-{_slug(v.name)}" for i, v in enumerate(task.variables)]
        # groups written anonymously: group index -> its objects' variables (arity 1)
        self.groups: dict[int, list[int]] = {gi: [o[0] for o in task.groups[gi]] for gi in sym}
        self.group_of = {v: gi for gi, vs in self.groups.items() for v in vs}
        self.gpred = {gi: f"g{gi}-{_slug(_INDEX.sub('', task.variables[vs[0]].name))}"
                      for gi, vs in self.groups.items()}
        self.member: dict[tuple[int, frozenset[int]], str] = {}      # (var, value set) -> proposition
        self.member_of: dict[int, list[frozenset[int]]] = {}
        self.derived: dict[int, tuple[str, Expr]] = {}               # id(expr) -> (name, expr)
        self.dropped_domain = 0
        # id(one-variable condition) -> (the condition, its values).  The node is kept: nodes are interned
        # weakly, so a freed residual guard's id is reused by a new node, and a cache keyed by id alone
        # handed that node the old one's value set (wrong preconditions in 8 of 9 copies of a move)
        self.allowed_cache: dict[int, tuple[Expr, frozenset[int]]] = {}

    # value sets ---------------------------------------------------------------------------------
    def allowed(self, c: Expr, v: int, within: Iterable[int]) -> frozenset[int]:
        """Values of ``v`` (among ``within``) for which the one-variable condition ``c`` holds."""
        got = self.allowed_cache.get(id(c))
        if got is None or got[0] is not c:
            got = (c, frozenset(k for k in self.dom[v] if evaluate(c, {v: k}, {})))  # type: ignore[arg-type]
            self.allowed_cache[id(c)] = got
        return got[1].intersection(within)

    def set_name(self, v: int, s: frozenset[int]) -> str:
        key = (v, s)
        name = self.member.get(key)
        if name is None:
            # one binary predicate per variable and kind, the set a constant: Fast Downward's invariant
            # synthesis then tries two candidates per variable, not one per proposition (5 s -> 0.01 s
            # of CPU on Hua Rong Dao, same invariants found)
            rest = sorted(set(self.dom[v]) - s)
            if len(rest) == 1:
                name = f"{self.pred[v]}-not {_num(rest[0])}"
            else:
                name = f"{self.pred[v]}-in s{len(self.member)}"
            self.member[key] = name
            self.member_of.setdefault(v, []).append(s)
        return name

    def derived_name(self, c: Expr) -> str:
        got = self.derived.get(id(c))
        if got is None:
            vs = sorted(variables_of(c))
            n = 1
            for v in vs:
                n *= len(self.dom[v])
            if n > self.max_dnf:
                names = ", ".join(self.task.variables[v].name for v in vs[:6])
                more = ", ..." if len(vs) > 6 else ""
                raise PddlError(f"a condition over {len(vs)} variables ({names}{more}) "
                                f"has {n} value combinations, more than max_dnf={self.max_dnf}")
            got = (f"ok{len(self.derived)}", c)
            self.derived[id(c)] = got
        return got[0]

    # splitting ----------------------------------------------------------------------------------
    def classify(self, r: Expr, fixed: dict[int, int]) -> tuple[dict[int, frozenset[int]], list[Expr]] | None:
        """(allowed value sets, multi-variable conjuncts) of a residual guard; None if it is false."""
        sets: dict[int, frozenset[int]] = {}
        multi: list[Expr] = []
        for c in conjuncts(r):
            if c.is_const:
                if not c.val:
                    return None
                continue
            vs = variables_of(c)
            if len(vs) == 1:
                (v,) = vs
                s = self.allowed(c, v, sets.get(v, self.dom[v]))
                if not s:
                    return None
                sets[v] = s
            else:
                multi.append(c)
        return sets, multi

    def copies(self, k: int, split_guard: bool = True) -> list[_Copy]:
        """The STRIPS copies of ground action ``k``.  When the guard's multi-variable conjuncts
        cannot all be split within ``max_split``, the action is split over its effects' reads only
        and those conjuncts all become derived propositions (a partial split would multiply the
        copies and still need the derived ones)."""
        a = self.task.actions[k]
        reads: set[int] = set()
        for e in a.effects:
            reads |= variables_of(e.value)
            if e.cond is not None:
                reads |= variables_of(e.cond)
        # an anonymous object's written value replaces a known one: (g-at old) must be deleted
        extra = {e.var for e in a.effects if e.var in self.group_of} - reads
        reads |= extra
        base = self.classify(a.guard, {})
        if base is None:
            return []
        sets0, _ = base
        order = sorted(reads)
        choices = [sorted(sets0.get(v, self.dom[v])) for v in order]
        n = 1
        for c in choices:
            n *= len(c)
        if n > self.max_split and extra:
            v = min(extra)
            raise _Asymmetric(self.group_of[v], f"action {a.label} writes {self.task.variables[v].name} "
                              f"without reading it; splitting over its old value exceeds max_split")
        if n > self.max_split:
            names = ", ".join(self.task.variables[v].name for v in order[:6])
            raise PddlError(f"action {a.label}: its effects read {len(order)} variables ({names}) with {n} "
                            f"value combinations, more than max_split={self.max_split}")
        todo: list[tuple[dict[int, int], Expr]] = []
        for combo in itertools.product(*choices):
            fixed = dict(zip(order, combo))
            r = substitute(a.guard, fixed)
            if not (r.is_const and not r.val):
                todo.append((fixed, r))
        done: list[tuple[dict[int, int], dict[int, frozenset[int]], list[Expr]]] = []
        while todo:
            fixed, r = todo.pop()
            got = self.classify(r, fixed)
            if got is None:
                continue
            sets, multi = got
            if not multi:
                done.append((fixed, sets, []))
                continue
            # split over the multi-variable conjunct with the fewest value combinations
            best = None
            for c in multi:
                vs = sorted(variables_of(c))
                cs = [sorted(sets.get(v, self.dom[v])) for v in vs]
                size = 1
                for x in cs:
                    size *= len(x)
                if best is None or size < best[0]:
                    best = (size, vs, cs)
            assert best is not None
            size, vs, cs = best
            if not split_guard:
                done.append((fixed, sets, multi))
                continue
            union: set[int] = set().union(*(variables_of(c) for c in multi))
            bound = 1
            for v in union:
                bound *= len(sets.get(v, self.dom[v]))
            if len(done) + len(todo) + bound > self.max_split:
                # splitting this copy over all its conjuncts' variables could exceed the budget
                return self.copies(k, split_guard=False)
            for combo in itertools.product(*cs):
                more = dict(zip(vs, combo))
                r2 = substitute(r, more)
                if not (r2.is_const and not r2.val):
                    todo.append(({**fixed, **more}, r2))
        out = []
        for fixed, sets, multi in done:
            writes: dict[int, int] = {}
            memo: dict[int, Expr] = {}
            ok = True
            for e in a.effects:
                if e.cond is not None:
                    c = substitute(e.cond, fixed, memo)
                    assert c.is_const, "effect condition not fixed by the split"
                    if not c.val:
                        continue
                val = substitute(e.value, fixed, memo)
                assert val.is_const, "effect value not fixed by the split"
                writes[e.var] = int(val.val)  # type: ignore[arg-type]
            for v, x in writes.items():
                if x not in self.dom[v]:
                    ok = False
            if not ok:
                self.dropped_domain += 1
                continue
            # a fixed variable's set constraint is already decided by its value
            sets = {v: s for v, s in sets.items() if v not in fixed}
            out.append(_Copy(k, fixed, sets, multi, writes))
        return out

    # writing ------------------------------------------------------------------------------------
    def atom(self, v: int, k: int) -> str:
        return f"({self.pred[v]} {_num(k)})"

    def condition(self, fixed: dict[int, int], sets: dict[int, frozenset[int]],
                  multi: list[Expr]) -> list[str]:
        pre = [self.atom(v, k) for v, k in sorted(fixed.items())]
        for v, s in sorted(sets.items(), key=lambda kv: kv[0]):
            if len(s) == len(self.dom[v]):
                continue
            if len(s) == 1:
                pre.append(self.atom(v, next(iter(s))))
            else:
                pre.append(f"({self.set_name(v, s)})")
        pre += [f"({self.derived_name(c)})" for c in multi]
        return pre

    def effects(self, cp: _Copy) -> list[str]:
        eff: list[str] = []
        for v, new in sorted(cp.writes.items()):
            if v in cp.fixed:
                old: Sequence[int] = [cp.fixed[v]]
            elif v in cp.sets:
                old = sorted(cp.sets[v])
            else:
                old = self.dom[v]
            if list(old) == [new]:
                continue
            eff.append(self.atom(v, new))
            eff += [f"(not {self.atom(v, k)})" for k in old if k != new]
            for s in self.member_of.get(v, ()):
                was = {k in s for k in old}
                now = new in s
                if was == {now}:
                    continue
                name = self.set_name(v, s)
                eff.append(f"({name})" if now else f"(not ({name}))")
        return eff

    # anonymous groups ---------------------------------------------------------------------------
    def group_ways(self, gi: int, fixed: dict[int, int], sets: dict[int, frozenset[int]],
                   writes: dict[int, int], what: str, split: bool) -> list[_GroupWay]:
        """The ways a condition on group ``gi``'s labelled objects can hold in *some* labelling.

        A condition (and an action's writes) names objects; an anonymous state only knows which
        values the group holds, and it satisfies the condition when some assignment of its values
        to the objects does.  Objects whose value the condition fixes must find their values held;
        the others must hold the remaining ones.  When those others all share one allowed set S,
        that is exactly "no value outside S is held, besides the fixed ones": STRIPS atoms.  Others
        with a different set are fixed by enumerating it (``split``; else the group is labelled).
        """
        objs = self.groups[gi]
        full = frozenset(self.dom[objs[0]])
        known = {o: fixed[o] for o in objs if o in fixed}
        for o in objs:
            s = sets.get(o)
            if o not in known and s is not None and len(s) == 1:
                known[o] = next(iter(s))
        rest = [o for o in objs if o not in known]
        classes: dict[frozenset[int], list[int]] = {}
        for o in rest:
            classes.setdefault(sets.get(o, full), []).append(o)
        common: frozenset[int] = full
        crowd: list[int] = []
        if classes:
            common, crowd = max(classes.items(), key=lambda kv: (len(kv[1]), len(kv[0])))
        odd = [o for o in rest if o not in crowd]
        combos = 1
        for o in odd:
            combos *= len(sets[o])
        if odd and not split:
            raise _Asymmetric(gi, f"{what} constrains its objects differently")
        if combos > self.max_split:
            raise _Asymmetric(gi, f"{what}: fixing the objects it constrains differently takes {combos} "
                              f"copies, more than max_split={self.max_split}")
        out = []
        for combo in itertools.product(*(sorted(sets[o]) for o in odd)):
            vals = {**known, **dict(zip(odd, combo))}
            held = set(vals.values())
            if len(held) < len(vals):
                continue   # two objects on one value: never the case in a state of this export
            post = {o: writes.get(o, x) for o, x in vals.items()}
            if len(set(post.values())) < len(post):
                raise _Asymmetric(gi, f"{what} can put two of its objects on one value")
            moves = sorted((x, post[o]) for o, x in vals.items() if post[o] != x)
            for _, y in moves:
                if crowd and y in common and y not in held:
                    raise _Asymmetric(gi, f"{what} can move an object onto a value another object may hold")
            free = sorted(full - common - held) if crowd else []
            out.append(_GroupWay(gi, sorted(held), free, moves))
        return out

    def group_atoms(self, way: _GroupWay) -> tuple[list[str], list[str]]:
        """(precondition atoms, effect literals) of one way to meet a condition on an anonymous group."""
        g = self.gpred[way.group]
        pre = [f"({g}-at {_num(x)})" for x in way.held] + [f"({g}-free {_num(x)})" for x in way.free]
        eff: list[str] = []
        targets = {y for _, y in way.moves}
        for y in sorted(targets):
            eff += [f"({g}-at {_num(y)})", f"(not ({g}-free {_num(y)}))"]
        for x, _ in way.moves:
            if x not in targets:   # a value another moving object takes stays held
                eff += [f"(not ({g}-at {_num(x)}))", f"({g}-free {_num(x)})"]
        return pre, eff

    def anonymous(self, cp: _Copy) -> list[tuple[_Copy, list[_GroupWay]]]:
        """Copy ``cp`` with its anonymous groups' part taken out: (the labelled rest, one way per group)
        for every combination of the groups' ways."""
        label = self.task.actions[cp.action].label
        for c in cp.derived:
            hit = variables_of(c) & self.group_of.keys()
            if hit:
                raise _Asymmetric(self.group_of[min(hit)], f"action {label} has a condition over several "
                                  "variables that was not split (a derived predicate)")
        per_group = []
        for gi in self.groups:
            ways = self.group_ways(gi, cp.fixed, cp.sets, cp.writes, f"action {label}", split=True)
            if not ways:
                return []
            per_group.append(ways)
        n = 1
        for ways in per_group:
            n *= len(ways)
        if n > self.max_split:
            gi = next(iter(self.groups))
            raise _Asymmetric(gi, f"action {label}: {n} anonymous copies, more than "
                              f"max_split={self.max_split}")
        rest = _Copy(cp.action, {v: x for v, x in cp.fixed.items() if v not in self.group_of},
                     {v: s for v, s in cp.sets.items() if v not in self.group_of}, list(cp.derived),
                     {v: x for v, x in cp.writes.items() if v not in self.group_of})
        return [(rest, list(combo)) for combo in itertools.product(*per_group)]

    def terms(self, c: Expr) -> list[tuple[dict[int, int], dict[int, frozenset[int]]]]:
        """Ways to satisfy ``c``: its disjuncts when each is a conjunction of one-variable conditions,
        else the satisfying value combinations of its variables (at most ``max_dnf``)."""
        parts = list(c.args) if c.op == "or" else [c]
        out: list[tuple[dict[int, int], dict[int, frozenset[int]]]] = []
        for d in parts:
            got = self.classify(d, {})
            if got is None:
                continue
            sets, multi = got
            if multi:
                break
            out.append(({}, sets))
        else:
            return out
        vs = sorted(variables_of(c))
        n = 1
        for v in vs:
            n *= len(self.dom[v])
        if n > self.max_dnf:
            raise PddlError(f"a goal condition over {len(vs)} variables has {n} value combinations, "
                            f"more than max_dnf={self.max_dnf}")
        return [(dict(zip(vs, combo)), {}) for combo in itertools.product(*[self.dom[v] for v in vs])
                if evaluate(c, dict(zip(vs, combo)), {})]  # type: ignore[arg-type]

    def formula_dnf(self, c: Expr) -> str | None:
        vs = sorted(variables_of(c))
        terms = []
        for combo in itertools.product(*[self.dom[v] for v in vs]):
            if evaluate(c, dict(zip(vs, combo)), {}):  # type: ignore[arg-type]
                terms.append("(and " + " ".join(self.atom(v, k) for v, k in zip(vs, combo)) + ")")
        if not terms:
            return None
        return "(or " + " ".join(terms) + ")" if len(terms) > 1 else terms[0]


def _group_text(task: Task, gi: int) -> str:
    objs = task.groups[gi]
    names = ", ".join(",".join(task.variables[v].name for v in o) for o in objs[:6])
    return names + (", ..." if len(objs) > 6 else "")


def export(task: Task, name: str = "puzzle", max_split: int = DEFAULT_MAX_SPLIT,
           max_dnf: int = DEFAULT_MAX_DNF, comment: Sequence[str] = (), symmetric: bool = True) -> PddlTask:
    """The PDDL domain and problem of ``task`` (see the module docstring for the translation).

    ``symmetric``: write each group of interchangeable objects anonymously where the exporter can
    show that is exact (else that group is labelled, and the header says why); False labels all.
    """
    sym: list[int] = []
    notes: list[str] = []
    for gi, grp in enumerate(task.groups if symmetric else []):
        if any(len(o) != 1 for o in grp):
            notes.append(f"group {gi} ({_group_text(task, gi)}) labelled: objects of several variables")
        elif len({task.init[o[0]] for o in grp}) < len(grp):
            notes.append(f"group {gi} ({_group_text(task, gi)}) labelled: two objects share a value at init")
        else:
            sym.append(gi)
    while True:
        try:
            return _export(task, name, max_split, max_dnf, comment, sym, notes)
        except _Asymmetric as e:
            sym.remove(e.group)
            notes.append(f"group {e.group} ({_group_text(task, e.group)}) labelled: {e.reason}")


def _goal_symmetric(ex: _Exporter,
                    terms: list[tuple[dict[int, int], dict[int, frozenset[int]]]]) -> int | None:
    """A group under whose permutations the disjunction ``terms`` is not invariant (None: it is for all).

    Adjacent transpositions generate every permutation, so checking them suffices.
    """
    norm = {frozenset({**{v: frozenset([x]) for v, x in f.items()}, **s}.items()) for f, s in terms}
    for gi, objs in ex.groups.items():
        for a, b in itertools.pairwise(objs):
            swap = {a: b, b: a}
            moved = {frozenset((swap.get(v, v), s) for v, s in t) for t in norm}
            if moved != norm:
                return gi
    return None


def _export(task: Task, name: str, max_split: int, max_dnf: int, comment: Sequence[str], sym: list[int],
            notes: list[str]) -> PddlTask:
    ex = _Exporter(task, max_split, max_dnf, sym)
    copies: list[_Copy] = []
    for k in range(len(task.actions)):
        copies.extend(ex.copies(k))
    anon = ex.groups.keys()
    items: list[tuple[_Copy, list[_GroupWay]]] = []
    for cp in copies:
        items.extend(ex.anonymous(cp) if anon else [(cp, [])])

    def labelled(fixed: dict[int, int], sets: dict[int, frozenset[int]]) -> tuple[dict, dict]:
        return ({v: x for v, x in fixed.items() if v not in ex.group_of},
                {v: x for v, x in sets.items() if v not in ex.group_of})
    # the goal: one-variable conjuncts become atoms / membership propositions; a conjunct over
    # several variables gets a proposition made true by zero-cost "achiever" actions, one per
    # disjunct, which only run after a zero-cost "finish" action has frozen the state
    g = ex.classify(task.goal, {})
    achievers: list[tuple[str, list[str], str]] = []
    n_goals = 0
    if g is None:
        goal_pre = ["(never)"]  # the goal folds to false: a proposition no action adds
    else:
        gsets, gmulti = g
        goal_pre = ex.condition({}, labelled({}, gsets)[1], [])
        for gi, objs in ex.groups.items():
            # one-variable goal conditions on a group: exact anonymously only when all objects share one
            if len({gsets.get(o, frozenset(ex.dom[o])) for o in objs}) > 1:
                raise _Asymmetric(gi, "the goal constrains its objects differently")
            ways = ex.group_ways(gi, {}, gsets, {}, "the goal", split=False)
            goal_pre += ex.group_atoms(ways[0])[0] if ways else ["(never)"]
        for c in gmulti:
            terms = ex.terms(c)
            ways_of: list[list[str]] = []
            if anon and variables_of(c) & ex.group_of.keys():
                bad = _goal_symmetric(ex, terms)
                if bad is not None:
                    raise _Asymmetric(bad, "a goal condition over several variables is not symmetric in "
                                      "its objects")
            for fixed, sets in terms:
                per = [ex.group_ways(gi, fixed, sets, {}, "the goal", split=True) for gi in ex.groups]
                for combo in itertools.product(*per):
                    pre = ex.condition(*labelled(fixed, sets), [])
                    for way in combo:
                        pre += ex.group_atoms(way)[0]
                    if pre not in ways_of:
                        ways_of.append(pre)
            if len(ways_of) == 1:   # one way (an anonymous group's "some object at g"): plain goal atoms
                goal_pre += [a for a in ways_of[0] if a not in goal_pre]
                continue
            i = n_goals
            n_goals += 1
            for j, pre in enumerate(ways_of):
                achievers.append((f"pp-goal{i}-{j}", ["(pp-done)", *pre], f"(pp-goal{i})"))
            goal_pre.append(f"(pp-goal{i})")
    phases = bool(achievers)
    # preconditions register every membership set before any effect list is written
    pres = [ex.condition(cp.fixed, cp.sets, cp.derived) + [a for w in ways for a in ex.group_atoms(w)[0]]
            + (["(pp-play)"] if phases else []) for cp, ways in items]

    dname = _slug(name, 40).replace("_", "-") or "puzzle"
    consts = [_num(k) for k in sorted({k for d in ex.dom for k in d})]
    consts += [n.split()[1] for n in ex.member.values() if n.split()[1].startswith("s")]  # set constants
    strips = not ex.derived
    reqs = [":strips", ":action-costs"]
    if not strips:
        reqs += [":disjunctive-preconditions", ":derived-predicates"]
    names: dict[str, int] = {}
    per_action: dict[int, int] = {}
    body: list[str] = []
    steps: dict[str, _Step] = {}
    seen: dict[tuple, str] = {}   # (precondition, effect) -> the PDDL action already written for it
    for (cp, ways), pre in zip(items, pres):
        a = task.actions[cp.action]
        eff = ex.effects(cp) + [x for w in ways for x in ex.group_atoms(w)[1]]
        eff.append(f"(increase (total-cost) {a.cost})")
        key = (tuple(pre), tuple(eff))
        if key in seen:  # the same move of an anonymous object, written for another labelled object
            steps[seen[key]].actions.append(cp.action)
            continue
        j = per_action.get(cp.action, 0)
        per_action[cp.action] = j + 1
        aname = f"a{cp.action}-{_slug(a.label)}-{j}"
        names[aname] = cp.action
        if anon:
            seen[key] = aname
            steps[aname] = _Step([cp.action], dict(cp.writes),
                                 [(w.group, x, y) for w in ways for x, y in w.moves])
        body.append(f" (:action {aname}\n  :parameters ()\n  :precondition (and {' '.join(pre)})\n"
                    f"  :effect (and {' '.join(eff)}))")
    n_moves = len(body)
    if phases:
        body.append(" (:action pp-finish\n  :parameters ()\n  :precondition (and (pp-play))\n"
                    "  :effect (and (not (pp-play)) (pp-done) (increase (total-cost) 0)))")
        names["pp-finish"] = -1
        for aname, pre, eff in achievers:
            body.append(f" (:action {aname}\n  :parameters ()\n  :precondition (and {' '.join(pre)})\n"
                        f"  :effect (and {eff} (increase (total-cost) 0)))")
            names[aname] = -1
    head = [f"; {comment_text(line)}" for line in comment]
    head += [
        "; written by puzzleplan (puzzleplan/encodings/pddl.py) from the grounded task:",
        f"; {task.n_vars} variables, {len(task.actions)} ground actions -> {n_moves} PDDL actions",
        "; (vI-name nK): variable I has value K (mK: value -K); (vI-name-not nK), (vI-name-in sJ): the",
        "; variable's value lies in a set a precondition needs, kept up to date by every action writing it.",
        "; action aK-label-J: copy J of ground action K (split over the values its effects read).",
    ]
    for gi in ex.groups:
        gp = ex.gpred[gi]
        head.append(f"; interchangeable objects {_group_text(task, gi)} are anonymous: ({gp}-at nK) = some "
                    f"object of group {gi} has value K, ({gp}-free nK) = none has. A plan maps back to "
                    "labelled objects by replay.")
    head += [f"; {note}" for note in notes]
    if ex.dropped_domain:
        head.append(f"; {ex.dropped_domain} action copies left out: they would set a value outside "
                    "its domain")
    if phases:
        head.append("; goal conjuncts over several variables: (pp-goalI), added by the zero-cost actions "
                    "pp-goalI-J (one per way to satisfy it), which need (pp-done): the zero-cost pp-finish "
                    "ends play (every puzzle action needs (pp-play)) so the checked state cannot change.")
    if strips:
        head.append("; features: STRIPS + action costs only.")
    else:
        head.append(f"; features: STRIPS + action costs; {len(ex.derived)} derived predicates (okN) for "
                    "conditions over several variables that were not split.")
    preds = [f"({p} ?x)" for v, p in enumerate(ex.pred) if v not in ex.group_of]
    preds += [f"({ex.gpred[gi]}-{what} ?x)" for gi in ex.groups for what in ("at", "free")]
    preds += sorted({f"({n.split()[0]} ?s)" for n in ex.member.values()})
    preds += [f"({n})" for n, _ in ex.derived.values()] + ["(never)"]
    if phases:
        preds += ["(pp-play)", "(pp-done)"] + [f"(pp-goal{i})" for i in range(n_goals)]
    dom = head + [f"(define (domain {dname})", f" (:requirements {' '.join(reqs)})",
                  " (:constants " + " ".join(consts) + ")",
                  " (:predicates " + " ".join(preds) + ")", " (:functions (total-cost) - number)"]
    for dn, c in ex.derived.values():
        body_f = ex.formula_dnf(c)
        if body_f is not None:  # no rule: the derived proposition is never true
            dom.append(f" (:derived ({dn}) {body_f})")
    dom += body
    dom.append(")")
    init = [ex.atom(v, k) for v, k in enumerate(task.init) if v not in ex.group_of]
    for gi, objs in ex.groups.items():
        held = {task.init[o] for o in objs}
        init += [f"({ex.gpred[gi]}-{'at' if k in held else 'free'} {_num(k)})" for k in ex.dom[objs[0]]]
    for (v, s), mname in ex.member.items():
        if task.init[v] in s:
            init.append(f"({mname})")
    if phases:
        init.append("(pp-play)")
    init.append("(= (total-cost) 0)")
    prob = head[: len(comment)] + [
        f"(define (problem {dname}-1) (:domain {dname})",
        " (:init " + " ".join(init) + ")",
        " (:goal (and " + " ".join(goal_pre) + "))",
        " (:metric minimize (total-cost)))",
    ]
    stats = {"pddl_actions": n_moves, "ground_actions": len(task.actions),
             "membership_props": len(ex.member), "derived_predicates": len(ex.derived),
             "dropped_out_of_domain": ex.dropped_domain, "anonymous_groups": len(ex.groups),
             "labelled_groups": len(task.groups) - len(ex.groups)}
    membership = {mname: (v, s) for (v, s), mname in ex.member.items()}
    groups = {gi: (ex.gpred[gi], list(objs)) for gi, objs in ex.groups.items()}
    return PddlTask("\n".join(dom) + "\n", "\n".join(prob) + "\n", names, strips, reqs, stats, membership,
                    groups, steps, task)


__all__ = ["DEFAULT_MAX_DNF", "DEFAULT_MAX_SPLIT", "PddlError", "PddlTask", "comment_text", "conjuncts",
           "export", "read_plan", "substitute"]
