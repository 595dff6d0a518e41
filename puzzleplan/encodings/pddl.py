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
  ``(v1-box_0-not-n4)``, kept up to date by every action that writes the
  variable: plain STRIPS, no negative preconditions.
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

Plans map back through the action names: ``a<K>-<label>-<j>`` is copy ``j``
of ground action ``K`` (``PddlTask.actions`` holds the map explicitly).
Interchangeable objects are not exploited (PDDL has no notion of them): a
planner searches the labelled states.
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
from .sat import evaluate

DEFAULT_MAX_SPLIT = 256     # copies of one ground action
DEFAULT_MAX_DNF = 4096      # value combinations enumerated for one derived predicate


class PddlError(ModelError):
    """A task the exporter cannot write within its limits (one line, exit code of a model error)."""


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

    def plan_from_names(self, names: Iterable[str]) -> list[int]:
        """Ground-action indices for a planner's plan (action names, any case, with or without parens)."""
        out = []
        for raw in names:
            name = raw.strip().strip("()").split()[0].lower() if raw.strip().strip("()") else ""
            if not name:
                continue
            if name not in self.actions:
                raise PddlError(f"the plan names action {name!r}, which the exported domain does not have")
            if self.actions[name] >= 0:  # bookkeeping actions (pp-...) are no puzzle moves
                out.append(self.actions[name])
        return out


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


class _Exporter:
    def __init__(self, task: Task, max_split: int, max_dnf: int):
        self.task = task
        self.max_split = max_split
        self.max_dnf = max_dnf
        self.dom = [range(v.lo, v.hi + 1) for v in task.variables]
        self.pred = [f"v{i}-{_slug(v.name)}" for i, v in enumerate(task.variables)]
        self.member: dict[tuple[int, frozenset[int]], str] = {}      # (var, value set) -> proposition
        self.member_of: dict[int, list[frozenset[int]]] = {}
        self.derived: dict[int, tuple[str, Expr]] = {}               # id(expr) -> (name, expr)
        self.dropped_domain = 0
        self.allowed_cache: dict[int, frozenset[int]] = {}   # id(one-variable condition) -> values

    # value sets ---------------------------------------------------------------------------------
    def allowed(self, c: Expr, v: int, within: Iterable[int]) -> frozenset[int]:
        """Values of ``v`` (among ``within``) for which the one-variable condition ``c`` holds."""
        full = self.allowed_cache.get(id(c))
        if full is None:
            full = frozenset(k for k in self.dom[v] if evaluate(c, {v: k}, {}))  # type: ignore[arg-type]
            self.allowed_cache[id(c)] = full
        return full.intersection(within)

    def set_name(self, v: int, s: frozenset[int]) -> str:
        key = (v, s)
        name = self.member.get(key)
        if name is None:
            rest = sorted(set(self.dom[v]) - s)
            if len(rest) == 1:
                name = f"{self.pred[v]}-not-{_num(rest[0])}"
            else:
                name = f"{self.pred[v]}-in-s{len(self.member)}"
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
        base = self.classify(a.guard, {})
        if base is None:
            return []
        sets0, _ = base
        order = sorted(reads)
        choices = [sorted(sets0.get(v, self.dom[v])) for v in order]
        n = 1
        for c in choices:
            n *= len(c)
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


