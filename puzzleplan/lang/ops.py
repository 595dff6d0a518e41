"""The plain-Python meaning of every expression operator, and the one scalar interpreter built on it.

Every layer that needs a value in one concrete state -- the reference checker (the judge),
the plan concretisation of the symbolic engines, the PDDL export, the variant check, the
backtracking engine -- calls :func:`evaluate`, so there is one reading of each operator
in plain Python.  The fast back ends (numpy and compiled kernels, CNF, CP-SAT, PDDL)
translate the same operators and are tested against it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .expr import BOOL, INT, Expr, TableData, min_assignment

Interval = tuple[int, int]


@dataclass(frozen=True)
class Op:
    """One expression operator: what it is and what it means.

    ``arity``: number of arguments (``None``: two or more).  ``kind``: the result kind
    (``INT``/``BOOL``; ``None``: the kind of its branches or items).  The plain-Python
    meaning is exactly one of:

    * ``leaf(node, state)``: a node without arguments (a constant, a state variable);
    * ``apply(values)``: an operator that reads every argument (the values in order);
    * ``select(node, first)``: an operator that reads its first argument and then either
      is a value (an ``int``) or is one of its other arguments (an ``Expr``, read next) --
      ``If`` and the total lookups, whose untaken branches and defaults are never read.

    ``interval(node, child_bounds, var_bounds)``: sound (not tight) bounds of the value
    given its children's bounds (booleans: ``(0, 1)``).
    """

    name: str
    arity: int | None
    kind: str | None
    interval: Callable[[Expr, list[Interval], Sequence[Interval]], Interval]
    doc: str
    leaf: Callable[[Expr, Sequence[int]], int] | None = None
    apply: Callable[[list[int]], int] | None = None
    select: Callable[[Expr, int], Expr | int] | None = None


def _bool_interval(e: Expr, ab: list[Interval], vb: Sequence[Interval]) -> Interval:
    return (0, 1)


def _const_interval(e: Expr, ab: list[Interval], vb: Sequence[Interval]) -> Interval:
    return (int(e.val), int(e.val))  # type: ignore[arg-type]


def _abs_interval(e: Expr, ab: list[Interval], vb: Sequence[Interval]) -> Interval:
    a, b = ab[0]
    if a >= 0:
        return (a, b)
    if b <= 0:
        return (-b, -a)
    return (0, max(-a, b))


def _mul_interval(e: Expr, ab: list[Interval], vb: Sequence[Interval]) -> Interval:
    (a, b), (c, d) = ab
    p = (a * c, a * d, b * c, b * d)
    return (min(p), max(p))


def _table_interval(e: Expr, ab: list[Interval], vb: Sequence[Interval]) -> Interval:
    lo, hi = ab[0]
    if isinstance(e.val, TableData) and lo <= 0 and hi >= len(e.val) - 1:   # all of a large table:
        vals = [e.val.lo, e.val.hi]                                            # its known extremes
    else:
        vals = list(e.val[max(lo, 0): hi + 1])  # type: ignore[index]
    if lo < 0 or hi >= len(e.val) or not vals:  # type: ignore[arg-type]
        vals.append(ab[1][0])
    return (min(vals), max(vals))


def _element_interval(e: Expr, ab: list[Interval], vb: Sequence[Interval]) -> Interval:
    lo, hi = ab[0]
    cand = ab[2 + max(lo, 0): 2 + hi + 1]
    if lo < 0 or hi >= len(ab) - 2 or not cand:
        cand = cand + [ab[1]]
    return (min(a[0] for a in cand), max(a[1] for a in cand))


def _assign_interval(e: Expr, ab: list[Interval], vb: Sequence[Interval]) -> Interval:
    """n entries are summed, each at least its row's least lower bound."""
    k = int(e.val)  # type: ignore[arg-type]
    rows = [ab[i * k:(i + 1) * k] for i in range(k)]
    return (sum(min(x[0] for x in r) for r in rows), sum(max(x[1] for x in r) for r in rows))


def _ite(e: Expr, c: int) -> Expr:
    return e.args[1] if c else e.args[2]


def _table_select(e: Expr, i: int) -> Expr | int:
    vals: tuple[int, ...] = e.val  # type: ignore[assignment]
    return vals[i] if 0 <= i < len(vals) else e.args[1]


def _element_select(e: Expr, i: int) -> Expr | int:
    items = e.args[2:]
    return items[i] if 0 <= i < len(items) else e.args[1]


def _side(n_entries: int) -> int:
    """n of an n x n matrix of entries (MinAssignment's ``val``, recovered from its arity)."""
    n = round(n_entries ** 0.5)
    if n * n != n_entries:
        raise ValueError("MinAssignment needs a square matrix of entries")
    return n


def _cmp(name: str, f: Callable[[int, int], bool], doc: str) -> Op:
    return Op(name, 2, BOOL, _bool_interval, doc, apply=lambda a: int(f(a[0], a[1])))


