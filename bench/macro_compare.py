"""Macro walking against the unit-step search: same engine, same kernel, same process.

Usage: python bench/macro_compare.py [--engine astar] [--kernel numpy] [--time-limit S]
                                     [--set kwirk|sokoban|all] [--out results/macro-compare.json]

For each task: the engine once with macro walking (the model's ``walks()`` declaration, the
default) and once with ``-E macro=false``, alternating, with the same limits.  Reported per
task: status, cost (they must agree when both are optimal -- a disagreement is an error and
exit status 1), stored states, peak memory (the engine's estimate), search time, and the ratios
unit-step / macro for states, memory and time.  Ratios are measured within one run, so the
machine's load affects both sides alike (but not equally, if it changes during the run).
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

from puzzleplan import api
from puzzleplan.bench.scripting import parser, write_json
from puzzleplan.solvers import Limits

ROOT = Path(__file__).resolve().parent.parent
KW = ROOT / "instances" / "kwirk"
MB = str(ROOT / "instances" / "sokoban" / "microban.xsb")
SETS = {
    "kwirk": [("kwirk", str(KW / "going-up" / f), ()) for f in
              ("06_1-6.txt", "08_1-8.txt", "09_1-9.txt", "11_2-1.txt", "15_2-5.txt")]
    + [("kwirk", str(KW / "heading-out" / f), ()) for f in ("031.txt", "050.txt", "127.txt")],
    "sokoban": [("sokoban", MB, (f"level={lv}", f"metric={m}")) for lv in (55, 78, 98, 111)
                for m in ("pushes", "moves")],
}


def run(model: str, inst: str, opts: tuple, engine: str, kernel: str, limit: float, macro: bool) -> dict:
    L = api.load_task(model, inst, list(opts))
    t0 = time.perf_counter()
    r = api.solve(L, engine, Limits(time_s=limit), kernel=kernel, macro=macro)
    return {"status": r.status, "cost": r.cost, "states": r.stats.get("states"),
            "expanded": r.stats.get("expanded"), "peak_mb": r.stats.get("peak_mb"),
            "search_s": r.stats.get("time_s"), "wall_s": round(time.perf_counter() - t0, 3),
            "kernel": r.stats.get("kernel"), "lower_bound": r.stats.get("lower_bound")}


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__)
    ap.add_argument("--engine", default="astar", choices=("astar", "ucs"))
    ap.add_argument("--kernel", default="numpy")
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--set", default="all", choices=(*SETS, "all"))
    ap.add_argument("--out", default=str(ROOT / "results" / "macro-compare.json"))
    a = ap.parse_args(argv)
    tasks = [t for k, ts in SETS.items() if a.set in (k, "all") for t in ts]
    rows: list[dict] = []
    doc = {"bench": "macro-compare", "engine": a.engine, "kernel": a.kernel, "time_limit_s": a.time_limit,
           "rows": rows}
    bad = 0
    for model, inst, opts in tasks:
        macro = run(model, inst, opts, a.engine, a.kernel, a.time_limit, True)
        plain = run(model, inst, opts, a.engine, a.kernel, a.time_limit, False)
        row = {"model": model, "instance": Path(inst).name, "options": list(opts),
               "macro": macro, "unit": plain}
        if macro["status"] == plain["status"] == "optimal" and macro["cost"] != plain["cost"]:
            row["error"] = "optimal costs differ"
            bad += 1
        for key in ("states", "peak_mb", "search_s"):
            if macro[key] and plain[key]:
                row[f"ratio_{key}"] = round(plain[key] / macro[key], 3)
        rows.append(row)
        print(f"{model} {Path(inst).name} {' '.join(opts)}: macro {macro['status']} {macro['cost']} "
              f"{macro['states']} st {macro['search_s']:.1f} s | unit {plain['status']} {plain['cost']} "
              f"{plain['states']} st {plain['search_s']:.1f} s", flush=True)
        both = [r for r in rows if r["macro"]["status"] == r["unit"]["status"] == "optimal"]
        for key in ("states", "peak_mb", "search_s"):
            vals = [r[f"ratio_{key}"] for r in both if f"ratio_{key}" in r]
            if vals:
                doc[f"geomean_ratio_{key}"] = round(math.exp(sum(map(math.log, vals)) / len(vals)), 3)
        doc["errors"] = bad
        write_json(a.out, doc)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