def export(task: Task, name: str = "puzzle", max_split: int = DEFAULT_MAX_SPLIT,
           max_dnf: int = DEFAULT_MAX_DNF, comment: Sequence[str] = ()) -> PddlTask:
    """The PDDL domain and problem of ``task`` (see the module docstring for the translation)."""
    ex = _Exporter(task, max_split, max_dnf)
    copies: list[_Copy] = []
    for k in range(len(task.actions)):
        copies.extend(ex.copies(k))
    # the goal: one-variable conjuncts become atoms / membership propositions; a conjunct over
    # several variables gets a proposition made true by zero-cost "achiever" actions, one per
    # disjunct, which only run after a zero-cost "finish" action has frozen the state
    g = ex.classify(task.goal, {})
    achievers: list[tuple[str, list[str], str]] = []
    if g is None:
        goal_pre = ["(never)"]  # the goal folds to false: a proposition no action adds
    else:
        gsets, gmulti = g
        goal_pre = ex.condition({}, gsets, [])
        for i, c in enumerate(gmulti):
            for j, (fixed, sets) in enumerate(ex.terms(c)):
                pre = ["(pp-done)", *ex.condition(fixed, sets, [])]
                achievers.append((f"pp-goal{i}-{j}", pre, f"(pp-goal{i})"))
            goal_pre.append(f"(pp-goal{i})")
    phases = bool(achievers)
    # preconditions register every membership set before any effect list is written
    pres = [ex.condition(cp.fixed, cp.sets, cp.derived) + (["(pp-play)"] if phases else []) for cp in copies]

    dname = _slug(name, 40).replace("_", "-") or "puzzle"
    consts = sorted({k for d in ex.dom for k in d})
    strips = not ex.derived
    reqs = [":strips", ":action-costs"]
    if not strips:
        reqs += [":disjunctive-preconditions", ":derived-predicates"]
    names: dict[str, int] = {}
    per_action: dict[int, int] = {}
    body: list[str] = []
    for cp, pre in zip(copies, pres):
        j = per_action.get(cp.action, 0)
        per_action[cp.action] = j + 1
        a = task.actions[cp.action]
        aname = f"a{cp.action}-{_slug(a.label)}-{j}"
        names[aname] = cp.action
        eff = ex.effects(cp) + [f"(increase (total-cost) {a.cost})"]
        body.append(f" (:action {aname}\n  :parameters ()\n  :precondition (and {' '.join(pre)})\n"
                    f"  :effect (and {' '.join(eff)}))")
    if phases:
        body.append(" (:action pp-finish\n  :parameters ()\n  :precondition (and (pp-play))\n"
                    "  :effect (and (not (pp-play)) (pp-done) (increase (total-cost) 0)))")
        names["pp-finish"] = -1
        for aname, pre, eff in achievers:
            body.append(f" (:action {aname}\n  :parameters ()\n  :precondition (and {' '.join(pre)})\n"
                        f"  :effect (and {eff} (increase (total-cost) 0)))")
            names[aname] = -1
    head = [f"; {line}" for line in comment]
    head += [
        "; written by puzzleplan (puzzleplan/encodings/pddl.py) from the grounded task:",
        f"; {task.n_vars} variables, {len(task.actions)} ground actions -> {len(copies)} PDDL actions",
        "; (vI-name nK): variable I has value K (mK: value -K); -not-/-in- propositions: the variable's",
        "; value lies in a set a precondition needs, kept up to date by every action writing it.",
        "; action aK-label-J: copy J of ground action K (split over the values its effects read).",
    ]
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
    preds = [f"({p} ?x)" for p in ex.pred] + [f"({n})" for n in ex.member.values()]
    preds += [f"({n})" for n, _ in ex.derived.values()] + ["(never)"]
    if phases:
        preds += ["(pp-play)", "(pp-done)"] + [f"(pp-goal{i})" for i in range(len(gmulti))]
    dom = head + [f"(define (domain {dname})", f" (:requirements {' '.join(reqs)})",
                  " (:constants " + " ".join(_num(k) for k in consts) + ")",
                  " (:predicates " + " ".join(preds) + ")", " (:functions (total-cost) - number)"]
    for dn, c in ex.derived.values():
        body_f = ex.formula_dnf(c)
        if body_f is not None:  # no rule: the derived proposition is never true
            dom.append(f" (:derived ({dn}) {body_f})")
    dom += body
    dom.append(")")
    init = [ex.atom(v, k) for v, k in enumerate(task.init)]
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
    stats = {"pddl_actions": len(copies), "ground_actions": len(task.actions),
             "membership_props": len(ex.member), "derived_predicates": len(ex.derived),
             "dropped_out_of_domain": ex.dropped_domain}
    membership = {mname: (v, s) for (v, s), mname in ex.member.items()}
    return PddlTask("\n".join(dom) + "\n", "\n".join(prob) + "\n", names, strips, reqs, stats, membership)


__all__ = ["DEFAULT_MAX_DNF", "DEFAULT_MAX_SPLIT", "PddlError", "PddlTask", "conjuncts", "export",
           "read_plan", "substitute"]
