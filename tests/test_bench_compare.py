"""`bench compare`: geometric-mean time ratios per engine from two generated bench result files."""

from __future__ import annotations

import json
import math

from test_cli import run_cli

from puzzleplan.bench.compare import compare


def rec(inst: str, engine: str, t: float, status: str = "optimal", cost: int = 5, rep: int = 0) -> dict:
    return {"suite": "s", "instance": inst, "option_args": [], "engine": engine, "kernel": "numba",
            "repetition": rep, "status": status, "cost": cost, "time_s": t}


def write(path, records) -> str:
    path.write_text(json.dumps({"format": "puzzleplan-bench/1", "records": records}), encoding="utf-8")
    return str(path)


A = [rec("i1", "bfs", 1.0), rec("i2", "bfs", 1.0), rec("i1", "astar", 0.5), rec("i2", "astar", 2.0),
     rec("i3", "astar", 1.0), rec("i4", "bfs", 1.0), rec("only-a", "bfs", 1.0)]
B = [rec("i1", "bfs", 2.0), rec("i2", "bfs", 8.0),                       # bfs: 2x and 8x slower -> 4x
     rec("i1", "astar", 1.0, rep=0), rec("i1", "astar", 0.25, rep=1), rec("i1", "astar", 0.25, rep=2),
     rec("i2", "astar", 1.0),                                            # astar: 0.5x and 0.5x -> 0.5
     rec("i3", "astar", 9.0, status="limit", cost=None),                # unfinished: no ratio, a change
     rec("i4", "bfs", 1.0, cost=6),                                     # same time, cost changed
     rec("only-b", "astar", 1.0)]


def test_geometric_means_per_engine_and_overall():
    c = compare(A, B)
    assert math.isclose(c["engines"]["bfs"]["geomean_ratio"], (2 * 8 * 1) ** (1 / 3))
    assert c["engines"]["bfs"]["pairs"] == 3
    # astar i1: the median of its three repetitions (0.25) against 0.5 -> 0.5; i3 hit the limit: left out
    assert c["engines"]["astar"]["pairs"] == 2
    assert math.isclose(c["engines"]["astar"]["geomean_ratio"], 0.5)
    assert c["overall"]["pairs"] == 5
    assert math.isclose(c["overall"]["geomean_ratio"], (2 * 8 * 1 * 0.5 * 0.5) ** (1 / 5))


def test_largest_changes_status_changes_and_unpaired_runs():
    c = compare(A, B, top=2)
    assert len(c["largest"]) == 2
    assert c["largest"][0]["run"] == "i2 bfs" and c["largest"][0]["ratio"] == 8.0
    assert math.isclose(abs(math.log(c["largest"][1]["ratio"])), math.log(2))   # next: 2x or 0.5x
    changed = {ch["run"]: (ch["a"], ch["b"]) for ch in c["status_changes"]}
    assert changed == {"i3 astar": ("optimal 5", "limit None"), "i4 bfs": ("optimal 5", "optimal 6")}
    assert c["only_a"] == ["only-a bfs"] and c["only_b"] == ["only-b astar"]


def test_tiny_times_are_floored():
    c = compare([rec("x", "bfs", 1e-6)], [rec("x", "bfs", 1e-4)])
    assert c["engines"]["bfs"]["geomean_ratio"] == 1.0     # both under 1 ms: no change claimed


def test_cli_table_json_and_errors(tmp_path, capsys):
    a, b = write(tmp_path / "a.json", A), write(tmp_path / "b.json", B)
    code, out, err = run_cli(["bench", "compare", a, b], capsys)
    assert code == 0, err
    bfs_row = next(ln for ln in out.splitlines() if ln.startswith("bfs "))
    assert "3" in bfs_row.split()[1] and "2.520x" in bfs_row
    assert "largest changes:" in out and "i3 astar: optimal 5 -> limit None" in out
    code, out, _ = run_cli(["bench", "compare", a, b, "--json"], capsys)
    assert code == 0 and math.isclose(json.loads(out)["engines"]["astar"]["geomean_ratio"], 0.5)
    code, _, err = run_cli(["bench", "compare", a], capsys)
    assert code == 31 and err.count("\n") == 1
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    code, _, err = run_cli(["bench", "compare", a, bad], capsys)
    assert code == 30 and "records" in err and err.count("\n") == 1
    code, _, err = run_cli(["bench", "compare", a, tmp_path / "missing.json"], capsys)
    assert code == 30


# ----------------------------------------------------------------------------- plots and layer tables
def test_layer_table_is_the_papers_close_open_bookkeeping():
    from puzzleplan.bench.plot import layer_table

    # after layer n: CLOSE = layers 0..n, OPEN = layer n+1 (the HRD paper's Table I)
    assert layer_table([1, 3, 5, 2]) == [(0, 1, 3), (1, 4, 5), (2, 9, 2), (3, 11, 0)]


def test_solve_layers_prints_one_row_per_bfs_layer(tmp_path, capsys):
    from helpers import write_klotski

    p = write_klotski(tmp_path / "t.txt", ["AB.", "CDE", "F.G"], size=(3, 3), goal=(2, 2))
    code, out, _ = run_cli(["solve", "klotski", p, "-O", "metric=steps", "--json"], capsys)
    layers = json.loads(out)["stats"]["layers"]
    code, out, err = run_cli(["solve", "klotski", p, "-O", "metric=steps", "--layers"], capsys)
    assert code == 0, err
    table = out[out.index("layer  "):].splitlines()[1:]
    rows = [tuple(int(x.replace(",", "")) for x in ln.split()) for ln in table]
    assert [r[0] for r in rows] == list(range(len(layers)))
    assert [r[1] for r in rows] == [sum(layers[: n + 1]) for n in range(len(layers))]
    code, _, err = run_cli(["solve", "klotski", p, "-O", "metric=steps", "-e", "sat", "--layers"], capsys)
    assert code == 31 and "layer" in err


def test_plots_write_files(tmp_path, capsys):
    import pytest

    pytest.importorskip("matplotlib")
    a = write(tmp_path / "a.json", A)
    fig = tmp_path / "ct.png"
    code, out, err = run_cli(["bench", "plot", a, "-o", fig], capsys)
    assert code == 0, err
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"{len(A)} runs" in out                            # every record has a time and a cost
    code, _, err = run_cli(["bench", "plot", a, "-o", tmp_path / "x.txt"], capsys)
    assert code == 31 and err.count("\n") == 1
    code, _, err = run_cli(["bench", "plot", a, "-o", tmp_path / "no" / "x.svg"], capsys)
    assert code == 35
    from helpers import write_klotski

    p = write_klotski(tmp_path / "t.txt", ["AB.", "CDE", "F.G"], size=(3, 3), goal=(2, 2))
    svg = tmp_path / "layers.svg"
    code, _, err = run_cli(["solve", "klotski", p, "--layers-plot", svg], capsys)
    assert code == 0, err
    assert svg.read_text(encoding="utf-8").lstrip().startswith("<?xml")
