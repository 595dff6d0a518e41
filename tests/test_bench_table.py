"""Paper-style tables of bench suites (``[[table]]`` specs, puzzleplan/bench/table.py): rows,
pivot blocks, aggregates and footers rendered from hand-made records, and ``bench table``."""

from __future__ import annotations

import json

import pytest
from helpers import ROOT, run_cli

from puzzleplan.bench import runner
from puzzleplan.bench.suite import SuiteError, load_suite
from puzzleplan.bench.table import TableSpecError, check_spec, render_spec, table_rows


def rec(set_: str, id_: str, cost: int | None, time_s: float, expected: int = 4, **kw) -> dict:
    status = kw.pop("status", "solved" if cost is not None else "limit")
    return {"set": set_, "id": id_, "engine": "ga", "cost": cost, "expected": expected, "time_s": time_s,
            "status": status, "match": cost == expected, **kw}


RECORDS = [rec("paper", "b1", 4, 0.010, seed=0), rec("paper", "b1", 6, 0.030, seed=1),
           rec("paper", "b1", None, 0.500, seed=2),
           rec("improved", "b1", 4, 0.002, seed=0), rec("improved", "b1", 4, 0.004, seed=1),
           rec("paper", "b2-5x5", 5, 0.100, expected=5), rec("improved", "b2-5x5", 5, 0.050, expected=5)]


def cells(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.startswith("| ")]


def test_rows_pivot_blocks_and_aggregates() -> None:
    spec = check_spec({"rows": ["id"], "pivot": "set", "columns": [
        {"header": "board", "field": "id"},
        {"key": "ok", "header": "success %", "field": "status", "equals": "solved", "agg": "pct",
         "pivot": True, "format": ".0f"},
        {"key": "t", "header": "mean ms", "field": "time_s", "agg": "mean", "scale": 1000,
         "where": {"status": "solved"}, "pivot": True, "format": ".1f"},
        {"header": "runs", "agg": "count"},
        {"header": "excess %", "field": "cost", "relative_to": "expected", "agg": "mean", "format": ".1f",
         "where": {"set": "paper"}},
        {"header": "speed-up", "ratio": ["t@paper", "t@improved"], "format": ".1f"},
    ]})
    t = cells(render_spec(spec, RECORDS))
    assert t[0] == ["board", "paper: success %", "mean ms", "improved: success %", "mean ms", "runs",
                    "excess %", "speed-up"]
    assert t[1] == ["b1", "67", "20.0", "100", "3.0", "5", "25.0", "6.7"]
    assert t[2] == ["b2-5x5", "100", "100.0", "100", "50.0", "2", "0.0", "2.0"]
    assert len(t) == 3


def test_where_not_and_lists_std_inner_lookup_missing_and_footer() -> None:
    spec = check_spec({"rows": [{"field": "id", "pattern": r"(\d+x\d+)"}], "footer_label": "all",
                       "where": {"status": {"not": "limit"}}, "columns": [
        {"header": "size", "field": {"field": "id", "pattern": r"(\d+x\d+)"}, "missing": "?"},
        {"header": "boards", "field": "id", "agg": "distinct"},
        {"header": "best per seed, mean", "field": "cost", "inner": {"by": "seed", "agg": "min"},
         "agg": "mean", "format": ".2f"},
        {"header": "std", "field": "time_s", "agg": "std", "where": {"set": ["paper", "improved"]},
         "format": ".3f"},
        {"header": "quoted", "lookup": {"5x5": 1.5}, "missing": "time-out"},
        {"header": "optimal", "field": "match", "equals": True, "agg": "sum", "footer": "sum"},
    ]})
    headers, rows = table_rows(spec, RECORDS)
    assert [r[0] for r in rows] == [None, "5x5"]          # b1 has no size in its id
    # best per seed: seed 0 min(4, 4), seed 1 min(6, 4); std of 10, 30, 2, 4 ms
    assert rows[0][1:4] == [1, 4.0, pytest.approx(0.01279, abs=1e-5)]
    t = cells(render_spec(spec, RECORDS))
    assert t[1][0] == "?" and t[1][4] == "time-out" and t[2][4] == "1.50"
    assert t[-1] == ["all", "", "", "", "", "5"]        # footer: optimal runs summed over the rows (3 + 2)


def test_pick_keeps_the_most_informative_record_per_row() -> None:
    runs = [{"id": "2-2", "status": "limit", "lower_bound": 92}, {"id": "2-2", "status": "limit",
                                                                   "lower_bound": 79},
            {"id": "1-1", "status": "limit", "lower_bound": 20},
            {"id": "1-1", "status": "optimal", "lower_bound": None, "optimal": True, "cost": 23}]
    spec = check_spec({"rows": ["id"], "pick": ["optimal", "lower_bound"], "columns": [
        {"field": "id"}, {"field": "status"}, {"field": "lower_bound"}, {"field": "cost"}]})
    assert cells(render_spec(spec, runs))[1:] == [["2-2", "limit", "92", "-"], ["1-1", "optimal", "-", "23"]]


