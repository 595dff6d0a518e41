"""dbfs's speed-up with more workers (issue 21): states per second of N workers against 1, in one run.

Usage:
    python bench/dbfs_scaling.py [--repeat 7] [--workers 1,2] [--executors threads]
                                 [--kernel interpreted] [-o results/dbfs-scaling.json]

Per task and executor, in one process: one untimed run per worker count (kernels and numba's
cache loaded, the allocator warm), then ``--repeat`` rounds that each run every worker count one
after the other, so that drifts of the machine's load hit every column alike.  A run's rate is
``expanded / (time_s - startup_s)``: the search without starting the workers (Ray: the actors).
Reported per worker count: every rate, the median, and the median of the per-round ratios to 1
worker (each ratio from two runs side by side).  Also the ratio of the best runs: on this VM the
one-worker rate of a short search swings from one process to the next (27 to 43 ms for the
8-puzzle), which moves the per-round ratios with it; the fastest run of each column is the
steadier figure (docs/distributed.md).  Each run starts after a pause of ``PAUSE_S``: the thread
executor's compiled layers leave numba's OpenMP workers spinning for about 5 ms, which would
slow a one-worker run that followed at once.  Load (``uptime``) before and after.

The tasks: the 8-puzzle's whole space (``--enumerate``: 181,440 states, 31 layers, about a tenth
of a second per run -- the case where per-layer costs show) and Kwirk floor 2-3's first 3.73 M
states (``--max-states 4000000``: large layers).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from puzzleplan import api
from puzzleplan.bench.scripting import parser, uptime, write_json
from puzzleplan.solvers.result import Limits

ROOT = Path(__file__).resolve().parent.parent
TASKS = {
    "8-puzzle, whole space": ("sliding", "instances/sliding/eight.txt#eight-hardest-a", None, True),
    "Kwirk 2-3, first 3.73 M states": ("kwirk", "instances/kwirk/going-up/13_2-3.txt", 4_000_000, False),
}


PAUSE_S = 0.05   # before each run: numba's OpenMP workers spin about 5 ms after a parallel call


def rate(loaded: api.Loaded, workers: int, executor: str, kernel: str, max_states: int | None,
         enumerate_all: bool) -> tuple[float, dict]:
    time.sleep(PAUSE_S)   # so that a run never shares the cores with the last one's spinning workers
    r = api.solve(loaded, "dbfs", Limits(max_states=max_states), kernel=kernel, workers=workers,
                  executor=executor if workers > 1 or executor == "ray" else "local",
                  enumerate_all=enumerate_all)
    search = r.stats["time_s"] - r.stats.get("startup_s", 0.0)
    return r.stats["expanded"] / search, {"status": r.status, "expanded": r.stats["expanded"],
                                          "search_s": round(search, 4), "executor": r.stats["executor"]}


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__, "results/dbfs-scaling.json")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--workers", default="1,2", help="worker counts, the first is the baseline")
    ap.add_argument("--executors", default="threads", help="threads, ray, or both: threads,ray")
    ap.add_argument("--kernel", default="interpreted")
    ap.add_argument("-k", dest="only", default="", help="only tasks whose name contains this")
    args = ap.parse_args(argv)
    counts = [int(x) for x in args.workers.split(",")]
    doc: dict = {"load_before": uptime(), "kernel": args.kernel, "repeat": args.repeat, "tasks": []}
    for name, (model, inst, max_states, enum) in TASKS.items():
        if args.only not in name:
            continue
        path, _, rid = inst.partition("#")
        loaded = api.load_task(model, str(ROOT / path) + (f"#{rid}" if rid else ""))
        for ex in args.executors.split(","):
            for w in counts:                              # untimed: caches and allocator warm
                rate(loaded, w, ex, args.kernel, max_states, enum)
            runs: dict[int, list[float]] = {w: [] for w in counts}
            info: dict[int, dict] = {}
            for _ in range(args.repeat):
                for w in counts:
                    r, info[w] = rate(loaded, w, ex, args.kernel, max_states, enum)
                    runs[w].append(r)
            base = runs[counts[0]]
            row = {"task": name, "executor": ex, "per_workers": {}}
            for w in counts:
                ratios = [a / b for a, b in zip(runs[w], base)]
                row["per_workers"][str(w)] = {
                    "rates": [round(x) for x in runs[w]], "median_rate": round(statistics.median(runs[w])),
                    "median_ratio": round(statistics.median(ratios), 3),
                    "ratio_of_medians": round(statistics.median(runs[w]) / statistics.median(base), 3),
                    "ratio_of_best": round(max(runs[w]) / max(base), 3),
                    "ratios": [round(x, 2) for x in ratios], **info[w]}
                print(f"{name:32s} {ex:8s} x{w:<3d} median {statistics.median(runs[w]):>12,.0f} states/s "
                      f" ratio {statistics.median(ratios):.2f}, of best runs {max(runs[w]) / max(base):.2f}"
                      f"  ({', '.join(f'{x:.2f}' for x in ratios)})", file=sys.stderr)
            doc["tasks"].append(row)
            doc["load_after"] = uptime()
            write_json(args.out, doc)
    doc["load_after"] = uptime()
    write_json(args.out, doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
