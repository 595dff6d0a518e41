"""PI-corral pruning for pushing puzzles (``Model.corrals``), under macro walking.

Solvers of pushing puzzles (Junghanns & Schaeffer's Rolling Stone, YASS) expand far fewer pushes
than there are: when an area is walled off from the agent by objects, every object on its
boundary can only ever be pushed into it, and each such push can be reached now, some optimal
plan starts with one of those pushes.  So only they are expanded.  The argument (docs/architecture.md, "Corral
pruning") needs zero-cost walks that the engines fold into one state per walking region, which
is where :class:`~.macro.MacroKernel` calls this.

Nothing here knows a puzzle: the geometry (:mod:`.pushes`) comes from the declaration (agent,
objects, targets), the walk graph the IR analysis found, and the ground push actions.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .pushes import PushGeometry


class CorralPruner:
    """Per expanded state, which of its pushes to keep: ``keep(...)`` after ``regions(...)``."""

    def __init__(self, geo: PushGeometry):
        self.geo = geo
        self.pruned_states = 0      # expanded states whose pushes were cut to one corral's
        self.dead_states = 0        # ... of which none was left: no plan from there

    def regions(self, S: np.ndarray, reach: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(label, chosen): per row of ``S`` the areas walled off from the agent (``label[r, v]``:
        area number, 0 for the agent's own area and for squares with an object) and the PI-corral
        kept (``chosen[r]``: its area number; 0 when the row has none: nothing is pruned)."""
        g = self.geo
        objs = np.ascontiguousarray(S[:, g.objects] - g.lo)
        label = np.zeros((S.shape[0], g.size), dtype=np.int32)
        chosen = np.zeros(S.shape[0], dtype=np.int32)
        _pi_corrals(objs, np.ascontiguousarray(reach), g.adj_start, g.adj, g.target,
                    g.push_start, g.push_p, g.push_y, label, chosen)
        return label, chosen

    def keep(self, label: np.ndarray, chosen: np.ndarray, origin: np.ndarray, act: np.ndarray) -> np.ndarray:
        """Which pushes (``act``: rest-action index, from state row ``origin``) survive: all of a
        row without a PI-corral, else those that push into its corral."""
        c = chosen[origin]
        return (c == 0) | (label[origin, self.geo.y[act]] == c)


@nb.njit(cache=True, nogil=True)
def _pi_corrals(objs, reach, adj_start, adj, target, push_start, push_p, push_y, label, chosen):  # noqa: ANN001, ANN201
    """Fill ``label`` and ``chosen`` (see ``CorralPruner.regions``) row by row.

    A corral is a union U of areas (connected squares free of objects that the agent cannot walk
    to); its boundary objects are the objects next to U.  It qualifies when (I) every push of a
    boundary object from a square outside U that is not itself a boundary object either goes into
    U or onto another boundary object (blocked until one of them moves), (P) the agent can walk now
    to the square of every such push into U, and it is unsolved (a target in U, or a boundary
    object off its target).  From each area, areas are merged in while a push fails (I) or (P)
    only because its square lies in another area; of the qualifying corrals the one with the
    fewest pushes into it is chosen, and ``label`` is rewritten so that its areas share its number.
    """
    n, size = reach.shape
    occ = np.zeros(size, dtype=np.bool_)
    bar = np.zeros(size, dtype=np.int64)
    sq = np.empty(size, dtype=np.int64)            # squares of each area, area by area
    start = np.zeros(size + 2, dtype=np.int64)     # area c: sq[start[c]:start[c + 1]]
    members = np.empty(size, dtype=np.int64)       # boundary objects of the corral being checked
    inside = np.zeros(size + 1, dtype=np.int64)    # area -> stamp of the corral it was merged into
    best_in = np.zeros(size + 1, dtype=np.bool_)
    stamp = 0
    stamp_b = 0
    for r in range(n):
        occ[:] = False
        for k in range(objs.shape[1]):
            occ[objs[r, k]] = True
        areas, tail = 0, 0
        for v0 in range(size):                     # label the areas
            if occ[v0] or reach[r, v0] or label[r, v0] != 0:
                continue
            areas += 1
            start[areas] = tail
            label[r, v0] = areas
            sq[tail] = v0
            head = tail
            tail += 1
            while head < tail:
                v = sq[head]
                head += 1
                for k in range(adj_start[v], adj_start[v + 1]):
                    w = adj[k]
                    if not occ[w] and label[r, w] == 0:
                        label[r, w] = areas
                        sq[tail] = w
                        tail += 1
        start[areas + 1] = tail
        best_count = -1
        for c0 in range(1, areas + 1):
            stamp += 1
            inside[c0] = stamp
            while True:
                stamp_b += 1                       # boundary objects of the union: bar[w] == stamp_b
                unsolved = False
                nb_ = 0
                for c in range(1, areas + 1):
                    if inside[c] != stamp:
                        continue
                    for i in range(start[c], start[c + 1]):
                        v = sq[i]
                        if target[v]:
                            unsolved = True
                        for k in range(adj_start[v], adj_start[v + 1]):
                            w = adj[k]
                            if occ[w] and bar[w] != stamp_b:
                                bar[w] = stamp_b
                                members[nb_] = w
                                nb_ += 1
                                if not target[w]:
                                    unsolved = True
                ok = True
                merge = 0
                count = 0
                for i in range(nb_):
                    x = members[i]
                    for k in range(push_start[x], push_start[x + 1]):
                        p, y = push_p[k], push_y[k]
                        lp, ly = label[r, p], label[r, y]
                        if (lp != 0 and inside[lp] == stamp) or (occ[p] and bar[p] == stamp_b):
                            continue                # the agent cannot stand there first
                        if ly != 0 and inside[ly] == stamp:
                            if not reach[r, p]:
                                ok = False          # (P) fails
                                merge = lp
                                break
                            count += 1
                        elif not (occ[y] and bar[y] == stamp_b):
                            ok = False              # (I) fails
                            merge = ly
                            break
                    if not ok:
                        break
                if ok or merge == 0:
                    break
                inside[merge] = stamp               # the push's square lies in another area: add it
            if ok and unsolved and (best_count < 0 or count < best_count):
                best_count = count
                for c in range(1, areas + 1):
                    best_in[c] = inside[c] == stamp
        if best_count < 0:
            chosen[r] = 0
            continue
        first = 0
        for c in range(1, areas + 1):
            if best_in[c] and first == 0:
                first = c
        for v in range(size):
            lv = label[r, v]
            if lv != 0 and best_in[lv]:
                label[r, v] = first
        chosen[r] = first
