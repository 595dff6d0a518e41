"""Microban with astar: how many levels are solved push-optimally and move-optimally within a
per-level search time limit, checked against the optima table in instances/sokoban/README.md.

Usage: python bench/sokoban_microban.py [--first N] [--time-limit S] [--out results/sokoban-microban.json]
       [--heuristic nearest|bipartite|matching] [--prune dead|freeze|none] [--metrics pushes,moves]

``--metrics pushes-moves,moves-pushes`` runs the tie-broken metrics and checks the whole pair
of the table (push-optimal pushes / moves, move-optimal moves / pushes).
       python bench/sokoban_microban.py --suite xsokoban --out results/sokoban-xsokoban.json

``--suite xsokoban`` runs the 90 original levels instead; they have no optima table, so solved
levels are only counted (no figure is checked against anything but the engines' own proofs).

The time limit applies to the search (Limits.time_s); building the task and compiling the numba
kernels (new kernels per level, tens of seconds on a busy machine) are timed separately and not
counted, as in the rest of puzzleplan's benchmarks (``wall_s`` includes the compilation).  By
default astar searches the macro-walking form (the model declares its walks; solvers/macro.py);
``--no-macro`` searches every walking step.  The JSON is rewritten after every level, so
an interrupted run still leaves its figures.  Every solved level must match the table: a
mismatch is recorded as such and makes the exit status 1.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from puzzleplan import api
from puzzleplan.bench.scripting import parser, write_json
from puzzleplan.solvers import Limits

ROOT = Path(__file__).resolve().parent.parent
SUITES = {"microban": (ROOT / "instances" / "sokoban" / "microban.xsb", 155),
          "xsokoban": (ROOT / "instances" / "sokoban" / "xsokoban90.xsb", 90)}
TABLE = ROOT / "instances" / "sokoban" / "README.md"
SOKOBAN = api.load_model("sokoban")   # for split_cost, the tie-broken metrics' (pushes, moves)


def read_table(path: Path = TABLE) -> dict[int, dict[str, object]]:
    """{level: {metric: the table's figure}}; None = n/s.

    "pushes" / "moves": the push-optimal pushes and the move-optimal moves; the tie-broken
    metrics get the whole pair, as [pushes, moves] (the model's ``split_cost`` order).
    """
    out: dict[int, dict[str, object]] = {}
    row = re.compile(r"^\| Microban (\d+) \| \d+ \| ([^|]+)\| ([^|]+)\|")
    for line in path.read_text().splitlines():
        m = row.match(line)
        if m:
            def pair(cell: str) -> list[int] | None:
                return None if "n/s" in cell else [int(x) for x in cell.split("/")]
            pm, mp = pair(m.group(2)), pair(m.group(3))
            out[int(m.group(1))] = {"pushes": pm and pm[0], "moves": mp and mp[0], "pushes-moves": pm,
                                    "moves-pushes": mp and [mp[1], mp[0]]}
    return out


def figure(metric: str, cost: int | None) -> object:
    """What the table holds for a plan of this cost: the cost, or [pushes, moves] when tie-broken."""
    if cost is None or metric in ("pushes", "moves"):
        return cost
    return list(SOKOBAN.split_cost(metric, cost))


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__)
    ap.add_argument("--suite", choices=sorted(SUITES), default="microban")
    ap.add_argument("--first", type=int, default=None, help="last level to run (default: all)")
    ap.add_argument("--start", type=int, default=1, help="first level to run")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--kernel", default="numba")
    ap.add_argument("--prune", default="dead", choices=("dead", "freeze", "none"))
    ap.add_argument("--heuristic", default="matching", choices=("nearest", "bipartite", "matching"))
    ap.add_argument("--metrics", default="pushes,moves", help="comma-separated: which metrics to run")
    ap.add_argument("--no-macro", dest="macro", action="store_false",
                    help="search the unit-step form (every walking step a state) instead of macro walking")
    ap.add_argument("--out", default=str(ROOT / "results" / "sokoban-microban.json"))
    a = ap.parse_args(argv)
    levels, count = SUITES[a.suite]
    first = min(a.first or count, count)
    table = read_table() if a.suite == "microban" else {}
    runs: list[dict] = []
    report = {"suite": a.suite, "engine": "astar", "kernel": a.kernel, "time_limit_s": a.time_limit,
              "prune": a.prune, "heuristic": a.heuristic, "macro": a.macro,
              "first_level": a.start, "levels_attempted": 0, "runs": runs}
    bad = 0
    for level in range(a.start, first + 1):
        for metric in a.metrics.split(","):
            t0 = time.perf_counter()
            L = api.load_task("sokoban", str(levels), [f"level={level}", f"metric={metric}",
                                                          f"prune={a.prune}", f"heuristic={a.heuristic}"])
            prep = time.perf_counter() - t0
            opts = {} if a.macro else {"macro": False}
            if not a.macro:
                L.kernel(a.kernel)          # compiled (or fallen back to numpy) before the clock
            t1 = time.perf_counter()
            r = api.solve(L, "astar", Limits(time_s=a.time_limit), kernel=a.kernel, **opts)
            wall = time.perf_counter() - t1
            kernel = r.stats.get("kernel", a.kernel)
            note = r.stats.get("kernel_note")
            want = table.get(level, {}).get(metric)
            solved = r.status == "optimal"
            got = figure(metric, r.cost)
            match = None if not solved or want is None else (want == got)   # n/s: no figure
            if solved and match is False:   # None: the table has no figure (n/s), nothing to compare
                bad += 1
            runs.append({"level": level, "metric": metric, "status": r.status, "cost": got,
                         "table": want, "match": match, "search_s": round(r.stats.get("time_s", 0.0), 3),
                         "prep_s": round(prep, 1), "wall_s": round(wall, 1),
                         "expanded": r.stats.get("expanded"), "states": r.stats.get("states"),
                         "peak_mb": r.stats.get("peak_mb"), "lower_bound": r.stats.get("lower_bound"),
                         "kernel": kernel,
                         **({"note": note} if note else {})})
            print(f"{a.suite} {level} {metric}: {r.status} {got} (table {want}) "
                  f"{r.stats.get('time_s', 0):.2f} s", flush=True)
        report["levels_attempted"] = level - a.start + 1
        for metric in a.metrics.split(","):
            mine = [x for x in runs if x["metric"] == metric]
            report[f"{metric}_optimal"] = sum(x["status"] == "optimal" for x in mine)
            report[f"{metric}_in_table"] = sum(table.get(x["level"], {}).get(metric) is not None
                                               for x in mine)
        report["mismatches"] = bad
        write_json(a.out, report)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
