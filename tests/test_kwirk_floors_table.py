"""`bench/kwirk_floors.py --table`: one Markdown row per floor, its most informative run."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("kwirk_floors", ROOT / "bench" / "kwirk_floors.py")
floors = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(floors)


def run(file: str, status: str, lb: int | None = None, steps: int | None = None, **kw) -> dict:
    name = file.split("_", 1)[1].removesuffix(".txt")
    return {"file": file, "floor": name, "engine": "bfs", "status": status, "steps": steps, "switches": 0,
            "lower_bound": lb, "states": 1000, "rss_peak_mb": 10.0, "search_s": 5.0, "time_limit_s": 600.0,
            "max_memory_mb": 5000.0, "max_states": 10**9, "match": None, **kw}


def rows(tmp_path: Path, *files: list[dict]) -> dict[str, list[str]]:
    paths = []
    for i, runs in enumerate(files):
        p = tmp_path / f"r{i}.json"
        p.write_text(json.dumps({"bench": "kwirk-floors", "runs": runs}))
        paths.append(str(p))
    cells = [[c.strip() for c in line.strip().strip("|").split("|")]
             for line in floors.markdown(paths).splitlines() if line.startswith("| ")]
    return {c[0]: c for c in cells}


def test_a_proof_beats_a_bound_and_a_higher_bound_beats_a_lower(tmp_path: Path) -> None:
    first = [run("going-up/12_2-2.txt", "limit", lb=92, search_s=1800.0, time_limit_s=1800.0),
             run("going-up/16_2-6.txt", "limit", lb=55),
             run("going-up/01_1-1.txt", "limit", lb=20)]
    later = [run("going-up/12_2-2.txt", "limit", lb=79),                      # lower: ignored
             run("going-up/16_2-6.txt", "limit", lb=68, max_memory_mb=20480.0),
             run("going-up/01_1-1.txt", "optimal", steps=23, match=True)]
    r = rows(tmp_path, first, later)
    assert r["2-2"][6] == "92" and r["2-2"][14] == "time"
    assert r["2-6"][6] == "68" and r["2-6"][13] == "600 / 20,480" and r["2-6"][14] == "memory"
    assert r["1-1"][1] == "**optimal**" and r["1-1"][2] == "23" and r["1-1"][6] == ""
    assert r["3-10"][1] == "not run"
    assert len(r) == 31   # the header and the 30 floors


def test_summary_counts_proofs_and_matches(tmp_path: Path) -> None:
    p = tmp_path / "r.json"
    p.write_text(json.dumps({"runs": [run("going-up/01_1-1.txt", "optimal", steps=23, match=True),
                                      run("going-up/12_2-2.txt", "optimal", steps=150),
                                      run("going-up/02_1-2.txt", "limit", lb=5,
                                          states=10**9, max_states=10**9)]}))
    text = floors.markdown([str(p)])
    assert text.splitlines()[-1] == ("proven optimal 2/30; known optima matched 1/19; "
                                     "floors without a known optimum proven: 1/11")
    row = next(line for line in text.splitlines() if line.startswith("| 1-2 |"))
    assert row.split("|")[2].strip() == "limit" and row.split("|")[-2].strip() == "states"


def test_solve_json_rows_join_bench_rows(tmp_path: Path) -> None:
    solve = {"status": "optimal", "cost": 180, "plan": ["L", "S", "U", "S"], "engine": "bfs",
             "instance": "/anywhere/instances/kwirk/going-up/22_3-2.txt",
             "stats": {"states": 95, "time_s": 1.5, "rss_peak_mb": 6.0, "layers": [1, 2]}}
    p = tmp_path / "solve.json"
    p.write_text(json.dumps(solve))
    q = tmp_path / "bench.json"
    q.write_text(json.dumps({"runs": [run("going-up/22_3-2.txt", "limit", lb=117)]}))
    text = floors.markdown([str(q), str(p)])
    row = [c.strip() for c in next(x for x in text.splitlines() if x.startswith("| 3-2 |")).split("|")[1:-1]]
    assert row[1:4] == ["**optimal**", "180", "2"] and row[13] == "- / -"
    assert "known optima matched 1/19" in text.splitlines()[-1]
