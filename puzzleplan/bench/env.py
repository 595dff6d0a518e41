"""Versions and machine facts stored with every benchmark result."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any


def versions() -> dict[str, str | None]:
    from .. import __version__

    out: dict[str, str | None] = {"python": platform.python_version(), "puzzleplan": __version__}
    for mod in ("numpy", "numba", "ortools", "pysat"):
        try:
            m = __import__(mod)
            out[mod] = str(getattr(m, "__version__", None))
        except ImportError:
            out[mod] = None
    out["git"] = _git_revision()
    return out


def _git_revision() -> str | None:
    root = Path(__file__).resolve().parent.parent.parent
    if not (root / ".git").exists():
        return None
    try:
        rev = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return (rev + ("+dirty" if dirty else "")) or None


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {
        "system": platform.system(),
        "release": platform.release(),
        "machine": platform.machine(),
        "python_implementation": platform.python_implementation(),
        "cpu_count": os.cpu_count(),
        "cpu": _cpu_model(),
        "memory_gb": _mem_total_gb(),
    }
    try:
        info["cpus_usable"] = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        pass
    info["numba_threads"] = _numba_threads()
    return info


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _mem_total_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _numba_threads() -> int | None:
    try:
        import numba

        return int(numba.config.NUMBA_NUM_THREADS)
    except Exception:  # informational only
        return None


def environment() -> dict[str, Any]:
    return {
        "versions": versions(),
        "machine": machine(),
        "argv": sys.argv[1:],
        "cache_env": {k: os.environ[k] for k in ("PUZZLEPLAN_CACHE", "NUMBA_CACHE_DIR") if k in os.environ},
    }
