"""A lower bound for pushing puzzles that sees objects frozen on their targets (``Model.corrals``).

A pushing model's own heuristic (typically the cheapest assignment of objects to targets by
lone-object push distances) treats every other object as absent. Late in a search, though, many
states have objects that can never move again: an object whose every push needs a square held by
another such object. Frozen off a target, the state is dead; frozen on one, the object is a wall
for good, and the rest of the plan happens on the smaller board -- where the remaining objects'
distances can only be longer, and packings done in the wrong order show up as dead at once instead
of pushes later. Solvers of pushing puzzles (YASS, JSoko) draw this bound; here it is drawn from
the declaration and the ground push actions alone (:class:`~.pushes.PushGeometry` reads them),
never from a puzzle.

Why it is admissible (docs/architecture.md, "Frozen targets"): the frozen set ``F`` is the
greatest set of objects each of whose pushes ``(p, x, y)`` has ``p`` or ``y`` in ``F``; the first
of them to move would need that square empty, so none ever moves.  Every continuation is then a
plan on the board without ``F``'s squares, with the objects outside ``F`` onto the targets outside
``F``, and each of those objects needs at least its lone-object push distance on that board
(agent-aware, as the model's) to the target it ends on: the cheapest assignment bounds the pushes
still needed, times the cheapest push's cost bounds the cost.  The frozen set only grows along a
plan, so the bound never drops by more than one push per push.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..encodings.jitlib import _assign
from .pushes import PushGeometry
from .result import NO_PLAN

DEAD = NO_PLAN      # the bound of a state with no plan: past any cost g + h can hold
UNREACHABLE = 1 << 40     # an assignment entry "never" (a sum of 64 of them still fits in int64)
CACHE = 2048        # frozen sets whose tables are kept (a few tens of KB each)


class FrozenBound:
    """``bound(S)``: per state row, a lower bound on the cost still needed (``DEAD``: none)."""

    def __init__(self, geo: PushGeometry, agent: int, push_cost: int):
        self.geo = geo
        self.agent = agent
        self.push_cost = int(push_cost)
        size = geo.size
        deg = np.diff(geo.adj_start)
        self.width = int(deg.max(initial=0)) + 1            # parts per square, and "none" last
        self.part_type = np.int8 if self.width <= np.iinfo(np.int8).max else np.int32
        self.targets = np.flatnonzero(geo.target).astype(np.int64)
        self.words = (size + 63) // 64
        self.cache: dict[bytes, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.bounded = 0    # states with objects frozen on targets: the bound was computed for them
        self.dead = 0       # states found dead (an object frozen off its target, or one cut off)

    def bound(self, S: np.ndarray) -> np.ndarray:
        g = self.geo
        n = S.shape[0]
        out = np.zeros(n, dtype=np.int64)
        if n == 0:
            return out
        objs = np.ascontiguousarray(S[:, g.objects] - g.lo)
        masks = np.zeros((n, self.words), dtype=np.uint64)
        dead = np.zeros(n, dtype=np.bool_)
        _frozen_rows(objs, g.push_start, g.push_p, g.push_y, g.target, masks, dead)
        some = np.flatnonzero(~dead & masks.any(axis=1))
        if some.size:
            agent = np.ascontiguousarray(S[some, self.agent] - g.lo)
            uniq, inv = np.unique(masks[some], axis=0, return_inverse=True)
            order = np.argsort(inv.reshape(-1), kind="stable")    # the rows of each set together
            bounds = np.concatenate(([0], np.cumsum(np.bincount(inv.reshape(-1), minlength=uniq.shape[0]))))
            for u in range(uniq.shape[0]):
                rows = order[bounds[u]: bounds[u + 1]]
                blocked, parts, dist = self._tables(uniq[u])
                h = np.zeros(rows.size, dtype=np.int64)
                _bound_rows(objs[some[rows]], agent[rows], blocked, parts, dist, self.width, h)
                out[some[rows]] = np.where(h >= UNREACHABLE, DEAD, h * self.push_cost)
            self.bounded += int(some.size)
        out[dead] = DEAD
        self.dead += int(np.count_nonzero(out >= DEAD))
        return out

    def _tables(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        key = mask.tobytes()
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        g = self.geo
        sq = np.arange(g.size, dtype=np.int64)
        blocked = ((mask[sq >> 6] >> (sq & 63).astype(np.uint64)) & np.uint64(1)).astype(np.bool_)
        free_targets = self.targets[~blocked[self.targets]]
        parts = np.empty((g.size, g.size), dtype=self.part_type)
        dist = np.empty((free_targets.size, g.size * self.width), dtype=np.int32)
        _part_tables(blocked, g.adj_start, g.adj, g.in_start, g.in_p, g.in_x, free_targets,
                     self.width, parts, dist)
        if len(self.cache) >= CACHE:
            self.cache.clear()
        self.cache[key] = (blocked, parts, dist)
        return blocked, parts, dist


@nb.njit(cache=True, nogil=True)
def _frozen_rows(objs, push_start, push_p, push_y, target, masks, dead):  # noqa: ANN001, ANN201
    """Per row: the greatest set of objects each of whose pushes needs a square held by another
    member (start from all objects, drop any with a push free of members, until none drops).
    Members on targets go into ``masks`` (a bit per square); a member off its target: ``dead``."""
    n, k_objs = objs.shape
    inside = np.zeros(target.shape[0], dtype=np.bool_)
    for r in range(n):
        _freeze(objs[r], push_start, push_p, push_y, inside)
        for k in range(k_objs):
            x = objs[r, k]
            if inside[x]:
                inside[x] = False
                if not target[x]:
                    dead[r] = True
                masks[r, x >> 6] |= np.uint64(1) << np.uint64(x & 63)


@nb.njit(cache=True, nogil=True)
def frozen_on_targets(objs, push_start, push_p, push_y, target, out):  # noqa: ANN001, ANN201
    """Per row: how many objects of the frozen set stand on targets (the engines' tie-break)."""
    n, k_objs = objs.shape
    inside = np.zeros(target.shape[0], dtype=np.bool_)
    for r in range(n):
        _freeze(objs[r], push_start, push_p, push_y, inside)
        c = 0
        for k in range(k_objs):
            x = objs[r, k]
            if inside[x]:
                inside[x] = False
                c += target[x]
        out[r] = c


@nb.njit(cache=True, nogil=True)
def _freeze(row, push_start, push_p, push_y, inside):  # noqa: ANN001, ANN201
    """Mark in ``inside`` the frozen set of one row's objects: start from all of them, drop any
    with a push free of members, until none drops.  The caller clears the marks."""
    k_objs = row.shape[0]
    for k in range(k_objs):
        inside[row[k]] = True
    changed = True
    while changed:
        changed = False
        for k in range(k_objs):
            x = row[k]
            if not inside[x]:
                continue
            for i in range(push_start[x], push_start[x + 1]):
                if not inside[push_p[i]] and not inside[push_y[i]]:
                    inside[x] = False
                    changed = True
                    break


@nb.njit(cache=True, nogil=True)
def _part_tables(blocked, adj_start, adj, in_start, in_p, in_x, free_targets, width, parts, dist):  # noqa: ANN001, ANN201
    """``parts[c, s]``: which part of the board, without the blocked squares and ``c``, square
    ``s`` lies in, numbered among those touching ``c`` (``width - 1``: touching none, the agent
    there never reaches an object on ``c``).  ``dist[t, c * width + q]``: fewest pushes taking a
    lone object from ``c``, the agent in part ``q``, to the ``t``-th free target (-1: never);
    backwards from the target, as the model's own table is built."""
    size = blocked.shape[0]
    none = width - 1
    stack = np.empty(size, dtype=np.int64)
    for c in range(size):
        for s in range(size):
            parts[c, s] = none
        if blocked[c]:
            continue
        label = 0
        for k in range(adj_start[c], adj_start[c + 1]):
            s0 = adj[k]
            if blocked[s0] or parts[c, s0] != none:
                continue
            parts[c, s0] = label
            top = 0
            stack[top] = s0
            top += 1
            while top > 0:
                top -= 1
                v = stack[top]
                for j in range(adj_start[v], adj_start[v + 1]):
                    w = adj[j]
                    if w != c and not blocked[w] and parts[c, w] == none:
                        parts[c, w] = label
                        stack[top] = w
                        top += 1
            label += 1
    queue = np.empty(size * width, dtype=np.int64)
    for t in range(free_targets.shape[0]):
        d = dist[t]
        d[:] = -1
        goal = free_targets[t]
        head, tail = 0, 0
        for q in range(width):
            d[goal * width + q] = 0
            queue[tail] = goal * width + q
            tail += 1
        while head < tail:
            key = queue[head]
            head += 1
            y, q = key // width, key % width
            for i in range(in_start[y], in_start[y + 1]):
                p, x = in_p[i], in_x[i]
                if blocked[x] or blocked[p] or parts[y, x] != q:
                    continue
                prev = x * width + parts[x, p]
                if d[prev] < 0:
                    d[prev] = d[key] + 1
                    queue[tail] = prev
                    tail += 1


@nb.njit(cache=True, nogil=True)
def _bound_rows(objs, agent, blocked, parts, dist, width, out):  # noqa: ANN001, ANN201
    """Per row: the cheapest assignment of the unblocked objects to the free targets by ``dist``
    (``UNREACHABLE`` or more where an object reaches none, or no assignment is finite)."""
    n, k_objs = objs.shape
    m = dist.shape[0]
    cost = np.empty(m * m, dtype=np.int64)
    for r in range(n):
        i = 0
        dead = False
        for k in range(k_objs):
            x = objs[r, k]
            if blocked[x]:
                continue
            if i >= m:          # more free objects than free targets: not a state of the declaration
                dead = True
                break
            q = parts[x, agent[r]]
            any_ = False
            for j in range(m):
                v = dist[j, x * width + q]
                if v < 0:
                    cost[i * m + j] = UNREACHABLE
                else:
                    cost[i * m + j] = v
                    any_ = True
            if not any_:
                dead = True
                break
            i += 1
        if dead:
            out[r] = UNREACHABLE
        elif i < m:
            out[r] = 0
        else:
            out[r] = _assign(cost, m)
