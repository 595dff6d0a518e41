"""What an engine tells the outside world while it searches.

Engines know their own figures (depth or f-bound, frontier size, states
stored, SAT horizon and conflicts, GA generation and best fitness); how to
show them (a live terminal line, JSON log lines, nothing) is the caller's
business.  An engine therefore only calls ``Clock.report(**figures)`` at the
points where it already reads the clock (per BFS layer / every 4,096
expansions, per SAT horizon, per GA generation); ``Clock`` forwards the
figures, throttled to one call every ``every`` seconds, to the ``Progress``
object found in ``Limits.progress``.  With no listener the cost is one
attribute test, and the compiled loops are never touched.

Figure names engines use (all optional, ints unless noted):
``elapsed_s`` (float, added by the clock), ``depth`` (BFS layer), ``f_bound``
(best-first / IDA* bound), ``expanded``, ``generated``, ``states`` (stored),
``frontier``, ``horizon``, ``conflicts``, ``generation``, ``best_fitness``.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Progress(Protocol):
    """A listener: ``every`` = least seconds between two updates; ``update`` gets the figures."""

    every: float

    def update(self, figures: dict[str, Any]) -> None: ...


class Collect:
    """A listener that keeps every update (for tests and notebooks)."""

    def __init__(self, every: float = 0.0):
        self.every = every
        self.updates: list[dict[str, Any]] = []

    def update(self, figures: dict[str, Any]) -> None:
        self.updates.append(dict(figures))
