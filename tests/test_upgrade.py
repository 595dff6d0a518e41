"""A search that moves from the interpreted kernel to the compiled one mid-run (solvers/upgrade.py).

The property: switching kernels at a slice boundary changes nothing but the speed.  Each engine
runs twice on the 31-move 8-puzzle: on the interpreter alone, and on the interpreter with an
upgrade whose compiled kernel (built by the session already, see conftest.NUMBA_TASKS) is ready
at the engine's third poll.  Optimum, plan cost, layers and node counts must be the same, and the
switch must really have happened mid-search.  The forked child's state machine is tested apart.
"""

from __future__ import annotations

import os
import time

import pytest

from puzzleplan.encodings.kernel import CHILD_FAILED, CHILD_OK
from puzzleplan.solvers import ENGINES, Limits
from puzzleplan.solvers.progress import Collect
from puzzleplan.solvers.upgrade import Upgrade
from puzzleplan.verify.reference import check_plan


def _run(loaded, engine: str, upgrade: Upgrade | None, **options):
    kernel = loaded.kernel("interpreted")
    kernel.upgrade = upgrade
    try:
        return ENGINES[engine](kernel, Limits(), **options)
    finally:
        kernel.upgrade = None


class _ReadyAt:
    """An upgrade whose compiled kernel is ready at the ``n``-th poll: the engine side alone,
    without the timing of a real child process."""

    def __init__(self, kernel, n: int):
        self.kernel, self.n, self.polls, self.switched_at = kernel, n, 0, None

    def poll(self):
        self.polls += 1
        if self.polls == self.n:
            self.switched_at = self.polls
            return self.kernel
        return None


@pytest.mark.parametrize("engine", ["bfs", "idastar", "astar"])
def test_switching_mid_search_changes_nothing_but_the_kernel(catalog, engine: str) -> None:
    loaded = catalog("eight")
    compiled = loaded.kernel("numba")
    assert compiled.backend == "numba"
    never = _ReadyAt(None, 0)              # counts the engine's safe points in a whole run
    plain = _run(loaded, engine, never)
    up = _ReadyAt(compiled, 3)
    switched = _run(loaded, engine, up)
    assert up.switched_at == 3 and never.polls > 3, "the switch must come mid-search"
    assert switched.status == plain.status == "optimal"
    assert switched.cost == plain.cost == 31
    assert check_plan(loaded.task, switched.plan).cost == 31
    for key in ("expanded", "generated", "layers", "states"):
        assert switched.stats.get(key) == plain.stats.get(key), key


def test_upgrade_compiles_in_a_child_and_hands_over_the_kernel(catalog) -> None:
    """The state machine with a real forked child: waiting, compiling, then the kernel, once;
    the progress listener hears both events."""
    compiled = catalog("eight").kernel("numba")
    events = Collect()
    up = Upgrade(lambda: CHILD_OK, lambda: compiled, after_s=0.0, progress=events, size={"actions": 24})
    assert up.poll() is None and up.state == "compiling"
    deadline = time.monotonic() + 30
    got = None
    while got is None and time.monotonic() < deadline:
        time.sleep(0.01)
        got = up.poll()
    assert got is compiled and up.state == "switched"
    assert up.poll() is None                       # handed over once
    assert [e["event"] for e in events.updates] == ["compile_start", "kernel_switch"]
    assert events.updates[0]["actions"] == 24 and up.stats["compile_s"] >= 0


def test_a_failed_compile_keeps_the_interpreter(catalog) -> None:
    loaded = catalog("eight")
    up = Upgrade(lambda: CHILD_FAILED, lambda: pytest.fail("must not load"), after_s=0.0)
    assert up.poll() is None
    os.waitid(os.P_PID, up.pid, os.WEXITED | os.WNOWAIT)   # the child has exited (not reaped)
    res = _run(loaded, "bfs", up)
    assert res.status == "optimal" and res.cost == 31
    assert up.state == "failed" and "code" in up.stats["failed"]


def test_an_upgrade_not_yet_due_starts_nothing(catalog) -> None:
    loaded = catalog("eight")
    up = Upgrade(lambda: pytest.fail("must not start"), lambda: pytest.fail("must not load"), after_s=3600.0)
    res = _run(loaded, "idastar", up)
    assert res.cost == 31 and up.state == "waiting" and up.pid is None
