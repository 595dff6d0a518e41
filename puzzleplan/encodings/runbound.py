"""How long can a run of zero-cost actions be?  A horizon bound for cost-optimal SAT/CP-SAT plans.

A bounded-horizon encoding proves "no plan of cost < C" only within its
horizon.  With positive costs every cheaper plan has at most
``(C - 1) // cmin`` steps; with zero-cost actions (free continuations of a
move, an agent's walking, a slide) a cheaper plan could, a priori, be any
length.  The bound used here is the *recurrence diameter* of the zero-cost
part of the task (Biere, Cimatti, Clarke & Zhu, "Symbolic model checking
without BDDs", TACAS 1999; Kroening & Strichman, "Efficient computation of
recurrence diameters", VMCAI 2003): the length ``Z`` of the longest run of
zero-cost actions that visits no state twice.

Why that suffices: cutting a loop out of a plan keeps it valid (states are
all that matter) and never raises its cost, so some cheapest plan repeats no
state; in it, every maximal zero-cost run is loop-free, hence at most ``Z``
steps, and a plan of cost ``<= C - 1`` has at most ``K = (C - 1) // c+``
paid steps (``c+`` the least positive cost) separating at most ``K + 1`` free
runs: ``K + (K + 1) Z`` steps in all (:func:`horizon_for_cost`).  The first of
those runs starts in the initial state, so the same question asked from that one
state bounds it by ``Z0 <= Z`` (:attr:`RunBound.first`), and ``K + K Z + Z0``
steps suffice.  ``Z0 = 0`` whenever no zero-cost action applies initially, as
when a free step can only continue a paid one (a continuation needs a move to
continue), which no state before the first move allows.

``Z`` is computed by SAT on the encoding of :class:`.sat.CnfPlan` restricted
to the zero-cost actions, from a *free* initial state: any state whose values
lie in the relaxed reachability fixpoint and that satisfies the 2-literal
invariants -- a superset of the reachable states, so the ``Z`` found bounds
the reachable runs too.  Horizon ``L = 1, 2, ...`` asks for ``L`` real
actions with pairwise distinct states (only the variables zero-cost actions
write can differ); the first unsatisfiable ``L`` gives ``Z = L - 1``.  In a
piece-sliding puzzle whose "move" is a free continuation of the same piece,
``Z`` is small (with two empty cells, a piece moves at most two cells in one
move), which keeps the proof horizon short.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from pysat.solvers import Solver

from ..ir.task import Task
from ..lang.ops import evaluate
from .invariants import relaxed_fixpoint
from .sat import TOP, CnfPlan
from .unrolled import Invariants


@dataclass(frozen=True)
class RunBound:
    """``length``: no loop-free zero-cost run is longer (None: not established within the cap/time).

    ``first``: no loop-free zero-cost run *from the initial state* is longer (None: not
    established; then ``length`` stands in for it).  A cheapest loop-free plan's first free
    run starts there, so it is bounded separately -- often by 0, when no zero-cost action
    applies in the initial state (a continuation needs a move to continue).
    """

    length: int | None
    seconds: float
    free_actions: int
    first: int | None = None

    def describe(self) -> str:
        if self.free_actions == 0:
            return "no zero-cost actions"
        if self.length is None:
            return "the longest loop-free zero-cost run is unknown"
        text = (f"no loop-free run of {self.length + 1} zero-cost steps exists from any state within the "
                "relaxed reachability fixpoint and the invariants (SAT: unsatisfiable)")
        if self.first is not None and self.first < self.length:
            text += (f", and none of {self.first + 1} steps from the initial state" if self.first
                     else ", and no zero-cost step applies in the initial state")
        return text


def zero_cost_run_bound(task: Task, invariants: Invariants | None = None, deadline: float | None = None,
                        cap: int = 48, solver: str = "cadical195") -> RunBound:
    """The longest loop-free zero-cost run (see the module docstring); ``length=None`` past ``cap``."""
    t0 = time.perf_counter()
    free = [k for k, a in enumerate(task.actions) if a.cost == 0]
    if not free:
        return RunBound(0, 0.0, 0)
    length = _longest(task, relaxed_fixpoint(task, symmetric=True), invariants, free, deadline, cap, solver)
    first = None
    if length is not None:
        memo: dict[int, int] = {}
        if not any(evaluate(task.actions[k].guard, task.init, memo) for k in free):
            first = 0
        else:   # one state: as cheap as the question gets, and never longer than `length`
            first = _longest(task, [[v] for v in task.init], None, free, deadline, length + 1, solver)
    return RunBound(length, time.perf_counter() - t0, len(free), first)


def _longest(task: Task, start: list[list[int]], invariants: Invariants | None, free: list[int],
             deadline: float | None, cap: int, solver: str) -> int | None:
    """The longest loop-free run of the ``free`` actions from any state in the value sets ``start``."""
    enc = CnfPlan(task, start=start, invariants=invariants, actions=free, symmetry=False)
    changing = sorted(set().union(*(enc.written(k) for k in free)))
    with Solver(name=solver) as sat:
        for L in range(1, cap + 1):
            enc.extend()
            now = enc.x[L]
            for i in range(L):
                before = enc.x[i]
                differ = enc.or_(enc.and_([lit, -before[v].get(w, -TOP)])
                                 for v in changing for w, lit in now[v].items())
                enc.add([enc.noops[L - 1], differ])
            sat.append_formula(enc.drain())
            answer = solve_until(sat, [-enc.noops[L - 1]], deadline)
            if answer is None:
                return None
            if not answer:
                return L - 1
    return None


def solve_until(sat: Solver, assumptions: list[int], deadline: float | None) -> bool | None:
    """A SAT call that gives up (None) at the deadline, in conflict-budgeted slices."""
    if deadline is None:
        return sat.solve(assumptions=assumptions)
    while time.perf_counter() < deadline:
        sat.conf_budget(20_000)
        r = sat.solve_limited(assumptions=assumptions)
        if r is not None:
            return r
    return None


def horizon_for_cost(cost_bound: int, least_positive_cost: int, run: int, first: int | None = None) -> int:
    """Steps that suffice for a loop-free plan of cost ``<= cost_bound``: ``K + K run + first``.

    ``K`` paid steps separate ``K + 1`` free runs; the first starts in the initial state, so
    ``first`` (its own bound, :attr:`RunBound.first`) replaces ``run`` there when known.
    """
    k = max(cost_bound, 0) // least_positive_cost
    return k + k * run + (run if first is None else min(first, run))


def cost_lower_bound(refuted: int, least_positive_cost: int, run: int | None,
                     first: int | None = None) -> int:
    """The least cost a plan can have once no plan of at most ``refuted`` steps exists.

    The converse of :func:`horizon_for_cost`: a plan of cost ``<= b`` implies a loop-free one of at
    most ``horizon_for_cost(b)`` steps, so every ``b`` whose horizon is at most ``refuted`` is
    excluded.  With ``k`` paid steps a horizon is ``k + k run + first``: the largest such ``k`` is
    ``(refuted - first) // (run + 1)``, and the bound is ``(k + 1)`` times the least positive cost.
    Without a run bound (``run`` None) nothing follows: 0.
    """
    if run is None or refuted < 0:
        return 0
    first = run if first is None else min(first, run)
    if refuted < first:
        return 0
    return ((refuted - first) // (run + 1) + 1) * least_positive_cost


__all__ = ["RunBound", "cost_lower_bound", "horizon_for_cost", "zero_cost_run_bound"]
