"""The push geometry of a pushing model (``Model.corrals``), read off its ground actions.

PI-corral pruning (:mod:`.corrals`) and the frozen-target bound (:mod:`.frozen`) both reason about
the same things: the squares the agent walks (the walk graph the IR analysis found,
:mod:`.walkgraph`), the declared objects and targets, and each push read as "agent on ``p``,
object on ``x``: agent to ``x``, object to ``y``".  Reading them once, here, keeps either user from
depending on the other, and refuses a task whose other actions do not read that way with a model
error naming the declaration.  Nothing here knows a puzzle.
"""

from __future__ import annotations

import numpy as np

from ..ir.task import Task
from ..lang.errors import ModelError
from ..lang.expr import conjuncts
from .walkgraph import WalkGraph, _var_eq_const


class PushGeometry:
    """Squares, adjacency, targets, the pushes by square (``push_start``/``push_p``/``push_y``) and
    by destination (``in_start``/``in_p``/``in_x``), and per rest action the pushed object's square
    and destination (``x``, ``y``)."""

    def __init__(self, task: Task, graph: WalkGraph, rest: list[int]):
        decl = task.corrals
        assert decl is not None
        where = decl.origin

        def refuse(why: str) -> ModelError:
            return ModelError(f"corrals(): {why}", *where)

        def not_a_push(label: str) -> ModelError:
            return refuse(f"action {label} is not a push (agent on p, object on x: agent to x, object to y)")

        if graph.selector is not None or graph.agents != [decl.agent]:
            raise refuse("the walks must move the declared agent alone")
        lo, size = graph.lo, graph.size
        for v in decl.objects:
            vlo, vhi = task.variables[v].lo, task.variables[v].hi
            if vlo < lo or vhi >= lo + size:
                raise refuse(f"object {task.variables[v].name} takes values outside the agent's")
        self.lo, self.size = lo, size
        self.objects = np.array(decl.objects, dtype=np.int64)
        self.target = np.zeros(size, dtype=np.bool_)
        for t in decl.targets:
            if not lo <= t < lo + size:
                raise refuse(f"target {t} is not a value of the agent")
            self.target[t - lo] = True
        edges = set(zip(graph.src.tolist(), graph.dst.tolist()))
        und = sorted(edges | {(b, a) for a, b in edges})
        self.adj_start, self.adj = csr(size, und)
        objects = set(decl.objects)
        px, py, pp = [], [], []
        for a in rest:
            act = task.actions[a]
            moved = {e.var: e for e in act.effects}
            obj = [v for v in moved if v in objects]
            eqs = dict(q for c in conjuncts(act.guard) if (q := _var_eq_const(c)) is not None)
            if (len(moved) != 2 or decl.agent not in moved or len(obj) != 1
                    or any(e.cond is not None or not e.value.is_const for e in act.effects)
                    or decl.agent not in eqs or obj[0] not in eqs):
                raise not_a_push(act.label)
            p, x = eqs[decl.agent] - lo, eqs[obj[0]] - lo
            to_agent, y = int(moved[decl.agent].value.val) - lo, int(moved[obj[0]].value.val) - lo  # type: ignore[arg-type]
            if to_agent != x or y == x or (p, x) not in edges:
                raise not_a_push(act.label)
            px.append(x)
            py.append(y)
            pp.append(p)
        self.x = np.array(px, dtype=np.int64)          # per rest action: the pushed object's square,
        self.y = np.array(py, dtype=np.int64)          # where it goes,
        by_x = sorted(set(zip(px, pp, py)))            # and the distinct pushes by square
        self.push_start = np.searchsorted(np.array([b[0] for b in by_x], dtype=np.int64),
                                          np.arange(size + 1)).astype(np.int64)
        self.push_p = np.array([b[1] for b in by_x], dtype=np.int64)
        self.push_y = np.array([b[2] for b in by_x], dtype=np.int64)
        # the same pushes by destination y, for the backward searches: in_p / in_x of in_start[y]:
        push_x = np.repeat(np.arange(size, dtype=np.int64), np.diff(self.push_start))
        order = np.argsort(self.push_y, kind="stable")
        self.in_start = np.searchsorted(self.push_y[order], np.arange(size + 1)).astype(np.int64)
        self.in_p = np.ascontiguousarray(self.push_p[order])
        self.in_x = np.ascontiguousarray(push_x[order])


def csr(size: int, pairs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Undirected pairs as CSR: ``start[v]:start[v + 1]`` indexes the neighbours of ``v``."""
    src = np.array([a for a, _ in pairs], dtype=np.int64)
    dst = np.array([b for _, b in pairs], dtype=np.int64)
    order = np.argsort(src, kind="stable")
    return np.searchsorted(src[order], np.arange(size + 1)).astype(np.int64), dst[order]
