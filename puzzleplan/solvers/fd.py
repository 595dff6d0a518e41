"""Engine ``fd``: Fast Downward on the task's PDDL export, as an external referee.

Why: our exact engines share the IR, the kernels and the checker; Fast Downward
(Helmert, "The Fast Downward planning system", JAIR 2006) shares nothing with
them but the PDDL of :mod:`puzzleplan.encodings.pddl`.  When its optimum equals
ours, the grounding, the kernels and the search are checked by a mature planner
nobody on this team wrote.

How: the task is exported to a temporary directory and FD's own driver
(``fast-downward.py`` in the ``up-fast-downward`` wheel, which carries the
compiled planner; ``pip install 'puzzleplan[fd]'``) runs its translator and
search on it: ``astar(lmcut())`` when the PDDL is STRIPS with action costs
(LM-cut: Helmert & Domshlak, ICAPS 2009; admissible), ``astar(blind())`` when it
needs derived predicates, which LM-cut does not support.  The plan FD writes is
mapped back to ground actions by name and replayed by the reference checker
(``api.solve``) like every other engine's.  Both searches are A* with an
admissible heuristic, so a plan is reported ``optimal``; FD's "no solution"
after a complete search is ``unsolvable``.

Symmetry: the export writes each group of interchangeable objects
(``Model.interchangeable``) anonymously where it can show that is exact, so FD
searches the same canonical states as our engines (Hua Rong Dao 横刀立马,
steps: 23,909 states blind instead of 10.4 million); the plan is mapped back
to labelled objects by replay.  ``symmetric=false`` labels every object: the
referee is then independent of the model's symmetry declaration too, at the
price of up to ``k!`` copies of each state.

Options: ``search`` = ``auto`` (default: lmcut if STRIPS, else blind) | ``lmcut``
| ``blind`` | any FD search string, e.g. ``astar(ipdb())`` (then the result
is ``optimal`` only for ``astar(...)`` searches, trusting the user's choice of
an admissible heuristic); ``max_split`` (copies per ground action in the
export, see ``encodings/pddl.py``); ``invariant_s`` (CPU seconds for the
translator's invariant synthesis, default 2, 0 skips it: the invariants only
merge propositions into multi-valued variables; with a written variable whose
old value is unknown -- Hua Rong Dao's ``last`` -- the synthesis can take
seconds, while the value predicates' invariants, checked first, are found well
within the cap); ``symmetric`` (default true, see above); ``keep`` (a
directory to keep the PDDL, FD's log and plan in).
``--time-limit`` covers export, translation and search (FD gets what is
left, as its ``--overall-time-limit``, a CPU-time limit, and is stopped by us
5 s after the wall-clock deadline); ``--max-memory`` becomes FD's
``--overall-memory-limit``, what this process does not hold when FD starts
(one budget for both, as for our own engines); ``max_states`` is not passed on
(FD has no such limit).  A run FD does not finish is a ``limit`` with FD's
figures so far and, for an A* search, its last f-bound as ``lower_bound``.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ..encodings.pddl import DEFAULT_MAX_SPLIT, export, read_plan
from ..lang.errors import EXIT_BAD_OPTION, PuzzleError
from .result import STOP, Clock, Limits, Result, rss_bytes

EXIT_FD_MISSING = EXIT_BAD_OPTION  # like the plot and render extras: a missing optional package is exit 31

SEARCHES = {"lmcut": "astar(lmcut())", "blind": "astar(blind())"}

# FD driver exit codes (driver/returncodes.py of Fast Downward)
_FD_UNSOLVABLE = (10, 11)         # translator / search proved no plan exists
_FD_INCOMPLETE = (12,)            # search ended without a plan, incompletely
_FD_OUT_OF_RESOURCES = (20, 21, 22, 23, 24)
# what a component that could not get memory under --overall-memory-limit leaves in the log
_NO_MEMORY = ("MemoryError", "failed to map segment", "Failed to allocate memory", "Cannot allocate memory")


def driver_path() -> Path:
    """``fast-downward.py`` of the installed ``up-fast-downward`` package, or a one-line error."""
    spec = importlib.util.find_spec("up_fast_downward")
    if spec is None or spec.origin is None:
        raise PuzzleError("engine fd needs Fast Downward: pip install 'puzzleplan[fd]' "
                          "(the up-fast-downward package)", code=EXIT_FD_MISSING)
    path = Path(spec.origin).parent / "downward" / "fast-downward.py"
    if not path.is_file():
        raise PuzzleError(f"engine fd: the up-fast-downward package has no planner driver at {path}",
                          code=EXIT_FD_MISSING)
    return path


def available() -> bool:
    try:
        driver_path()
    except PuzzleError:
        return False
    return True


_FIGURES = {
    "expanded": re.compile(r"Expanded (\d+) state"),
    "generated": re.compile(r"Generated (\d+) state"),
    "evaluated": re.compile(r"Evaluated (\d+) state"),
    "fd_cost": re.compile(r"Plan cost: (\d+)"),
    "fd_search_s": re.compile(r"Search time: ([\d.]+)s"),
    "fd_total_s": re.compile(r"Total time: ([\d.]+)s"),
    "fd_translate_s": re.compile(r"Done! \[[\d.]+s CPU, ([\d.]+)s wall-clock\]"),
    "fd_peak_kb": re.compile(r"Peak memory: (\d+) KB"),
}
# A*'s progress line: printed each time the least f on the open list grows
_F_LINE = re.compile(r"\] f = (\d+), (\d+) evaluated, (\d+) expanded")


def parse_log(text: str) -> dict[str, Any]:
    """The figures FD's log reports (the last occurrence of each: the final counts)."""
    out: dict[str, Any] = {}
    for key, rx in _FIGURES.items():
        found = rx.findall(text)
        if found:
            val = found[-1]
            out[key] = float(val) if "." in val else int(val)
    return out


