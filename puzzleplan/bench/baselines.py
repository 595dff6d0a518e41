"""The plain-Python baselines of ``kind = "speed"`` suites (speed.py, memprobe.py).

* ``reference_bfs`` runs on any grounded task through the plain-Python
  reference interpreter (``verify.reference.successors`` and ``canonical``):
  a dict of visited states and a deque, one state at a time, no numpy; a 0-1
  BFS (zero-cost successors go to the front), so it is exact for 0/1-cost
  models too.  It tests the goal when a state is taken off the queue (as the
  layered ``bfs`` engine does) and counts ``expanded`` and ``generated`` the
  same way; the time it reports is search time only.
* A *hand-written* baseline, written for one puzzle, is not part of the
  package: a suite names its file (``hand_written = "hrd_baseline.py"``, next
  to the suite) and :func:`load_hand_written` loads it by path.  The file
  defines ``start_board(loaded)`` (untimed preparation) and
  ``bfs(board, metric, stop_at_goal=True)`` returning a :class:`BaselineRun`.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from ..ir.task import Task
from ..lang.errors import EXIT_BAD_OPTION, PuzzleError
from ..verify import reference


@dataclass
class BaselineRun:
    name: str
    metric: str
    cost: int | None
    expanded: int
    generated: int
    visited: int
    time_s: float
    plan: list[Any] = field(default_factory=list)

    @property
    def states_per_s(self) -> float:
        return self.expanded / self.time_s if self.time_s > 0 else float("inf")


def load_hand_written(path: str | Path) -> ModuleType:
    """A suite's hand-written baseline file, loaded by path (it lives in bench/, outside the package)."""
    p = Path(path).resolve()
    name = f"puzzleplan_baseline_{p.stem}_{abs(hash(str(p)))}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, p) if p.is_file() else None
    if spec is None or spec.loader is None:
        raise PuzzleError("no such hand-written baseline file", str(p), code=EXIT_BAD_OPTION)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    for attr in ("start_board", "bfs"):
        if not callable(getattr(mod, attr, None)):
            sys.modules.pop(name, None)
            raise PuzzleError(f"hand-written baseline defines no {attr}() function", str(p),
                              code=EXIT_BAD_OPTION)
    return mod


def reference_bfs(task: Task, stop_at_goal: bool = True) -> BaselineRun:
    """0-1 BFS (dict + deque) with ``reference.successors`` and ``reference.canonical``."""
    if task.cost_kind == "general":
        raise ValueError("reference_bfs handles unit and 0/1 action costs only")
    t0 = time.perf_counter()
    start = reference.canonical(task, task.init)
    dist: dict[tuple[int, ...], int] = {start: 0}
    parent: dict[tuple[int, ...], tuple[tuple[int, ...], int] | None] = {start: None}
    queue: deque[tuple[int, tuple[int, ...]]] = deque([(0, start)])
    expanded = generated = 0
    found: tuple[tuple[int, ...], int] | None = None
    while queue:
        d, state = queue.popleft()
        if d > dist[state]:
            continue            # a stale entry: reached more cheaply since it was queued
        if found is None and reference.is_goal(task, state):
            found = (state, d)
            if stop_at_goal:
                break
        expanded += 1
        for k, nxt, cost in reference.successors(task, state):
            generated += 1
            key = reference.canonical(task, nxt)
            nd = d + cost
            old = dist.get(key)
            if old is None or nd < old:
                dist[key] = nd
                parent[key] = (state, k)
                if cost == 0:
                    queue.appendleft((nd, key))
                else:
                    queue.append((nd, key))
    elapsed = time.perf_counter() - t0
    plan: list[Any] = []
    if found is not None:
        s = found[0]
        while parent[s] is not None:
            prev, k = parent[s]  # type: ignore[misc]
            plan.append(k)
            s = prev
        plan.reverse()
    return BaselineRun("reference", task.name, found[1] if found else None, expanded, generated,
                       len(dist), elapsed, plan)
