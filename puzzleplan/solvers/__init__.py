"""Search engines over the kernels; every one returns ``result.Result``."""

from __future__ import annotations

from collections.abc import Callable

from ..encodings.kernel import Kernel
from . import bestfirst, bfs, idastar, registry  # noqa: F401  (bfs, idastar register their drivers)
from .result import Limits, Result


def _ucs(kernel: Kernel, limits: Limits, macro: bool = True, min_batch: int = 0,
         macro_backend: str | None = None, width: int | None = None) -> Result:
    return bestfirst.solve(kernel, limits, use_heuristic=False, name="ucs", macro=macro,
                           macro_backend=macro_backend, min_batch=min_batch, width=width)


def _astar(kernel: Kernel, limits: Limits, macro: bool = True, min_batch: int = 0,
           macro_backend: str | None = None, width: int | None = None, frozen: bool = True,
           pairs: bool = True, tiebreak: bool = True, weight: float = 1.0) -> Result:
    return bestfirst.solve(kernel, limits, use_heuristic=True, name="astar", macro=macro,
                           macro_backend=macro_backend, min_batch=min_batch, width=width, frozen=frozen,
                           pairs=pairs, tiebreak=tiebreak, weight=weight)


def uses_macro(engine: str, task: object, options: dict) -> bool:
    """Whether this run searches the walk-closed (macro) form of a model declaring ``Model.walks``: api.solve
    then gives the engine the numpy kernel plus the requested backend for the macro sub-kernels."""
    mode = registry.get(engine).transition
    return (mode is not None and mode.kernel == "macro" and bool(getattr(task, "walk_actions", None))
            and options.get("macro", True))


# name -> transition-model entry point, for callers that run an engine on a kernel directly (tests)
ENGINES: dict[str, Callable[..., Result]] = {
    e.name: e.transition.function() for e in registry.ENGINES if e.transition is not None}

__all__ = ["ENGINES", "Limits", "Result", "registry", "uses_macro"]
