"""Bench suites over constraint and transition models: seeds, parallel runs, figures, bundled suites."""

from __future__ import annotations

import json

import pytest
from helpers import ROOT, run_cli

from puzzleplan import api
from puzzleplan.bench.figures import ga_excess_rows, write_all
from puzzleplan.bench.runner import run_suite
from puzzleplan.bench.suite import SuiteError, available, load_suite
from puzzleplan.solvers import fd

SKY = ROOT / "instances" / "skyscraper"

SUITE = f"""
name = "mini"
time_limit = 60
[[set]]
label = "exact"
model = "skyscraper"
engines = ["cpsat", "backtrack"]
instances = [{{ file = "{SKY}/codewars-4x4-2.txt", expected = 0 }},
             {{ file = "{SKY}/tony-infeasible-7x7-1.txt", expected = "unsolvable" }}]
[[set]]
label = "ga"
model = "skyscraper"
engines = ["ga"]
engine_options = {{ ga = {{ preset = "paper", history = true, generations = 40 }} }}
seeds = [0, 1, 2]
instances = [{{ file = "{SKY}/tonybank-4x4-2.txt", expected = 0 }}]
[[set]]
label = "sudoku"
model = "sudoku"
engines = ["backtrack"]
instances = [{{ file = "{ROOT}/instances/sudoku/puzzles.txt", ids = ["2"], expected = 0 }}]
[[set]]
label = "eight"
model = "sliding"
engines = ["bfs"]
instances = [{{ file = "{ROOT}/instances/sliding/eight-depths.txt", ids = ["walk-2034-053"], expected = 8 }}]
"""

STABLE = ("set", "instance", "engine", "seed", "status", "cost", "match", "history", "evaluations", "layers")


def _stable(records):
    return [{k: r.get(k) for k in STABLE} for r in records]


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    path = tmp_path_factory.mktemp("suite") / "mini.toml"
    path.write_text(SUITE, encoding="utf-8")
    return path


def test_constraint_and_transition_sets_run_and_match(mini):
    recs = run_suite(load_suite(str(mini)), progress=None)
    by = {(r["set"], r["id"], r["engine"], r["seed"]): r for r in recs}
    assert by[("exact", "codewars-4x4-2", "cpsat", None)]["match"] is True
    assert by[("exact", "tony-infeasible-7x7-1", "backtrack", None)]["status"] == "unsolvable"
    assert by[("exact", "tony-infeasible-7x7-1", "backtrack", None)]["match"] is True
    assert by[("sudoku", "puzzles#2", "backtrack", None)]["match"] is True
    assert by[("eight", "walk-2034-053", "bfs", None)]["cost"] == 8
    ga = [r for r in recs if r["set"] == "ga"]
    assert [r["seed"] for r in ga] == [0, 1, 2]
    for r in ga:   # one best-fitness value per generation run, never worse than the generation before
        h = r["history"]
        assert h and all(b >= a for a, b in zip(h, h[1:])) and r["best_fitness"] == h[-1]
        assert (r["status"] == "solved") == (h[-1] == 0)


def test_same_seeds_same_results_and_parallel_agrees(mini):
    one = run_suite(load_suite(str(mini)), progress=None)
    again = run_suite(load_suite(str(mini)), progress=None, jobs=2)
    assert _stable(one) == _stable(again)
    seeds_differ = {json.dumps(r["history"]) for r in one if r["set"] == "ga"}
    assert len(seeds_differ) > 1     # different seeds do give different runs


def test_figures_from_the_records(mini, tmp_path):
    recs = run_suite(load_suite(str(mini)), progress=None)
    drawn = write_all(recs, str(tmp_path / "figs"))
    names = {p.rsplit("/", 1)[-1] for p in drawn}
    assert {"ga-fitness.png", "ga-success.png", "layers.png", "cost-time.png"} <= names
    assert "ga-excess.png" not in names        # no GA run here has an optimum above 0
    for p in drawn:
        assert (tmp_path / "figs" / p.rsplit("/", 1)[-1]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_excess_rows_against_the_optimum():
    recs = [{"set": "s", "id": "b", "engine": "ga", "expected": 4, "cost": c, "status": "solved"}
            for c in (4, 5, 6)] + [{"set": "s", "id": "b", "engine": "ga", "expected": 4, "cost": None,
                                     "status": "limit"}]
    (label, opt, runs, best, mean, at_opt), = ga_excess_rows(recs)
    assert (opt, runs, best, mean, at_opt) == (4, 4, 0.0, 25.0, 25.0)


def test_bad_seeds_key_is_a_one_line_error(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text(SUITE.replace("seeds = [0, 1, 2]", 'seeds = ["x"]'), encoding="utf-8")
    with pytest.raises(SuiteError, match="seeds must be"):
        load_suite(str(p))


def test_bench_cli_writes_json_and_plots(mini, tmp_path, capsys):
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(["bench", str(mini), "-q", "-k", "codewars", "-o", str(out),
                                 "--plots", str(tmp_path / "p")], capsys)
    assert code == 0, err
    doc = json.loads(out.read_text())
    assert doc["summary"]["matched"] == 2 and "versions" in doc["environment"]
    assert (tmp_path / "p" / "cost-time.png").is_file()
    code, stdout, err = run_cli(["bench", "plot", str(out), "-o", str(tmp_path / "p2")], capsys)
    assert code == 0, err
    names = [sorted(x.name for x in (tmp_path / d).iterdir()) for d in ("p", "p2")]
    assert names[0] == names[1] and names[0]


@pytest.mark.parametrize("name", available())
def test_every_bundled_suite_loads(name):
    suite = load_suite(name)
    assert suite.kind == "speed" or all(s.instances for s in suite.sets)


def test_rich_table_on_a_terminal_carries_the_same_cells():
    from puzzleplan.bench import table as t

    rows = [["fayaa-001", 81, 0.25], ["walk-2034-053", 8, None]]
    plain = t.table(["instance", "cost", "time_s"], rows)
    try:
        t.use_rich(True)
        boxed = t.table(["instance", "cost", "time_s"], rows)
    finally:
        t.use_rich(False)
    assert "┃" in boxed and "┃" not in plain
    for cell in ("fayaa-001", "81", "0.250", "walk-2034-053", "-"):
        assert cell in boxed and cell in plain


@pytest.mark.skipif(not fd.available(), reason="Fast Downward not installed (pip install '.[fd]')")
def test_engines_that_read_the_task_alone_get_no_kernel_built(tmp_path, monkeypatch):
    """fd reads the task (its PDDL export) only: building the suite's kernel first (a numba compile:
    605 s on a Microban level) was never used, so the runner must not ask for it; bfs still does."""
    asked: list[str] = []
    real = api.Loaded.kernel

    def kernel(self, backend="numpy", *a, **k):   # record what was asked; build the cheap one
        asked.append(backend)
        return real(self, "numpy", *a, **k)

    monkeypatch.setattr(api.Loaded, "kernel", kernel)
    spec = tmp_path / "t.toml"
    text = f"""
name = "t"
model = "sliding"
engines = ["ENGINE"]
kernel = "numba"
instances = [{{ file = "{ROOT}/instances/sliding/eight-depths.txt", ids = ["walk-2034-053"], expected = 8 }}]
"""
    spec.write_text(text.replace("ENGINE", "fd"), encoding="utf-8")
    recs = run_suite(load_suite(str(spec)), progress=None)
    assert recs[0]["match"] is True and "numba" not in asked
    spec.write_text(text.replace("ENGINE", "bfs"), encoding="utf-8")
    asked.clear()
    run_suite(load_suite(str(spec)), progress=None)
    assert "numba" in asked
