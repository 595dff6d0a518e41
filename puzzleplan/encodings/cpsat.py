"""Grounded task -> an OR-Tools CP-SAT model unrolled over a fixed horizon ``T``.

The same bounded planning problem as :mod:`puzzleplan.encodings.sat`
(Kautz & Selman 1992/1996: a state copy per step, a choice of exactly one
of {actions..., noop} per step, guards, effects and explanatory frame
axioms), posted as a constraint model instead of clauses.

Representation, and why: **one integer variable per (state variable, step)**,
with the exact domain the relaxed value-set reachability analysis gives for
that step (a sparse :class:`Domain`), rather than our own one-hot booleans.
CP-SAT builds value literals for small domains itself (its "full encoding")
and keeps an order encoding next to them, so comparisons, sums and the
heuristic's linear bounds get integer reasoning (bounds propagation, LP
relaxation) that a one-hot model would hide; arithmetic needs no
enumeration (``add``/``sub`` are linear expressions, ``mul``/``//``/``%``/
``abs``/``min``/``max`` map to CP-SAT's own constraints), which keeps the
model small where the CNF encoder has to enumerate value pairs.  A second,
structurally different encoding of the same IR is also what makes the
cross-check between the ``sat`` and ``cpsat`` engines worth something.

Expressions (cached per ``(node, t)``):

* a node that depends on a single state variable is compiled, whatever
  its shape, to a function of that variable: a boolean becomes a literal
  ``b <-> x in S`` (``AddLinearExpressionInDomain`` both ways), an integer
  an ``AddElement`` over the variable's domain -- the common case of guards
  and views (table lookups, ``x == c``);
* otherwise: linear expressions, reified linear comparisons
  (``OnlyEnforceIf(b)`` / ``OnlyEnforceIf(~b)``), ``AddBoolOr``/
  ``AddBoolAnd`` for connectives, ``AddElement`` for ``table``/``element``
  (total: out-of-range positions take the default), two enforced
  equalities for ``ite``;
* top-level conjunctions of guards and the goal are posted directly with
  enforcement literals, without reifying them.

The step itself -- each variable's value set per step, each action's guard
conjuncts and effective writes with their firing conditions (later writes
win), the writers of each variable -- comes from the shared layer
:mod:`puzzleplan.encodings.unrolled`; this module translates it.  Effects:
``x[v,t+1] == value_t`` enforced by the action literal and the write's firing
condition.  Frame: ``x[v,t+1] == x[v,t]`` enforced when no writer of ``v``
fires.

Symmetry: a group of interchangeable single-variable objects gets labelled
successors ``y`` and sorted state variables ``x = sorted(y)`` (``x`` non-
decreasing, ``x_i = y[p_i]`` by ``AddElement`` with ``p`` all-different), so
states are canonical as in the explicit engines; plans are mapped back to
the instance's objects by :func:`puzzleplan.encodings.symmetry.concretise`.
Invariants: the forbidden value pairs of
:func:`puzzleplan.encodings.invariants.mutex_invariants`, one
``AddForbiddenAssignments`` per variable pair and step.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ortools.sat.python import cp_model

from ..ir.task import Task
from ..lang.expr import BOOL, Expr, relax_assignments, walk
from .symmetry import concretise, symmetry_groups
from .unrolled import CMP as _CMP
from .unrolled import Invariants, State, Unrolled, ValueSetError, node_values, start_sets

_NEG = {"eq": "ne", "ne": "eq", "lt": "ge", "le": "gt", "gt": "le", "ge": "lt"}

# an expression whose value sets are too large to post (the layer's error: both are model errors)
CpEncodingError = ValueSetError


# ---------------------------------------------------------------------- the model
Lit = Any      # a cp_model literal (BoolVar or its negation) or a Python bool
IntX = Any     # an int, an IntVar or a linear expression


class BuildStopped(Exception):
    """The ``stop`` callback of a model under construction said so (a limit was reached)."""


def check_stop(stop: Callable[[], bool] | None, where: str) -> None:
    """Raise :class:`BuildStopped` when the build's ``stop`` callback says so."""
    if stop is not None and stop():
        raise BuildStopped(f"stopped while {where}")


