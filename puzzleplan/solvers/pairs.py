"""Pair deadlocks for pushing puzzles (``Model.corrals``): two objects that cannot both reach targets.

A search of a pushing puzzle spends most of its last layers on states that are already lost but
look cheap to the bound: two objects jammed in a corridor that has one target, a pair that can only
be pushed apart the wrong way.  Their subtrees are small but many.  Solvers of pushing puzzles
detect such patterns with tables computed per level; here the table is computed from the
declaration and the ground push actions alone (:class:`~.pushes.PushGeometry`), never from a
puzzle.

The table: for every pair of squares ``a < b`` and every part of the board without ``a`` and
``b`` where the agent may stand, whether two objects there, alone on the board, can both be pushed
onto targets.  It is the set reached by a backward search from "both on targets" over reversed
pushes.  Why a state with a pair outside it is dead (docs/architecture.md, "Pair deadlocks"): along
any plan, keep only the pushes of those two objects and delete every other object; each kept push
is still possible (deleting objects frees squares, and the agent's part of the board only grows),
so the kept pushes are a plan of the pair problem that ends with both on targets.  The ground
pushes are a superset of the pushes the model's guards allow, which only adds plans to the pair
problem.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .frozen import UNREACHABLE, FrozenBound, _bound_rows
from .pushes import PushGeometry

MAX_SIZE = 200          # squares: the tables take about size**3 * 3 bytes (24 MB at 200)


class PairDeadlocks:
    """``dead(S)``: per state row, whether some pair of its objects cannot both reach targets;
    ``bound(S)`` (when built with the frozen bound's tables): the matching plus pair excesses."""

    def __init__(self, geo: PushGeometry, agent: int, lone: FrozenBound | None = None):
        self.geo = geo
        self.agent = agent
        size = geo.size
        self.rep = np.full((size, size, size), -1, dtype=np.int16)
        _components(geo.adj_start, geo.adj, self.rep)
        self.live = np.zeros((size, size, size), dtype=np.bool_)
        targets = np.flatnonzero(geo.target).astype(np.int64)
        _backward(geo.in_start, geo.in_p, geo.in_x, targets, self.rep, self.live)
        # pairs live wherever the agent stands: most of them, and a small table that stays in cache
        # answers them without touching the large ones
        self.always = np.zeros((size, size), dtype=np.bool_)
        _always_live(self.rep, self.live, self.always)
        self.dead_states = 0      # states found dead by a pair
        self.raised = 0           # states whose bound the pair excesses raised above the matching
        self.lone = lone
        if lone is not None:      # lone-object distances on the whole board: the frozen bound's, F empty
            self.blocked, self.parts, self.dist = lone._tables(np.zeros(lone.words, dtype=np.uint64))
            self.excess = np.zeros((size, size, size), dtype=np.int16)
            _excess(geo.in_start, geo.in_p, geo.in_x, targets, self.rep, self.parts, self.dist, lone.width,
                    self.excess)
            self.some = self.excess.max(axis=2) > 0

    @staticmethod
    def fits(geo: PushGeometry) -> bool:
        """Whether the tables are worth building (two objects at least) and fit (``MAX_SIZE``)."""
        return geo.size <= MAX_SIZE and geo.objects.size >= 2 and int(geo.target.sum()) >= 2

    def bound(self, S: np.ndarray) -> np.ndarray:
        """The cheapest assignment by lone-object push distances, plus the excesses of disjoint
        pairs (chosen greedily, largest first), times the cheapest push's cost; 0 (no news) where
        no pair has an excess."""
        lone = self.lone
        assert lone is not None
        g = self.geo
        n = S.shape[0]
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        objs = np.ascontiguousarray(S[:, g.objects] - g.lo)
        agent = np.ascontiguousarray(S[:, self.agent] - g.lo)
        bonus = np.zeros(n, dtype=np.int64)
        _bonus_rows(objs, agent, self.rep, self.excess, self.some, bonus)
        out = np.zeros(n, dtype=np.int64)
        rows = np.flatnonzero(bonus)     # elsewhere the bound is the lone matching, the model's own
        if rows.size:                    # heuristic's kind of bound: not worth a second assignment
            match = np.zeros(rows.size, dtype=np.int64)
            _bound_rows(objs[rows], agent[rows], self.blocked, self.parts, self.dist, lone.width, match)
            out[rows] = np.where(match >= UNREACHABLE, 0, (match + bonus[rows]) * lone.push_cost)
            self.raised += int(rows.size)
        return out

    def dead(self, S: np.ndarray) -> np.ndarray:
        g = self.geo
        out = np.zeros(S.shape[0], dtype=np.bool_)
        if S.shape[0]:
            objs = np.ascontiguousarray(S[:, g.objects] - g.lo)
            agent = np.ascontiguousarray(S[:, self.agent] - g.lo)
            _dead_rows(objs, agent, self.rep, self.live, self.always, out)
            self.dead_states += int(np.count_nonzero(out))
        return out


@nb.njit(cache=True, nogil=True)
def _components(adj_start, adj, rep):  # noqa: ANN001, ANN201
    """``rep[a, b, v]`` (a < b): the least square of ``v``'s part of the board without ``a`` and
    ``b`` (-1 for ``a`` and ``b``)."""
    size = adj_start.size - 1
    queue = np.empty(size, dtype=np.int64)
    for a in range(size):
        for b in range(a + 1, size):
            lab = rep[a, b]
            for v in range(size):
                if v == a or v == b or lab[v] >= 0:
                    continue
                lab[v] = v                  # the least square not yet labelled starts its part
                head, tail = 0, 1
                queue[0] = v
                while head < tail:
                    u = queue[head]
                    head += 1
                    for k in range(adj_start[u], adj_start[u + 1]):
                        w = adj[k]
                        if w != a and w != b and lab[w] < 0:
                            lab[w] = v
                            queue[tail] = w
                            tail += 1


@nb.njit(cache=True, nogil=True)
def _backward(in_start, in_p, in_x, targets, rep, live):  # noqa: ANN001, ANN201
    """``live[a, b, r]``: two objects on ``a < b``, the agent in the part of least square ``r``, can
    both be pushed onto targets.  Backward from both on targets: a push (p, x, y) leads from objects
    {x, o} with the agent's part holding p to objects {y, o} with the agent on x."""
    size = rep.shape[0]
    queue = np.empty(size * size * size // 2 + size, dtype=np.int64)   # each (a < b, r) once
    tail = 0
    for i in range(targets.size):
        for j in range(i + 1, targets.size):
            a, b = targets[i], targets[j]
            for v in range(size):
                r = rep[a, b, v]
                if r >= 0 and not live[a, b, r]:
                    live[a, b, r] = True
                    queue[tail] = (a * size + b) * size + r
                    tail += 1
    prev = np.empty(in_p.size * 2, dtype=np.int64)
    head = 0
    while head < tail:
        key = queue[head]
        head += 1
        for t in range(_predecessors(key, size, in_start, in_p, in_x, rep, prev)):
            lo, hi, r2 = prev[t] // (size * size), (prev[t] // size) % size, prev[t] % size
            if not live[lo, hi, r2]:
                live[lo, hi, r2] = True
                queue[tail] = prev[t]
                tail += 1


@nb.njit(cache=True, nogil=True)
def _predecessors(key, size, in_start, in_p, in_x, rep, prev):  # noqa: ANN001, ANN201
    """The pair states one push before ``key`` = (a * size + b) * size + r (a < b), into ``prev``;
    returns how many.  A push (p, x, y) leads from objects {x, o}, the agent's part holding p, to
    {y, o} with the agent on x, which must lie in part r and not on o."""
    r = key % size
    b = (key // size) % size
    a = key // (size * size)
    n = 0
    for side in range(2):
        y = a if side == 0 else b
        o = b if side == 0 else a
        for k in range(in_start[y], in_start[y + 1]):
            p, x = in_p[k], in_x[k]
            if x == o or p == o or rep[a, b, x] != r:
                continue
            lo, hi = min(x, o), max(x, o)
            r2 = rep[lo, hi, p]
            if r2 >= 0:
                prev[n] = (lo * size + hi) * size + r2
                n += 1
    return n


@nb.njit(cache=True, nogil=True)
def _always_live(rep, live, always):  # noqa: ANN001, ANN201
    """``always[a, b]`` (a < b): the pair is live in every part of the board the agent may hold."""
    size = rep.shape[0]
    for a in range(size):
        for b in range(a + 1, size):
            ok = True
            for v in range(size):
                q = rep[a, b, v]
                if q >= 0 and not live[a, b, q]:
                    ok = False
                    break
            always[a, b] = ok


@nb.njit(cache=True, nogil=True)
def _dead_rows(objs, agent, rep, live, always, out):  # noqa: ANN001, ANN201
    """Per row: some pair of objects (with the agent's part) outside the live table."""
    n, k_objs = objs.shape
    for r in range(n):
        s = agent[r]
        for i in range(k_objs):
            for j in range(i + 1, k_objs):
                a, b = objs[r, i], objs[r, j]
                if a > b:
                    a, b = b, a
                if a == b or always[a, b]:
                    continue
                q = rep[a, b, s]
                if q >= 0 and not live[a, b, q]:
                    out[r] = True
                    break
            if out[r]:
                break


@nb.njit(cache=True, nogil=True)
def _excess(in_start, in_p, in_x, targets, rep, parts, dist, width, excess):  # noqa: ANN001, ANN201
    """``excess[a, b, r]``: the least, over targets ta != tb both objects could reach alone, of
    D2 - d(a, ta) - d(b, tb), where D2 is the fewest pushes taking the pair (agent in the part of
    least square ``r``) onto {ta, tb}, alone on the board, and d the lone-object distance.  One
    backward breadth-first search per pair of targets; 0 where no pair of targets is reachable."""
    size = rep.shape[0]
    n_states = size * size * size
    d2 = np.empty(n_states, dtype=np.int32)
    stamp = np.zeros(n_states, dtype=np.int32)
    queue = np.empty(n_states // 2 + size, dtype=np.int64)
    best = np.full(n_states, 32767, dtype=np.int32)
    prev = np.empty(in_p.size * 2, dtype=np.int64)
    run = 0
    for i in range(targets.size):
        for j in range(i + 1, targets.size):
            run += 1
            ta, tb = targets[i], targets[j]
            tail = 0
            for v in range(size):
                r = rep[ta, tb, v]
                if r >= 0:
                    key = (ta * size + tb) * size + r
                    if stamp[key] != run:
                        stamp[key] = run
                        d2[key] = 0
                        queue[tail] = key
                        tail += 1
            head = 0
            while head < tail:
                key = queue[head]
                head += 1
                r = key % size
                b = (key // size) % size
                a = key // (size * size)
                dd = d2[key]
                pa, pb = parts[a, r], parts[b, r]
                for flip in range(2):       # a to ta and b to tb, or the other way round
                    ja, jb = (i, j) if flip == 0 else (j, i)
                    da, db = dist[ja, a * width + pa], dist[jb, b * width + pb]
                    if da >= 0 and db >= 0 and dd - da - db < best[key]:
                        best[key] = dd - da - db
                for t in range(_predecessors(key, size, in_start, in_p, in_x, rep, prev)):
                    key2 = prev[t]
                    if stamp[key2] != run:
                        stamp[key2] = run
                        d2[key2] = dd + 1
                        queue[tail] = key2
                        tail += 1
    for a in range(size):
        for b in range(a + 1, size):
            for r in range(size):
                v = best[(a * size + b) * size + r]
                excess[a, b, r] = 0 if v == 32767 or v < 0 else v


@nb.njit(cache=True, nogil=True)
def _bonus_rows(objs, agent, rep, excess, some, out):  # noqa: ANN001, ANN201
    """Per row: the sum of the excesses of disjoint pairs of objects, taken largest first."""
    n, k_objs = objs.shape
    vals = np.empty(k_objs * k_objs, dtype=np.int64)
    first = np.empty(k_objs * k_objs, dtype=np.int64)
    second = np.empty(k_objs * k_objs, dtype=np.int64)
    used = np.zeros(k_objs, dtype=np.bool_)
    for r in range(n):
        s = agent[r]
        c = 0
        for i in range(k_objs):
            for j in range(i + 1, k_objs):
                a, b = objs[r, i], objs[r, j]
                if a > b:
                    a, b = b, a
                if a == b or not some[a, b]:
                    continue
                q = rep[a, b, s]
                if q >= 0 and excess[a, b, q] > 0:
                    vals[c] = excess[a, b, q]
                    first[c] = i
                    second[c] = j
                    c += 1
        if c == 0:
            continue
        order = np.argsort(-vals[:c])
        used[:] = False
        total = 0
        for t in range(c):
            e = order[t]
            if not used[first[e]] and not used[second[e]]:
                used[first[e]] = True
                used[second[e]] = True
                total += vals[e]
        out[r] = total
