"""Engine ``fd``: Fast Downward on the PDDL export agrees with our exact engines.

Differential: FD's optimum (A* with LM-cut, or blind where the export needs
derived predicates) equals bfs's on small tasks of every bundled transition
model, and its plan, mapped back to ground actions, passes the reference
checker.  The translator parsing our files is part of each run.  Skipped as
a whole when the optional package (extra ``fd``) is not installed, except the
test of the one-line error that then appears.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import run_cli, write_klotski

from puzzleplan import api
from puzzleplan.lang.errors import PuzzleError
from puzzleplan.solvers import fd
from puzzleplan.solvers.result import Limits

ROOT = Path(__file__).resolve().parent.parent
MICROBAN = str(ROOT / "instances/sokoban/microban.xsb")
EIGHT = str(ROOT / "instances/sliding/eight-depths.txt")

needs_fd = pytest.mark.skipif(not fd.available(), reason="Fast Downward not installed (pip install '.[fd]')")


def _agree(loaded: api.Loaded, **fd_options) -> api.Result:
    best = api.solve(loaded, "bfs", kernel="numpy")  # no kernel compilation: the test stays short
    assert best.status == "optimal"
    r = api.solve(loaded, "fd", Limits(time_s=120), **fd_options)
    assert r.status == "optimal", r.message
    assert r.cost == best.cost, (r.cost, best.cost)
    assert r.stats["verified"], r.message
    return r


@needs_fd
@pytest.mark.parametrize("record", ["walk-2034-060", "walk-2042-008"])
def test_eight_puzzle(record: str):
    r = _agree(api.load_task("sliding", f"{EIGHT}#{record}"))
    assert r.stats["search"] == "astar(lmcut())" and r.stats["strips"]


@needs_fd
@pytest.mark.parametrize("opts", [["level=1"], ["level=2", "metric=moves"]])
def test_sokoban(opts: list[str]):
    """Anonymous boxes (a push is written once for all boxes, "some box on goal g" is one atom), and
    labelled boxes, where the goal goes through the achiever phase."""
    loaded = api.load_task("sokoban", MICROBAN, opts)
    r = _agree(loaded)
    assert r.stats["anonymous_groups"] == 1 and r.stats["pddl_actions"] < r.stats["ground_actions"]
    r = _agree(loaded, symmetric=False)
    assert r.stats["anonymous_groups"] == 0 and r.stats["pddl_actions"] == r.stats["ground_actions"]


@needs_fd
@pytest.mark.parametrize("metric", ["moves", "steps"])
def test_small_klotski(tmp_path: Path, metric: str):
    """A 3x3 board with a 1x2 piece: 0/1 costs (moves) and unit costs (steps)."""
    path = write_klotski(tmp_path / "shapes.txt", ["A.B", "CCD", "E.D"], (3, 3), (0, 2))
    _agree(api.load_task("klotski", str(path), [f"metric={metric}"]))


@needs_fd
@pytest.mark.parametrize("metric", ["steps", "moves"])
def test_anonymous_pieces_shrink_fd_search(tmp_path: Path, metric: str):
    """Six 1x1 soldiers around a 1x1 target: FD blind on the anonymous export expands a fraction of
    the states it expands on the labelled one (up to 6! labellings of each); both optima equal bfs's
    and both plans, mapped back to labelled pieces, pass the reference checker (in api.solve)."""
    path = write_klotski(tmp_path / "soldiers.txt", ["ABC", "DEF", "G.."], (3, 3), (2, 2))
    loaded = api.load_task("klotski", str(path), [f"metric={metric}"])
    anon = _agree(loaded, search="blind")
    flat = _agree(loaded, search="blind", symmetric=False)
    assert anon.stats["anonymous_groups"] == 1 and flat.stats["anonymous_groups"] == 0
    if metric == "steps":   # 152 against 3,356 when written
        assert anon.stats["expanded"] * 5 < flat.stats["expanded"]


@needs_fd
def test_zen_garden_strips_and_derived():
    loaded = api.load_task("zpg", str(ROOT / "instances/zpg/waikato-3x3-a.txt"))
    r = _agree(loaded)
    assert r.stats["strips"]
    # a split budget too small for the dead-end test: derived predicates, so FD searches blind
    r = _agree(loaded, max_split=4)
    assert not r.stats["strips"] and r.stats["search"] == "astar(blind())"
    with pytest.raises(PuzzleError, match="LM-cut does not support"):
        api.solve(loaded, "fd", max_split=4, search="lmcut")


@needs_fd
def test_unsolvable(tmp_path: Path):
    path = write_klotski(tmp_path / "stuck.txt", ["BAA", "BAA", "C.."], (3, 3), (1, 0))
    loaded = api.load_task("klotski", str(path), ["metric=steps"])
    assert api.solve(loaded, "bfs", kernel="numpy").status == "unsolvable"
    r = api.solve(loaded, "fd", Limits(time_s=120))
    assert r.status == "unsolvable" and r.plan is None


@needs_fd
def test_time_limit_is_status_limit():
    loaded = api.load_task("klotski", f"{ROOT / 'instances/klotski/fayaa.txt'}#fayaa-001")
    r = api.solve(loaded, "fd", Limits(time_s=1))
    assert r.status == "limit" and r.plan is None


@needs_fd
def test_a_time_limit_keeps_fds_a_star_bound():
    """FD's last "f = N" line bounds the optimum below; astar's proven optimum is the check."""
    loaded = api.load_task("sokoban", MICROBAN, ["level=145", "metric=pushes"])
    best = api.solve(loaded, "astar")
    r = api.solve(loaded, "fd", Limits(time_s=3))
    assert best.status == "optimal" and r.status == "limit" and r.plan is None
    assert 1 <= r.stats["lower_bound"] <= best.cost and r.stats["expanded"] > 0
    assert f"no plan costs less than {r.stats['lower_bound']}" in r.message


@needs_fd
def test_max_memory_caps_fast_downward():
    """--max-memory covers FD's processes too: a cap a few MiB above this process ends FD cleanly."""
    from puzzleplan.solvers.result import rss_bytes

    loaded = api.load_task("sokoban", MICROBAN, ["level=145", "metric=pushes"])
    # below what the process holds: nothing left (this first call also grows the process by the
    # export); then a few MiB: FD's components cannot even load
    for extra in (-1, 8):
        r = api.solve(loaded, "fd", Limits(time_s=60, max_rss_mb=rss_bytes() / 2**20 + extra))
        assert r.status == "limit" and "memory" in r.message and r.plan is None, r.message
        assert r.stats["fd_memory_limit_mb"] <= extra


