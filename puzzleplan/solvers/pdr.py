"""Engine ``pdr``: proofs of unsolvability by IC3 / PDR (encodings/pdr.py); it never returns a plan.

Why an engine of its own: sat and cpsat prove "unsolvable" only by refuting every horizon up to
a completeness threshold.  Without a variant that bounds plan lengths (Klotski layouts, say) the
threshold is the value-set state bound, far beyond the horizons they reach: on four unsolvable
3x4 Klotski layouts both end at their 60 s limit, while PDR finds an inductive invariant that
excludes the goal on three of them, in 0.2-14 s (docs/architecture.md has the table).

Statuses: ``unsolvable`` with the invariant's description as the proof (re-verified on a fresh
solver before it is reported); ``unknown`` when PDR found a path of cubes from the initial state
(the task looks solvable: ask a planning engine for the plan) or the invariant failed its
re-verification; ``limit`` at the time limit or on a signal.  No lower bound: the frames reached
are not re-verified, so they are reported as a count only.
"""

from __future__ import annotations

from typing import Any

from ..encodings.pdr import prove_unreachable
from .result import Clock, Limits, Result
from .satsolver import check_solver


def solve(kernel: Any, limits: Limits, solver: str = "cadical195", backward: bool = True) -> Result:
    task = kernel.task
    check_solver("pdr", solver)
    clock = Clock(limits)
    r = prove_unreachable(task, deadline=clock.deadline, solver=solver, backward=bool(backward),
                          stop=clock.out_of_time)
    stats = clock.stats(frames=r.frames, clauses=r.clauses, solver_calls=r.calls,
                        direction="backward" if backward else "forward")
    if r.unsolvable:
        return Result("unsolvable", "pdr", stats=stats, proof=r.describe())
    if r.unsolvable is False:
        return Result("unknown", "pdr", stats=stats,
                      message="PDR found a path of states from the initial state to the goal: the task "
                              "looks solvable (pdr proves only unsolvability; bfs, astar or sat find plans)")
    if clock.out_of_time():
        return Result("limit", "pdr", stats=stats,
                      message=f"{clock.reason()}; PDR undecided at frame {r.frames}")
    return Result("unknown", "pdr", stats=stats,
                  message="PDR's invariant failed its re-verification on a fresh solver: no proof")
