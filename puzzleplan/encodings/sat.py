"""Grounded task -> CNF over a bounded horizon: planning as satisfiability.

The encoding follows Kautz & Selman ("Planning as Satisfiability", ECAI 1992;
"Pushing the envelope", AAAI 1996): one time-indexed copy of the state per
step ``t = 0..T``, one literal per ground action per step, and *explanatory*
frame axioms (Haas 1987; Schubert 1990; Kautz & Selman 1996; Rintanen,
Heljanko & Niemelä, "Planning as satisfiability: parallel plans and
algorithms for plan search", AIJ 2006): a variable changes between ``t`` and
``t+1`` only if an action that may write it happens (for a conditional
write: and its condition holds).  Plans are sequential: exactly one of
{actions..., noop} per step, noops only at the end (a cheap symmetry break),
so horizon ``T`` admits every plan of at most ``T`` steps.  The encoder grows
one step at a time and hands the new clauses to one incremental solver; the
goal at ``T`` is a literal the caller *assumes* (Eén & Sörensson, "Temporal
induction by incremental SAT solving", 2003), so no clause is ever retracted.

Names: every variable is an :class:`pysat.formula.IDPool` id with a
structured key --

    ("top",)               the constant true literal (unit clause)
    ("x", v, value, t)     state variable ``v`` has ``value`` at step ``t``
    ("y", v, value, t)     labelled successor of an interchangeable object (sorted into x)
    ("a", k, t)            ground action ``k`` happens at step ``t`` (from t to t+1)
    ("noop", t)            no action at step ``t``
    ("n", node, value, t)  integer expression node (a serial per node) has ``value``
    ("b", node, t)         boolean expression node is true
    ("or", lits)           Tseitin definition of the disjunction of ``lits`` (shared)
    ("tot", lits, k)       at least ``k`` of ``lits`` are true (sorting layer)
    ("f", k, e, t)         effect ``e`` of action ``k`` fires at ``t``
    ("g", t)               the goal holds at ``t`` (one direction: g -> goal)
    ("cost", t, k)         step ``t`` costs at least ``k``

Expressions get a generic Tseitin-style encoding over *value-indexed
literals* (the "direct" or "sparse" encoding of finite-domain variables,
Walsh, "SAT v CSP", CP 2000): a boolean node is one literal, an integer node
is a one-hot family of literals, one per value it can take.  The values an
integer node can take are computed exactly from its children's value sets
(never wider than :func:`puzzleplan.lang.expr.bounds`).  What a step is --
the state variables' value sets per step (a relaxed, Graphplan-style
reachability analysis, Blum & Furst 1997), each action's guard conjuncts and
effective writes with their firing conditions, the writers of each variable
-- comes from the shared layer :mod:`puzzleplan.encodings.unrolled`, which
this module translates into clauses: ``x`` at step ``t`` only gets literals
for values some ``t``-step relaxed run can produce; the initial state is the
``t = 0`` layer with one value per variable, i.e. unit clauses folded into
the constant true literal.

* A function of one integer argument (``x + 3``, ``table[x]``, ``x // 4``,
  ``x == 5``) needs no new variable when it is injective -- its literals are
  the argument's, relabelled -- and otherwise one disjunction per value,
  created lazily when some constraint first asks for that value.
* ``element`` / ``ite`` (a one-hot selector choosing among cases) use two
  clauses per case and value: ``sel_i -> (out = case_i)``.
* Comparisons of two non-constant integers and the remaining binary
  arithmetic (``add``/``sub``/``mul``/``min``/``max`` of two variables)
  enumerate the value pairs; a node whose pair count exceeds ``max_pairs``
  is refused with :class:`EncodingError` rather than blowing up.

Node encodings are cached per ``(node, t)``, so a view shared by many guards
(nodes are hash-consed by the language) is encoded once per step.

Two additions the IR gives for free, both optional:

* *Invariants*: 2-literal invariants ("``v == a`` and ``w == b`` never hold
  together") synthesised by :func:`puzzleplan.encodings.invariants.mutex_invariants` (Rintanen's fixpoint,
  AAAI 2000) and posted at every step -- for piece puzzles these are the
  non-overlap constraints, which a CDCL solver otherwise has to rediscover
  by induction at every horizon.
* *Symmetry*: the task's groups of interchangeable single-variable objects
  are kept sorted at every step (the canonical state the explicit engines
  store), through a counting sorting layer (:meth:`CnfPlan._sort_layer`).
  Plans found on canonical states are mapped back to the instance's own
  objects by :func:`puzzleplan.encodings.symmetry.concretise`.

Costs are exposed per step as "thermometer" literals (``cost_t >= k``,
``k = 1..max cost``) for a cardinality constraint over the whole horizon:
the solver builds an incremental totalizer on them (Bailleux & Boufkhad,
"Efficient CNF encoding of Boolean cardinality constraints", CP 2003;
Martins et al., "Incremental cardinality constraints for MaxSAT", CP 2014 --
``pysat.card.ITotalizer``).  Exactly-one constraints are pairwise for short
lists and Sinz's sequential counter (CP 2005, ``pysat.card``) otherwise.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence

from pysat.card import CardEnc, EncType
from pysat.formula import IDPool

from ..ir.task import Task
from ..lang.errors import ModelError
from ..lang.expr import BOOL, Expr, relax_assignments
from .symmetry import canonical, symmetry_groups
from .unrolled import BIN as _BIN
from .unrolled import CMP as _CMP
from .unrolled import Invariants, Unrolled, Write, conjuncts

TOP = 1  # the first id of every pool: ("top",)


class EncodingError(ModelError):
    """The task uses an expression this encoder will not expand (too many value combinations)."""


class IntEnc:
    """Value-indexed literals of one integer node at one step: exactly one of them is true.

    ``values`` are the values the node can take (sorted).  ``lit(v)`` is the literal
    "node == v" (``-TOP`` for impossible values).  A *derived* encoding is a function of a
    single base encoding: its literals are disjunctions of base literals, made on demand.
    """

    __slots__ = ("values", "_lits", "_base", "_pre", "_cnf")

    def __init__(self, cnf: CnfPlan, lits: dict[int, int] | None = None,
                 base: IntEnc | None = None, pre: dict[int, list[int]] | None = None):
        self._cnf = cnf
        self._lits: dict[int, int] = dict(lits or {})
        self._base = base
        self._pre = pre or {}
        self.values: list[int] = sorted(self._pre) if base is not None else sorted(self._lits)

    def lit(self, v: int) -> int:
        r = self._lits.get(v)
        if r is not None:
            return r
        if self._base is None or v not in self._pre:
            return -TOP
        base = self._base
        pre = self._pre[v]
        if 2 * len(pre) > len(base.values):
            inside = set(pre)
            r = -self._cnf.or_([base.lit(u) for u in base.values if u not in inside])
        else:
            r = self._cnf.or_([base.lit(u) for u in pre])
        self._lits[v] = r
        return r

    @property
    def const(self) -> int | None:
        return self.values[0] if len(self.values) == 1 else None


class CnfPlan:
    """The unrolled CNF of a task, grown one step at a time.

    Usage: ``enc = CnfPlan(task)``; ``solver.append_formula(enc.drain())``; for each
    horizon ``T`` assume ``enc.goal(T)``; ``enc.extend()`` adds step ``T -> T+1``.
    """

    def __init__(self, task: Task, max_pairs: int = 200_000, pairwise_max: int = 30,
                 invariants: Invariants | None = None, full_frame: bool = True,
                 start: Sequence[Iterable[int]] | None = None, symmetry: bool = True,
                 actions: Iterable[int] | None = None, undo: Iterable[tuple[int, int]] = (),
                 sorted_start: bool = False):
        """``invariants``: forbidden value pairs added at every step (see
        :func:`puzzleplan.encodings.invariants.mutex_invariants`).
        ``full_frame``: also post the converse frame axiom (x(v,w,t+1) & -x(v,w,t) -> some writer),
        implied by exactly-one but stronger under unit propagation.  ``start``: a value set per
        variable for step 0 instead of the initial state (used by the invariant synthesis).
        ``symmetry``: keep every state canonical (see :meth:`_sort_layer`); with a ``start``
        only when ``sorted_start`` says that the states step 0 will hold are canonical ones
        (:mod:`.frontier` restricts step 0 to such states; other callers' starts are free).
        ``actions``: only these ground actions may happen (used by :mod:`.runbound`).
        ``undo``: action pairs ``(i, j)`` never taken in a row (:func:`.reversals.undo_pairs`).
        ``pairwise_max``: at-most-one over at most this many literals as pairwise clauses, over
        more as a sequential counter; pairwise up to 30 (instead of 6) took CaDiCaL 0.75x-0.9x
        the time on the 8-puzzle, Hua Rong Dao and Zen gardens (docs/architecture.md).
        """
        self.task = task
        self.max_pairs = max_pairs
        self.pairwise_max = pairwise_max
        self.invariants = invariants or {}
        self.full_frame = full_frame
        self.pool = IDPool()
        top = self.pool.id(("top",))
        assert top == TOP
        self.clauses: list[list[int]] = [[TOP]]
        self.n_literals = 1
        self._cache: dict[tuple[int, int], int | IntEnc] = {}
        self._serial: dict[int, int] = {}
        # per step: state literals {value: lit} per variable
        self.x: list[list[dict[int, int]]] = []
        self.groups = symmetry_groups(task) if symmetry and (start is None or sorted_start) else []
        self.skipped_groups = sum(1 for g in task.groups if len(g) > 1) - len(self.groups)
        starts = None if start is None else [sorted(set(vals)) for vals in start]
        self.layer = Unrolled(task, self.groups, starts, actions, limit=max_pairs)
        if starts is None:
            self.x.append([{v: TOP} for v in canonical(self.groups, task.init)])
        else:
            layer = []
            for v, vals in enumerate(starts):
                if len(vals) == 1:
                    lits = {vals[0]: TOP}
                else:
                    lits = {w: self.pool.id(("x", v, w, 0)) for w in vals}
                layer.append(lits)
                if len(vals) > 1:
                    self.exactly_one(list(lits.values()))
            self.x.append(layer)
            self._post_invariants(layer)
        self.acts: list[dict[int, int]] = []   # per step: action index -> literal
        self.noops: list[int] = []
        self._max_cost = max((a.cost for a in task.actions), default=0)
        self._hx: Expr | None = None          # the heuristic as posted (relax_assignments)
        self.free_run: int | None = None       # see limit_free_runs
        self.undo: dict[int, list[int]] = {}
        for i, j in undo:
            self.undo.setdefault(i, []).append(j)

    # ------------------------------------------------------------------ plumbing
    @property
    def horizon(self) -> int:
        return len(self.x) - 1

    @property
    def fixpoint_at(self) -> int | None:
        """First encoded step ``t`` whose successor layer has the value sets of ``t`` (None: not reached)."""
        f = self.layer.fixpoint_at
        return f if f is not None and f < self.horizon else None

    def add(self, clause: list[int]) -> None:
        if TOP in clause:
            return
        c = [lit for lit in clause if lit != -TOP]
        self.clauses.append(c)
        self.n_literals += len(c)

    def drain(self) -> list[list[int]]:
        """Clauses added since the last call."""
        out, self.clauses = self.clauses, []
        return out

    def or_(self, lits: Iterable[int]) -> int:
        """A literal equivalent to the disjunction of ``lits`` (Tseitin; shared by key)."""
        s = set()
        for lit in lits:
            if lit == TOP:
                return TOP
            if lit != -TOP:
                if -lit in s:
                    return TOP
                s.add(lit)
        if not s:
            return -TOP
        if len(s) == 1:
            return next(iter(s))
        key = ("or", tuple(sorted(s)))
        known = key in self.pool.obj2id
        y = self.pool.id(key)
        if not known:
            self.add([-y, *s])
            for lit in s:
                self.add([y, -lit])
        return y

    def and_(self, lits: Iterable[int]) -> int:
        return -self.or_([-lit for lit in lits])

    def exactly_one(self, lits: Sequence[int]) -> None:
        self.add(list(lits))
        self.at_most_one(lits)

    def at_most_one(self, lits: Sequence[int]) -> None:
        lits = [lit for lit in lits if lit != -TOP]
        if len(lits) <= 1:
            return
        if len(lits) <= self.pairwise_max:
            for i in range(len(lits)):
                for j in range(i + 1, len(lits)):
                    self.add([-lits[i], -lits[j]])
            return
        enc = CardEnc.atmost(lits, 1, vpool=self.pool, encoding=EncType.seqcounter)
        for c in enc.clauses:
            self.add(list(c))

    def _node_id(self, e: Expr) -> int:
        k = self._serial.get(id(e))
        if k is None:
            k = self._serial[id(e)] = len(self._serial)
        return k

    # ------------------------------------------------------------------ expressions
    def boolean(self, e: Expr, t: int) -> int:
        """Literal of a boolean node at step ``t``."""
        r = self.encode(e, t)
        assert isinstance(r, int)
        return r

    def integer(self, e: Expr, t: int) -> IntEnc:
        r = self.encode(e, t)
        assert isinstance(r, IntEnc)
        return r

    def encode(self, root: Expr, t: int) -> int | IntEnc:
        """Encode ``root`` at step ``t`` (children first, iteratively; cached per (node, t))."""
        cache = self._cache
        got = cache.get((id(root), t))
        if got is not None:
            return got
        stack: list[tuple[Expr, bool]] = [(root, False)]
        while stack:
            node, ready = stack.pop()
            key = (id(node), t)
            if key in cache:
                continue
            if ready:
                cache[key] = self._encode_node(node, [cache[(id(a), t)] for a in node.args], t)
                continue
            stack.append((node, True))
            for a in node.args:
                if (id(a), t) not in cache:
                    stack.append((a, False))
        return cache[(id(root), t)]

    def _const_int(self, v: int) -> IntEnc:
        return IntEnc(self, {v: TOP})

    def _as_int(self, r: int | IntEnc) -> IntEnc:
        if isinstance(r, IntEnc):
            return r
        if r == TOP:
            return self._const_int(1)
        if r == -TOP:
            return self._const_int(0)
        return IntEnc(self, {0: -r, 1: r})

    def _derive(self, base: IntEnc, f: Callable[[int], int]) -> IntEnc:
        pre: dict[int, list[int]] = {}
        for u in base.values:
            pre.setdefault(f(u), []).append(u)
        if len(pre) == len(base.values):  # injective: relabel, no new literal
            return IntEnc(self, {f(u): base.lit(u) for u in base.values})
        if len(pre) == 1:
            return self._const_int(next(iter(pre)))
        return IntEnc(self, base=base, pre=pre)

    def _check_pairs(self, n: int, node: Expr) -> None:
        if n > self.max_pairs:
            raise EncodingError(
                f"SAT encoding of a '{node.op}' node needs {n} value combinations "
                f"(limit {self.max_pairs}): the expression's domains are too large to enumerate")

    def _encode_node(self, e: Expr, args: list, t: int) -> int | IntEnc:
        op = e.op
        if op == "const":
            if e.kind == BOOL:
                return TOP if e.val else -TOP
            return self._const_int(int(e.val))  # type: ignore[arg-type]
        if op == "var":
            return IntEnc(self, self.x[t][e.val])  # type: ignore[index]
        if op == "not":
            return -args[0]
        if op == "and":
            return self.and_(args)
        if op == "or":
            return self.or_(args)
        if op == "toint":
            return self._as_int(args[0])
        if op in _CMP:
            return self._compare(e, op, self._as_int(args[0]), self._as_int(args[1]), t)
        if op in ("ite_bool", "ite_int"):
            c = args[0]
            if c == TOP:
                return args[1]
            if c == -TOP:
                return args[2]
            return self._select(e, [(c, args[1]), (-c, args[2])], t)
        if op in ("table", "element"):
            return self._lookup(e, args, t)
        if op == "abs":
            return self._derive(args[0], abs)
        if op in _BIN or op == "add":
            return self._arith(e, op, args, t)
        raise EncodingError(f"SAT encoding: no rule for expression op {op!r}")

    def _compare(self, e: Expr, op: str, a: IntEnc, b: IntEnc, t: int) -> int:
        cmp = _CMP[op]
        if b.const is not None or a.const is not None:
            if b.const is not None:
                c = b.const
                base, truth = a, [v for v in a.values if cmp(v, c)]
            else:
                c = a.const  # type: ignore[assignment]
                base, truth = b, [v for v in b.values if cmp(c, v)]
            if len(truth) == len(base.values):
                return TOP
            if 2 * len(truth) > len(base.values):
                inside = set(truth)
                return -self.or_([base.lit(v) for v in base.values if v not in inside])
            return self.or_([base.lit(v) for v in truth])
        self._check_pairs(len(a.values) * len(b.values), e)
        y = self.pool.id(("b", self._node_id(e), t))
        for v in a.values:
            av = a.lit(v)
            good = [w for w in b.values if cmp(v, w)]
            if len(good) == len(b.values):
                self.add([-av, y])
            elif not good:
                self.add([-av, -y])
            else:
                self.add([-av, -y, *[b.lit(w) for w in good]])
                for w in good:
                    self.add([-av, -b.lit(w), y])
        return y

    def _select(self, e: Expr, cases: list[tuple[int, int | IntEnc]], t: int) -> int | IntEnc:
        """``out = case_i`` under selector ``sel_i``; the selectors are one-hot."""
        cases = [(s, r) for s, r in cases if s != -TOP]
        if e.kind == BOOL:
            outs = {r for _, r in cases}
            if len(outs) == 1:
                return outs.pop()  # type: ignore[return-value]
            y = self.pool.id(("b", self._node_id(e), t))
            for s, r in cases:
                if r == TOP:
                    self.add([-s, y])
                elif r == -TOP:
                    self.add([-s, -y])
                else:
                    self.add([-s, -r, y])   # type: ignore[operator]
                    self.add([-s, r, -y])   # type: ignore[list-item]
            return y
        ints = [(s, self._as_int(r)) for s, r in cases]
        values = sorted({v for _, r in ints for v in r.values})
        self._check_pairs(len(ints) * len(values), e)
        if len(values) == 1:
            return self._const_int(values[0])
        n = self._node_id(e)
        out = {v: self.pool.id(("n", n, v, t)) for v in values}
        for s, r in ints:
            have = set(r.values)
            for v in values:
                if v in have:
                    rv = r.lit(v)
                    self.add([-s, -rv, out[v]])
                    self.add([-s, rv, -out[v]])
                else:
                    self.add([-s, -out[v]])
        return IntEnc(self, out)

    def _lookup(self, e: Expr, args: list, t: int) -> int | IntEnc:
        index: IntEnc = args[0]
        default = args[1]
        if e.op == "table":
            table: tuple[int, ...] = e.val  # type: ignore[assignment]
            items: list = []
            n_items = len(table)
        else:
            items = args[2:]
            n_items = len(items)

        def item(i: int) -> int | IntEnc:
            if not 0 <= i < n_items:
                return default
            return self._const_int(table[i]) if e.op == "table" else items[i]

        chosen = {i: item(i) for i in index.values}
        consts: dict[int, int] = {}
        for i, r in chosen.items():
            if isinstance(r, IntEnc) and r.const is not None:
                consts[i] = r.const
            elif isinstance(r, int) and abs(r) == TOP:
                consts[i] = int(r == TOP)
        if len(consts) == len(chosen):  # a function of the index alone
            if e.kind == BOOL:
                truth = [i for i in index.values if consts[i]]
                if 2 * len(truth) > len(index.values):
                    inside = set(truth)
                    return -self.or_([index.lit(i) for i in index.values if i not in inside])
                return self.or_([index.lit(i) for i in truth])
            return self._derive(index, consts.__getitem__)
        return self._select(e, [(index.lit(i), r) for i, r in chosen.items()], t)

    def _arith(self, e: Expr, op: str, args: list, t: int) -> IntEnc:
        encs: list[IntEnc] = [self._as_int(a) for a in args]
        f = _BIN[op] if op != "add" else operator.add
        if op in ("add", "min", "max"):  # associative and commutative: fold the constants
            c = [r.const for r in encs if r.const is not None]
            rest = [r for r in encs if r.const is None]
            if not rest:
                return self._const_int(_fold(f, c))
            acc = rest[0]
            for i, r in enumerate(rest[1:]):
                acc = self._pair(e, acc, r, f, t, i)
            if c:
                k = _fold(f, c)
                acc = self._derive(acc, lambda v, k=k: f(v, k))
            return acc
        a, b = encs
        if a.const is not None and b.const is not None:
            return self._const_int(f(a.const, b.const))
        if b.const is not None:
            return self._derive(a, lambda v, k=b.const: f(v, k))
        if a.const is not None:
            return self._derive(b, lambda v, k=a.const: f(k, v))
        return self._pair(e, a, b, f, t)

    def _pair(self, e: Expr, a: IntEnc, b: IntEnc, f: Callable[[int, int], int], t: int,
              part: int = 0) -> IntEnc:
        """``out = f(a, b)`` by enumerating value pairs: a_i & b_j -> out_f(i,j); out is one-hot.

        ``part`` numbers the partial results of an n-ary node folded pairwise.
        """
        self._check_pairs(len(a.values) * len(b.values), e)
        image: dict[int, list[tuple[int, int]]] = {}
        for v in a.values:
            for w in b.values:
                image.setdefault(f(v, w), []).append((v, w))
        if len(image) == 1:
            return self._const_int(next(iter(image)))
        n = self._node_id(e)
        out = {r: self.pool.id(("n", n, r, t, part)) for r in image}
        for r, pairs in image.items():
            for v, w in pairs:
                self.add([-a.lit(v), -b.lit(w), out[r]])
            # support: out_r needs some a value (and some b value) that can produce r
            av = {v for v, _ in pairs}
            if len(av) < len(a.values):
                self.add([-out[r], *[a.lit(v) for v in sorted(av)]])
            bw = {w for _, w in pairs}
            if len(bw) < len(b.values):
                self.add([-out[r], *[b.lit(w) for w in sorted(bw)]])
        self.at_most_one([out[r] for r in sorted(image)])
        return IntEnc(self, out)

    # ------------------------------------------------------------------ the unrolled task
    def extend(self) -> None:
        """Add the transition from step ``T = horizon`` to ``T + 1``: the layer's step, in clauses."""
        t = self.horizon
        xs = self.x[t]
        step = self.layer.step(t)
        acts: dict[int, int] = {}
        # (action literal, fire literals, write, value encoding) per write that can fire
        writes: list[tuple[int, list[int], Write, IntEnc]] = []
        for sa in step.actions:
            k = sa.index
            guard = [self.boolean(c, t) for c in sa.guard]
            if -TOP in guard or sa.dead:
                continue
            effs = []
            for w in sa.writes:
                fire = [self.boolean(c, t) if pos else -self.boolean(c, t) for c, pos in w.when]
                if -TOP in fire:
                    continue
                effs.append(([lit for lit in fire if lit != TOP], w, self.integer(w.value, t)))
            lit = self.pool.id(("a", k, t))
            acts[k] = lit
            for g in guard:
                self.add([-lit, g])
            for fire, w, val in effs:
                writes.append((lit, fire, w, val))
        # the successor's literals (the layer's values before sorting); with symmetry,
        # interchangeable objects get labelled successors ("y") sorted below
        grouped = {v for g in self.groups for v in g}
        nxt: list[dict[int, int]] = []
        for v, vals in enumerate(step.post):
            if len(vals) == 1:
                nxt.append({next(iter(vals)): TOP})
            else:
                name = "y" if v in grouped else "x"
                nxt.append({w: self.pool.id((name, v, w, t + 1)) for w in sorted(vals)})
        fired: dict[tuple[int, int], int] = {}   # (action, effect) -> literal "this write fires"
        for lit, fire, w, val in writes:
            v = w.var
            pre = [-lit, *[-f for f in fire]]
            for x in val.values:
                target = nxt[v].get(x) if x in w.values else None
                if target is not None:
                    self.add([*pre, -val.lit(x), target])
                else:  # outside the domain (or impossible at this step): the write cannot produce it
                    self.add([*pre, -val.lit(x)])
            if fire:
                f = self.pool.id(("f", w.action, w.index, t))
                for g in [lit, *fire]:
                    self.add([-f, g])
                self.add([*pre, f])
                fired[w.action, w.index] = f
            else:
                fired[w.action, w.index] = lit
        for v, vals in enumerate(nxt):
            writers = [fired[key] for w in step.writers[v] if (key := (w.action, w.index)) in fired]
            for x, now in xs[v].items():
                self.add([-now, vals[x], *writers])   # explanatory frame axiom
            if self.full_frame and writers:
                for x, then in vals.items():
                    self.add([-then, xs[v].get(x, -TOP), *writers])
            if len(vals) > 1:
                self.exactly_one(list(vals.values()))
        self._post_invariants(nxt)
        if self.groups:
            layer = list(nxt)
            for g in self.groups:
                slots = self._sort_layer([nxt[v] for v in g], t + 1)
                for v, lits in zip(g, slots):
                    layer[v] = lits
            self._post_invariants(layer, grouped)
            nxt = layer
        self.x.append(nxt)
        if self.acts and self.undo:
            for i, before in self.acts[-1].items():
                for j in self.undo.get(i, ()):
                    if j in acts:
                        self.add([-before, -acts[j]])
        noop = self.pool.id(("noop", t))
        self.exactly_one([*acts.values(), noop])
        if self.noops:
            self.add([-self.noops[-1], noop])             # noops only at the end
        self.acts.append(acts)
        self.noops.append(noop)
        if self.free_run is not None:
            self._free_window(t)

    def add_invariants(self, invariants: Invariants | None) -> None:
        """Post invariants found after some steps were encoded: on every layer so far, and on later ones."""
        if not invariants:
            return
        self.invariants = invariants
        for layer in self.x:
            self._post_invariants(layer)

    def limit_free_runs(self, z: int) -> None:
        """Forbid more than ``z`` consecutive zero-cost actions (every window of ``z + 1`` steps pays
        or idles).  Sound for cost-optimal search when ``z`` bounds every loop-free zero-cost run
        (:mod:`.runbound`): some cheapest plan repeats no state.  It prunes the free wandering a
        long proof horizon would otherwise allow."""
        self.free_run = z
        for t in range(len(self.acts)):
            self._free_window(t)

    def _free_window(self, t: int) -> None:
        z = self.free_run
        assert z is not None
        if t < z:
            return
        clause = []
        for u in range(t - z, t + 1):
            clause.append(self.noops[u])
            clause += [lit for k, lit in self.acts[u].items() if self.task.actions[k].cost > 0]
        self.add(clause)

    def _post_invariants(self, layer: list[dict[int, int]], only: set[int] | None = None) -> None:
        """Forbidden value pairs and held values on one layer (``only``: those touching these variables)."""
        for (v, w), pairs in self.invariants.items():
            if only is not None and v not in only and w not in only:
                continue
            lv, lw = layer[v], layer[w]
            for a, b in pairs:
                if a in lv and b in lw:
                    self.add([-lv[a], -lw[b]])
        for group, a in getattr(self.invariants, "exactly_one", ()):
            if only is None or not only.isdisjoint(group):
                self.add([layer[v][a] for v in group if a in layer[v]])

    def _sort_layer(self, objs: list[dict[int, int]], t: int) -> list[dict[int, int]]:
        """One-hot literals of ``sorted(objs)``: the canonical order of interchangeable objects.

        Counting, not comparing: slot ``i`` is at most ``d`` exactly when at least ``i + 1``
        objects are at most ``d``.  Per value ``d`` the objects' order literals ``obj <= d``
        feed a totalizer with both implication directions (Bailleux & Boufkhad 2003), so
        unit propagation computes the sorted slots from the objects and back.
        """
        values = sorted({w for o in objs for w in o})
        m = len(objs)
        if len(values) == 1:
            return [{values[0]: TOP} for _ in objs]
        # order literals per object: le[j][d] <-> obj_j <= d
        le: list[dict[int, int]] = []
        for o in objs:
            run, row = -TOP, {}
            for d in values:
                run = self.or_([run, o.get(d, -TOP)])
                row[d] = run
            le.append(row)
        slot_le: list[dict[int, int]] = [{} for _ in objs]
        for d in values:
            if d == values[-1]:
                counts = [TOP] * m
            else:
                counts = self._totalizer([row[d] for row in le])
            for i in range(m):
                slot_le[i][d] = counts[i]
        out: list[dict[int, int]] = []
        for i in range(m):
            lits, prev = {}, -TOP
            for d in values:
                lit = self.and_([slot_le[i][d], -prev])
                if lit != -TOP:
                    lits[d] = lit
                prev = slot_le[i][d]
            out.append(lits)
        return out

    def _totalizer(self, lits: list[int]) -> list[int]:
        """Unary count of ``lits``: out[k-1] <-> at least k of them are true (k = 1..len)."""
        if len(lits) == 1:
            return [lits[0]]
        half = len(lits) // 2
        a, b = self._totalizer(lits[:half]), self._totalizer(lits[half:])
        n = len(a) + len(b)
        A, B = [TOP, *a, -TOP], [TOP, *b, -TOP]
        key = ("tot", tuple(lits))
        if (*key, 1) in self.pool.obj2id:  # the same inputs were counted before
            return [self.pool.id((*key, k)) for k in range(1, n + 1)]
        out = [self.pool.id((*key, k)) for k in range(1, n + 1)]
        C = [TOP, *out, -TOP]
        for i in range(len(a) + 1):
            for j in range(len(b) + 1):
                if i + j >= 1:
                    self.add([-A[i], -B[j], C[i + j]])
                if i + j < n:
                    self.add([A[i + 1], B[j + 1], -C[i + j + 1]])
        return out

    def written(self, k: int) -> set[int]:
        """Variables ground action ``k`` may write (any effect, at any step)."""
        return {e.var for e in self.task.actions[k].effects}

    def goal(self, t: int) -> int:
        """A literal that implies the goal at step ``t`` (``-TOP`` if it cannot hold there)."""
        parts = [self.boolean(c, t) for c in conjuncts(self.task.goal)]
        if -TOP in parts:
            return -TOP
        parts = [p for p in parts if p != TOP]
        if not parts:
            return TOP
        if len(parts) == 1:
            return parts[0]
        g = self.pool.id(("g", t))
        if ("g", t, "done") not in self.pool.obj2id:
            self.pool.id(("g", t, "done"))
            for p in parts:
                self.add([-g, p])
        return g

    def heuristic_at_most(self, t: int, k: int) -> int:
        """Literal "h(state_t) <= k" for the task's heuristic (``TOP`` when there is none)."""
        if self.task.heuristic is None:
            return TOP
        if self._hx is None:
            self._hx = relax_assignments(self.task.heuristic)
        h = self.integer(self._hx, t)
        good = [v for v in h.values if v <= k]
        if len(good) == len(h.values):
            return TOP
        if 2 * len(good) > len(h.values):
            return -self.or_([h.lit(v) for v in h.values if v > k])
        return self.or_([h.lit(v) for v in good])

    def cost_inputs(self, t: int) -> list[int]:
        """Literals whose number of true ones is at least the cost of step ``t``.

        Thermometer: ``q_k`` for ``k = 1..max cost`` with ``a -> q_1..q_cost(a)``.
        """
        out = []
        for k in range(1, self._max_cost + 1):
            paying = [lit for a, lit in self.acts[t].items() if self.task.actions[a].cost >= k]
            if not paying:
                break
            q = self.pool.id(("cost", t, k))
            if ("cost", t, k, "done") not in self.pool.obj2id:
                self.pool.id(("cost", t, k, "done"))
                for lit in paying:
                    self.add([-lit, q])
            out.append(q)
        return out

    def state_bound(self) -> int:
        """Number of states in the value-set over-approximation of the last layer."""
        n = 1
        for d in self.x[-1]:
            n *= len(d)
        return n

    def decode(self, true_lits: set[int], horizon: int) -> list[int]:
        """Ground-action indices of a model, steps ``0..horizon-1``, noops skipped."""
        plan = []
        for t in range(horizon):
            for k, lit in self.acts[t].items():
                if lit in true_lits:
                    plan.append(k)
                    break
        return plan


def _fold(f: Callable[[int, int], int], xs: list[int]) -> int:
    acc = xs[0]
    for x in xs[1:]:
        acc = f(acc, x)
    return acc


__all__ = ["TOP", "CnfPlan", "EncodingError", "IntEnc"]