def f_progress(text: str) -> tuple[int, int, int] | None:
    """(f, evaluated, expanded) of A*'s last progress line in FD's log, None if it printed none."""
    found = _F_LINE.findall(text)
    if not found:
        return None
    f, evaluated, expanded = found[-1]
    return int(f), int(evaluated), int(expanded)


def _limit(stats: dict[str, Any], log: str, what: str, astar: bool) -> Result:
    """A run FD did not finish (``stats`` already hold the log's figures): its progress so far and,
    for an A* search, its f-bound.

    Why the bound holds: A* with an admissible heuristic keeps a state of an optimal plan on its
    open list, with f at most the optimum, until the goal is taken; so the least f on the open
    list, which FD prints each time it grows, never exceeds the optimum.  (The same trust in the
    heuristic as an ``optimal`` claim: LM-cut and blind are admissible; a search string given by
    the user is taken at its word.)
    """
    last = f_progress(log)
    if last is not None:
        stats.setdefault("evaluated", last[1])
        stats.setdefault("expanded", last[2])
    if last is None or not astar:
        return Result("limit", "fd", stats=stats, message=what)
    stats["lower_bound"] = last[0]
    return Result("limit", "fd", stats=stats,
                  message=f"{what}; no plan costs less than {last[0]} (Fast Downward's A* f-bound)")


GRACE_S = 5.0     # after the wall-clock deadline, FD's own CPU-time limit has this long to end it
POLL_S = 0.2


