"""The unrolled task: what one step of a bounded plan can do, derived once for every symbolic encoder.

Both symbolic encoders (:mod:`.sat`: clauses over value-indexed literals; :mod:`.cpsat`:
a CP-SAT model over integer variables) unroll the same sequential planning problem
(Kautz & Selman 1992/1996): a copy of the state per step, exactly one of
{actions..., noop} per step, guards, effects and explanatory frame axioms.  What a step
*is* does not depend on the target formalism, so it is derived here, once, and the
encoders only translate it:

* **reachable value sets per step** -- the relaxed (Graphplan-style, Blum & Furst 1997)
  value-set reachability: ``sets(0)`` is the (canonical) initial state, or given start
  sets; ``sets(t + 1)`` adds to ``sets(t)`` every in-domain value some effect of a
  possibly-applicable action can write when each variable ranges over its set
  (:func:`node_values`).  The encoders create state literals / variable domains only for
  these values, so early steps are small; the first ``t`` with ``sets(t + 1) == sets(t)``
  is the fixpoint (every later layer is the same).
* **per action, guard conjuncts and effective writes with their firing conditions**:
  effects apply in order and a later write of the same variable wins, so an effect
  overwritten by a later unconditional write never takes effect, and one overwritten by
  a later conditional write takes effect only when that write's condition is false
  (:class:`Write`).  Actions whose guard cannot hold at ``t`` and writes whose firing
  condition cannot hold are left out; conditions that always hold are dropped.
* **writers per variable**: the writes that may change each variable at ``t`` -- the
  encoders' explanatory frame axioms say a variable keeps its value unless one fires
  (each encoder takes the writes it posted: an encoder may drop a write whose firing
  condition its own encoding folds to false).
* **symmetry**: interchangeable single-variable objects (:mod:`.symmetry`) share one value
  set per step (the encoders keep them sorted, the canonical state), while their
  labelled successors before sorting get their own (:attr:`Step.post`).

An action is *dead* at ``t`` when one of its unconditional writes has no value inside its
variable's domain there: it can never happen (the kernels refuse such successors too).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..ir.task import Task
from ..lang.errors import ModelError
from ..lang.expr import Expr, conjuncts, min_assignment
from .symmetry import canonical


class Invariants(dict[tuple[int, int], set[tuple[int, int]]]):
    """Facts of every reachable state that the encoders post at each step.

    The mapping: forbidden value pairs, ``(v, w)`` with ``v < w`` -> ``{(a, b)}``: "``v == a``
    and ``w == b``" never holds.  ``exactly_one``: ``(variables, a)``: exactly one of the
    variables holds ``a`` (:func:`puzzleplan.encodings.invariants.exactly_one_values`); the
    encoders post the at-least-one half, which no pair can say.
    """

    exactly_one: tuple[tuple[tuple[int, ...], int], ...] = ()

CMP: dict[str, Callable[[int, int], bool]] = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
}
BIN: dict[str, Callable[[int, int], int]] = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b, "min": min, "max": max,
}


class ValueSetError(ModelError):
    """An expression whose value set is too large to enumerate (exit 32, like any model error)."""


# ---------------------------------------------------------------------- value sets
def node_values(e: Expr, var_sets: Sequence[frozenset[int]], memo: dict[int, frozenset[int]],
                limit: int = 100_000) -> frozenset[int]:
    """The values ``e`` can take when each variable ranges over its set (booleans as 0/1).

    Exact per node given its children's sets (so an over-approximation of the values in the
    states the sets describe: variables are treated as independent); a pair product over
    ``limit`` falls back to the interval of the results.
    """
    got = memo.get(id(e))
    if got is not None:
        return got
    stack: list[tuple[Expr, bool]] = [(e, False)]
    while stack:
        n, ready = stack.pop()
        if id(n) in memo:
            continue
        if ready:
            memo[id(n)] = _values(n, [memo[id(a)] for a in n.args], var_sets, limit)
            continue
        stack.append((n, True))
        stack.extend((a, False) for a in n.args if id(a) not in memo)
    return memo[id(e)]


def _values(n: Expr, a: list[frozenset[int]], vs: Sequence[frozenset[int]], limit: int) -> frozenset[int]:
    op = n.op
    if op == "const":
        return frozenset((int(n.val),))  # type: ignore[arg-type]
    if op == "var":
        return vs[n.val]  # type: ignore[index]
    if op == "toint":
        return a[0]
    if op == "not":
        return frozenset(1 - x for x in a[0])
    if op in ("and", "or"):
        absorb = int(op == "or")  # the value that decides: True for or, False for and
        out = {absorb} if any(absorb in s for s in a) else set()
        if all(1 - absorb in s for s in a):
            out.add(1 - absorb)
        return frozenset(out)
    if op in ("ite_int", "ite_bool"):
        out: set[int] = set()
        if 1 in a[0]:
            out |= a[1]
        if 0 in a[0]:
            out |= a[2]
        return frozenset(out)
    if op == "table":
        vals: tuple[int, ...] = n.val  # type: ignore[assignment]
        out = set()
        for i in a[0]:
            if 0 <= i < len(vals):
                out.add(vals[i])
            else:
                out |= a[1]
        return frozenset(out)
    if op == "element":
        items = a[2:]
        out = set()
        for i in a[0]:
            out |= items[i] if 0 <= i < len(items) else a[1]
        return frozenset(out)
    if op == "abs":
        return frozenset(abs(x) for x in a[0])
    if op in CMP:
        f = CMP[op]
        return _pairs(a[0], a[1], lambda x, y: int(f(x, y)), limit, (0, 1))
    if op in BIN:
        g = BIN[op]
        acc = a[0]
        for s in a[1:]:
            lo_hi = _interval(g, acc, s)
            acc = _pairs(acc, s, g, limit, lo_hi)
        return acc
    if op == "assign" and all(len(x) == 1 for x in a):   # a known state (the initial h)
        return frozenset((min_assignment([next(iter(x)) for x in a], int(n.val)),))  # type: ignore[arg-type]
    raise ValueSetError(f"symbolic encoding: no rule for expression op {op!r}")


def _interval(f: Callable[[int, int], int], a: frozenset[int], b: frozenset[int]) -> tuple[int, int]:
    c = [f(x, y) for x in (min(a), max(a)) for y in (min(b), max(b))]
    return min(c), max(c)


def _pairs(a: frozenset[int], b: frozenset[int], f: Callable[[int, int], int], limit: int,
           fallback: tuple[int, int]) -> frozenset[int]:
    if len(a) * len(b) > limit:
        lo, hi = fallback
        if hi - lo > limit:
            raise ValueSetError(f"an expression's value range {lo}..{hi} is too large to post")
        return frozenset(range(lo, hi + 1))
    return frozenset(f(x, y) for x in a for y in b)


# ---------------------------------------------------------------------- the step
@dataclass(frozen=True, slots=True)
class Write:
    """One effect of one action that can take effect at a step.

    ``when``: its firing condition besides the action itself, a conjunction of
    ``(condition, polarity)`` -- the effect's own condition (``True``) and the negation of
    every later conditional write of the same variable (``False``); conditions that always
    hold at the step are left out, so ``()`` means "whenever the action happens".
    ``values``: the values it can write there that lie inside the variable's domain.
    """

    action: int
    index: int                 # position in the action's effects (names the encoders' fire literal)
    var: int
    value: Expr
    when: tuple[tuple[Expr, bool], ...]
    values: frozenset[int]


@dataclass(frozen=True, slots=True)
class StepAction:
    """A ground action whose guard can hold at the step: its guard conjuncts and its writes."""

    index: int
    guard: tuple[Expr, ...]
    writes: tuple[Write, ...]
    dead: bool                 # an unconditional write leaves the domain: it never happens


@dataclass(frozen=True)
class Step:
    """Step ``t -> t + 1`` of the unrolled task.

    ``actions``: the actions whose guard can hold at ``t`` (dead ones included, flagged);
    ``writers[v]``: the writes that may change ``v`` (a dead action's too: an encoder may post
    the action and forbid it); ``post[v]``: the
    values ``v`` can have after the step before interchangeable objects are sorted (its own
    old values and what its writers write); the sorted layer is :meth:`Unrolled.sets`.
    """

    actions: tuple[StepAction, ...]
    writers: tuple[tuple[Write, ...], ...]
    post: tuple[frozenset[int], ...]


State = tuple[int, ...]


def start_sets(states: Sequence[State]) -> list[list[int]]:
    """The values each variable takes over ``states``: step 0's value sets when step 0 is one of them
    (a breadth-first layer, :mod:`.frontier`)."""
    return [sorted({s[v] for s in states}) for v in range(len(states[0]))]


class Unrolled:
    """The task unrolled step by step (computed on demand, cached per step).

    ``groups``: interchangeable variables, kept sorted (they share one value set per step).
    ``start``: a value set per variable for step 0 instead of the canonical initial state.
    ``actions``: only these ground actions may happen.  ``limit``: see :func:`node_values`.
    """

    def __init__(self, task: Task, groups: Sequence[Sequence[int]] = (),
                 start: Sequence[Iterable[int]] | None = None, actions: Iterable[int] | None = None,
                 limit: int = 100_000):
        self.task = task
        self.groups = [list(g) for g in groups]
        self.limit = limit
        allowed = None if actions is None else set(actions)
        self.candidates = [k for k in range(len(task.actions)) if allowed is None or k in allowed]
        if start is None:
            first = [frozenset((x,)) for x in canonical(self.groups, task.init)]
        else:
            first = [frozenset(s) for s in start]
        self._sets: list[list[frozenset[int]]] = [first]
        self._steps: list[Step] = []
        self._memo: list[dict[int, frozenset[int]]] = [{}]
        self.fixpoint_at: int | None = None   # first t with sets(t + 1) == sets(t)

    # ------------------------------------------------------------------ queries
    def sets(self, t: int) -> list[frozenset[int]]:
        """Each variable's value set at step ``t``."""
        self._grow(t)
        return self._sets[min(t, len(self._sets) - 1)]

    def step(self, t: int) -> Step:
        """The step from ``t`` to ``t + 1``."""
        self._grow(t + 1)
        return self._steps[min(t, len(self._steps) - 1)]

    def values(self, e: Expr, t: int) -> frozenset[int]:
        """The values ``e`` can take at step ``t``."""
        self._grow(t)
        i = min(t, len(self._sets) - 1)
        return node_values(e, self._sets[i], self._memo[i], self.limit)

    def fixpoint(self, max_steps: int = 10_000) -> list[frozenset[int]]:
        """The value sets of the reachability fixpoint (or of step ``max_steps`` if it comes later)."""
        t = 0
        while self.fixpoint_at is None and t < max_steps:
            t += 1
            self._grow(t)
        return self.sets(t if self.fixpoint_at is None else self.fixpoint_at + 1)

    def state_bound(self, t: int) -> int:
        """Number of states in the value-set over-approximation of step ``t``."""
        n = 1
        for s in self.sets(t):
            n *= len(s)
        return n

    # ------------------------------------------------------------------ derivation
    def _grow(self, t: int) -> None:
        """Derive steps until layer ``t`` is known (past the fixpoint every layer is the last)."""
        while len(self._sets) <= t and self.fixpoint_at is None:
            i = len(self._sets) - 1
            step, nxt = self._derive(i)
            self._steps.append(step)
            if nxt == self._sets[i]:
                self.fixpoint_at = i
                # the layer after the fixpoint is the same layer: its step is the same step
                self._sets.append(self._sets[i])
                self._memo.append(self._memo[i])
            else:
                self._sets.append(nxt)
                self._memo.append({})

    def _derive(self, t: int) -> tuple[Step, list[frozenset[int]]]:
        task = self.task
        cur = self._sets[t]
        memo = self._memo[t]

        def vals(e: Expr) -> frozenset[int]:
            return node_values(e, cur, memo, self.limit)

        post = [set(s) for s in cur]
        writers: list[list[Write]] = [[] for _ in task.variables]
        acts: list[StepAction] = []
        for k in self.candidates:
            a = task.actions[k]
            guard = conjuncts(a.guard)
            if any(1 not in vals(c) for c in guard):
                continue
            writes: list[Write] = []
            dead = False
            for j, eff in enumerate(a.effects):
                later = [f for f in a.effects[j + 1:] if f.var == eff.var]
                if any(f.cond is None for f in later):
                    continue  # overwritten unconditionally
                conds = [] if eff.cond is None else [(eff.cond, True)]
                conds += [(f.cond, False) for f in later]  # type: ignore[misc]
                when = []
                possible = True
                for c, pos in conds:
                    cv = vals(c)
                    if int(pos) not in cv:
                        possible = False
                        break
                    if int(not pos) in cv:
                        when.append((c, pos))
                if not possible:
                    continue
                info = task.variables[eff.var]
                inside = frozenset(x for x in vals(eff.value) if info.lo <= x <= info.hi)
                if not when and not inside:
                    dead = True
                writes.append(Write(k, j, eff.var, eff.value, tuple(when), inside))
            acts.append(StepAction(k, tuple(guard), tuple(writes), dead))
            for w in writes:
                writers[w.var].append(w)
                if not dead:
                    post[w.var].update(w.values)
        frozen = tuple(frozenset(s) for s in post)
        nxt = list(frozen)
        for g in self.groups:
            union = frozenset().union(*(nxt[v] for v in g))
            for v in g:
                nxt[v] = union
        return Step(tuple(acts), tuple(tuple(w) for w in writers), frozen), nxt


__all__ = ["BIN", "CMP", "Invariants", "State", "Step", "StepAction", "Unrolled", "ValueSetError", "Write",
           "conjuncts", "node_values", "start_sets"]
