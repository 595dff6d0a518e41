"""Suite instances beyond file records: option values as instances (Sokoban's ``-O level=N``),
expected values and reference figures read from a CSV or Markdown table (``expected_from``),
``-k`` lists and anchors, ``-O``/``-E`` overrides, fresh processes (``isolate``), checkpoints,
and the table columns these suites use (``map``, ``count_of``, ``present``, ``list``)."""

from __future__ import annotations

import json

import pytest
from helpers import ROOT, run_cli

from puzzleplan.bench import runner
from puzzleplan.bench.suite import SuiteError, load_suite
from puzzleplan.bench.table import check_spec, render_spec
from puzzleplan.solvers import Limits

LEVELS = """#####
#@$.#
#####
Title: one

######
#@$ .#
######
Title: two

#######
#@$  .#
#######
Title: three
"""

README = """# optima

Some text | not a table.

| level | boxes | push-optimal pushes / moves | note |
|---|---|---|---|
| Tiny 1 | 1 | 1 / 1 | |
| Tiny 2 | 1 | 3 / 9 | wrong on purpose |
| Tiny 3 | 1 | n/s | |
"""


@pytest.fixture()
def tiny(tmp_path):
    (tmp_path / "tiny.xsb").write_text(LEVELS, encoding="utf-8")
    (tmp_path / "README.md").write_text(README, encoding="utf-8")
    suite = tmp_path / "tiny.toml"
    suite.write_text('''model = "sokoban"
engines = ["bfs"]
kernel = "numpy"
options = [["metric=pushes"]]
instances = [
  { file = "tiny.xsb", option = "level", from = 1, to = 3, expected_from = { file = "README.md", \
key = "level", match = "Tiny (\\\\d+)", value = "push-optimal pushes / moves", part = 0, \
fields = { boxes = "boxes" } } }]
[[table]]
rows = ["set"]
columns = [{ field = "set" }, { header = "solved", field = "status", equals = "optimal", agg = "sum" },
  { header = "figures", field = "expected", agg = "present" },
  { header = "wrong", field = { field = "id", pattern = "level=(\\\\d+)" }, agg = "list", \
where = { match = false } }]
''', encoding="utf-8")
    return suite


def test_option_values_are_instances_and_expected_values_come_from_a_markdown_table(tiny) -> None:
    suite = load_suite(str(tiny))
    insts = suite.sets[0].instances
    assert [(i.id, i.options, i.expected_raw, i.ref) for i in insts] == [
        ("level=1", ["level=1"], 1, {"boxes": 1}), ("level=2", ["level=2"], 3, {"boxes": 1}),
        ("level=3", ["level=3"], "n/s", {"boxes": 1})]
    recs = runner.run_suite(suite, progress=None)
    assert [(r["id"], r["option_args"], r["cost"], r["expected"], r["match"]) for r in recs] == [
        ("level=1", ["metric=pushes", "level=1"], 1, 1, True),
        ("level=2", ["metric=pushes", "level=2"], 2, 3, False),     # the table is wrong: a mismatch
        ("level=3", ["metric=pushes", "level=3"], 3, None, None)]   # n/s: nothing to compare
    assert recs[0]["ref"] == {"boxes": 1}
    rows = render_spec(suite.tables[0], recs).splitlines()
    assert rows[2] == "| sokoban | 3 | 2 | 2 |"


def test_k_takes_lists_and_an_anchored_end(tiny, tmp_path, capsys) -> None:
    suite = load_suite(str(tiny))
    pick = [i.id for i in suite.sets[0].instances if runner._selected(i, "level=1$,level=3")]
    assert pick == ["level=1", "level=3"]
    out = tmp_path / "r.json"
    code, _, err = run_cli(["bench", str(tiny), "-q", "-k", "level=2$", "-O", "prune=none", "-o", out],
                           capsys)
    assert code == 20, err                           # level 2 disagrees with the (wrong) table
    doc = json.loads(out.read_text())
    assert [r["option_args"] for r in doc["records"]] == [["metric=pushes", "level=2", "prune=none"]]
    assert doc["records"][0]["options"]["prune"] == "none"


