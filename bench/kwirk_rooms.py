"""Kwirk HEADING OUT?: solve every room (240 files) and compare the step optimum with known_optima.csv.

Usage: python bench/kwirk_rooms.py [--engine bfs] [--kernel numpy] [--time-limit S] [-k TEXT]
                                   [--out results/kwirk-rooms.json]
       python bench/kwirk_rooms.py --retry results/kwirk-rooms.json --time-limit 1800
           (rerun only the rooms that file does not record as matched; the merged table, with
           every room's latest run, is written to --out)

Prints one line per room and, at the end, "matched N/240" and the total time.  The JSON holds
one record per room (status, cost, expected, match, states expanded, search time, wall time
including loading) and is rewritten after every room, so an interrupted run keeps its figures.

Why the numpy kernel by default: each room has its own structure, so the compiled kernel would
be compiled afresh for every room (tens of seconds each on a busy machine) while the searches
themselves take a fraction of a second to a few seconds.  Exit status 0 when every room is
solved optimally with the expected cost, 1 otherwise.
"""

from __future__ import annotations

import csv
import json
import sys
import time
from pathlib import Path

from puzzleplan import api
from puzzleplan.bench.scripting import parser, write_json
from puzzleplan.solvers import Limits

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "instances" / "kwirk"


def known(mode: str) -> dict[str, int | None]:
    """file (relative to instances/kwirk) -> proven step optimum (None: not proven)."""
    out: dict[str, int | None] = {}
    with open(DATA / "known_optima.csv") as fh:
        for row in csv.DictReader(fh):
            if row["mode"] == mode:
                out[row["file"]] = int(row["step_optimum"]) if row["step_optimum"] else None
    return out


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__)
    ap.add_argument("--engine", default="bfs")
    ap.add_argument("--kernel", default="numpy", choices=("numpy", "numba"))
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("-k", default="", help="only files whose name contains this text")
    ap.add_argument("-O", action="append", metavar="KEY=VALUE", help="model option (e.g. prune=none)")
    ap.add_argument("--out", default=str(ROOT / "results" / "kwirk-rooms.json"))
    ap.add_argument("--retry", default=None, help="a previous JSON: rerun only its unmatched rooms")
    a = ap.parse_args(argv)
    table = known("heading-out")
    files = [f for f in sorted(table) if a.k in f]
    earlier: dict[str, dict] = {}
    if a.retry:
        earlier = {r["file"]: r for r in json.loads(Path(a.retry).read_text())["runs"]}
        files = [f for f in files if not earlier.get(f, {}).get("match")]
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    runs = [r for f, r in earlier.items() if r.get("match")]
    t_all = time.perf_counter()
    matched = len(runs)
    for f in files:
        t0 = time.perf_counter()
        loaded = api.load_task("kwirk", str(DATA / f), a.O or [])
        res = api.solve(loaded, a.engine, Limits(time_s=a.time_limit), kernel=a.kernel)
        wall = time.perf_counter() - t0
        ok = res.status == "optimal" and res.cost == table[f] and res.stats.get("verified", True)
        matched += bool(ok)
        runs.append({"file": f, "engine": a.engine, "kernel": a.kernel, "status": res.status,
                     "cost": res.cost, "expected": table[f], "match": bool(ok),
                     "expanded": res.stats.get("expanded"), "states": res.stats.get("states"),
                     "search_s": res.stats.get("time_s"), "wall_s": round(wall, 3),
                     "verified": res.stats.get("verified"), "options": loaded.options})
        print(f"{f:34s} {res.status:8s} {res.cost!s:>5} expected {table[f]!s:>5} "
              f"{'ok' if ok else 'MISMATCH'} {wall:7.2f} s", flush=True)
        doc = {"bench": "kwirk-rooms", "engine": a.engine, "kernel": a.kernel, "time_limit_s": a.time_limit,
               "matched": matched, "total": len(runs), "total_wall_s": round(time.perf_counter() - t_all, 2),
               "runs": runs}
        write_json(out, doc)
    total = time.perf_counter() - t_all
    print(f"matched {matched}/{len(runs)} rooms ({a.engine}, {a.kernel} kernel); total {total:.1f} s; "
          f"JSON: {out}")
    return 0 if matched == len(runs) else 1


if __name__ == "__main__":
    sys.exit(main())
