"""Breadth-first layers enumerated by SAT, and the refutation that starts from the last of them.

Why: the one question that proves a unit-cost plan optimal, "a plan of at most ``H`` steps?", gets
harder fast with ``H`` (minutes at ``H = 59`` on the tasks measured), while the first breadth-first
layers of crowded boards (many pieces, few empty cells) are small (tens of canonical states per
layer there). Every path from the start to a goal farther than ``k`` steps away passes a state at
distance exactly ``k``; so once layers ``0..k`` are known and hold no goal, the question shrinks to
"a path of at most ``H - k`` steps from a state of layer ``k`` to a goal?" -- the same unrolled
formula, ``k`` steps shorter, from a set of start states instead of one (figures in
docs/architecture.md, "The frontier"). This is the explicit-state prefix of hybrid bounded model
checking; the paradigm stays the symbolic one, since every fact comes from the solver on the same
one-step clauses (no kernel, no explicit successor function):

* a layer is complete when, for each state of the layer before, "a real step from it to a
  canonical state not yet seen" is UNSAT (each state found is blocked by a clause, so every call
  but the last per state finds a new one);
* no state of layers ``0..k`` is a goal ("this state and the goal" is UNSAT for each);
* the shortened question is UNSAT (:func:`restrict_start` encodes "step 0 is one of these states").

Interchangeable objects stay sorted (canonical states, as in the one-question formula): the
distances are those of the quotient graph, which equal the real ones.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pysat.solvers import Solver

from ..ir.task import Task
from .invariants import relaxed_fixpoint
from .sat import TOP, CnfPlan
from .symmetry import canonical, symmetry_groups
from .unrolled import Invariants, State


@dataclass
class Layers:
    """``layers[d]``: the canonical states at distance ``d`` from the start, each complete (a layer left
    unfinished, ``stopped`` says why, is not kept).  ``goal_at``: the first distance holding a goal
    (the enumeration stops there), else None."""

    layers: list[list[State]] = field(default_factory=list)
    goal_at: int | None = None
    stopped: str = ""
    calls: int = 0
    conflicts: int = 0
    seconds: float = 0.0

    @property
    def depth(self) -> int:
        return len(self.layers) - 1

    @property
    def states(self) -> int:
        return sum(len(layer) for layer in self.layers)


def sat_layers(task: Task, depth: int, max_layer: int, invariants: Invariants | None = None,
               solver: str = "cadical195", stop: Callable[[], bool] | None = None,
               tick: Callable[[Layers], None] | None = None) -> Layers:
    """Layers ``0..depth`` by SAT (module docstring); stops before a layer of more than ``max_layer``
    states would be finished, at a goal, or when ``stop()`` says so (polled between solver calls).
    ``tick(layers)``, where ``stop`` is polled while a layer is being enumerated: the engine's
    progress report (every layer in it then holds no goal, so no plan has fewer than
    ``len(layers.layers)`` steps)."""
    t0 = time.perf_counter()
    out = Layers()
    groups = symmetry_groups(task)
    enc = CnfPlan(task, start=relaxed_fixpoint(task, symmetric=True), invariants=invariants,
                  sorted_start=True)
    enc.extend()
    x0, x1 = enc.x[0], enc.x[1]
    goal0 = enc.goal(0)
    real = -enc.noops[0]
    init = tuple(canonical(groups, task.init))
    out.layers.append([init])
    with Solver(name=solver, bootstrap_with=enc.drain()) as sat:
        def block(s: State) -> None:
            sat.add_clause([-lit for v, w in enumerate(s) if (lit := x1[v][w]) != TOP])

        def at(layer: list[dict[int, int]], s: State) -> list[int]:
            return [lit for v, w in enumerate(s) if (lit := layer[v][w]) != TOP]

        def is_goal(s: State) -> bool:
            # the goal's literal is only implied by the goal in some encodings: ask, do not read it
            if goal0 == TOP or goal0 == -TOP:
                return goal0 == TOP
            out.calls += 1
            return bool(sat.solve(assumptions=[goal0, *at(x0, s)]))

        block(init)
        for d in range(depth + 1):
            if any(is_goal(s) for s in out.layers[-1]):
                out.goal_at = d
                return _done(out, sat, t0)
            if d == depth:
                break
            new: list[State] = []
            for s in out.layers[-1]:
                assume = [real, *at(x0, s)]
                while True:
                    if stop is not None and stop():
                        out.stopped = "limit"
                        return _done(out, sat, t0)
                    if tick is not None:
                        tick(out)
                    out.calls += 1
                    if not sat.solve(assumptions=assume):
                        break
                    model = sat.get_model() or []   # model[i] is +-(i + 1)
                    s2 = tuple(next(w for w, lit in x1[v].items() if lit == TOP or model[abs(lit) - 1] == lit)
                               for v in range(len(x1)))
                    new.append(s2)
                    block(s2)
                    if len(new) > max_layer:
                        out.stopped = f"layer {d + 1} holds more than {max_layer} states"
                        return _done(out, sat, t0)
            out.layers.append(new)
            if not new:     # no state beyond: the goal is unreachable (the caller has a plan, so never)
                out.stopped = f"layer {d + 1} is empty"
                break
        return _done(out, sat, t0)


def _done(out: Layers, sat: Solver, t0: float) -> Layers:
    out.conflicts = int((sat.accum_stats() or {}).get("conflicts", 0))
    out.seconds = time.perf_counter() - t0
    return out


def restrict_start(enc: CnfPlan, states: Sequence[State]) -> None:
    """Step 0 of ``enc`` (built with ``start=unrolled.start_sets(states)``) is one of ``states``: a
    selector per state implies its values, and one selector holds."""
    x0 = enc.x[0]
    selectors = []
    for s in states:
        y = enc.pool.id(("start", s))
        selectors.append(y)
        for v, w in enumerate(s):
            lit = x0[v][w]
            if lit != TOP:
                enc.add([-y, lit])
    enc.add(selectors)


__all__ = ["Layers", "restrict_start", "sat_layers"]
