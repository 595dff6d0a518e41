"""Peak memory of one search, measured in a fresh interpreter.

``python -m puzzleplan.bench.memprobe SOLVER MODEL INSTANCE [KEY=VALUE ...]`` loads the
task, prepares the solver (for the engine: kernel build and one untimed run, then
``malloc_trim`` so freed buffers go back to the OS), resets the process's peak-RSS
mark (Linux ``/proc/self/clear_refs``), runs one search and prints one JSON line:
``rss_growth_mb`` = peak RSS during the search minus RSS just before it.  A fresh
process keeps earlier runs' freed memory (which Python's and C's allocators hold on
to and reuse) out of the figure.  SOLVER: ``hand-written:FILE`` (a suite's
hand-written baseline file, see baselines.py), ``reference``, ``bfs/numba``, ``bfs/numpy``.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any


def status_mb(field: str) -> float | None:
    """``VmRSS`` / ``VmHWM`` of this process from /proc/self/status, in MB (None where unavailable)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _trim() -> None:
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def measure(fn: Callable[[], Any]) -> dict[str, Any]:
    _trim()
    reset = _reset_peak()
    base = status_mb("VmRSS")
    value = fn()
    peak = status_mb("VmHWM") if reset else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out: dict[str, Any] = {"base_rss_mb": base, "peak_rss_mb": peak, "peak_reset": reset}
    out["rss_growth_mb"] = round(peak - base, 2) if peak is not None and base is not None else None
    out["cost"] = getattr(value, "cost", None)
    return out


def main(argv: Sequence[str]) -> int:
    from .. import api
    from ..solvers import Limits
    from .baselines import load_hand_written, reference_bfs

    solver, model, instance, *opts = argv
    loaded = api.load_task(model, instance, list(opts))
    fn: Callable[[], Any]
    if solver.startswith("hand-written:"):
        mod = load_hand_written(solver.split(":", 1)[1])
        metric = loaded.options.get("metric", "steps")
        board = mod.start_board(loaded)
        fn = lambda: mod.bfs(board, metric)  # noqa: E731
    elif solver == "reference":
        fn = lambda: reference_bfs(loaded.task)  # noqa: E731
    elif "/" in solver:
        engine, kernel = solver.split("/", 1)
        api.solve(loaded, engine, Limits(), kernel)       # kernel build, compilation, first touch
        fn = lambda: api.solve(loaded, engine, Limits(), kernel)  # noqa: E731
    else:
        print(json.dumps({"error": f"unknown solver {solver!r}"}))
        return 2
    print(json.dumps({"solver": solver, **measure(fn)}))
    return 0


def probe(solver: str, model: str, instance: str, options: Sequence[str] = (),
          timeout: float = 3600) -> dict[str, Any] | None:
    """Run ``main`` in a fresh interpreter; its JSON, or None if it failed."""
    try:
        cp = subprocess.run([sys.executable, "-m", "puzzleplan.bench.memprobe", solver, model, instance,
                             *options], capture_output=True, text=True, timeout=timeout, env=dict(os.environ))
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [ln for ln in cp.stdout.splitlines() if ln.startswith("{")]
    if cp.returncode != 0 or not lines:
        return None
    return json.loads(lines[-1])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
