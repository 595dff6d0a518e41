"""Macro walking: expand a state by closing it under the model's walk actions first.

Sokoban solvers and DDD-Kwirk do not store a state per square the player
walks: from a stored state they compute every square reachable by walking
(with its distance), apply the pushes from each, and store only the states
after a push.  ``MacroKernel`` does this for any model that declares walk
schemas (``Model.walks``), over the same kernels the plain engines use:

* a successor is (state after a non-walk action, cost = walking distance
  times the walk cost + that action's cost), or a goal state reached by
  walking alone (action ``GOAL_WALK``);
* the optimum is unchanged for *any* choice of walk actions: every plan is a
  sequence of maximal walks separated by other actions, and the closure
  enumerates every walk of every length by breadth-first layers (the walk
  actions share one cost, so layer = distance);
* with zero-cost walks declared reversible, the closure of a state is its
  equivalence class, and the smallest packed key in it stands for the whole
  class (the "normalised player position"), so the engines store one state
  per walking region;
* plans come back in unit steps: :meth:`MacroKernel.concretise` re-finds each
  walk by a breadth-first search between two recorded states.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..encodings.kernel import Kernel, make_kernel
from ..lang.errors import ModelError
from ..lang.expr import walk as nodes_of
from .corrals import CorralPruner
from .frozen import DEAD, FrozenBound, frozen_on_targets
from .pairs import PairDeadlocks
from .pushes import PushGeometry
from .result import Clock
from .visited import StateTable
from .walkgraph import analyse

GOAL_WALK = -1   # the action id of "walk to a goal state" on a parent chain
CHUNK = 1024     # origins per closure: their walk regions stay in memory together


class MacroKernel:
    """A kernel over post-action states: what bestfirst uses of ``Kernel`` (``expand_costs``, goal, ...)."""

    def __init__(self, base: Kernel, normalise: bool = True, graph: bool = True, backend: str | None = None,
                 corrals: bool = True, frozen: bool = True, pairs: bool = True):
        task = base.task
        walk = sorted(set(task.walk_actions))
        if not walk:
            raise ModelError("macro walking needs walk actions (Model.walks)")
        grouped = {v for g in task.groups for obj in g for v in obj}
        if any(e.var in grouped for i in walk for e in task.actions[i].effects):
            # concretise() re-walks from the real state, a permutation of the stored one: the walks
            # must look the same from both, which holds when they leave the objects' order alone
            raise ModelError("walk actions must not move interchangeable objects (Model.walks)")
        rest = [i for i in range(len(task.actions)) if i not in set(walk)]
        self.base = base
        self.task = task
        self.clock: Clock | None = None   # set by the engine: long batches stop at its deadline
        self.backend = backend or base.backend    # of the sub-kernels (the base may be numpy: no compile)
        self.layout = base.layout
        self.n_words = base.n_words
        self.n_vars = base.n_vars
        self.costs = base.costs
        self.walk_idx = np.array(walk, dtype=np.int64)
        self.rest_idx = np.array(rest, dtype=np.int64)
        self.step = int(task.actions[walk[0]].cost)
        sub = dict(walk_actions=[], heuristic=None)
        self._walk_task = replace(task, actions=[task.actions[i] for i in walk], **sub)
        self._walker: Kernel | None = None
        self.mover = make_kernel(replace(task, actions=[task.actions[i] for i in rest], **sub), self.backend,
                                 fallback=True)
        # goal, heuristic, canonical form and keys of the states a search stores: compiled like the
        # sub-kernels where the base is numpy (api.solve passes the numpy kernel, so that the whole
        # task is never compiled), through a kernel of the task without actions, which compiles in
        # seconds (docs/architecture.md, "Macro walking", has what it saved on a benchmark board).
        self.evaluator = base
        if self.backend != "numpy" and base.backend == "numpy":
            self.evaluator = make_kernel(replace(task, actions=[], walk_actions=[]), self.backend,
                                         fallback=True)
        self.normalise = bool(normalise and self.step == 0 and task.walk_reversible)
        written = {e.var for i in walk for e in task.actions[i].effects}
        read = {int(n.val) for n in nodes_of([task.goal]) if n.op == "var"}  # type: ignore[arg-type]
        self.goal_walks = bool(written & read)   # can walking alone make (or unmake) the goal?
        self.walk_states = 0    # states visited by closures (reported by the engines)
        self.graph = analyse(task) if graph else None   # the fast closure, where the walks allow it
        if self.graph is not None and self.graph.bits is None and self.backend != "numpy":
            self.graph.use_kernel(task, self.backend)
        # PI-corral pruning (Model.corrals): sound only where walking is free and folded into one
        # state per region, i.e. when normalised (docs/architecture.md, "Corral pruning")
        self.corrals: CorralPruner | None = None
        geometry = None
        if task.corrals is not None and (self.graph is not None or self.normalise):
            if self.graph is None:
                raise ModelError("corrals(): the walks must move one agent over a fixed graph",
                                 *task.corrals.origin)
            geometry = PushGeometry(task, self.graph, rest)
        if corrals and self.normalise and geometry is not None:
            self.corrals = CorralPruner(geometry)
        # the same declaration bounds the pushes left where objects froze on targets (frozen.py):
        # admissible whatever walks cost, taken as a max with the model's own heuristic
        self.frozen: FrozenBound | None = None
        if frozen and geometry is not None and task.heuristic is not None:
            push_cost = int(min(self.costs[i] for i in rest))
            self.frozen = FrozenBound(geometry, task.corrals.agent, push_cost)
        # ... and says which pairs of objects can never both reach targets (pairs.py): dead states
        self.pairs: PairDeadlocks | None = None
        if pairs and geometry is not None and task.heuristic is not None and PairDeadlocks.fits(geometry):
            self.pairs = PairDeadlocks(geometry, task.corrals.agent, lone=self.frozen)
        self.geometry = geometry
        # the engines' tie-break among states of equal f and g: objects frozen on targets, then
        # objects on targets (each 0..objects), as one number below tie_range
        self.tie_range = (int(geometry.objects.size) + 1) ** 2 if geometry is not None else 1

    @property
    def walker(self) -> Kernel:
        """The walk actions' kernel: compiled only when the generic closure needs it (plans use numpy)."""
        if self._walker is None:
            self._walker = make_kernel(self._walk_task, "numpy" if self.graph is not None else self.backend,
                                       fallback=True)
        return self._walker

    # the closure ------------------------------------------------------------------
    def closure(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every state walkable from each row of S: (states, origin row, walking cost), origins first."""
        if self.graph is not None:
            out = self.graph.closure(S, self.step)
            self.walk_states += out[0].shape[0]
            return out
        n = S.shape[0]
        table = StateTable(self.n_words + 1, capacity=4 * n + 16)
        origin = np.arange(n, dtype=np.int64)
        table.insert(self._okeys(S, origin))
        states, origins, dists = [S], [origin], [np.zeros(n, dtype=np.int64)]
        F, Fo, d = S, origin, 0
        while F.shape[0]:
            succ, par, _ = self.walker.expand(F)
            if succ.shape[0] == 0:
                break
            o = Fo[par]
            _, new = table.insert(self._okeys(succ, o))
            F, Fo = succ[new], o[new]
            d += self.step
            states.append(F)
            origins.append(Fo)
            dists.append(np.full(F.shape[0], d, dtype=np.int64))
        self.walk_states += table.size
        return np.concatenate(states), np.concatenate(origins), np.concatenate(dists)

    def _okeys(self, S: np.ndarray, origin: np.ndarray) -> np.ndarray:
        K = self.evaluator.canon_pack(S)
        return np.ascontiguousarray(np.hstack([origin.astype(np.uint64)[:, None], K]))

    def _tick(self) -> None:
        if self.clock is not None:
            self.clock.check()

    # the kernel interface ---------------------------------------------------------
    def expand_costs(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        succs, pars, acts, costs = [], [], [], []
        for lo in range(0, S.shape[0], CHUNK):
            self._tick()
            if self.corrals is None:
                C, origin, dist = self.closure(S[lo: lo + CHUNK])
                succ, par, act = self.mover.expand(C)
            else:
                C, origin, dist, succ, par, act = self._pruned(S[lo: lo + CHUNK])
            gact = self.rest_idx[act]
            succs.append(succ)
            pars.append(origin[par] + lo)
            acts.append(gact)
            costs.append(dist[par] + self.costs[gact])
            if not self.goal_walks or self.normalise:   # normalised: goal() looks at the whole region
                continue
            walked = np.arange(S[lo: lo + CHUNK].shape[0], C.shape[0])
            if walked.size:
                hit = walked[self.evaluator.goal(C[walked])]
                succs.append(C[hit])
                pars.append(origin[hit] + lo)
                acts.append(np.full(hit.size, GOAL_WALK, dtype=np.int64))
                costs.append(dist[hit])
        if not succs:
            z = np.zeros(0, dtype=np.int64)
            return np.zeros((0, self.n_vars), dtype=np.int64), z, z.copy(), z.copy()
        return np.concatenate(succs), np.concatenate(pars), np.concatenate(acts), np.concatenate(costs)

    def _pruned(self, S: np.ndarray) -> tuple[np.ndarray, ...]:
        """closure + pushes as in expand_costs, cut to one PI-corral's pushes where a row has one."""
        assert self.corrals is not None and self.graph is not None
        regions = self.graph.regions(S)
        label, chosen = self.corrals.regions(S, regions[0] >= 0)
        C, origin, dist = self.graph.closure(S, self.step, regions)
        self.walk_states += C.shape[0]
        succ, par, act = self.mover.expand(C)
        keep = self.corrals.keep(label, chosen, origin[par], act)
        cut = chosen > 0
        self.corrals.pruned_states += int(np.count_nonzero(cut))
        alive = np.zeros(S.shape[0], dtype=bool)
        alive[origin[par[keep]]] = True
        self.corrals.dead_states += int(np.count_nonzero(cut & ~alive))
        return C, origin, dist, succ[keep], par[keep], act[keep]

    def goal(self, S: np.ndarray) -> np.ndarray:
        if not (self.normalise and self.goal_walks):
            return self.evaluator.goal(S)
        out = np.zeros(S.shape[0], dtype=bool)
        for lo in range(0, S.shape[0], CHUNK):
            self._tick()
            C, origin, _ = self.closure(S[lo: lo + CHUNK])
            out[lo + origin[self.evaluator.goal(C)]] = True
        return out

    def heuristic(self, S: np.ndarray) -> np.ndarray:
        h = self.evaluator.heuristic(S)
        if self.frozen is not None and S.shape[0]:
            h = np.maximum(h, self.frozen.bound(S))
        if self.pairs is not None and S.shape[0]:
            if self.pairs.lone is not None:
                h = np.maximum(h, self.pairs.bound(S))
            h = np.where(self.pairs.dead(S), DEAD, h)
        return h

    def tiebreak(self, S: np.ndarray) -> np.ndarray:
        """Per row, (objects frozen on targets) * (objects + 1) + (objects on targets); 0 without
        ``Model.corrals``.  Among states of equal f and g the engines take the largest first, so
        that a last f layer dives towards states that look finished.  Frozen first: an object
        frozen on a target is progress no later push undoes, while one merely standing on a
        target may be in the way (measured: docs/architecture.md, "Tie-break")."""
        g = self.geometry
        n = S.shape[0]
        if g is None or n == 0:
            return np.zeros(n, dtype=np.int64)
        objs = np.ascontiguousarray(S[:, g.objects] - g.lo)
        frozen = np.zeros(n, dtype=np.int64)
        frozen_on_targets(objs, g.push_start, g.push_p, g.push_y, g.target, frozen)
        on = np.count_nonzero(g.target[objs], axis=1)
        return frozen * (g.objects.size + 1) + on

    def canonical(self, S: np.ndarray) -> np.ndarray:
        S = self.evaluator.canonical(S)
        if not self.normalise or S.shape[0] == 0:
            return S
        return self.evaluator.unpack(self.canon_pack(S))

    def pack(self, S: np.ndarray) -> np.ndarray:
        return self.evaluator.pack(S)

    def unpack(self, K: np.ndarray) -> np.ndarray:
        return self.evaluator.unpack(K)

    def canon_pack(self, S: np.ndarray) -> np.ndarray:
        if not self.normalise:
            return self.evaluator.canon_pack(S)
        out = np.empty((S.shape[0], self.n_words), dtype=np.uint64)
        # walks never move interchangeable objects (checked in __init__), so every state walkable
        # from a canonical state is canonical: sort once per origin, then only pack the region
        S = self.evaluator.canonical(S)
        if self.graph is not None:      # the region's least key without listing the region
            for lo in range(0, S.shape[0], CHUNK):
                self._tick()
                T, n = self.graph.least(S[lo: lo + CHUNK])
                self.walk_states += n
                out[lo: lo + T.shape[0]] = self.evaluator.pack(T)
            return out
        for lo in range(0, S.shape[0], CHUNK):
            self._tick()
            C, origin, _ = self.closure(S[lo: lo + CHUNK])
            K = self.evaluator.pack(C)
            # the least key of each origin's region: sort by (origin, key words), take each first
            order = np.lexsort(tuple(K[:, w] for w in reversed(range(self.n_words))) + (origin,))
            o = origin[order]
            first = np.ones(o.size, dtype=bool)
            first[1:] = o[1:] != o[:-1]
            out[lo + o[first]] = K[order[first]]
        return out

    def init_state(self) -> np.ndarray:
        return self.base.init_state()

    # plans --------------------------------------------------------------------------
    def concretise(self, keys: np.ndarray, actions: list[int], g: list[int]) -> list[int]:
        """Unit-step ground actions from the true initial state through the recorded ``keys``.

        ``g``: the recorded cost at each state.  Each step walks breadth-first from the current
        state and stops at the first layer from which a non-walk action (or, for ``GOAL_WALK``,
        the walk itself) reaches the next recorded key at the recorded cost.
        """
        # the plan is proven: rebuilding it is bounded work, not search, and a deadline passing
        # now must not lose it (it did: OutOfTime escaped from here as a traceback)
        clock, self.clock = self.clock, None
        try:
            return self._concretise(keys, actions, g)
        finally:
            self.clock = clock

    def _concretise(self, keys: np.ndarray, actions: list[int], g: list[int]) -> list[int]:
        state = self.base.init_state()
        plan: list[int] = []
        for step, a in enumerate(actions):
            want, edge = keys[step + 1], g[step + 1] - g[step]
            walk, state = self._one_step(state, a, want, edge)
            if walk is None:
                raise ModelError(f"step {step + 1}: no walk and action reproduce the searched transition; "
                                 "the model's walks() or interchangeable() declaration is unsound")
            plan += walk
        if self.normalise and self.goal_walks and not self.base.goal(state)[0]:
            walk, state = self._one_step(state, GOAL_WALK, None, 0)
            if walk is None:
                raise ModelError("no walk reaches the goal from the last recorded state")
            plan += walk
        return plan

    def _one_step(self, state: np.ndarray, a: int, want: np.ndarray | None,
                  edge: int) -> tuple[list[int] | None, np.ndarray]:
        parent, wact = [np.array([-1])], [np.array([-1])]
        table = StateTable(self.n_words)
        table.insert(self.base.canon_pack(state))
        layer, d, base_id = state, 0, 0
        while layer.shape[0]:
            hit = self._match(layer, a, want, edge - d)
            if hit is not None:
                r, act, nxt = hit
                path = [act] if act != GOAL_WALK else []
                allp, alla = np.concatenate(parent), np.concatenate(wact)
                i = base_id + r
                while allp[i] >= 0:
                    path.append(int(alla[i]))
                    i = int(allp[i])
                path.reverse()
                return path, nxt
            succ, par, act = self.walker.expand(layer)
            _, new = table.insert(self.base.canon_pack(succ))
            parent.append(base_id + par[new])
            wact.append(self.walk_idx[act[new]])
            base_id += layer.shape[0]
            layer = succ[new]
            d += self.step
            if self.step and d > edge:
                break
        return None, state

    def _match(self, layer: np.ndarray, a: int, want: np.ndarray | None,
               left: int) -> tuple[int, int, np.ndarray] | None:
        if a == GOAL_WALK:    # want None: any goal state
            if left != 0:
                return None
            ok = np.flatnonzero(self.base.goal(layer) if want is None
                                else (self.canon_pack(layer) == want).all(axis=1))
            return (int(ok[0]), GOAL_WALK, layer[ok[0]: ok[0] + 1]) if ok.size else None
        succ, par, act = self.mover.expand(layer)
        if succ.shape[0] == 0:
            return None
        gact = self.rest_idx[act]
        ok = np.flatnonzero((self.canon_pack(succ) == want).all(axis=1) & (self.costs[gact] == left))
        if ok.size == 0:
            return None
        same = ok[gact[ok] == a]
        pick = int(same[0] if same.size else ok[0])
        return int(par[pick]), int(gact[pick]), succ[pick: pick + 1]
