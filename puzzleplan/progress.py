"""Showing engine progress: a live terminal line (rich) or JSON log lines for scripts.

Engines report raw figures through ``Limits.progress`` (``solvers/progress.py``); kernel events
(a compile starting or ending, the switch from the interpreter to the compiled kernel:
``solvers/upgrade.py``) come the same way with an ``event`` name, and JSON lines carry that name
instead of ``progress``.
this module turns them into something a person or a script reads.  Both
listeners add two derived figures: ``states_per_s`` (expanded states per second
of search, for explicit engines) and ``rss_mb`` (the process's resident memory
now).  Output goes to **stderr** only, so ``--json`` on stdout stays one JSON
object.  ``for_cli`` picks the listener from the command-line flags: JSON lines
with ``--log-progress``; else a live line when stderr is a terminal and
``--quiet`` is not given; else nothing.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from types import TracebackType
from typing import Any, TextIO

# order and short names of the live line's fields
_FIELDS = (("depth", "depth"), ("f_bound", "f"), ("weighted_key", "key"), ("horizon", "horizon"),
           ("lower_bound", "bound"),
           ("generation", "gen"),
           ("best_fitness", "best"), ("best_cost", "best cost"), ("evaluations", "evals"),
           ("frontier", "frontier"), ("frontier_depth", "layers"), ("states", "states"),
           ("conflicts", "conflicts"), ("expanded", "expanded"))


def rss_mb() -> float:
    """Resident memory now (Linux /proc), else the peak so far (getrusage)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            pages = int(f.read().split()[1])
        return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)
    except (OSError, ValueError, IndexError):
        return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def enrich(engine: str, figures: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"engine": engine, **figures}
    t = figures.get("elapsed_s") or 0.0
    if "expanded" in figures and t > 0:
        out["states_per_s"] = round(figures["expanded"] / t)
    out["rss_mb"] = rss_mb()
    return out


class Listener:
    """Base: a context manager around one engine run; ``every`` seconds between updates."""

    def __init__(self, engine: str, every: float):
        self.engine = engine
        self.every = every

    def update(self, figures: dict[str, Any]) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def __enter__(self) -> Listener:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        return None


class JsonLines(Listener):
    """One JSON object per update on ``stream``: ``{"event": "progress", "engine": ..., figures}``."""

    def __init__(self, engine: str, every: float = 1.0, stream: TextIO | None = None):
        super().__init__(engine, every)
        self.stream = stream or sys.stderr

    def update(self, figures: dict[str, Any]) -> None:
        self.stream.write(json.dumps({"event": "progress", **enrich(self.engine, figures)}) + "\n")
        self.stream.flush()


class LiveLine(Listener):
    """One line rewritten in place on the terminal (rich ``Live``, transient: gone when the run ends)."""

    def __init__(self, engine: str, every: float = 0.25):
        super().__init__(engine, every)
        self._live: Any = None
        self.kernel_note = ""    # the last kernel event in words, kept on the line

    def __enter__(self) -> LiveLine:
        from rich.console import Console
        from rich.live import Live
        from rich.text import Text

        self._live = Live(Text(f"{self.engine}: starting"), console=Console(stderr=True), transient=True,
                          auto_refresh=False)
        self._live.__enter__()
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._live is not None:
            self._live.__exit__(et, e, tb)
            self._live = None

    @staticmethod
    def line(engine: str, figures: dict[str, Any]) -> str:
        f = enrich(engine, figures)
        parts = [f"{engine}"]
        parts += [f"{short} {f[key]:,}" if isinstance(f[key], int) else f"{short} {f[key]}"
                  for key, short in _FIELDS if key in f]
        if "states_per_s" in f:
            parts.append(f"{f['states_per_s']:,} states/s")
        parts.append(f"{f['rss_mb']:,.0f} MB")
        parts.append(f"{f.get('elapsed_s', 0.0):.1f} s")
        return " | ".join(parts)

    def update(self, figures: dict[str, Any]) -> None:
        if self._live is None:
            return
        from rich.text import Text

        if "event" in figures:    # a kernel event: kept on the line until the next one
            self.kernel_note = kernel_event_text(figures)
            figures = {k: v for k, v in figures.items() if k not in ("event", "actions", "compile_s", "code")}
        line = self.line(self.engine, figures)
        if self.kernel_note:
            line += f" | {self.kernel_note}"
        self._live.update(Text(line), refresh=True)


def kernel_event_text(figures: dict[str, Any]) -> str:
    """Words for a kernel event: compile_start, compile_end, kernel_switch, compile_failed."""
    name = figures.get("event")
    if name == "compile_start":
        size = f" ({figures['actions']:,} actions)" if "actions" in figures else ""
        where = "in the background" if figures.get("background", True) else "first"
        return f"compiling the task's kernel{size} {where}"
    if name == "compile_end":
        return f"kernel compiled in {figures.get('compile_s', 0):.1f} s"
    if name == "kernel_switch":
        return f"switched to the compiled kernel (compiled in {figures.get('compile_s', 0):.1f} s)"
    if name == "compile_failed":
        return "compile failed: staying on the interpreter"
    return str(name)


def for_cli(engine: str, quiet: bool = False, log: bool = False,
            every: float | None = None) -> Listener | None:
    """The listener the command line uses (see the module docstring), or None."""
    if log:
        return JsonLines(engine, every if every is not None else 1.0)
    if quiet or not sys.stderr.isatty():
        return None
    return LiveLine(engine, every if every is not None else 0.25)
