"""The fast closure for walks that move one agent over a fixed graph.

When every walk action reads "agent p is on a, and (something not about p)"
and sets p to a constant b, a walk changes only p, so the "something" is the
same in every state the walk reaches: evaluate it once per state for every
edge a -> b, then the walk region is a breadth-first search over those edges,
done for a whole batch of states at once with boolean matrices.  That is the
player-reachability computation of Sokoban solvers, found in the IR rather
than written for one puzzle.

Several agents (Kwirk's characters) qualify when a *selector* variable that no
walk writes (the character in control) picks the agent: every walk action of
agent k requires ``selector == v_k``, so within one walk only agent k moves and
the others' positions stay constant.  A task whose walks do not fit this shape
gets ``None`` from :func:`analyse`, and the macro kernel falls back to closing
states under the walk actions with the ordinary kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..encodings.npkernel import evaluate
from ..ir.task import Task
from ..lang.expr import And, Expr, conjuncts, substitute, variables_of
from .walkbits import EdgeBits, as_bits, bfs_bits, distinct


@dataclass
class WalkGraph:
    agents: list[int]            # per group: the variable its walks move
    selector: int | None         # the variable choosing the group (None: one group)
    sel_values: list[int]        # per group: the selector's value enabling it
    src: np.ndarray              # per edge: value the agent leaves
    dst: np.ndarray              # per edge: value it reaches
    group: np.ndarray            # per edge: its group
    rest: list[Expr]             # per edge: the rest of the guard, the agent's value substituted
    lo: int                      # smallest agent value (values are offset by it)
    size: int                    # agent values lo..lo+size-1
    _kernel: object = None       # see use_kernel
    bits: EdgeBits | None = None  # the edge conditions as bit tables (walkbits.py), where they allow it
    compiled: bool = True        # the breadth-first layers in compiled code (False: numpy, the reference)

    def __post_init__(self) -> None:
        # the distinct edge conditions, and per edge its condition's index (its action in _kernel)
        self._guards, self._edge_guard = distinct(self.rest)
        order = np.argsort(self.src, kind="stable")        # edges leaving each value, as CSR
        self._out_edges = order.astype(np.int64)
        self._out_start = np.searchsorted(self.src[order], np.arange(self.size + 1)).astype(np.int64)

    def enabled(self, S: np.ndarray) -> np.ndarray:
        """(rows, edges): which edges are open in each state."""
        return self._guard_values(S)[:, self._edge_guard]

    def _guard_values(self, S: np.ndarray) -> np.ndarray:
        """(rows, distinct conditions): which hold in each state (numpy; see ``use_kernel``)."""
        if self._kernel is not None:
            _, par, act = self._kernel.expand(S)
            en = np.zeros((S.shape[0], len(self._guards)), dtype=bool)
            en[par, act] = True
            return en
        if not self._guards:
            return np.zeros((S.shape[0], 0), dtype=bool)
        memo: dict[int, np.ndarray] = {}
        return np.stack([evaluate(r, S, memo) for r in self._guards], axis=1)

    def use_kernel(self, task: Task, backend: str) -> None:
        """Evaluate the edge conditions with a successor kernel of their own, one guard per
        distinct condition (the edges into one cell of a grid all ask whether it is free: a
        third to a quarter of the edges on the bundled grid boards).

        With the compiled backend this replaces a few hundred small numpy calls per batch by one
        compiled call: A*'s f-buckets are often a handful of states, where numpy's per-node
        overhead dominates.
        """
        from dataclasses import replace

        from ..encodings.kernel import make_kernel
        from ..ir.task import GroundAction

        acts = [GroundAction("edge", f"edge{k}", r, (), 0) for k, r in enumerate(self._guards)]
        self._kernel = make_kernel(replace(task, actions=acts, walk_actions=[], heuristic=None, groups=[]),
                                   backend, fallback=True)

    def closure(self, S: np.ndarray, step: int, regions: tuple[np.ndarray, np.ndarray] | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(states, origin row, walking cost), origins first: every state walkable from each row of S.
        ``regions``: what :meth:`regions` gave for S, where the caller needed it too."""
        dist, agent = regions if regions is not None else self.regions(S)
        rows, vals = np.nonzero(dist >= 0)
        d = dist[rows, vals].astype(np.int64)
        by = np.argsort(d, kind="stable")
        rows, vals, d = rows[by], vals[by], d[by]
        out = S[rows].copy()
        out[np.arange(rows.size), agent[rows]] = vals + self.lo
        return out, rows.astype(np.int64), d * step

    def least(self, S: np.ndarray) -> tuple[np.ndarray, int]:
        """Each row of S with its walking agent at the least value it can walk to, and the number
        of states in the regions.  A walk changes only the agent's variable, so among the states
        of one region that state has the least packed key (a variable's field grows with its
        value, and the other fields are equal): the region's representative, found without
        listing the region."""
        dist, agent = self.regions(S)
        reach = dist >= 0
        out = S.copy()
        out[np.arange(S.shape[0]), agent] = np.argmax(reach, axis=1) + self.lo
        return out, int(np.count_nonzero(reach))

    def regions(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(rows, values): each row's walking distance to every value of its agent (-1:
        unreachable), and each row's agent variable."""
        n = S.shape[0]
        if self.selector is None:
            grp = np.zeros(n, dtype=np.int64)
        else:
            sel = S[:, self.selector]
            grp = np.full(sel.shape[0], -1, dtype=np.int64)
            for g, v in enumerate(self.sel_values):      # one pass per agent, not per row
                grp[sel == v] = g
        agent = np.array(self.agents, dtype=np.int64)[np.maximum(grp, 0)]
        start = S[np.arange(n), agent] - self.lo
        dist = np.full((n, self.size), -1, dtype=np.int32)
        dist[np.arange(n), start] = 0
        frontier = np.zeros((n, self.size), dtype=bool)
        frontier[np.arange(n), start] = True
        frontier[grp < 0] = False       # no agent selected: the walk region is the state itself
        if self.compiled and self.bits is not None:
            bfs_bits(dist, frontier, self.bits.open_bits(S), self._out_start, self._out_edges, self.dst,
                     self.bits.edge_guard)
        elif self.compiled:
            bfs_bits(dist, frontier, as_bits(self._guard_values(S)), self._out_start, self._out_edges,
                     self.dst, self._edge_guard)
        else:
            bfs_numpy(dist, frontier, self.enabled(S), self.src, self.dst)
        return dist, agent


