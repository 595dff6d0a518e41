"""Walk edges whose condition tests each variable on its own, tested for every edge at once.

On a grid the condition of a walk edge into a square is usually "nothing stands there": no
object variable has that square's value (``!(obj1 == c | obj2 == c | ...)``), or none covers it
through a table lookup (``!(T1[obj1] == 1 | ...)``).  Evaluated edge by edge that is one test per
(edge, object): 64 squares x 16 objects on one benchmark board, for every state a search stores.
Read the other way round, each variable's value rules out a fixed set of edges, so a table per
variable, indexed by its value, holds the bits of the conditions that value breaks; a state's
open conditions are all bits but the union of one table row per variable -- 16 lookups
instead of 1,024 tests.  It is the bit-parallel evaluation the compiled kernel uses for derived
views (``compiled.bit_tables``), for the walk graph's edges (figures: docs/architecture.md,
"Macro walking").

It applies when every condition is a conjunction of tests of one variable each (negated
disjunctions included: ``!(a | b)`` is ``!a & !b``); each test is evaluated over its variable's
whole domain once, when the tables are built.  Any other condition keeps the edge-by-edge
evaluation (:mod:`.walkgraph`).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..encodings.npkernel import evaluate
from ..lang.expr import Expr, Not, variables_of

MAX_VALUES = 4096   # a variable with a larger domain gets no table (the edge-by-edge path runs)


def allowed(e: Expr, var_bounds: list[tuple[int, int]]) -> dict[int, np.ndarray] | None:
    """Per variable, which values of its domain ``lo..hi`` keep ``e`` true, when ``e`` is true
    exactly when every variable's value is allowed; None for any other expression."""
    if e.op == "const":
        return {} if bool(e.val) else None
    reads = variables_of(e)
    if len(reads) == 1:
        (v,) = reads
        lo, hi = var_bounds[v]
        if hi - lo >= MAX_VALUES:
            return None
        S = np.zeros((hi - lo + 1, len(var_bounds)), dtype=np.int64)
        S[:, v] = np.arange(lo, hi + 1)
        try:    # every value of the domain, also ones no state takes: an error there costs the table
            with np.errstate(all="raise"):
                return {v: np.asarray(evaluate(e, S), dtype=bool)}
        except (ArithmeticError, ValueError, IndexError, FloatingPointError):
            return None
    if e.op == "and":
        parts = [allowed(a, var_bounds) for a in e.args]
    elif e.op == "not" and e.args[0].op == "or":
        parts = [allowed(Not(a), var_bounds) for a in e.args[0].args]
    else:
        return None
    out: dict[int, np.ndarray] = {}
    for p in parts:
        if p is None:
            return None
        for v, ok in p.items():
            out[v] = out[v] & ok if v in out else ok
    return out


def distinct(rest: list[Expr]) -> tuple[list[Expr], np.ndarray]:
    """The distinct conditions among the edges' (the edges into one cell of a grid share theirs)
    and, per edge, its condition's index."""
    index: dict[Expr, int] = {}      # expressions are interned: identity is structural equality
    edge_guard = np.array([index.setdefault(r, len(index)) for r in rest], dtype=np.int64)
    return list(index), edge_guard


class EdgeBits:
    """Per state, one bit per distinct edge condition: set when the condition holds."""

    def __init__(self, guards: list[dict[int, np.ndarray]], edge_guard: np.ndarray,
                 var_bounds: list[tuple[int, int]]):
        self.edge_guard = edge_guard        # per edge: its condition's bit
        n = len(guards)
        self.words = max(1, -(-n // 64))
        self.all = np.zeros(self.words, dtype=np.uint64)
        for g in range(n):
            self.all[g >> 6] |= np.uint64(1) << np.uint64(g & 63)
        variables = sorted({v for guard in guards for v in guard})
        self.vars = np.array(variables, dtype=np.int64)
        self.lo = np.array([var_bounds[v][0] for v in variables], dtype=np.int64)
        sizes = [var_bounds[v][1] - var_bounds[v][0] + 1 for v in variables]
        self.off = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64) if sizes \
            else np.zeros(0, dtype=np.int64)
        self.kill = np.zeros((sum(sizes), self.words), dtype=np.uint64)
        where = {v: i for i, v in enumerate(variables)}
        for g, guard in enumerate(guards):
            bit = np.uint64(1) << np.uint64(g & 63)
            for v, ok in guard.items():
                rows = self.off[where[v]] + np.flatnonzero(~ok)
                self.kill[rows, g >> 6] |= bit

    @classmethod
    def build(cls, rest: list[Expr], var_bounds: list[tuple[int, int]]) -> EdgeBits | None:
        """The tables for these edge conditions, or None when one has another shape."""
        conditions, edge_guard = distinct(rest)
        guards = [allowed(c, var_bounds) for c in conditions]
        if any(g is None for g in guards):
            return None
        return cls(guards, edge_guard, var_bounds)  # type: ignore[arg-type]

    def open_bits(self, S: np.ndarray) -> np.ndarray:
        """(rows, words) uint64: bit g of a row is set when condition g holds in that state."""
        out = np.empty((S.shape[0], self.words), dtype=np.uint64)
        _open_bits(np.ascontiguousarray(S, dtype=np.int64), self.vars, self.lo, self.off, self.kill,
                   self.all, out)
        return out


@nb.njit(cache=True, nogil=True)
def _open_bits(S, VARS, LO, OFF, KILL, ALL, out):  # noqa: ANN001, ANN202
    W = ALL.shape[0]
    for r in range(S.shape[0]):
        for w in range(W):
            out[r, w] = ALL[w]
        for i in range(VARS.shape[0]):
            row = OFF[i] + S[r, VARS[i]] - LO[i]
            for w in range(W):
                out[r, w] &= ~KILL[row, w]


def as_bits(en: np.ndarray) -> np.ndarray:
    """(rows, edges) booleans as (rows, words) uint64 bit sets, bit e = column e."""
    n, m = en.shape
    words = max(1, -(-m // 64))
    padded = np.zeros((n, 64 * words), dtype=bool)
    padded[:, :m] = en
    packed = np.packbits(padded, axis=1, bitorder="little")     # byte j: columns 8j..8j+7
    return np.ascontiguousarray(packed).view("<u8").astype(np.uint64, copy=False)


@nb.njit(cache=True, nogil=True)
def bfs_bits(dist, frontier, bits, out_start, out_edges, dst, edge_guard):  # noqa: ANN001, ANN201
    """Breadth-first layers of every row's walk region, ``dist`` (-1 = unreached) filled in place
    from ``frontier``; edge e is open in row r when bit ``edge_guard[e]`` of ``bits[r]`` is set
    (``EdgeBits.open_bits``, or ``as_bits`` of a boolean matrix)."""
    n, size = dist.shape
    one = np.uint64(1)
    queue = np.empty(size, dtype=np.int64)
    for r in range(n):
        head = tail = 0
        for v in range(size):
            if frontier[r, v]:
                queue[tail] = v
                tail += 1
        while head < tail:
            v = queue[head]
            head += 1
            for k in range(out_start[v], out_start[v + 1]):
                e = out_edges[k]
                g = edge_guard[e]
                if (bits[r, g >> 6] >> np.uint64(g & 63)) & one:
                    w = dst[e]
                    if dist[r, w] < 0:
                        dist[r, w] = dist[r, v] + 1
                        queue[tail] = w
                        tail += 1