@pytest.mark.parametrize("bad, msg", [
    ({"columns": []}, "columns must be"),
    ({"columns": [{"field": "x", "agg": "avg"}]}, "agg must be one of"),
    ({"columns": [{"header": "x"}]}, "needs field"),
    ({"columns": [{"field": "x", "colour": 1}]}, "unknown keys colour"),
    ({"columns": [{"field": "x", "format": "%d"}]}, "bad format"),
    ({"rows": "id", "columns": [{"field": "x"}]}, "rows must be"),
    ({"columns": [{"ratio": ["a"]}]}, "ratio must name two"),
])
def test_bad_specs_are_named(bad: dict, msg: str) -> None:
    with pytest.raises(TableSpecError, match=msg):
        check_spec(bad)


def test_a_bad_table_fails_when_the_suite_loads(tmp_path) -> None:
    p = tmp_path / "s.toml"
    p.write_text(f'model = "sliding"\ninstances = ["{ROOT}/instances/sliding/eight.txt#eight-easy"]\n'
                 '[[table]]\ncolumns = [{ field = "cost", agg = "average" }]\n', encoding="utf-8")
    with pytest.raises(SuiteError, match="table 1, column 1: agg must be one of"):
        load_suite(str(p))


def test_bench_table_rerenders_a_result_and_joins_files(tmp_path, capsys) -> None:
    spec = {"rows": ["id"], "columns": [{"field": "id"}, {"header": "runs", "agg": "count"}]}
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"records": RECORDS[:3], "tables": [spec]}))
    b.write_text(json.dumps({"records": RECORDS[3:], "tables": []}))
    code, out, err = run_cli(["bench", "table", a, b], capsys)
    assert code == 0, err
    assert cells(out)[1:] == [["b1", "5"], ["b2-5x5", "2"]]
    code, out, err = run_cli(["bench", "table", b], capsys)
    assert code == 31 and "no [[table]] specs" in err and "Traceback" not in err
    code, out, err = run_cli(["bench", "table", b, "--spec", "sat-incremental"], capsys)
    assert code == 0 and cells(out)[0][0] == "depth"


def test_give_up_ends_an_engines_sweep_after_misses_in_a_row(tmp_path) -> None:
    eight = ROOT / "instances" / "sliding" / "eight-depths.txt"
    p = tmp_path / "g.toml"
    two = '["walk-2034-053", "walk-2034-060"]'
    p.write_text(f'model = "sliding"\nengines = ["bfs"]\nkernel = "numpy"\ngive_up = 2\n'
                 f'instances = [{{ file = "{eight}", ids = {two}, expected = 9 }},\n'
                 f'             {{ file = "{eight}", header = "optimum" }}]\n', encoding="utf-8")
    recs = runner.run_suite(load_suite(str(p)), progress=None)
    assert [r["match"] for r in recs] == [False, False]      # the other seven were not run


def test_at_expected_engine_option_is_the_instances_optimum() -> None:
    from puzzleplan.bench.suite import RunSet

    rs = RunSet("s", "zpg", ["ga"], "numpy", [[]], [], 1, None, None, False,
                engine_options={"ga": {"preset": "paper", "target": "@expected"}})
    assert runner._engine_kwargs(rs, "ga", None, None, 7) == {"preset": "paper", "target": 7}
    assert runner._engine_kwargs(rs, "ga", None, None, "unsolvable") == {"preset": "paper"}


def test_give_up_counts_an_unproven_plan_of_the_expected_cost_as_a_miss(tmp_path, monkeypatch) -> None:
    """A largest-proven sweep: a ``solved`` plan that happens to cost the optimum proves nothing."""
    from puzzleplan.solvers.result import Result

    eight = ROOT / "instances" / "sliding" / "eight-depths.txt"
    p = tmp_path / "g.toml"
    p.write_text(f'model = "sliding"\nengines = ["bfs"]\nkernel = "numpy"\ngive_up = 2\n'
                 f'expected = "optimum"\ninstances = [{{ file = "{eight}", header = "optimum" }}]\n',
                 encoding="utf-8")
    real = runner.api.solve

    def unproven(*args, **kwargs):   # the same plan, without the proof
        r = real(*args, **kwargs)
        return Result("solved", r.engine, r.cost, r.plan, r.stats, message="no proof")

    monkeypatch.setattr(runner.api, "solve", unproven)
    recs = runner.run_suite(load_suite(str(p)), progress=None)
    assert [(r["status"], r["match"]) for r in recs] == [("solved", True)] * 2   # then it ends
