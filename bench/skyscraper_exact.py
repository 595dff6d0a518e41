"""Skyscrapers: every instance on cpsat, sat and backtrack, time to the first solution and to the
uniqueness verdict (``count=2``), beside the CP-SAT and Tatham-solver times of ``index.tsv``.

Why a script and not a suite: the figure is a uniqueness *verdict* per engine checked against the
README, which the suite runner does not judge.  (The GA tables are suites: bench/skyscraper-ga*.toml.)

    .venv/bin/python bench/skyscraper_exact.py -o results/sky-exact.json
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

from puzzleplan import api
from puzzleplan.bench.scripting import markdown, parser, write_json
from puzzleplan.solvers import Limits
from puzzleplan.solvers.csp import uniqueness

SKY = Path(__file__).resolve().parent.parent / "instances" / "skyscraper"
ENGINES = ("cpsat", "sat", "backtrack")


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__, out_default="results/sky-exact.json")
    ap.add_argument("--time-limit", type=float, default=120.0)
    a = ap.parse_args(argv)
    index = list(csv.DictReader(open(SKY / "index.tsv", encoding="utf-8"), delimiter="\t"))
    rows = []
    for r in index:
        loaded = api.load_task("skyscraper", str(SKY / f"{r['name']}.txt"))
        row = {"instance": r["name"], "size": int(r["size"]), "readme": r["unique"],
               "index_cpsat_first_s": r["cpsat_first_s"], "tatham_s": r["tatham_solver_s"]}
        for e in ENGINES:
            one = api.solve(loaded, e, Limits(a.time_limit))
            two = api.solve(loaded, e, Limits(a.time_limit), count=2)
            row[f"{e}_s"] = round(one.stats["time_s"], 4)
            row[f"{e}_unique_s"] = round(two.stats["time_s"], 4)
            row[f"{e}_verdict"] = uniqueness(two, 2)
        rows.append(row)
        print(r["name"], {k: v for k, v in row.items() if k.endswith(("_s", "verdict"))}, file=sys.stderr,
              flush=True)
    summary = []
    for n in sorted({r["size"] for r in rows}):
        rs = [r for r in rows if r["size"] == n]
        s: dict[str, object] = {"size": f"{n}x{n}", "instances": len(rs)}
        for e in ENGINES:
            for k, label in ((f"{e}_s", f"{e} mean/max s"), (f"{e}_unique_s", f"{e} unique mean/max s")):
                s[label] = f"{statistics.fmean(r[k] for r in rs):.3f} / {max(r[k] for r in rs):.3f}"
        ts = [float(r["tatham_s"]) for r in rs if r["tatham_s"] not in ("", "-", "NA")]
        s["tatham mean/max s (index.tsv)"] = f"{statistics.fmean(ts):.3f} / {max(ts):.3f}" if ts else "-"
        summary.append(s)
    print(markdown(list(summary[0]), [list(s.values()) for s in summary]))
    want = {"yes": "unique", "infeasible": "none"}
    ok = all(r[f"{e}_verdict"] == want.get(r["readme"], "several") for r in rows for e in ENGINES)
    print(f"\nuniqueness verdicts match the README for all engines: {ok}")
    write_json(a.out, {"rows": rows, "summary": summary})
    return 0 if ok else 20


if __name__ == "__main__":
    raise SystemExit(main())