def test_a_csv_reference_keys_files_by_their_path_from_the_csv(tmp_path) -> None:
    kw = ROOT / "instances" / "kwirk"
    p = tmp_path / "k.toml"
    p.write_text(f'''model = "kwirk"
instances = [{{ glob = "{kw}/going-up/1*_2-*.txt", expected_from = {{ file = "{kw}/known_optima.csv", \
key = "file", value = "step_optimum", fields = {{ best = "best_known_steps" }} }} }}]
''', encoding="utf-8")
    got = {i.id: (i.expected_raw, i.ref["best"]) for i in load_suite(str(p)).sets[0].instances}
    assert got["11_2-1"] == (41, 41) and got["12_2-2"] == (None, 195) and len(got) == 9


def test_tie_broken_costs_combine_a_cells_numbers_by_weights(tiny) -> None:
    text = tiny.read_text().replace("part = 0", "weights = [1048576, 1]")
    tiny.write_text(text, encoding="utf-8")
    assert [i.expected_raw for i in load_suite(str(tiny)).sets[0].instances] == [
        1048576 + 1, 3 * 1048576 + 9, "n/s"]


@pytest.mark.parametrize("entry, msg", [
    ('{ file = "tiny.xsb", option = "level" }', "option needs values"),
    ('{ file = "tiny.xsb", option = "level", from = 3, to = 1 }', "option needs values"),
    ('{ file = "tiny.xsb", levels = 3 }', "unknown keys levels"),
    ('{ file = "tiny.xsb", option = "level", values = [1], expected_from = { file = "README.md" } }',
     "expected_from must be"),
    ('{ file = "tiny.xsb", option = "level", values = [1], expected_from = { file = "README.md", '
     'key = "level", value = "optimum" } }', "no column 'optimum'"),
])
def test_bad_instance_entries_are_suite_errors(tiny, entry: str, msg: str) -> None:
    tiny.write_text(f'model = "sokoban"\ninstances = [{entry}]\n', encoding="utf-8")
    with pytest.raises(SuiteError, match=msg):
        load_suite(str(tiny))


def test_an_isolated_unit_runs_in_its_own_process_and_checkpoints_after_each(tiny) -> None:
    tiny.write_text(tiny.read_text().replace('kernel = "numpy"', 'kernel = "numpy"\nisolate = true\n'
                                             'keep_plan = true'), encoding="utf-8")
    import resource

    import numpy as np

    ballast = np.ones(400 * 2**20 // 8)            # this process's peak: at least 400 MB
    saved: list[int] = []
    recs = runner.run_suite(load_suite(str(tiny)), progress=None, select="level=1$",
                            max_memory_mb=500, checkpoint=lambda rs: saved.append(len(rs)))
    del ballast
    assert saved == [1]
    (r,) = recs
    assert r["status"] == "optimal" and r["plan"] == ["R"] and r["max_memory_mb"] == 500
    mine = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert r["rss_peak_mb"] < mine - 200      # a fresh interpreter's own peak, not this process's


def test_stopped_by_and_layer_figures() -> None:
    lim = Limits(time_s=60, max_states=1000, max_mb=500)
    assert runner.stopped_by("limit", {"states": 1000, "time_s": 3}, lim) == "states"
    assert runner.stopped_by("limit", {"states": 10, "time_s": 59.5}, lim) == "time"
    assert runner.stopped_by("limit", {"states": 10, "time_s": 3}, lim) == "memory"
    assert runner.stopped_by("optimal", {"states": 1000}, lim) is None
    assert runner.layer_figures([1, 2, 4]) == {"last_layer": 4}
    figs = runner.layer_figures([2 ** i for i in range(12)])
    assert figs["last_layer"] == 2048 and figs["layer_growth"] == pytest.approx(2.0)


def test_map_count_of_present_and_list_columns() -> None:
    recs = [{"id": "a", "status": "optimal", "plan": ["L", "S", "S"], "lb": None},
            {"id": "b", "status": "limit", "plan": None, "lb": 7},
            {"id": "c", "status": "limit", "plan": "USU", "lb": 9}]
    spec = check_spec({"rows": ["id"], "footer_label": "n", "columns": [
        {"field": "id"}, {"field": "status", "map": {"optimal": "**optimal**"}},
        {"header": "S", "field": "plan", "count_of": "S", "missing": "", "footer": "present"},
        {"header": "lb", "field": "lb", "missing": "", "footer": "list"}]})
    assert render_spec(spec, recs).splitlines()[2:] == [
        "| a | **optimal** | 2 |  |", "| b | limit |  | 7 |", "| c | limit | 1 | 9 |", "| n |  | 2 | 7, 9 |"]