_TABLE: list[Op] = [
    Op("const", 0, None, _const_interval, "a constant (``val``; booleans as 0/1)",
       leaf=lambda e, _s: int(e.val)),  # type: ignore[arg-type]
    Op("var", 0, INT, lambda e, _a, vb: vb[e.val], "state variable ``val``",  # type: ignore[index]
       leaf=lambda e, s: int(s[e.val])),  # type: ignore[index]
    Op("add", None, INT, lambda e, ab, _v: (sum(a[0] for a in ab), sum(a[1] for a in ab)),
       "sum of two or more", apply=sum),
    Op("sub", 2, INT, lambda e, ab, _v: (ab[0][0] - ab[1][1], ab[0][1] - ab[1][0]), "a - b",
       apply=lambda a: a[0] - a[1]),
    Op("mul", 2, INT, _mul_interval, "a * b", apply=lambda a: a[0] * a[1]),
    Op("floordiv", 2, INT, lambda e, ab, _v: (ab[0][0] // ab[1][0], ab[0][1] // ab[1][0]),
       "a // d, floor division by a positive constant d", apply=lambda a: a[0] // a[1]),
    Op("mod", 2, INT, lambda e, ab, _v: (0, ab[1][0] - 1), "a % d, in 0..d-1 for a positive constant d",
       apply=lambda a: a[0] % a[1]),
    Op("abs", 1, INT, _abs_interval, "|a|", apply=lambda a: abs(a[0])),
    Op("min", None, INT, lambda e, ab, _v: (min(a[0] for a in ab), min(a[1] for a in ab)),
       "least of two or more", apply=min),
    Op("max", None, INT, lambda e, ab, _v: (max(a[0] for a in ab), max(a[1] for a in ab)),
       "greatest of two or more", apply=max),
    Op("toint", 1, INT, _bool_interval, "a boolean as 0/1", apply=lambda a: a[0]),
    _cmp("eq", lambda a, b: a == b, "a == b"),
    _cmp("ne", lambda a, b: a != b, "a != b"),
    _cmp("lt", lambda a, b: a < b, "a < b"),
    _cmp("le", lambda a, b: a <= b, "a <= b"),
    _cmp("gt", lambda a, b: a > b, "a > b"),
    _cmp("ge", lambda a, b: a >= b, "a >= b"),
    Op("and", None, BOOL, _bool_interval, "conjunction of two or more", apply=lambda a: int(all(a))),
    Op("or", None, BOOL, _bool_interval, "disjunction of two or more", apply=lambda a: int(any(a))),
    Op("not", 1, BOOL, _bool_interval, "negation", apply=lambda a: 1 - a[0]),
    Op("ite_int", 3, INT, lambda e, ab, _v: (min(ab[1][0], ab[2][0]), max(ab[1][1], ab[2][1])),
       "If(c, a, b) on integers", select=_ite),
    Op("ite_bool", 3, BOOL, _bool_interval, "If(c, a, b) on booleans", select=_ite),
    Op("table", 2, INT, _table_interval,
       "Table(val)[index], args (index, default): total, the default outside the table",
       select=_table_select),
    Op("element", None, None, _element_interval,
       "Element(items, index, default), args (index, default, *items): total like table",
       select=_element_select),
    Op("assign", None, INT, _assign_interval,
       "MinAssignment: least sum over bijections of an n x n matrix (``val`` = n, args row by row)",
       apply=lambda a: min_assignment(a, _side(len(a)))),
]

#: every operator of the expression language, by name
OPS: dict[str, Op] = {op.name: op for op in _TABLE}


def evaluate(e: Expr, state: Sequence[int], memo: dict[int, int] | None = None) -> int:
    """Value of ``e`` in ``state``; booleans come back as 0/1.

    Dispatched from :data:`OPS`, with one Python frame per expression level like a direct
    recursive reading (deep ``If`` chains stay within the recursion limit), and every node
    read once per state (``memo``, by node identity).
    """
    if memo is None:
        memo = {}
    key = id(e)
    if key in memo:
        return memo[key]
    op = OPS[e.op]
    if op.apply is not None:
        r = op.apply([evaluate(x, state, memo) for x in e.args])
    elif op.select is not None:
        got = op.select(e, evaluate(e.args[0], state, memo))
        r = got if isinstance(got, int) else evaluate(got, state, memo)
    else:
        r = op.leaf(e, state)  # type: ignore[misc]
    memo[key] = r
    return r


def interval(e: Expr, child: list[Interval], var_bounds: Sequence[Interval]) -> Interval:
    """Bounds of node ``e`` from its children's bounds (the dispatch of :func:`.expr.bounds`)."""
    op = OPS.get(e.op)
    if op is None:
        raise ValueError(f"no bounds rule for {e.op}")
    if e.kind == BOOL and e.op != "const":
        return (0, 1)
    return op.interval(e, child, var_bounds)


__all__ = ["OPS", "Op", "evaluate", "interval"]