class PlanModel:
    """What the engine reads back from either CP-SAT model: the plan and the model's size.

    Subclasses set ``task``, ``groups`` (symmetry groups for :func:`concretise`), ``m`` (the
    ``CpModel``) and ``acts`` (per step: ground-action index -> literal).
    """

    task: Task
    groups: list[Any]
    m: cp_model.CpModel
    acts: list[dict[int, Any]]

    def decode(self, solver: cp_model.CpSolver) -> list[int]:
        """Ground actions replayable from the real initial state (noops skipped)."""
        plan = []
        for step in self.acts:
            for k, lit in step.items():
                if solver.boolean_value(lit):
                    plan.append(k)
                    break
        return concretise(self.task, self.groups, plan)

    def size(self) -> dict[str, int]:
        proto = self.m.proto
        return {"variables": len(proto.variables), "constraints": len(proto.constraints)}


class CpPlan(PlanModel):
    """CP-SAT model of "a plan of at most ``horizon`` steps reaches the goal".

    ``exact``: no noop at the last step (exactly ``horizon`` actions).  ``objective``:
    minimise the plan cost.  With an admissible heuristic ``h`` (``heuristic=True``) every
    step ``t`` gets the cut ``cost(steps < t) + h(s_t) <= total cost`` (the rest of the plan
    is a plan from ``s_t``), and with unit costs also ``h(s_t) <= horizon - t``.
    ``symmetry``: states are kept canonical (interchangeable objects sorted, see ``_sort``).
    ``invariants``: forbidden value pairs posted at every step.  ``max_cost``: an upper
    bound on the plan cost (to ask for a cheaper plan than one already found).
    """

    def __init__(self, task: Task, horizon: int, *, exact: bool = False, heuristic: bool = True,
                 objective: bool = True, limit: int = 100_000, symmetry: bool = True,
                 invariants: Invariants | None = None, max_cost: int | None = None,
                 free_run: int | None = None, undo: Iterable[tuple[int, int]] = (),
                 stop: Callable[[], bool] | None = None, start_states: Sequence[State] | None = None,
                 goal: bool = True):
        """``start_states``: step 0 is one of these canonical states (a table constraint) instead of
        the initial state (a breadth-first layer, :mod:`.frontier`).  ``goal``: False leaves the goal
        out (:mod:`.cpfrontier` enumerates steps and reads the goal's literal instead).
        ``free_run``: at most that many consecutive zero-cost actions (see
        :meth:`puzzleplan.encodings.sat.CnfPlan.limit_free_runs` for why this is sound).
        ``undo``: action pairs ``(i, j)`` never taken in a row (:func:`.reversals.undo_pairs`).
        ``stop``: asked between steps; True raises :class:`BuildStopped` (a model of hundreds of
        steps takes seconds to build, which a time limit must be able to cut short)."""
        self.task = task
        self.T = horizon
        self.limit = limit
        self.m = cp_model.CpModel()
        self.groups = symmetry_groups(task) if symmetry else []
        self.invariants = invariants or {}
        start = None if start_states is None else start_sets(start_states)
        self.layer = Unrolled(task, self.groups, start=start, limit=limit)
        self.sets = [self.layer.sets(t) for t in range(horizon + 1)]
        self._memo: list[dict[int, frozenset[int]]] = [{} for _ in range(horizon + 1)]
        self._cache: dict[tuple[int, int], Any] = {}
        self._single: dict[int, int | None] = {}
        self._tables: dict[int, dict[int, int]] = {}  # node -> {value of its one variable: its value}
        self.infeasible = False
        self.x: list[list[IntX]] = []
        for t in range(horizon + 1):
            row: list[IntX] = []
            for v, s in enumerate(self.sets[t]):
                if len(s) == 1:
                    row.append(next(iter(s)))
                else:
                    row.append(self.m.new_int_var_from_domain(
                        cp_model.Domain.FromValues(sorted(s)), f"x{v}_{t}"))
            self.x.append(row)
        free = [v for v, x in enumerate(self.x[0]) if not isinstance(x, int)]
        if start_states is not None and free:    # (one state: every variable a constant already)
            self.m.add_allowed_assignments([self.x[0][v] for v in free],
                                           [tuple(s[v] for v in free) for s in start_states])
        # labelled successors of interchangeable objects, sorted into x (see _sort)
        grouped = {v for g in self.groups for v in g}
        self.post: list[list[IntX]] = [list(row) for row in self.x]
        for t in range(1, horizon + 1):
            for v in grouped:
                s = self.sets[t][v]
                if len(s) > 1:
                    self.post[t][v] = self.m.new_int_var_from_domain(
                        cp_model.Domain.FromValues(sorted(s)), f"y{v}_{t}")
        for t in range(horizon + 1):
            check_stop(stop, f"posting the invariants of step {t} of {horizon}")
            self._post_invariants(self.x[t])
            if t and grouped:
                self._post_invariants(self.post[t], grouped)
                for g in self.groups:
                    self._sort([self.post[t][v] for v in g], [self.x[t][v] for v in g])
        self.acts: list[dict[int, Any]] = []
        self.noops: list[Any] = []
        for t in range(horizon):
            check_stop(stop, f"building step {t} of {horizon}")
            self._step(t)
        for t in range(1, horizon):
            self.m.add_implication(self.noops[t - 1], self.noops[t])  # noops only at the end
        for i, j in undo:
            for t in range(1, horizon):
                if i in self.acts[t - 1] and j in self.acts[t]:
                    self.m.add_bool_or([self.acts[t - 1][i].Not(), self.acts[t][j].Not()])
        if exact and horizon > 0:
            self.m.add(self.noops[horizon - 1] == 0)
        if free_run is not None:
            for t in range(free_run, horizon):
                window = range(t - free_run, t + 1)
                self.m.add_bool_or([self.noops[u] for u in window]
                                   + [lit for u in window for k, lit in self.acts[u].items()
                                      if task.actions[k].cost > 0])
        if goal:
            self.enforce(task.goal, horizon, [])
        step_cost = [sum(task.actions[k].cost * lit for k, lit in self.acts[t].items()
                         if task.actions[k].cost) for t in range(horizon)]
        self.cost = sum(step_cost)
        if heuristic and task.heuristic is not None and task.heuristic_admissible:
            unit = task.cost_kind == "unit"
            prefix: Any = 0
            hx = relax_assignments(task.heuristic)
            for t in range(horizon + 1):
                check_stop(stop, f"posting the heuristic's cut at step {t} of {horizon}")
                h, _ = self.integer(hx, t)
                self._add(prefix + h <= self.cost)
                if unit:
                    self._add(h <= horizon - t)
                if t < horizon:
                    prefix = prefix + step_cost[t]
        if max_cost is not None:
            self._add(self.cost <= max_cost)
        if objective and not isinstance(self.cost, int):
            self.m.minimize(self.cost)

    # ------------------------------------------------------------------ helpers
    def _add(self, c: Any) -> None:
        """Post a constraint that may have folded to a Python bool."""
        if isinstance(c, bool):
            if not c:
                self.infeasible = True
                self.m.add_bool_or([])
            return
        self.m.add(c)

    def _post_invariants(self, row: list[IntX], only: set[int] | None = None) -> None:
        for (v, w), pairs in self.invariants.items():
            if only is not None and v not in only and w not in only:
                continue
            xv, xw = row[v], row[w]
            if isinstance(xv, int) and isinstance(xw, int):
                continue
            self.m.add_forbidden_assignments([xv, xw], sorted(pairs))
        for group, a in getattr(self.invariants, "exactly_one", ()):
            if only is not None and only.isdisjoint(group):
                continue
            xs = [row[v] for v in group]
            if any(isinstance(x, int) and x == a for x in xs):    # a constant already holds it
                continue
            held = []
            for x in xs:
                if not isinstance(x, int):
                    b = self.m.new_bool_var("")
                    self.m.add(x == a).only_enforce_if(b)
                    self.m.add(x != a).only_enforce_if(b.Not())
                    held.append(b)
            self.m.add_bool_or(held)

    def _sort(self, objs: list[IntX], slots: list[IntX]) -> None:
        """``slots`` = the values of ``objs`` in non-decreasing order (a permutation and an order)."""
        m = len(objs)
        for a, b in zip(slots, slots[1:]):
            if not (isinstance(a, int) and isinstance(b, int)):
                self.m.add(a <= b)
        perm = [self.m.new_int_var(0, m - 1, "") for _ in objs]
        self.m.add_all_different(perm)
        for p, x in zip(perm, slots):
            self.m.add_element(p, objs, x)

    def values(self, e: Expr, t: int) -> frozenset[int]:
        return node_values(e, self.sets[t], self._memo[t], self.limit)

    def _single_var(self, e: Expr) -> int | None:
        """The one state variable ``e`` depends on, if exactly one (else None)."""
        key = id(e)
        if key not in self._single:
            vs = {n.val for n in walk([e]) if n.op == "var"}
            self._single[key] = next(iter(vs)) if len(vs) == 1 else None  # type: ignore[assignment]
        return self._single[key]

    def _new_int(self, values: frozenset[int], name: str = "") -> Any:
        return self.m.new_int_var_from_domain(cp_model.Domain.FromValues(sorted(values)), name)

    def _fix(self, x: IntX, values: frozenset[int]) -> IntX:
        """An int or a single variable equal to ``x`` (for constraints wanting variables)."""
        if isinstance(x, int) or len(values) == 1:
            return x if isinstance(x, int) else next(iter(values))
        if isinstance(x, cp_model.IntVar):
            return x
        y = self._new_int(values)
        self.m.add(y == x)
        return y

    @staticmethod
    def neg(lit: Lit) -> Lit:
        return (not lit) if isinstance(lit, bool) else ~lit

    # ------------------------------------------------------------------ expressions
    def boolean(self, e: Expr, t: int) -> Lit:
        return self._post(e, t)

    def integer(self, e: Expr, t: int) -> tuple[IntX, frozenset[int]]:
        return self._post(e, t), self.values(e, t)

    def _post(self, e: Expr, t: int) -> Any:
        key = (id(e), t)
        got = self._cache.get(key)
        if got is not None:
            return got
        vals = self.values(e, t)
        if len(vals) == 1:  # constant at this step
            c = next(iter(vals))
            r: Any = bool(c) if e.kind == BOOL else c
        elif e.op == "var":
            r = self.x[t][e.val]  # type: ignore[index]
        elif (v := self._single_var(e)) is not None:
            r = self._unary(e, v, t, vals)
        else:
            r = self._node(e, t, vals)
        self._cache[key] = r
        return r

    def _unary(self, e: Expr, v: int, t: int, vals: frozenset[int]) -> Any:
        """``e`` as a function of the single variable ``v`` (tabulated over v's domain at ``t``)."""
        dom = sorted(self.sets[t][v])
        table = self._tables.setdefault(id(e), {})
        vs = [frozenset() for _ in self.sets[t]]
        for d in dom:
            if d not in table:
                vs[v] = frozenset((d,))
                (table[d],) = node_values(e, vs, {}, self.limit)
        x = self.x[t][v]
        if e.kind == BOOL:
            yes = [d for d in dom if table[d]]
            no = [d for d in dom if not table[d]]
            b = self.m.new_bool_var("")
            self.m.add_linear_expression_in_domain(x, cp_model.Domain.FromValues(yes)).only_enforce_if(b)
            self.m.add_linear_expression_in_domain(x, cp_model.Domain.FromValues(no)).only_enforce_if(~b)
            return b
        lo, hi = dom[0], dom[-1]
        if hi - lo + 1 > self.limit:
            raise CpEncodingError(f"a lookup over {hi - lo + 1} index values is too large to post")
        fill = table[dom[0]]
        y = self._new_int(vals)
        self.m.add_element(x - lo, [table.get(i, fill) for i in range(lo, hi + 1)], y)
        return y

    def _node(self, e: Expr, t: int, vals: frozenset[int]) -> Any:
        op = e.op
        m = self.m
        args = [self._post(a, t) for a in e.args]
        if op == "not":
            return self.neg(args[0])
        if op == "toint":
            return args[0]
        if op in ("and", "or"):
            live = [a for a in args if not isinstance(a, bool)]
            b = m.new_bool_var("")
            if op == "and":
                m.add_bool_and(live).only_enforce_if(b)
                m.add_bool_or([self.neg(a) for a in live]).only_enforce_if(~b)
            else:
                m.add_bool_or(live).only_enforce_if(b)
                m.add_bool_and([self.neg(a) for a in live]).only_enforce_if(~b)
            return b
        if op in _CMP:
            b = m.new_bool_var("")
            m.add(_linear_cmp(op, args[0], args[1])).only_enforce_if(b)
            m.add(_linear_cmp(_NEG[op], args[0], args[1])).only_enforce_if(~b)
            return b
        if op in ("ite_int", "ite_bool"):
            c, a, b2 = args
            if isinstance(c, bool):
                return a if c else b2
            y = m.new_bool_var("") if op == "ite_bool" else self._new_int(vals)
            m.add(y == a).only_enforce_if(c)
            m.add(y == b2).only_enforce_if(~c)
            return y
        if op in ("table", "element"):
            return self._lookup(e, args, t, vals)
        if op == "add":
            return sum(args[1:], args[0])
        if op == "sub":
            return args[0] - args[1]
        avals = [self.values(a, t) for a in e.args]
        if op == "mul":
            if isinstance(args[0], int) or isinstance(args[1], int):
                return args[0] * args[1]
            y = self._new_int(vals)
            m.add_multiplication_equality(y, [self._fix(args[0], avals[0]), self._fix(args[1], avals[1])])
            return y
        if op in ("floordiv", "mod"):
            d = args[1]
            assert isinstance(d, int) and d > 0
            lo = min(avals[0])
            shift = d * math.ceil(-lo / d) if lo < 0 else 0  # CP-SAT truncates; Python floors
            num = args[0] + shift
            if op == "floordiv":
                q = self._new_int(frozenset(x + shift // d for x in vals))
                m.add_division_equality(q, num, d)
                return q - shift // d
            y = self._new_int(vals)
            m.add_modulo_equality(y, num, d)
            return y
        if op == "abs":
            y = self._new_int(vals)
            m.add_abs_equality(y, args[0])
            return y
        if op in ("min", "max"):
            y = self._new_int(vals)
            if op == "min":
                m.add_min_equality(y, args)
            else:
                m.add_max_equality(y, args)
            return y
        raise CpEncodingError(f"CP-SAT encoding: no rule for expression op {op!r}")

    def _lookup(self, e: Expr, args: list, t: int, vals: frozenset[int]) -> Any:
        index = args[0]
        ivals = sorted(self.values(e.args[0], t))
        default = args[1]
        if e.op == "table":
            table: tuple[int, ...] = e.val  # type: ignore[assignment]
            n = len(table)

            def item(i: int) -> Any:
                return table[i] if 0 <= i < n else default
        else:
            items = args[2:]
            n = len(items)

            def item(i: int) -> Any:
                return items[i] if 0 <= i < n else default
        lo, hi = ivals[0], ivals[-1]
        if hi - lo + 1 > self.limit:
            raise CpEncodingError(f"a lookup over {hi - lo + 1} index values is too large to post")
        present = set(ivals)
        fill = item(ivals[0])
        entries = [item(i) if i in present else fill for i in range(lo, hi + 1)]
        entries = [int(x) if isinstance(x, bool) else x for x in entries]
        y = self.m.new_bool_var("") if e.kind == BOOL else self._new_int(vals)
        self.m.add_element(index - lo, entries, y)
        return y

    # ------------------------------------------------------------------ constraints
    def enforce(self, e: Expr, t: int, when: list[Lit]) -> None:
        """Post "``when`` (a conjunction of literals) implies ``e`` at step ``t``"."""
        when = [w for w in when if w is not True]
        if any(w is False for w in when):
            return
        if e.op == "and":
            for a in e.args:
                self.enforce(a, t, when)
            return
        vals = self.values(e, t)
        if vals == {1}:
            return
        if vals == {0}:
            if not when:
                self.infeasible = True
                self.m.add_bool_or([])
            else:
                self.m.add_bool_or([self.neg(w) for w in when])
            return
        op, neg = e.op, False
        if op == "not" and e.args[0].op in _CMP:
            e, neg = e.args[0], True
            op = e.op
        if op in _CMP and self._single_var(e) is None:
            a, b = (self._post(x, t) for x in e.args)
            self.m.add(_linear_cmp(_NEG[op] if neg else op, a, b)).only_enforce_if(when)
            return
        lit = self._post(e, t) if not neg else self.neg(self._post(e, t))
        if not when:
            self.m.add_bool_or([lit])
        else:
            self.m.add_bool_or([lit]).only_enforce_if(when)

    def _step(self, t: int) -> None:
        """The layer's step ``t -> t + 1``, posted."""
        task, m = self.task, self.m
        acts: dict[int, Any] = {}
        fired: dict[tuple[int, int], Any] = {}   # (action, effect) -> literal "this write fires"
        nxt = self.post[t + 1]
        step = self.layer.step(t)
        for sa in step.actions:
            lit = m.new_bool_var(f"a{sa.index}_{t}")
            acts[sa.index] = lit
            for c in sa.guard:
                self.enforce(c, t, [lit])
            for w in sa.writes:
                fire: list[Lit] = [self.boolean(c, t) if pos else self.neg(self.boolean(c, t))
                                   for c, pos in w.when]
                if any(f is False for f in fire):
                    continue
                fire = [f for f in fire if f is not True]
                val, _ = self.integer(w.value, t)
                if not w.values:   # every value it can write leaves the domain: it must not fire
                    m.add_bool_or([self.neg(f) for f in [lit, *fire]])
                    continue
                m.add(nxt[w.var] == val).only_enforce_if([lit, *fire])
                if fire:
                    f = m.new_bool_var("")
                    m.add_bool_and([lit, *fire]).only_enforce_if(f)
                    m.add_bool_or([f, *[self.neg(g) for g in [lit, *fire]]])
                    fired[w.action, w.index] = f
                else:
                    fired[w.action, w.index] = lit
        cur = self.x[t]
        for v in range(len(task.variables)):
            if isinstance(cur[v], int) and isinstance(nxt[v], int):
                continue
            quiet = [self.neg(fired[key]) for w in step.writers[v] if (key := (w.action, w.index)) in fired]
            m.add(nxt[v] == cur[v]).only_enforce_if(quiet)
        noop = m.new_bool_var(f"noop_{t}")
        m.add_exactly_one([*acts.values(), noop])
        self.acts.append(acts)
        self.noops.append(noop)


def _linear_cmp(op: str, a: Any, b: Any) -> Any:
    if op == "eq":
        return a == b
    if op == "ne":
        return a != b
    if op == "lt":
        return a < b
    if op == "le":
        return a <= b
    if op == "gt":
        return a > b
    return a >= b
