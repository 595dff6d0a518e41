"""The expression DAG shared by every model, encoder and checker.

Nodes are hash-consed (built once per structure), so a sub-expression that
two guards share is one node: the vectorised evaluator and the compiled
kernels compute it once per state, and the SAT encoder gives it one
auxiliary variable.  Constants are folded while building, which is what
lets a model write guards with Python-level conditions (board edges, static
walls) without leaving dead branches in the grounded task.

Every node has a *kind*: ``int`` or ``bool``.  A boolean used in arithmetic
is converted by an explicit ``ToInt`` node (inserted automatically, or
written as ``Count``), so that numpy, numba and the plain-Python checker
cannot disagree about ``True + True``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Union

from .errors import ModelError, caller_location

ExprLike = Union["Expr", int, bool]


class TruthValueError(ModelError, TypeError):
    """``if x > 0:`` or ``a and b`` on expressions: a model error (exit 32) naming the model file's
    line, and still a TypeError for code that expects one."""

INT = "int"
BOOL = "bool"

# op -> (result kind, argument kind or None for "as given")
_ARITH = {"add", "sub", "mul", "floordiv", "mod", "neg", "min", "max", "ite_int", "abs"}
_CMP = {"eq", "ne", "lt", "le", "gt", "ge"}
_LOGIC = {"and", "or", "not", "ite_bool"}

# Strong values, on purpose: encoders and kernels cache per node by ``id()`` (CNF literals, CP-SAT
# variables, generated locals), and a node freed while such a cache lives would hand its id to a new
# node with another meaning.  Interned nodes live as long as the process.
_INTERN: dict[tuple, Expr] = {}


class Expr:
    """An immutable node: ``op``, argument nodes ``args`` and a payload ``val``.

    ``val`` is the integer of a ``const``, the variable index of a ``var``,
    or the tuple of integers of a ``table`` lookup.
    """

    __slots__ = ("op", "args", "val", "kind", "__weakref__")

    op: str
    args: tuple[Expr, ...]
    val: object
    kind: str

    def __new__(cls, op: str, args: tuple[Expr, ...] = (), val: object = None, kind: str = INT,
                owner: object = None):
        key = (op, tuple(id(a) for a in args), val, kind, owner)
        node = _INTERN.get(key)
        if node is None:
            node = object.__new__(cls)
            node.op, node.args, node.val, node.kind = op, args, val, kind
            _INTERN[key] = node
        return node

    # Identity semantics: nodes are interned, so identity is structural equality.
    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        raise TruthValueError(
            "an expression has no Python truth value: use & | ~ or If(c, a, b) (And/Or/Not) instead "
            "of 'and', 'or', 'not', 'if' or a chained comparison like 0 <= x < n",
            *caller_location())

    def __repr__(self) -> str:
        return to_text(self)

    # arithmetic ---------------------------------------------------------
    def __add__(self, o: ExprLike) -> Expr:
        return Add(self, o)

    def __radd__(self, o: ExprLike) -> Expr:
        return Add(o, self)

    def __sub__(self, o: ExprLike) -> Expr:
        return _arith("sub", self, o)

    def __rsub__(self, o: ExprLike) -> Expr:
        return _arith("sub", o, self)

    def __mul__(self, o: ExprLike) -> Expr:
        return _arith("mul", self, o)

    def __rmul__(self, o: ExprLike) -> Expr:
        return _arith("mul", o, self)

    def __floordiv__(self, o: int) -> Expr:
        return _divmod("floordiv", self, o)

    def __mod__(self, o: int) -> Expr:
        return _divmod("mod", self, o)

    def __neg__(self) -> Expr:
        return _arith("sub", 0, self)

    # comparisons --------------------------------------------------------
    def __eq__(self, o: ExprLike) -> Expr:  # type: ignore[override]
        return _cmp("eq", self, o)

    def __ne__(self, o: ExprLike) -> Expr:  # type: ignore[override]
        return _cmp("ne", self, o)

    def __lt__(self, o: ExprLike) -> Expr:
        return _cmp("lt", self, o)

    def __le__(self, o: ExprLike) -> Expr:
        return _cmp("le", self, o)

    def __gt__(self, o: ExprLike) -> Expr:
        return _cmp("gt", self, o)

    def __ge__(self, o: ExprLike) -> Expr:
        return _cmp("ge", self, o)

    # logic (on bool nodes) ------------------------------------------------
    def __and__(self, o: ExprLike) -> Expr:
        return And(self, o)

    def __rand__(self, o: ExprLike) -> Expr:
        return And(o, self)

    def __or__(self, o: ExprLike) -> Expr:
        return Or(self, o)

    def __ror__(self, o: ExprLike) -> Expr:
        return Or(o, self)

    def __invert__(self) -> Expr:
        return Not(self)

    @property
    def is_const(self) -> bool:
        return self.op == "const"


def const(v: int | bool) -> Expr:
    if isinstance(v, bool):
        return Expr("const", (), int(v), BOOL)
    return Expr("const", (), int(v), INT)


TRUE = const(True)
FALSE = const(False)


def lift(x: ExprLike) -> Expr:
    """Turn Python ints/bools (including numpy scalars) into constant nodes."""
    if isinstance(x, Expr):
        return x
    if isinstance(x, bool):
        return const(x)
    try:
        import operator

        return const(operator.index(x))
    except TypeError:
        pass
    if hasattr(x, "dtype") and getattr(x.dtype, "kind", "") == "b":
        return const(bool(x))
    raise TypeError(f"cannot use {x!r} ({type(x).__name__}) in an expression")


def _as_int(x: ExprLike) -> Expr:
    e = lift(x)
    if e.kind == BOOL:
        return ToInt(e)
    return e


def _as_bool(x: ExprLike) -> Expr:
    e = lift(x)
    if e.kind != BOOL:
        raise TypeError(f"expected a boolean expression, got integer {to_text(e)}")
    return e


def var(index: int, owner: object = None) -> Expr:
    """Variable ``index``; ``owner`` (a model's token) keeps two models' variable 0 apart."""
    return Expr("var", (), index, INT, owner)


def ToInt(b: ExprLike) -> Expr:
    e = lift(b)
    if e.kind == INT:
        return e
    if e.is_const:
        return const(int(e.val))
    return Expr("toint", (e,), None, INT)


def _arith(op: str, a: ExprLike, b: ExprLike) -> Expr:
    x, y = _as_int(a), _as_int(b)
    if x.is_const and y.is_const:
        return const(_PY_BIN[op](x.val, y.val))
    if op == "sub" and y.is_const and y.val == 0:
        return x
    if op == "mul":
        for p, q in ((x, y), (y, x)):
            if p.is_const and p.val == 1:
                return q
            if p.is_const and p.val == 0:
                return const(0)
    return Expr(op, (x, y), None, INT)


def _divmod(op: str, a: ExprLike, b: int) -> Expr:
    x = _as_int(a)
    d = lift(b)
    if not d.is_const or d.val <= 0:
        raise TypeError("// and % need a positive constant divisor")
    if x.is_const:
        return const(_PY_BIN[op](x.val, d.val))
    return Expr(op, (x, d), None, INT)


def Add(*terms: ExprLike) -> Expr:
    """n-ary sum; constants are folded into one."""
    flat: list[Expr] = []
    c = 0
    for t in terms:
        e = _as_int(t)
        if e.is_const:
            c += e.val
        elif e.op == "add":
            for a in e.args:
                if a.is_const:
                    c += a.val
                else:
                    flat.append(a)
        else:
            flat.append(e)
    if not flat:
        return const(c)
    if c:
        flat.append(const(c))
    if len(flat) == 1:
        return flat[0]
    return Expr("add", tuple(flat), None, INT)


def Sum(terms: Iterable[ExprLike]) -> Expr:
    return Add(*list(terms))


def Count(conds: Iterable[ExprLike]) -> Expr:
    """Number of true conditions."""
    return Add(*[ToInt(_as_bool(c)) for c in conds])


def Min(*args: ExprLike) -> Expr:
    return _minmax("min", args)


def Max(*args: ExprLike) -> Expr:
    return _minmax("max", args)


def _minmax(op: str, args: Sequence[ExprLike]) -> Expr:
    if len(args) == 1 and not isinstance(args[0], (Expr, int, bool)):
        args = tuple(args[0])  # type: ignore[arg-type]
    es = [_as_int(a) for a in args]
    if not es:
        raise TypeError(f"{op} of nothing")
    consts = [e.val for e in es if e.is_const]
    rest = [e for e in es if not e.is_const]
    if consts:
        rest.append(const(min(consts) if op == "min" else max(consts)))
    if len(rest) == 1:
        return rest[0]
    return Expr(op, tuple(rest), None, INT)


def Abs(a: ExprLike) -> Expr:
    x = _as_int(a)
    if x.is_const:
        return const(abs(x.val))
    return Expr("abs", (x,), None, INT)


def _cmp(op: str, a: ExprLike, b: ExprLike) -> Expr:
    x, y = lift(a), lift(b)
    if x.kind != y.kind:
        x, y = _as_int(x), _as_int(y)
    if x.is_const and y.is_const:
        return const(bool(_PY_BIN[op](x.val, y.val)))
    if x is y:
        return const(op in ("eq", "le", "ge"))
    return Expr(op, (x, y), None, BOOL)


def Not(a: ExprLike) -> Expr:
    x = _as_bool(a)
    if x.is_const:
        return const(not x.val)
    if x.op == "not":
        return x.args[0]
    return Expr("not", (x,), None, BOOL)


def And(*args: ExprLike) -> Expr:
    return _logic("and", args)


def Or(*args: ExprLike) -> Expr:
    return _logic("or", args)


def _logic(op: str, args: Sequence[ExprLike]) -> Expr:
    if len(args) == 1 and not isinstance(args[0], (Expr, int, bool)):
        args = tuple(args[0])  # type: ignore[arg-type]
    absorbing = op == "or"  # True absorbs an Or, False absorbs an And
    flat: list[Expr] = []
    seen: set[int] = set()
    for a in args:
        e = _as_bool(a)
        if e.is_const:
            if bool(e.val) == absorbing:
                return const(absorbing)
            continue
        parts = e.args if e.op == op else (e,)
        for p in parts:
            if id(p) not in seen:
                seen.add(id(p))
                flat.append(p)
    if not flat:
        return const(not absorbing)
    if len(flat) == 1:
        return flat[0]
    return Expr(op, tuple(flat), None, BOOL)


def If(c: ExprLike, a: ExprLike, b: ExprLike) -> Expr:
    """If-then-else; both branches must have the same kind."""
    cond = _as_bool(c)
    x, y = lift(a), lift(b)
    if x.kind != y.kind:
        x, y = _as_int(x), _as_int(y)
    if cond.is_const:
        return x if cond.val else y
    if x is y:
        return x
    if x.kind == BOOL:
        return Expr("ite_bool", (cond, x, y), None, BOOL)
    return Expr("ite_int", (cond, x, y), None, INT)


def Implies(a: ExprLike, b: ExprLike) -> Expr:
    return Or(Not(a), b)


# A table longer than this is held as a numpy array (:class:`TableData`), not a tuple of ints.
LARGE_TABLE = 1 << 16


class TableData:
    """The values of a large table, packed in a stdlib ``array.array``, hashed by their content.

    Why not a tuple: a pattern database has millions of entries; a tuple of them costs tens of
    bytes per entry and is hashed again every time a node over it is interned.  Here the values
    take 1 to 8 bytes each (the smallest of uint8, int16, int32, int64 that holds them) and the
    digest of the bytes is computed once, so interning is by content (two equal tables give one
    node).  It reads like the tuple it replaces (``len``, ``t[i]``, iteration, slices), so code
    written for small tables keeps working; kernels view ``array`` as a numpy array without a
    copy (``np.frombuffer(t.array, t.dtype)``).  The language itself imports no numpy: a numpy
    array given to :class:`Table` is read through its ``dtype``, ``min``, ``max``, ``astype`` and
    ``tobytes`` methods.
    """

    __slots__ = ("array", "dtype", "digest", "_hash", "lo", "hi")

    # array typecode and numpy dtype name by width, smallest first
    _TYPES = (("B", "uint8", 0, 255), ("h", "int16", -2**15, 2**15 - 1), ("i", "int32", -2**31, 2**31 - 1),
              ("q", "int64", -2**63, 2**63 - 1))

    def __init__(self, values: Iterable[int | bool]):
        import array
        import hashlib

        if hasattr(values, "dtype") and hasattr(values, "tobytes"):      # a numpy array
            if getattr(values, "ndim", 1) != 1 or values.dtype.kind not in "iub":  # type: ignore[attr-defined]
                raise ValueError("a table is a one-dimensional array of integers")
            if len(values) == 0:  # type: ignore[arg-type]
                raise ValueError("empty table")
            lo, hi = int(values.min()), int(values.max())  # type: ignore[attr-defined]
            code, name = self._type(lo, hi)
            arr = array.array(code)
            arr.frombytes(values.astype(name).tobytes())  # type: ignore[attr-defined]
        else:
            ints = [int(v) for v in values]
            if not ints:
                raise ValueError("empty table")
            lo, hi = min(ints), max(ints)
            code, name = self._type(lo, hi)
            arr = array.array(code, ints)
        if arr.itemsize not in (1, 2, 4, 8) or arr.itemsize != {"B": 1, "h": 2, "i": 4, "q": 8}[code]:
            raise ValueError(f"this platform's array type {code!r} is not {name}")
        self.array, self.dtype, self.lo, self.hi = arr, name, lo, hi
        self.digest = hashlib.sha1(name.encode() + arr.tobytes()).hexdigest()
        self._hash = hash(self.digest)

    @classmethod
    def _type(cls, lo: int, hi: int) -> tuple[str, str]:
        for code, name, tlo, thi in cls._TYPES:
            if tlo <= lo and hi <= thi:
                return code, name
        raise ValueError(f"table values {lo}..{hi} do not fit 64 bits")

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, i: int | slice) -> int | tuple[int, ...]:   # type: ignore[override]
        if isinstance(i, slice):
            return tuple(self.array[i])
        return int(self.array[i])

    def __iter__(self):  # noqa: ANN204 - a plain iterator of ints
        return iter(self.array)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TableData) and other.digest == self.digest

    def __repr__(self) -> str:
        return f"TableData({len(self)} x {self.dtype}, {self.digest[:12]})"


class Table:
    """A constant integer array indexed by an expression: ``Table(v)[x]``.

    Lookups are total: an index outside the table yields ``default``.  Guards
    are evaluated in full by the vectorised kernels (no short-circuit), so a
    lookup guarded by a bounds test must still be defined when that test fails.

    ``values`` may be any iterable of integers or a numpy array; above :data:`LARGE_TABLE`
    entries the table is held as a :class:`TableData` (e.g. a pattern database of millions of
    entries), which every kernel reads as data rather than source.
    """

    def __init__(self, values: Iterable[int | bool], default: int = 0):
        vals: tuple[int, ...] | TableData
        if isinstance(values, TableData):
            vals = values
        elif hasattr(values, "dtype") and hasattr(values, "shape"):
            vals = TableData(values)
            if len(vals) <= LARGE_TABLE:
                vals = tuple(vals.array)
        else:
            vals = tuple(int(v) for v in values)
            if len(vals) > LARGE_TABLE:
                vals = TableData(vals)
        if not vals:
            raise ValueError("empty table")
        self.values = vals
        self.default = int(default)

    def __getitem__(self, index: ExprLike) -> Expr:
        i = _as_int(index)
        if i.is_const:
            return const(self.values[i.val] if 0 <= i.val < len(self.values) else self.default)
        return Expr("table", (i, const(self.default)), self.values, INT)


def MinAssignment(costs: Sequence[Sequence[ExprLike]]) -> Expr:
    """Cheapest way to give each row its own column: min over bijections p of sum costs[i][p(i)].

    Why a node and not a ``Min`` over permutations: the permutations of n rows grow as n!, while
    the kernels compute the minimum in O(n^3) (the Hungarian method); admissible heuristics that
    pair objects with distinct targets (boxes with goals) need it for n far beyond 5.
    ``val`` is n, ``args`` the n*n entries row by row.
    """
    rows = [list(r) for r in costs]
    n = len(rows)
    if n == 0 or any(len(r) != n for r in rows):
        raise ValueError("MinAssignment needs a non-empty square matrix of costs")
    flat = [_as_int(x) for r in rows for x in r]
    if n == 1:
        return flat[0]
    if all(x.is_const for x in flat):
        return const(min_assignment([int(x.val) for x in flat], n))  # type: ignore[arg-type]
    return Expr("assign", tuple(flat), n, INT)


def min_assignment(flat: Sequence[int], n: int) -> int:
    """Plain-Python Hungarian method (shortest augmenting paths with potentials), O(n^3).

    The constant folder and the reference checker use it; the kernels use the compiled copy in
    ``encodings.jitlib`` and tests compare both with a brute force over permutations.
    """
    inf = float("inf")
    u = [0] * (n + 1)
    v = [0] * (n + 1)
    match = [0] * (n + 1)                      # match[j]: row (1-based) holding column j, 0 = free
    way = [0] * (n + 1)
    for i in range(1, n + 1):
        match[0] = i
        j0 = 0
        minv = [inf] * (n + 1)
        used = [False] * (n + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = match[j0], inf, 0
            for j in range(1, n + 1):
                if not used[j]:
                    cur = flat[(i0 - 1) * n + j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j], way[j] = cur, j0
                    if minv[j] < delta:
                        delta, j1 = minv[j], j
            for j in range(n + 1):
                if used[j]:
                    u[match[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if match[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            match[j0] = match[j1]
            j0 = j1
    return int(sum(flat[(match[j] - 1) * n + j - 1] for j in range(1, n + 1)))


def Member(x: ExprLike, values: Iterable[int], domain: range) -> Expr:
    """``x in values`` for an ``x`` ranging over ``domain`` (a range from 0)."""
    vs = set(values)
    if domain.start != 0 or domain.step != 1:
        raise ValueError("Member needs a domain range(0, n)")
    e = _as_int(x)
    if e.is_const:
        return const(e.val in vs)
    if not vs.intersection(domain):
        return FALSE
    if all(v in vs for v in domain):
        return TRUE
    return Table([1 if v in vs else 0 for v in domain])[e] == 1


def Element(items: Sequence[ExprLike], index: ExprLike, default: ExprLike = 0) -> Expr:
    """``items[index]`` for a list of expressions and a dynamic index.

    Total like ``Table``: an index outside the list yields ``default``.
    """
    es = [lift(i) for i in items]
    if not es:
        raise ValueError("Element of an empty list")
    d = lift(default)
    if es[0].kind == BOOL and d.kind == INT and d.is_const:
        d = const(bool(d.val))
    if len({e.kind for e in es} | {d.kind}) > 1:
        es = [_as_int(e) for e in es]
        d = _as_int(d)
    i = _as_int(index)
    if i.is_const:
        return es[i.val] if 0 <= i.val < len(es) else d
    if d.is_const and all(e.is_const for e in es):
        t = Table([e.val for e in es], d.val)[i]
        return (t == 1) if es[0].kind == BOOL else t
    return Expr("element", (i, d, *es), None, es[0].kind)


_PY_BIN = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "floordiv": lambda a, b: a // b,
    "mod": lambda a, b: a % b,
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}

_SYM = {
    "add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%",
    "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
    "and": "&", "or": "|",
}


def to_text(e: Expr, names: Sequence[str] | None = None, depth: int = 0) -> str:
    """A readable rendering for dumps and error messages (deep trees are elided)."""
    if depth > 12:
        return "…"
    if e.op == "const":
        return str(bool(e.val)) if e.kind == BOOL else str(e.val)
    if e.op == "var":
        return names[e.val] if names else f"v{e.val}"
    sub = [to_text(a, names, depth + 1) for a in e.args]
    if e.op in _SYM:
        return "(" + f" {_SYM[e.op]} ".join(sub) + ")"
    if e.op == "table":
        vals = e.val if len(e.val) <= 8 else (*e.val[:8], "…")  # type: ignore[misc]
        return f"T{list(vals)}[{sub[0]}]"
    if e.op == "element":
        items = sub[2:] if len(sub) <= 10 else [*sub[2:10], "…"]
        return f"[{', '.join(items)}][{sub[0]}]"
    if e.op == "not":
        return f"!{sub[0]}"
    if e.op == "assign":
        return f"assign{e.val}({', '.join(sub[:8])}{', …' if len(sub) > 8 else ''})"
    return f"{e.op}({', '.join(sub)})"


def walk(roots: Iterable[Expr]) -> list[Expr]:
    """All nodes under ``roots``, children before parents, each once."""
    order: list[Expr] = []
    seen: set[int] = set()
    for root in roots:
        stack: list[tuple[Expr, bool]] = [(root, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            for a in reversed(node.args):
                if id(a) not in seen:
                    stack.append((a, False))
    return order


def conjuncts(e: Expr) -> list[Expr]:
    """Top-level conjuncts of a boolean expression (the expression itself if it is no ``and``):
    ``And`` flattens nested conjunctions when it builds one, so one level is all there is."""
    return list(e.args) if e.op == "and" else [e]


def variables_of(e: Expr) -> set[int]:
    return {n.val for n in walk([e]) if n.op == "var"}  # type: ignore[misc]


def substitute(e: Expr, values: dict[int, int]) -> Expr:
    """``e`` with the variables in ``values`` replaced by constants, folded by the constructors.

    Used to specialise a guard to a known value of one variable (macro walking reads the rest
    of a walk action's guard once per state, with the walker's own position fixed).
    """
    return _rebuild(e, values, relax=False)


def relax_assignments(e: Expr) -> Expr:
    """``e`` with every ``MinAssignment`` replaced by the larger of its row-minima and
    column-minima sums, and every large table lookup (a pattern database, :class:`TableData`)
    by the least value it can give: never above it, so an admissible heuristic stays
    admissible, and made of nodes the SAT and CP-SAT encoders can post (a lookup indexed by
    millions of ranks cannot be)."""
    return _rebuild(e, {}, relax=True)


def _rebuild(e: Expr, values: dict[int, int], relax: bool) -> Expr:
    memo: dict[int, Expr] = {}
    for n in walk([e]):
        a = [memo[id(x)] for x in n.args]
        op = n.op
        if op == "var":
            out = const(values[n.val]) if n.val in values else n  # type: ignore[index]
        elif op == "table" and relax and isinstance(n.val, TableData):
            out = const(min(n.val.lo, int(a[1].val))) if a[1].is_const else Min(n.val.lo, a[1])
        elif op == "assign" and relax:
            k = int(n.val)  # type: ignore[arg-type]
            rows = [a[i * k:(i + 1) * k] for i in range(k)]
            out = Max(Add(*[Min(*r) for r in rows]), Add(*[Min(*c) for c in zip(*rows)]))
        elif op == "const" or all(x is y for x, y in zip(a, n.args)):
            out = n
        elif op == "add":
            out = Add(*a)
        elif op in ("sub", "mul"):
            out = _arith(op, a[0], a[1])
        elif op in ("floordiv", "mod"):
            out = _divmod(op, a[0], a[1].val)  # type: ignore[arg-type]
        elif op == "abs":
            out = Abs(a[0])
        elif op in ("min", "max"):
            out = _minmax(op, a)
        elif op == "toint":
            out = ToInt(a[0])
        elif op in _PY_BIN:
            out = _cmp(op, a[0], a[1])
        elif op in ("and", "or"):
            out = _logic(op, a)
        elif op == "not":
            out = Not(a[0])
        elif op in ("ite_int", "ite_bool"):
            out = If(a[0], a[1], a[2])
        elif op == "table":
            out = Table(n.val, a[1].val)[a[0]]  # type: ignore[arg-type]
        elif op == "element":
            out = Element(a[2:], a[0], a[1])
        elif op == "assign":
            k = int(n.val)  # type: ignore[arg-type]
            out = MinAssignment([a[i * k:(i + 1) * k] for i in range(k)])
        else:
            raise ValueError(f"substitute: unknown op {op}")
        memo[id(n)] = out
    return memo[id(e)]


def bounds(e: Expr, var_bounds: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """Interval bounds of ``e`` given each variable's (lo, hi); sound, not tight.

    Each node's rule is its operator's entry in the operator table (:data:`.ops.OPS`).
    """
    memo: dict[int, tuple[int, int]] = {}
    for n in walk([e]):
        memo[id(n)] = _node_bounds(n, [memo[id(a)] for a in n.args], var_bounds)
    return memo[id(e)]


def _node_bounds(n: Expr, ab: list[tuple[int, int]], vb: Sequence[tuple[int, int]]) -> tuple[int, int]:
    from .ops import interval  # the table is built on this module's nodes: imported on first use

    return interval(n, ab, vb)