def _run(cmd: list[str], work: Path, clock: Clock) -> tuple[int | None, str]:
    """FD's exit code and log; None when we stopped it (a signal, or the deadline plus ``GRACE_S``).

    Why a process group of its own, killed whole: the driver starts the translator and the search
    as children, and killing the driver alone left the search running, orphaned, until its CPU
    limit.  Its own session also keeps a terminal's Ctrl-C from reaching FD first: the signal stops
    this process's clock, and the group goes with it here.
    """
    proc = subprocess.Popen(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONHASHSEED": "0"}, start_new_session=True)
    try:
        while True:
            try:   # a retry loses no output: the last call returns all of it
                text, _ = proc.communicate(timeout=POLL_S)
                return proc.returncode, text or ""
            except subprocess.TimeoutExpired:
                left = clock.left()
                if clock.interrupted() or STOP.pending() or \
                        (left is not None and left < -GRACE_S):
                    break
        _kill(proc)
        text, _ = proc.communicate()
        return None, text or ""
    finally:
        if proc.poll() is None:     # an exception on the way out: leave nothing running
            _kill(proc)
            proc.wait()


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:      # already gone
        pass


def solve(kernel: Any, limits: Limits, search: str = "auto", max_split: int = DEFAULT_MAX_SPLIT,
          invariant_s: int = 2, keep: str = "", symmetric: bool = True) -> Result:
    task = kernel.task
    clock = Clock(limits)
    driver = driver_path()
    if max_split < 1:
        raise PuzzleError(f"engine fd: max_split must be >= 1, got {max_split}", code=EXIT_BAD_OPTION)
    pddl = export(task, name=task.name, max_split=max_split, symmetric=symmetric)
    if search == "auto":
        search_str = SEARCHES["lmcut" if pddl.strips else "blind"]
    else:
        search_str = SEARCHES.get(search, search)
    if "lmcut" in search_str and not pddl.strips:
        raise PuzzleError("engine fd: LM-cut does not support the derived predicates this task's PDDL needs; "
                          "use -E search=blind (or auto)", code=EXIT_BAD_OPTION)
    export_s = clock.elapsed()
    stats: dict[str, Any] = {"search": search_str, "strips": pddl.strips, "export_s": round(export_s, 3),
                             **pddl.stats}
    astar = search_str.replace(" ", "").startswith("astar(")
    with tempfile.TemporaryDirectory(prefix="puzzleplan-fd-") as tmp:
        work = Path(keep) if keep else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        (work / "domain.pddl").write_text(pddl.domain, encoding="utf-8")
        (work / "problem.pddl").write_text(pddl.problem, encoding="utf-8")
        plan_file = work / "plan.txt"
        if plan_file.exists():
            plan_file.unlink()
        cmd = [sys.executable, str(driver), "--plan-file", str(plan_file)]
        left = None
        if clock.deadline is not None:
            left = clock.deadline - time.perf_counter()
            if left <= 0:
                return Result("limit", "fd", stats=clock.stats(**stats),
                              message="time limit during the export")
            cmd += ["--overall-time-limit", f"{max(1, math.ceil(left))}s"]
        if limits.max_rss_mb is not None:
            # --max-memory covers this process and FD: FD's driver caps each of its components'
            # address space at what this process does not hold
            fd_mb = int(limits.max_rss_mb - rss_bytes() / 2**20)
            stats["fd_memory_limit_mb"] = fd_mb
            if fd_mb < 1:
                return Result("limit", "fd", stats=clock.stats(**stats),
                              message="memory limit: nothing left for Fast Downward after the export")
            cmd += ["--overall-memory-limit", f"{fd_mb}M"]
        cmd += [str(work / "domain.pddl"), str(work / "problem.pddl"),
                "--translate-options", "--invariant-generation-max-time", str(max(0, int(invariant_s))),
                "--search-options", "--search", search_str]
        code, log = _run(cmd, work, clock)
        if keep:
            (work / "fd.log").write_text(log, encoding="utf-8")
        stats.update(parse_log(log))
        if code is None:
            return _limit(clock.stats(**stats), log, f"{clock.reason()} (Fast Downward stopped)", astar)
        stats["fd_exit"] = code
        if code in (0, 1, 2, 3) and plan_file.exists():
            plan = pddl.plan_from_names(read_plan(plan_file.read_text(encoding="utf-8")))
            cost = sum(task.actions[k].cost for k in plan)
            msg = ""
            if "fd_cost" in stats and stats["fd_cost"] != cost:
                msg = f"Fast Downward reported cost {stats['fd_cost']}, the mapped plan costs {cost}"
            optimal = astar and code == 0
            # the optimum of an anonymous export rests on the model's interchangeable declaration
            sym = " over anonymous interchangeable objects" if pddl.stats["anonymous_groups"] else ""
            return Result("optimal" if optimal else "solved", "fd", cost, plan, clock.stats(**stats),
                          message=msg, proof=f"Fast Downward {search_str}{sym}" if optimal else "")
    if code in _FD_UNSOLVABLE:
        return Result("unsolvable", "fd", stats=clock.stats(**stats),
                      proof=f"Fast Downward {search_str}: no plan "
                            f"({'translator' if code == 10 else 'search'})")
    if code in _FD_OUT_OF_RESOURCES:
        what = "time" if code in (21, 23, 24) else "memory"
        return _limit(clock.stats(**stats), log, f"Fast Downward ran out of {what}", astar)
    if limits.max_rss_mb is not None and any(sign in log for sign in _NO_MEMORY):
        # a cap too small for a component to start: the loader or Python's MemoryError ends it
        return _limit(clock.stats(**stats), log, "Fast Downward ran out of memory", astar)
    if clock.deadline is not None and (clock.out_of_time() or "exit code: -24" in log):
        # FD's driver enforces --overall-time-limit as a CPU-time rlimit: SIGXCPU (-24) ends it
        return _limit(clock.stats(**stats), log, f"{clock.reason()} (Fast Downward stopped)", astar)
    if code in _FD_INCOMPLETE:
        return Result("unknown", "fd", stats=clock.stats(**stats), message="Fast Downward: search incomplete")
    last = [ln for ln in log.strip().splitlines() if ln.strip()][-3:]
    raise PuzzleError(f"engine fd: Fast Downward failed (exit {code}): " + " | ".join(last)[-300:],
                      code=EXIT_BAD_OPTION)


__all__ = ["EXIT_FD_MISSING", "SEARCHES", "available", "driver_path", "parse_log", "solve"]
