"""Progress reporting: engines report figures at their clock checks; the CLI shows them on stderr only."""

from __future__ import annotations

import json

from helpers import FAYAA, write_klotski
from test_cli import run_cli

from puzzleplan import api
from puzzleplan.progress import LiveLine, for_cli
from puzzleplan.solvers import Limits
from puzzleplan.solvers.progress import Collect

FAYAA1 = f"{FAYAA}#fayaa-001"


def test_log_progress_writes_json_lines_on_stderr_and_json_stays_alone_on_stdout(capsys):
    code, out, err = run_cli(["solve", "klotski", FAYAA1, "--json", "--log-progress",
                              "--progress-every", "0.000001"], capsys)
    assert code == 0
    assert json.loads(out)["cost"] == 81                  # stdout: exactly one JSON object
    lines = [json.loads(ln) for ln in err.splitlines()]
    assert lines, "a search of tens of thousands of states reports at least once"
    for rec in lines:
        assert rec["event"] == "progress" and rec["engine"] == "bfs"
        assert {"elapsed_s", "depth", "frontier", "states", "expanded", "states_per_s", "rss_mb"} <= set(rec)
        assert 0 <= rec["depth"] <= 81 and rec["states"] >= rec["frontier"] > 0
    exp = [rec["expanded"] for rec in lines]
    assert exp == sorted(exp)


def test_nothing_on_stderr_or_stdout_besides_the_json_when_not_a_terminal(capsys):
    code, out, err = run_cli(["solve", "klotski", FAYAA1, "--json"], capsys)
    assert code == 0 and err == ""
    json.loads(out)
    assert for_cli("bfs") is None                          # pytest's stderr is not a TTY
    assert for_cli("bfs", quiet=True) is None
    assert for_cli("bfs", log=True) is not None


def test_numpy_bfs_reports_once_per_layer(tmp_path):
    p = write_klotski(tmp_path / "t.txt", ["AB.", "CDE", "F.G"], size=(3, 3), goal=(2, 2))
    loaded = api.load_task("klotski", str(p), ["metric=steps"])
    seen = Collect(every=0.0)
    result = api.solve(loaded, "bfs", Limits(progress=seen), kernel="numpy")
    depths = [u["depth"] for u in seen.updates]
    # one report after each closed layer: depths 1, 2, ... up to the layer holding the goal
    assert depths == list(range(1, len(depths) + 1)) and len(depths) >= result.cost
    assert all(u["frontier"] >= 0 and u["elapsed_s"] >= 0 for u in seen.updates)


def test_astar_reports_a_monotone_f_bound():
    loaded = api.load_task("klotski", FAYAA1)
    seen = Collect(every=0.0)
    result = api.solve(loaded, "astar", Limits(progress=seen))
    fs = [u["f_bound"] for u in seen.updates]
    assert fs and fs == sorted(fs) and fs[-1] <= result.cost


def test_throttle_limits_the_number_of_updates():
    loaded = api.load_task("klotski", FAYAA1)
    seen = Collect(every=3600.0)
    api.solve(loaded, "astar", Limits(progress=seen))
    assert seen.updates == []                              # the first update is due only after an hour


def test_live_line_names_the_figures():
    line = LiveLine.line("bfs", {"elapsed_s": 2.0, "depth": 12, "frontier": 3456, "states": 10_000,
                                 "expanded": 8000})
    assert line.startswith("bfs | depth 12 | frontier 3,456 | states 10,000")
    assert "4,000 states/s" in line and "MB" in line and line.endswith("2.0 s")


def test_ga_reports_generation_and_best_fitness_matching_its_history():
    from helpers import ROOT

    loaded = api.load_task("skyscraper", str(ROOT / "instances" / "skyscraper" / "tonybank-5x5-3.txt"))
    for preset in ("paper", "improved"):
        seen = Collect(every=0.0)
        res = api.solve(loaded, "ga", Limits(progress=seen), preset=preset, seed=1, generations=30,
                        history=True)
        gens = [u["generation"] for u in seen.updates]
        assert gens == list(range(1, len(gens) + 1)) and gens
        hist = res.stats["history"]
        # the figure reported after generation g is the history's entry for g
        assert [u["best_fitness"] for u in seen.updates] == hist[1:len(gens) + 1]
        evals = [u["evaluations"] for u in seen.updates]
        assert evals == sorted(evals) and evals[-1] <= res.stats["evaluations"]


def test_symbolic_engines_report_horizon_and_a_sound_bound_during_their_solver_calls():
    """sat and cpsat report while a solver call runs (slices; CP-SAT's watch thread), not only
    between horizons, and the bound they report never passes the optimum nor goes down."""
    loaded = api.load_task("sliding", "instances/sliding/eight-depths.txt#walk-2050-010")
    for engine in ("sat", "cpsat"):
        seen = Collect(every=0.0)
        result = api.solve(loaded, engine, Limits(progress=seen), kernel="numpy")
        assert result.status == "optimal" and result.cost == 24
        bounds = [u["lower_bound"] for u in seen.updates]
        assert bounds and bounds == sorted(bounds) and bounds[-1] <= result.cost, engine
        assert all("horizon" in u and "conflicts" in u for u in seen.updates), engine
        if engine == "cpsat":      # reports from inside the solve of the model that proves the optimum
            assert any(u.get("solve_s", 0) > 0 for u in seen.updates)
        else:                      # more reports than horizons: the long calls report from their slices
            assert len(seen.updates) > len({u["horizon"] for u in seen.updates})
