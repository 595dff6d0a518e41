"""Moving a running search from the interpreted kernel to the task's compiled one.

Why: the interpreter (compiled once per installation) answers at once but runs at 0.3-0.65 of
the compiled kernel's speed, while a compile costs 5-150 s.  So a search starts on the
interpreter, and one that is still running after ``after_s`` seconds is likely to run on: a
forked child then compiles the task's kernel into numba's disk cache, and the engine, at its
next slice boundary, loads it from there and goes on with the same tables.  That is safe at
any boundary the engines already have (the compiled bfs loop returns every 4,096 expansions,
IDA* every 200,000 nodes, best-first between batches): both kernels decode, canonicalise and
pack states the same way (one layout per task), so the table, parents and frontier do not
depend on which kernel filled them.

A search that ends first leaves the child to finish the compile for the next run (it marks
the kernel warm), unless the run bounds memory: then it is killed with the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..encodings.kernel import CHILD_OK, Kernel, child_done, start_child, stop_child
from .progress import Progress


class Upgrade:
    """One planned switch: when to start the compile, the child, and what happened (``stats``)."""

    def __init__(self, work: Callable[[], int], load: Callable[[], Kernel], after_s: float,
                 progress: Progress | None = None, detach: bool = True, size: dict[str, int] | None = None):
        self.work, self.load, self.after_s = work, load, after_s
        self.progress, self.detach, self.size = progress, detach, size or {}
        self.t0 = time.perf_counter()
        self.pid: int | None = None
        self.state = "waiting"           # waiting -> compiling -> switched | failed
        self.stats: dict[str, Any] = {}

    def poll(self) -> Kernel | None:
        """The compiled kernel once it is ready (once), else None; starts the compile when due."""
        if self.state == "waiting":
            now = time.perf_counter()
            if now - self.t0 >= self.after_s:
                self.pid = start_child(self.work)
                self.state = "compiling"
                self.t_start = now
                self.stats["compile_started_s"] = round(now - self.t0, 3)
                self._event("compile_start", **self.size)
            return None
        if self.state != "compiling" or self.pid is None:
            return None
        code = child_done(self.pid)
        if code is None:
            return None
        self.pid = None
        now = time.perf_counter()
        self.stats["compile_s"] = round(now - self.t_start, 3)
        if code != CHILD_OK:
            self.state = "failed"
            self.stats["failed"] = f"the compile child exited with code {code}"
            self._event("compile_failed", code=code)
            return None
        kernel = self.load()
        if kernel.backend != "numba":
            self.state = "failed"
            self.stats["failed"] = "the compiled kernel could not be loaded"
            return None
        self.state = "switched"
        self.stats["switched_at_s"] = round(time.perf_counter() - self.t0, 3)
        self.stats["load_s"] = round(time.perf_counter() - now, 3)
        self._event("kernel_switch", kernel="numba", compile_s=self.stats["compile_s"])
        return kernel

    def close(self) -> None:
        """The search is over: a compile still running goes on for the next run, or is killed."""
        if self.pid is not None and not self.detach:
            stop_child(self.pid)
            self.stats["stopped"] = "the search ended first; the compile was stopped with it"
        elif self.pid is not None:
            self.stats["detached"] = "the search ended first; the compile goes on for the next run"
        self.pid = None

    def _event(self, name: str, **figures: Any) -> None:
        if self.progress is not None:
            self.progress.update({"event": name, "elapsed_s": round(time.perf_counter() - self.t0, 3),
                                  **figures})


def poll(kernel: Kernel) -> Kernel | None:
    """The kernel an engine should continue with, if an upgrade of ``kernel`` is ready now."""
    up = getattr(kernel, "upgrade", None)
    return None if up is None else up.poll()
