"""Unsolvability by property-directed reachability (IC3 / PDR) on the one-step CNF.

Why: a bounded-horizon engine proves "unsolvable" only by refuting every
horizon up to a completeness threshold (a variant's ``V(init) - lo``, or the
value-set state bound), and the deep horizons are where CDCL stalls: on a
6x6 Zen garden the threshold is 68 steps and one query at that horizon does
not finish in minutes.  PDR (Bradley, "SAT-based model checking without
unrolling", VMCAI 2011; Eén, Mishchenko & Brayton, "Efficient implementation
of property directed reachability", FMCAD 2011) never unrolls: it learns
clauses over states ("these values never occur together within ``i``
steps") from one-step queries until the clause set is *inductive*; Suda
("Property directed reachability for automated planning", JAIR 50, 2014)
found it strong on unsolvable planning tasks.

The transition relation is :class:`.sat.CnfPlan`'s step from a free state
(the relaxed reachability fixpoint's values and the 2-literal invariants, a
superset of the reachable states); a state literal is "variable ``v`` has
value ``w``", a cube a set of them.  Frames ``F_1 ⊇ F_2 ...`` are stored as
delta clause sets with one activation literal per level on one incremental
solver; blocked cubes are generalised by the solver's unsatisfiable core and
kept away from the initial state; predecessors and goal states are lifted to
partial cubes by SAT (Chockler et al., "Incremental formal verification of
hardware", FMCAD 2011: the core of "cube, then the step does not reach the
target").

Run as the engine ``pdr`` (solvers/pdr.py).  It proves small unsolvable
gardens (3x4, 4x4: well under a second) and three of four unsolvable random
3x4 Klotski layouts (0.2-14 s, where sat and cpsat reach no verdict in 60 s:
their horizons stop far below the value-set state bound), but not
PuzzleScript L2 / L3 (6x6): after 60-100 s it was at frame 4-5 either way,
its blocked cubes saying "these many squares cannot all be raked within k
steps" -- a counting fact that a clause over state values only expresses
square by square.  Measured figures: docs/architecture.md.

The answer is checked before it is returned: the final clause set ``Inv`` is
re-verified on a fresh encoding and solver (the initial state satisfies it,
``Inv ∧ T ⇒ Inv'``, ``Inv ∧ goal`` unsatisfiable), so a bookkeeping error
here can cost a proof, never produce a false one.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass

from pysat.solvers import Solver

from ..ir.task import Task
from .invariants import relaxed_fixpoint
from .sat import TOP, CnfPlan
from .unrolled import Invariants, conjuncts

Cube = tuple[tuple[int, int], ...]   # ((variable, value), ...)


@dataclass(frozen=True)
class PdrResult:
    """``unsolvable``: True proven (``clauses`` in the inductive invariant), False the goal looks reachable
    (PDR found a chain of cubes from the initial state; the horizon search decides), None undecided."""

    unsolvable: bool | None
    seconds: float
    frames: int = 0
    clauses: int = 0
    calls: int = 0

    def describe(self) -> str:
        if self.unsolvable:
            return (f"an inductive invariant of {self.clauses} clauses over state values holds initially "
                    f"and excludes the goal (PDR, {self.frames} frames, {self.calls} SAT calls; "
                    "re-verified on a fresh solver)")
        if self.unsolvable is None:
            return f"PDR undecided after {self.seconds:.1f} s ({self.frames} frames)"
        return "PDR found a path to the goal"


class _Timeout(Exception):
    pass


def prove_unreachable(task: Task, invariants: Invariants | None = None, deadline: float | None = None,
                      solver: str = "cadical195", backward: bool = True,
                      stop: Callable[[], bool] | None = None) -> PdrResult:
    """Run PDR on ``task`` (module docstring): is the goal unreachable from the initial state?

    ``backward`` (default): PDR on the reversed system (Suda 2014's "reverse" PDR): the frames
    over-approximate the states that reach the goal within ``k`` steps, and the one state to
    exclude is the initial one; its obligations are states reachable from the initial state
    (exact, full states).  Forward: frames over-approximate the states reachable within ``k``
    steps and goal states are excluded.  ``deadline`` (``time.perf_counter()`` seconds) and
    ``stop`` (polled between bounded solver calls: a signal, a memory limit) end it undecided.
    """
    t0 = time.perf_counter()
    pdr = _Pdr(task, invariants, deadline, solver, backward, stop)
    try:
        verdict: bool | None = pdr.run()
    except _Timeout:
        verdict = None
    finally:
        pdr.sat.delete()
    frames = len(pdr.delta) - 1
    if verdict:
        inv = [c for k in range(pdr.proof_level, len(pdr.delta)) for c in pdr.delta[k]]
        if not _verify(task, invariants, inv, solver, backward):
            verdict = None
        return PdrResult(verdict, time.perf_counter() - t0, frames, len(inv), pdr.calls)
    return PdrResult(verdict, time.perf_counter() - t0, frames, 0, pdr.calls)


def _one_step(task: Task, invariants: Invariants | None) -> CnfPlan:
    enc = CnfPlan(task, start=relaxed_fixpoint(task, symmetric=True), invariants=invariants, symmetry=False)
    enc.extend()
    return enc


class _Pdr:
    """Frames are clause sets over the ``here`` layer of the one-step encoding; a step leads from
    ``here`` to ``there`` (forward: layers 0 -> 1; backward: 1 -> 0, the reversed relation)."""

    def __init__(self, task: Task, invariants: Invariants | None, deadline: float | None, solver: str,
                 backward: bool = False, stop: Callable[[], bool] | None = None):
        self.task = task
        self.deadline = deadline
        self.stop = stop
        self.backward = backward
        self.enc = enc = _one_step(task, invariants)
        h = 1 if backward else 0
        self.goal_here = enc.goal(h)
        self.not_goal0 = enc.or_([-enc.boolean(c, 0) for c in conjuncts(task.goal)])
        self.goal0 = enc.goal(0)
        self.real = -enc.noops[0]
        self.sat = Solver(name=solver, bootstrap_with=enc.drain())
        self.x0, self.x1 = enc.x[0], enc.x[1]
        self.here, self.there = (self.x1, self.x0) if backward else (self.x0, self.x1)
        self.live = [v for v, d in enumerate(self.x0) if len(d) > 1]
        self.init: Cube = tuple((v, task.init[v]) for v in self.live)
        self.init_map = dict(self.init)
        self.delta: list[list[Cube]] = [[]]   # delta[k]: cubes blocked up to level k exactly (k >= 1)
        self.act: list[int] = [0]              # activation literal per level (index 0 unused)
        self.proof_level = 0
        self.calls = 0
        self.serial = 0

    # ------------------------------------------------------------------ solver plumbing
    def lit0(self, v: int, w: int) -> int:
        """State literal on the frames' layer."""
        return self.here[v].get(w, -TOP)

    def lit1(self, v: int, w: int) -> int:
        """State literal on the layer a step leads to."""
        return self.there[v].get(w, -TOP)

    def fresh(self) -> int:
        self.serial += 1
        return self.enc.pool.id(("pdr", "tmp", self.serial))

    def solve(self, assumptions: list[int]) -> bool:
        if -TOP in assumptions:
            return False
        assumptions = [a for a in assumptions if a != TOP]
        self.calls += 1
        if self.deadline is None and self.stop is None:
            return bool(self.sat.solve(assumptions=assumptions))
        while True:
            if (self.deadline is not None and time.perf_counter() > self.deadline) or \
                    (self.stop is not None and self.stop()):
                raise _Timeout
            self.sat.conf_budget(10_000)
            r = self.sat.solve_limited(assumptions=assumptions)
            if r is not None:
                return r

    def core(self) -> set[int]:
        return set(self.sat.get_core() or [])

    def model(self) -> set[int]:
        return {lit for lit in (self.sat.get_model() or []) if lit > 0}

    def state_of(self, model: set[int]) -> Cube:
        """The full state on the frames' layer."""
        return tuple((v, next(w for w, lit in self.here[v].items() if lit in model)) for v in self.live)

    def frame(self, k: int) -> list[int]:
        """Assumptions selecting F_k (k >= 1): every delta from level k up."""
        return [self.act[j] for j in range(k, len(self.act))]

    def holds_initially(self, cube: Cube) -> bool:
        """Does the cube meet F_0 (forward: the initial state; backward: the goal states)?"""
        if not self.backward:
            return all(self.init_map.get(v) == w for v, w in cube)
        return self.goal_here != -TOP and self.solve([self.goal_here, *[self.lit0(v, w) for v, w in cube]])

    def outside_start(self, keep: Cube, s: Cube) -> Cube:
        """``keep`` grown by literals of ``s`` until it misses F_0 (``s`` itself does)."""
        for x in s:
            if not self.holds_initially(keep):
                return keep
            if x not in keep:
                keep = (*keep, x)
        return keep

    def block_clause(self, cube: Cube, k: int) -> None:
        """Add "not cube" to levels 1..k."""
        self.delta[k].append(cube)
        self.sat.add_clause([-self.act[k], *[-self.lit0(v, w) for v, w in cube]])

    def new_frame(self) -> None:
        self.act.append(self.enc.pool.id(("pdr", "level", len(self.act))))
        self.delta.append([])

    # ------------------------------------------------------------------ the algorithm
    def run(self) -> bool:
        if self.solve([self.goal0, *[self.x0[v].get(w, -TOP) for v, w in self.init]]):
            return False    # the initial state is a goal
        self.new_frame()
        init_here = [self.lit0(v, w) for v, w in self.init]
        while True:
            N = len(self.act) - 1
            while self.solve([*(init_here if self.backward else [self.goal_here]), *self.frame(N)]):
                bad = self.init if self.backward else self.lift_goal(self.state_of(self.model()))
                if not self.block(bad, N):
                    return False
            self.new_frame()
            if self.propagate():
                return True

    def block(self, bad: Cube, level: int) -> bool:
        queue: list[tuple[int, int, Cube]] = [(level, 0, bad)]
        n = 1
        while queue:
            k, _, s = queue[0]
            if k == 0:
                return False
            if self.blocked(s, k):
                heapq.heappop(queue)
                continue
            r, core, pred = self.query(s, k, relative=True)
            if pred is None:
                heapq.heappop(queue)
                g = self.generalise(s, k, core)
                j = k
                while j + 1 < len(self.act) and not self.query(g, j + 1, relative=True)[0]:
                    j += 1
                self.block_clause(g, j)
                if j + 1 < len(self.act):
                    heapq.heappush(queue, (j + 1, n, s))
                    n += 1
            else:
                heapq.heappush(queue, (k - 1, n, pred))
                n += 1
        return True

    def blocked(self, s: Cube, k: int) -> bool:
        """Is the cube already excluded from F_k?  (A stored cube is a subset of it.)"""
        ss = set(s)
        return any(set(c) <= ss for j in range(k, len(self.delta)) for c in self.delta[j])

    def query(self, s: Cube, k: int, relative: bool) -> tuple[bool, set[int], Cube | None]:
        """F_{k-1} (and not s) and a real step and s': (satisfiable, unsat core, lifted predecessor)."""
        t = self.fresh()
        if relative:
            self.sat.add_clause([-t, *[-self.lit0(v, w) for v, w in s]])
        if k == 1:
            base = [self.goal_here] if self.backward else [self.lit0(v, w) for v, w in self.init]
        else:
            base = self.frame(k - 1)
        r = self.solve([t, self.real, *base, *[self.lit1(v, w) for v, w in s]])
        if not r:
            core = self.core()
            self.sat.add_clause([-t])
            return False, core, None
        model = self.model()
        pred = self.state_of(model)
        act = next((a for a, lit in self.enc.acts[0].items() if lit in model), None)
        self.sat.add_clause([-t])
        if act is not None and not self.backward:
            pred = self.lift(pred, act, s)
        return True, set(), pred

    def lift(self, pred: Cube, k: int, s: Cube) -> Cube:
        """The part of a predecessor state that makes action ``k`` applicable and lead into ``s``:
        under the cube, "the guard fails, or the action happens and the successor is not in s" is
        unsatisfiable (a state of the cube where the guard fails satisfies it); the core is kept."""
        guard = self.enc.and_([self.enc.boolean(c, 0) for c in conjuncts(self.task.actions[k].guard)])
        act = self.enc.acts[0][k]
        t, z = self.fresh(), self.fresh()
        self.sat.append_formula(self.enc.drain())
        # cube and (not guard, or: the action happens and misses s) must be unsatisfiable
        self.sat.add_clause([-t, -guard, z])
        self.sat.add_clause([-z, act])
        self.sat.add_clause([-z, *[-self.lit1(v, w) for v, w in s]])
        lits = {self.lit0(v, w): (v, w) for v, w in pred}
        r = self.solve([t, *lits])
        core = set() if r else self.core()
        self.sat.add_clause([-t])
        if r:
            return pred
        return tuple(x for lit, x in lits.items() if lit in core)

    def lift_goal(self, state: Cube) -> Cube:
        """The part of a goal state that forces the goal (the core of "state and not goal")."""
        lits = {self.lit0(v, w): (v, w) for v, w in state}
        if self.not_goal0 == -TOP or self.solve([self.not_goal0, *lits]):
            return state
        core = self.core()
        return tuple(x for lit, x in lits.items() if lit in core)

    def generalise(self, s: Cube, k: int, core: set[int]) -> Cube:
        """A sub-cube of ``s`` still unreachable from F_{k-1} in one step: the unsat core's literals of
        s' (plus one literal the initial state violates, if needed), then single literal drops."""
        keep = self.outside_start(tuple((v, w) for v, w in s if self.lit1(v, w) in core), s)
        if self.holds_initially(keep):
            return s
        for lit in list(keep):
            if len(keep) <= 1 or lit not in keep:
                continue
            trial = tuple(x for x in keep if x != lit)
            if self.holds_initially(trial):
                continue
            r, core2, _ = self.query(trial, k, relative=True)
            if not r:
                smaller = tuple((v, w) for v, w in trial if self.lit1(v, w) in core2)
                keep = trial if self.holds_initially(smaller) else smaller
        return keep

    def propagate(self) -> bool:
        """Push clauses forward; True when some level's delta empties (F_k = F_{k+1}: inductive)."""
        top = len(self.act) - 1
        for k in range(1, top):
            for c in list(self.delta[k]):
                if not self.query(c, k + 1, relative=False)[0]:
                    self.delta[k].remove(c)
                    self.block_clause(c, k + 1)
            if not self.delta[k]:
                self.proof_level = k + 1
                return True
        return False


def _verify(task: Task, invariants: Invariants | None, inv: list[Cube], solver: str, backward: bool) -> bool:
    """Independent check of the invariant ``Inv`` (the conjunction of the blocked cubes' negations) on a
    fresh encoding and solver.  Forward: the initial state is in ``Inv``, steps stay in it, no goal
    state is in it.  Backward: every goal state is in ``Inv``, a step into ``Inv`` starts in it, the
    initial state is not in it -- either way no path leads from the initial state to a goal."""
    init_inside = not any(all(task.init[v] == w for v, w in c) for c in inv)
    if init_inside == backward:
        return False
    enc = _one_step(task, invariants)
    here, there = (enc.x[1], enc.x[0]) if backward else (enc.x[0], enc.x[1])
    for c in inv:
        enc.add([-here[v].get(w, -TOP) for v, w in c])
    broken = enc.or_(enc.and_([there[v].get(w, -TOP) for v, w in c]) for c in inv)
    real = -enc.noops[0]
    if backward:   # Inv must contain every goal state: "goal and some cube of Inv's negation" is UNSAT
        g = enc.goal(0)
        outside = enc.or_(enc.and_([enc.x[0][v].get(w, -TOP) for v, w in c]) for c in inv)
        checks = [[g, outside], [real, broken]]
    else:
        checks = [[enc.goal(0)], [real, broken]]
    with Solver(name=solver, bootstrap_with=enc.drain()) as sat:
        for assume in checks:
            if -TOP in assume:
                continue
            if sat.solve(assumptions=[a for a in assume if a != TOP]):
                return False
    return True


__all__ = ["PdrResult", "prove_unreachable"]