@needs_fd
def test_cli_solve_and_verify(capsys):
    argv = ["solve", "sliding", f"{EIGHT}#walk-2034-060", "-e", "fd", "-O", "search=blind", "--json"]
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    assert '"engine": "fd"' in out and '"astar(blind())"' in out
    code, out, err = run_cli(["verify", "sokoban", MICROBAN, "-O", "level=1", "--engines", "bfs,astar,fd"],
                             capsys)
    assert code == 0, err
    assert "confirmed: optimum" in out and "Fast Downward" in out


def test_missing_package_is_one_line_naming_the_extra(monkeypatch, capsys):
    real = fd.importlib.util.find_spec
    monkeypatch.setattr(fd.importlib.util, "find_spec",
                        lambda name, *a: None if name == "up_fast_downward" else real(name, *a))
    code, _, err = run_cli(["solve", "sliding", f"{EIGHT}#walk-2034-060", "-e", "fd"], capsys)
    assert code == 31
    assert "puzzleplan[fd]" in err and len(err.strip().splitlines()) == 1


@needs_fd
def test_a_stop_ends_fast_downward_and_its_children(tmp_path):
    """A signal while FD searches: a limit with FD's bound, and no FD process left behind (killing
    the driver alone left its search running, orphaned, until FD's own CPU limit)."""
    import os
    import signal
    import threading

    from puzzleplan.solvers.result import STOP

    loaded = api.load_task("sokoban", MICROBAN, ["level=93", "metric=pushes", "prune=none"])
    timer = threading.Timer(3.0, STOP.request, (signal.SIGTERM,))
    timer.start()
    try:
        r = api.solve(loaded, "fd", Limits(time_s=120), keep=str(tmp_path))
    finally:
        timer.cancel()
        STOP.signum = None
    assert r.status == "limit" and r.message.startswith("interrupted"), r.message
    assert r.stats["time_s"] < 60 and r.stats["lower_bound"] <= 34   # astar's optimum of level 93
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if str(tmp_path).encode() in f.read():
                    left.append(pid)
        except OSError:
            pass
    assert left == []