def bfs_numpy(dist: np.ndarray, frontier: np.ndarray, en: np.ndarray, src: np.ndarray,
              dst: np.ndarray) -> None:
    """Breadth-first layers for every row at once: ``dist`` (-1 = unreached) filled in place."""
    order = np.argsort(dst, kind="stable")
    dsts = dst[order]
    cuts = np.flatnonzero(np.r_[True, dsts[1:] != dsts[:-1]])
    targets = dsts[cuts]
    en = en[:, order]
    srcs = src[order]
    layer = 0
    while en.shape[1]:
        moved = frontier[:, srcs] & en
        new = np.zeros_like(frontier)
        new[:, targets] = np.logical_or.reduceat(moved, cuts, axis=1)
        new &= dist < 0
        if not new.any():
            break
        layer += 1
        dist[new] = layer
        frontier = new


def _var_eq_const(c: Expr) -> tuple[int, int] | None:
    if c.op != "eq":
        return None
    x, y = c.args
    if x.op == "var" and y.op == "const":
        return int(x.val), int(y.val)  # type: ignore[arg-type]
    if y.op == "var" and x.op == "const":
        return int(y.val), int(x.val)  # type: ignore[arg-type]
    return None


def analyse(task: Task) -> WalkGraph | None:
    """The walk graph of ``task``'s walk actions, or None when they are not single-agent moves."""
    edges = []          # (agent var, a, b, conjunct pairs, other conjuncts)
    for i in task.walk_actions:
        act = task.actions[i]
        if len(act.effects) != 1 or act.effects[0].cond is not None or not act.effects[0].value.is_const:
            return None
        p, b = act.effects[0].var, int(act.effects[0].value.val)  # type: ignore[arg-type]
        parts = conjuncts(act.guard)
        eqs = [_var_eq_const(c) for c in parts]
        here = [k for k, q in enumerate(eqs) if q is not None and q[0] == p]
        if not here:
            return None
        a = eqs[here[0]][1]  # type: ignore[index]
        others = [c for k, c in enumerate(parts) if k != here[0]]
        edges.append((p, a, b, {q for q in eqs if q is not None}, others))
    agents = sorted({e[0] for e in edges})
    selector, sel_values = None, [0]
    if len(agents) > 1:
        selector, sel_values = _selector(edges, agents)
        if selector is None:
            return None
    written = set(agents)
    rest = []
    for p, a, _, _, others in edges:
        r = substitute(And(*others), {p: a})
        reads = variables_of(r)
        if p in reads or (selector is None and reads & written):
            return None
        rest.append(r)
    lo = min(task.variables[p].lo for p in agents)
    hi = max(task.variables[p].hi for p in agents)
    return WalkGraph(agents, selector, sel_values,
                     np.array([e[1] - lo for e in edges], dtype=np.int64),
                     np.array([e[2] - lo for e in edges], dtype=np.int64),
                     np.array([agents.index(e[0]) for e in edges], dtype=np.int64),
                     rest, lo, hi - lo + 1, bits=EdgeBits.build(rest, task.var_bounds))


def _selector(edges: list, agents: list[int]) -> tuple[int | None, list[int]]:
    """A variable no walk writes whose value, required by every walk action, names its agent."""
    common: set[int] | None = None
    for e in edges:
        vs = {v for v, _ in e[3]} - set(agents)
        common = vs if common is None else common & vs
    for s in sorted(common or ()):
        values: dict[int, int] = {}
        ok = True
        for p, _, _, eqs, _ in edges:
            v = [c for var, c in eqs if var == s]
            if len(v) != 1 or values.setdefault(p, v[0]) != v[0]:
                ok = False
                break
        if ok and len(set(values.values())) == len(agents):
            return s, [values[p] for p in agents]
    return None, []
