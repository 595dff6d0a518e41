"""Search engines over the kernels; every one returns ``result.Result``."""

from __future__ import annotations

from collections.abc import Callable

from ..encodings.kernel import Kernel
from . import bestfirst, bfs, cpsat, fd, idastar, sat, scriptga
from .result import Limits, Result


def _bfs(kernel: Kernel, limits: Limits, enumerate_all: bool = False) -> Result:
    return bfs.solve(kernel, limits, enumerate_all=enumerate_all)


def _ucs(kernel: Kernel, limits: Limits, macro: bool = True, min_batch: int = 0,
         macro_backend: str | None = None) -> Result:
    return bestfirst.solve(kernel, limits, use_heuristic=False, name="ucs", macro=macro,
                           macro_backend=macro_backend, min_batch=min_batch)


def _astar(kernel: Kernel, limits: Limits, macro: bool = True, min_batch: int = 0,
           macro_backend: str | None = None) -> Result:
    return bestfirst.solve(kernel, limits, use_heuristic=True, name="astar", macro=macro,
                           macro_backend=macro_backend, min_batch=min_batch)


# engines that search the walk-closed (macro) form of a model declaring Model.walks: api.solve
# gives them the numpy kernel plus the requested backend for the macro sub-kernels, so the full
# kernel (unused there) is not compiled
MACRO = frozenset({"ucs", "astar"})


def uses_macro(engine: str, task: object, options: dict) -> bool:
    """Whether this run searches the macro form (the rule bestfirst.solve applies, for its callers)."""
    return engine in MACRO and bool(getattr(task, "walk_actions", None)) and options.get("macro", True)


def _idastar(kernel: Kernel, limits: Limits, max_depth: int = 10_000) -> Result:
    return idastar.solve(kernel, limits, max_depth=max_depth)


def _csp_only(kernel: Kernel, limits: Limits, **_: object) -> Result:
    raise AssertionError("api.solve dispatches constraint models before engines see a kernel")


ENGINES: dict[str, Callable[..., Result]] = {
    "bfs": _bfs,
    "ucs": _ucs,
    "astar": _astar,
    "idastar": _idastar,
    "sat": sat.solve,
    "cpsat": cpsat.solve,
    "fd": fd.solve,           # Fast Downward on the PDDL export (optional extra puzzleplan[fd])
    "backtrack": _csp_only,   # constraint models only: solvers/csp.py
    "ga": scriptga.solve,     # transition models: move scripts; constraint models: solvers/csp.py
}

# engines for constraint models only (api.solve routes constraint tasks to solvers/csp.py)
CSP_ONLY = frozenset({"backtrack"})

# engines that read only kernel.task: no compiled kernel is built for them
TASK_ONLY = frozenset({"sat", "cpsat", "fd"})

DESCRIPTIONS = {
    "bfs": "layer-batched breadth-first search; 0-1 BFS when actions cost 0 (exact for unit and 0/1 costs)",
    "ucs": "uniform-cost search with Dial buckets (exact for any non-negative integer costs)",
    "astar": "A* batched by f-buckets with the model's heuristic (blind if none), re-opening",
    "idastar": "IDA* in compiled code, linear memory (deep searches with a good heuristic)",
    "sat": "bounded-horizon planning as SAT on one incremental pysat solver (CaDiCaL); cost via totalizer",
    "cpsat": "the unrolled planning model on OR-Tools CP-SAT, horizon grown until feasible, cost minimised",
    "fd": "Fast Downward (external planner, extra puzzleplan[fd]) on the PDDL export: A* with LM-cut, "
          "or blind where the PDDL needs derived predicates",
    "backtrack": "constraint models: depth-first search with propagation by the model's constraint objects",
    "ga": "genetic algorithm over whole populations: assignments (constraint models) or move scripts "
          "(transition models declaring script()); -O preset=paper: the published one",
}

__all__ = ["MACRO", "uses_macro", "CSP_ONLY", "DESCRIPTIONS", "ENGINES", "TASK_ONLY", "Limits", "Result"]
