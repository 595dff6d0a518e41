"""The Kwirk floors table is bench/kwirk-floors.toml's ``[[table]]`` spec: one row per floor, the
floor's most informative run over all result files (a proof, else the highest bound), and the
table printed in docs/models/kwirk.md is exactly what the spec renders from its rows."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import ROOT, run_cli

from puzzleplan.bench.suite import load_suite
from puzzleplan.bench.table import render_spec

SPEC = load_suite("kwirk-floors").tables[0]
HEADER = ["floor", "status", "steps", "switches", "known optimum", "best known", "lower bound", "engine",
          "states", "last layer", "layer growth", "peak RSS MB", "search s", "time limit s",
          "memory limit MiB", "stopped by"]


def run(id_: str, status: str, lb: int | None = None, cost: int | None = None, **kw) -> dict:
    """A bench record of kwirk-floors as the runner writes it (the fields the spec reads)."""
    return {"id": id_, "engine": "bfs", "status": status, "optimal": status == "optimal", "cost": cost,
            "lower_bound": lb, "expected": None, "ref": {"best_known": 100}, "states": 1000,
            "last_layer": 10, "layer_growth": 1.1, "rss_peak_mb": 10.0, "time_s": 5.0, "time_limit_s": 600.0,
            "max_memory_mb": 5000.0, "stopped_by": "time" if status == "limit" else None, **kw}


def cells(text: str) -> dict[str, list[str]]:
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.startswith("| ")]
    return {r[0]: r for r in rows}


def table(tmp_path: Path, capsys, *files: list[dict]) -> dict[str, list[str]]:
    """``bench table`` over result documents holding these records, with the suite's spec."""
    paths = []
    for i, records in enumerate(files):
        p = tmp_path / f"r{i}.json"
        p.write_text(json.dumps({"format": "puzzleplan-bench/1", "records": records, "tables": []}))
        paths.append(p)
    code, out, err = run_cli(["bench", "table", *paths, "--spec", "kwirk-floors"], capsys)
    assert code == 0, err
    return cells(out)


def test_a_proof_beats_a_bound_a_higher_bound_a_lower_and_errors_are_left_out(tmp_path, capsys) -> None:
    first = [run("12_2-2", "limit", lb=92, time_s=1800.0, time_limit_s=1800.0),
             run("16_2-6", "limit", lb=55),
             run("01_1-1", "limit", lb=20),
             run("02_1-2", "limit", lb=3)]
    later = [run("12_2-2", "limit", lb=79),                                 # lower: not shown
             run("16_2-6", "limit", lb=68, max_memory_mb=20480.0, stopped_by="memory"),
             run("01_1-1", "optimal", cost=23, expected=23, ref={"best_known": 23}, plan=list("LSUSRS")),
             run("02_1-2", "error", lb=50)]                                 # an error row: no figures
    r = table(tmp_path, capsys, first, later)
    assert r["floor"] == HEADER
    assert r["2-2"][6] == "92" and r["2-2"][12] == "1,800.0" and r["2-2"][15] == "time"
    assert r["2-6"][6] == "68" and r["2-6"][13:] == ["600", "20,480", "memory"]
    assert r["1-1"][1:7] == ["**optimal**", "23", "3", "23", "23", ""]      # 3 switches; no bound shown
    assert r["1-2"][6] == "3"
    # footer: floors with a step count, with a known optimum, with a lower bound
    assert r["**floors with a figure**"][:7] == ["**floors with a figure**", "", "1", "", "1", "", "3"]
    assert len(r) == 6


def test_a_tie_goes_to_the_later_run_and_missing_limits_print_a_dash(tmp_path, capsys) -> None:
    a = [run("13_2-3", "limit", lb=78, engine="astar")]
    b = [run("13_2-3", "limit", lb=78, engine="bfs", time_limit_s=None, max_memory_mb=None,
             layer_growth=None)]
    r = table(tmp_path, capsys, a, b)
    assert r["2-3"][7] == "bfs" and r["2-3"][10] == "" and r["2-3"][13:15] == ["-", "-"]


def _docs_table() -> list[str]:
    lines = (ROOT / "docs" / "models" / "kwirk.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("| " + " | ".join(HEADER) + " |")
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return lines[start:end]


def _num(text: str) -> float | int | None:
    if text in ("", "-"):
        return None
    v = float(text.replace(",", ""))
    return int(v) if "." not in text else v


def test_the_docs_table_is_what_the_spec_renders_from_its_rows() -> None:
    doc = _docs_table()
    records = []
    for i, line in enumerate(doc[2:-1], start=1):      # the 30 floor rows, in file order
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        status = c[1].strip("*")
        records.append({
            "id": f"{i:02d}_{c[0]}", "status": status, "optimal": status == "optimal", "cost": _num(c[2]),
            "plan": None if c[3] == "" else ["S"] * int(c[3]), "expected": _num(c[4]),
            "ref": {"best_known": _num(c[5])}, "lower_bound": _num(c[6]), "engine": c[7],
            "states": _num(c[8]), "last_layer": _num(c[9]), "layer_growth": _num(c[10]),
            "rss_peak_mb": _num(c[11]), "time_s": _num(c[12]), "time_limit_s": _num(c[13]),
            "max_memory_mb": _num(c[14]), "stopped_by": c[15] or None})
    assert len(records) == 30
    assert render_spec(SPEC, records).splitlines() == doc
