"""Engines for constraint tasks: ``cpsat``, ``sat``, ``backtrack``, ``ga``; one result type.

Every engine returns a :class:`CspResult`: the transition-model ``Result``
plus ``assignment`` (values in variable order) and, when asked to count,
``solutions`` (how many distinct assignments were found, up to ``count``).
Statuses: ``solved`` (an assignment; ``optimal`` when an objective was
minimised to a proof), ``unsolvable`` (a proof that none exists), ``limit``.

Counting (``count=2`` is the uniqueness check) is done with blocking
clauses on one solver (``sat``: one incremental CaDiCaL; ``cpsat``: one
model re-solved with each found assignment forbidden); ``backtrack``
simply continues its depth-first search.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..ir.csp import CspTask
from .result import Clock, Limits, Result


@dataclass
class CspResult(Result):
    assignment: list[int] | None = None
    solutions: int | None = None     # assignments found when counting (capped at ``count``)


def uniqueness(result: CspResult, count: int) -> str | None:
    """``unique`` / ``several`` / ``none`` when the search was complete enough to say, else None."""
    if result.status == "unsolvable":
        return "none"
    if result.solutions is None or count < 2:
        return None
    if result.solutions >= 2:
        return "several"
    return "unique" if result.stats.get("complete") else None


def _finish(engine: str, clock: Clock, found: list[list[int]], complete: bool, count: int,
            proof: str = "", **stats: Any) -> CspResult:
    if found:
        status = "solved"
    elif complete:
        status = "unsolvable"
    else:
        status = "limit"
    res = CspResult(status, engine, cost=0 if found else None,
                    stats=clock.stats(complete=complete, **stats), proof=proof,
                    assignment=found[0] if found else None,
                    solutions=len(found) if count > 1 or complete else None)
    return res


def solve_cpsat(task: CspTask, limits: Limits, count: int = 1, workers: int = 1, seed: int = 0) -> CspResult:
    """CP-SAT (deterministic with one worker); further solutions by forbidding each found one."""
    from ortools.sat.python import cp_model

    from ..encodings.csp_cpsat import CpCsp

    clock = Clock(limits)
    model = CpCsp(task)
    found: list[list[int]] = []
    complete = False
    optimal = False
    while len(found) < count:
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = workers
        solver.parameters.random_seed = seed
        if clock.deadline is not None:
            left = clock.deadline - clock.start - clock.elapsed()
            if left <= 0:
                break
            solver.parameters.max_time_in_seconds = left
        st = solver.solve(model.m)
        if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            values = model.decode_values(solver)
            found.append(values)
            optimal = optimal or (st == cp_model.OPTIMAL and model.objective is not None and len(found) == 1)
            if model.objective is not None:
                break  # with an objective: the optimum, not an enumeration
            model.block(values)
            continue
        complete = st == cp_model.INFEASIBLE
        break
    res = _finish("cpsat", clock, found, complete, count,
                  proof="CP-SAT INFEASIBLE" if complete else "", **model.size())
    if optimal:
        res.status, res.proof = "optimal", "CP-SAT OPTIMAL"
    return res


def solve_sat(task: CspTask, limits: Limits, count: int = 1, solver: str = "cadical195") -> CspResult:
    """One incremental SAT solver; a blocking clause after each solution."""
    from pysat.solvers import Solver

    from ..encodings.csp_sat import CspCnf
    from .satsolver import check_solver

    check_solver("sat", solver)
    clock = Clock(limits)
    cnf = CspCnf(task)
    found: list[list[int]] = []
    complete = False
    timed_out = False
    with Solver(name=solver, bootstrap_with=cnf.clauses()) as sat:
        timer = None
        if clock.deadline is not None:
            left = max(0.0, clock.deadline - clock.start - clock.elapsed())

            def stop() -> None:
                nonlocal timed_out
                timed_out = True
                sat.interrupt()

            timer = threading.Timer(left, stop)
            timer.start()
        try:
            while len(found) < count:
                ok = sat.solve_limited(expect_interrupt=True) if timer else sat.solve()
                if ok is None or timed_out:
                    break
                if not ok:
                    complete = True
                    break
                values = cnf.decode({lit for lit in sat.get_model() if lit > 0})
                found.append(values)
                clause = cnf.block(values)
                if not clause:
                    complete = True
                    break
                sat.add_clause(clause)
        except NotImplementedError:  # a solver without interrupt support: run unlimited
            pass
        finally:
            if timer:
                timer.cancel()
        stats = sat.accum_stats() or {}
    return _finish("sat", clock, found, complete, count, proof="UNSAT" if complete else "",
                   variables=cnf.n_vars, conflicts=stats.get("conflicts", 0))


def engines() -> dict[str, Callable[..., CspResult]]:
    from . import backtrack, ga

    return {"cpsat": solve_cpsat, "sat": solve_sat, "backtrack": backtrack.solve, "ga": ga.solve}


DESCRIPTIONS = {
    "backtrack": "constraint models: depth-first search with propagation by the model's constraints",
    "ga": "constraint models: genetic algorithm over whole populations (-E preset=paper for the "
          "published configuration)",
}

__all__ = ["CspResult", "DESCRIPTIONS", "engines", "solve_cpsat", "solve_sat", "uniqueness"]
