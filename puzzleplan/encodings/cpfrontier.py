"""Breadth-first layers enumerated by CP-SAT: the ``cpsat`` engine's own frontier (:mod:`.frontier`).

Why a second enumeration: ``cpsat``'s refutation from a frontier should rest on CP-SAT alone, as
its other proofs do, not on the SAT solver that :func:`.frontier.sat_layers` drives.  One model
per layer: step 0 one of the layer's states (a table), one real step, the successor none of the
states seen so far (a forbidden table), and every solution enumerated
(``enumerate_all_solutions``); the search ending with every solution found is what closes the
layer.  The goal's literal at step 1 is read in each solution.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ortools.sat.python import cp_model

from ..ir.task import Task
from .cpsat import CpPlan
from .frontier import Layers
from .symmetry import canonical, symmetry_groups
from .unrolled import Invariants, State


class _Collect(cp_model.CpSolverSolutionCallback):
    def __init__(self, xs: list, goal: object, cap: int, stop: Callable[[], bool] | None,
                 tick: Callable[[], None] | None):
        super().__init__()
        self.xs, self.goal, self.cap, self.stop, self.tick = xs, goal, cap, stop, tick
        self.found: dict[State, bool] = {}
        self.stopped = ""

    def on_solution_callback(self) -> None:
        s = tuple(x if isinstance(x, int) else self.value(x) for x in self.xs)
        g = self.goal if isinstance(self.goal, bool) else bool(self.boolean_value(self.goal))
        self.found[s] = self.found.get(s, False) or g
        if len(self.found) > self.cap:
            self.stopped = "cap"
            self.stop_search()
        elif self.stop is not None and self.stop():
            self.stopped = "limit"
            self.stop_search()
        elif self.tick is not None:
            self.tick()


def cp_layers(task: Task, depth: int, max_layer: int, invariants: Invariants | None = None,
              stop: Callable[[], bool] | None = None,
              tick: Callable[[Layers], None] | None = None) -> Layers:
    """As :func:`.frontier.sat_layers`, by CP-SAT (module docstring); ``stop`` and ``tick`` are
    called at each solution found and before each layer's model."""
    t0 = time.perf_counter()
    out = Layers()
    init = tuple(canonical(symmetry_groups(task), task.init))
    out.layers.append([init])
    seen = {init}
    first = CpPlan(task, 0, heuristic=False, objective=False, invariants=invariants, start_states=[init],
                   goal=False)
    if _goal_holds(first, task, init):
        out.goal_at = 0
        return _finish(out, t0)
    for d in range(depth):
        if stop is not None and stop():
            out.stopped = "limit"
            return _finish(out, t0)
        if tick is not None:
            tick(out)
        layer = out.layers[-1]
        m = CpPlan(task, 1, heuristic=False, objective=False, invariants=invariants, start_states=layer,
                   goal=False)
        m.m.add(m.noops[0] == 0)
        x1 = m.x[1]
        free = [v for v, x in enumerate(x1) if not isinstance(x, int)]
        fixed = [(v, x) for v, x in enumerate(x1) if isinstance(x, int)]
        old = [tuple(s[v] for v in free) for s in seen if all(s[v] == x for v, x in fixed)]
        if old and free:
            m.m.add_forbidden_assignments([x1[v] for v in free], old)
        goal = m.boolean(task.goal, 1)
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.enumerate_all_solutions = True
        cb = _Collect(x1, goal, max_layer, stop, None if tick is None else lambda: tick(out))
        status = solver.solve(m.m, cb)
        out.calls += 1
        out.conflicts += int(solver.num_conflicts)
        complete = status in (cp_model.OPTIMAL, cp_model.INFEASIBLE)
        if cb.stopped == "limit" or (not cb.stopped and not complete):
            out.stopped = "limit"
            return _finish(out, t0)
        if cb.stopped == "cap":
            out.stopped = f"layer {d + 1} holds more than {max_layer} states"
            return _finish(out, t0)
        new = sorted(s for s in cb.found if s not in seen)
        seen.update(new)
        out.layers.append(new)
        if any(cb.found[s] for s in new):
            out.goal_at = d + 1
            return _finish(out, t0)
        if not new:
            out.stopped = f"layer {d + 1} is empty"
            break
    return _finish(out, t0)


def _goal_holds(m: CpPlan, task: Task, s: State) -> bool:
    g = m.boolean(task.goal, 0)
    if isinstance(g, bool):
        return g
    m.m.add(g == 1)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    return solver.solve(m.m) in (cp_model.OPTIMAL, cp_model.FEASIBLE)


def _finish(out: Layers, t0: float) -> Layers:
    out.seconds = time.perf_counter() - t0
    return out


__all__ = ["cp_layers"]
