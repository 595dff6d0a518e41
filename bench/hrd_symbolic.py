#!/usr/bin/env python3
"""The largest Hua Rong Dao step optimum each symbolic engine proves within a time limit.

Layouts of instances/klotski/*.txt are taken in increasing order of their
published/computed unit-step optimum (``computed_unit_steps`` header), from
``--from`` steps up; each engine (``sat``, ``cpsat``) solves them with metric
``steps`` under ``--time-limit`` seconds (default 60, compile and invariant
synthesis included) until it has failed on ``--give-up`` layouts in a row.
A success is status ``optimal`` with the recorded optimum (the plan replayed by
the reference checker).  The largest proven step count per engine is the figure.

    .venv/bin/python bench/hrd_symbolic.py -o results/hrd-symbolic.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from puzzleplan import __version__, api
from puzzleplan.lang.records import read_records, split_headers
from puzzleplan.solvers.result import Limits

ROOT = Path(__file__).resolve().parent.parent


def layouts(min_steps: int, stride: int) -> list[tuple[int, str]]:
    """(steps optimum, FILE#ID), one layout per distinct optimum >= min_steps, every ``stride``-th."""
    by_steps: dict[int, str] = {}
    for path in sorted((ROOT / "instances" / "klotski").glob("*.txt")):
        for rec in read_records(path):
            split_headers(rec)
            value = rec.headers.get("computed_unit_steps")
            if rec.id and value and value[0].isdigit() and int(value[0]) >= min_steps:
                by_steps.setdefault(int(value[0]), f"{path}#{rec.id}")
    steps = sorted(by_steps)[::stride]
    return [(s, by_steps[s]) for s in steps]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", default="results/hrd-symbolic.json")
    ap.add_argument("--engines", default="sat,cpsat")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--from", dest="start", type=int, default=20, help="smallest step optimum tried")
    ap.add_argument("--stride", type=int, default=1, help="try every n-th distinct optimum")
    ap.add_argument("--give-up", type=int, default=2, help="stop after this many failures in a row")
    args = ap.parse_args()

    todo = layouts(args.start, args.stride)
    runs, best = [], {}
    for engine in args.engines.split(","):
        misses = 0
        for steps, inst in todo:
            loaded = api.load_task("klotski", inst, ["metric=steps"])
            t0 = time.perf_counter()
            r = api.solve(loaded, engine, Limits(args.time_limit), kernel="numpy")
            wall = time.perf_counter() - t0
            ok = r.status == "optimal" and r.cost == steps and bool(r.stats.get("verified"))
            runs.append({"engine": engine, "instance": inst.split("#")[1], "steps": steps, "status": r.status,
                         "cost": r.cost, "time_s": round(wall, 2), "proved": ok})
            print(f"{engine:6s} {inst.split('#')[1]:16s} optimum {steps:3d}: {r.status:8s} {wall:6.1f} s",
                  file=sys.stderr, flush=True)
            if ok:
                best[engine] = max(best.get(engine, 0), steps)
                misses = 0
            else:
                misses += 1
                if misses >= args.give_up:
                    break
    for engine, steps in best.items():
        print(f"{engine}: largest step optimum proven within {args.time_limit:g} s: {steps}")
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"benchmark": "hrd-symbolic", "version": __version__,
                               "time_limit": args.time_limit, "largest_proven": best, "runs": runs},
                              indent=1), encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
