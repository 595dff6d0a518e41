"""The one result type every engine returns, and the limits every engine honours."""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .progress import Progress

STATUSES = ("optimal", "solved", "unsolvable", "unknown", "limit")


def positive(kind: type) -> Callable[[str], Any]:
    """A command-line type for a limit: a number of ``kind`` that must be > 0."""

    def convert(text: str) -> Any:
        import argparse

        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a valid {kind.__name__}") from None
        if v <= 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be > 0")
        return v

    convert.__name__ = f"positive_{kind.__name__}"
    return convert


@dataclass
class Limits:
    time_s: float | None = None
    max_states: int | None = None
    # where engines report progress (``solvers/progress.py``); None = nobody is listening
    progress: Progress | None = None
    # the engine's own estimate of its memory (visited set, per-state arrays, open lists), in MiB;
    # over it the search ends like at a state limit: status "limit", the best bound so far
    max_mb: float | None = None

    def deadline(self, start: float) -> float | None:
        return None if self.time_s is None else start + self.time_s


@dataclass
class Result:
    status: str
    engine: str
    cost: int | None = None
    plan: list[int] | None = None          # ground-action indices, replayable from the initial state
    stats: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    proof: str = ""                          # how optimality (or unsolvability) was established

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status}")

    @property
    def optimal(self) -> bool:
        return self.status == "optimal"


class OutOfTime(Exception):
    """Raised from inside a long batch (``Clock.check``) so that an engine ends at its deadline
    rather than at the end of the batch; the engine catches it and reports status ``limit``."""


class Clock:
    """Search time and limit checks (start-up and parsing excluded by construction)."""

    def __init__(self, limits: Limits):
        self.start = time.perf_counter()
        self.deadline = limits.deadline(self.start)
        self.max_states = limits.max_states
        self.max_bytes = None if limits.max_mb is None else limits.max_mb * 2**20
        self.peak_bytes = 0
        self.progress = limits.progress
        self._next_report = self.start + (limits.progress.every if limits.progress is not None else 0.0)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.perf_counter() > self.deadline

    def check(self) -> None:
        """``OutOfTime`` past the deadline: for loops deep inside one expansion step."""
        if self.out_of_time():
            raise OutOfTime

    def too_many(self, n_states: int) -> bool:
        """Over the state limit, or over the memory limit by the engine's last note_bytes."""
        return (self.max_states is not None and n_states > self.max_states) or \
            (self.max_bytes is not None and self.peak_bytes > self.max_bytes)

    def report(self, **figures: Any) -> None:
        """Tell the progress listener the engine's figures (depth, frontier, ...), at most every
        ``progress.every`` seconds.  Engines call it where they already read the clock, so with no
        listener it costs one attribute test."""
        if self.progress is None:
            return
        now = time.perf_counter()
        if now < self._next_report:
            return
        self._next_report = now + self.progress.every
        self.progress.update({"elapsed_s": round(now - self.start, 3), **figures})

    def note_bytes(self, n: int) -> None:
        self.peak_bytes = max(self.peak_bytes, n)

    def stats(self, **extra: Any) -> dict[str, Any]:
        rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return {
            "time_s": round(self.elapsed(), 6),
            "peak_mb": round(self.peak_bytes / 2**20, 3),
            "rss_peak_mb": round(rss_kb / 1024, 1),
            **extra,
        }
