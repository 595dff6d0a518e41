"""``verify`` over many instances: the verdict per instance, as JSON lines and a Markdown summary.

Why: issue 19's acceptance figures are sweeps -- every bundled skyscraper with ``--count 2`` across
backtrack, sat and cpsat; every bundled model's smallest instance with the default engines and
limits.  Each instance runs in-process through ``crosscheck.run`` (the code ``puzzleplan verify``
runs), so the figures are the CLI's.

    python bench/verify_sweep.py skyscraper 'instances/skyscraper/*.txt' --count 2 \\
        --engines backtrack,sat,cpsat
    python bench/verify_sweep.py --smallest          # every bundled model's smallest instance, defaults
"""

from __future__ import annotations

import glob
import json
import sys
import time
from pathlib import Path

from puzzleplan import api, crosscheck
from puzzleplan.bench.scripting import markdown, parser, uptime
from puzzleplan.solvers import Limits

# the smallest bundled instance of each model (by state space or board size), for --smallest
SMALLEST = {
    "klotski": ("instances/klotski/fayaa.txt#fayaa-117", []),
    "sliding": ("instances/sliding/eight.txt#eight-easy", []),
    "zpg": ("instances/zpg/waikato-3x3-a.txt", []),
    "sokoban": ("instances/sokoban/microban.xsb", ["level=1"]),
    "kwirk": ("instances/kwirk/heading-out/030.txt", []),
    "lightsout": ("instances/lightsout/boards.txt#all-on-3x3", []),
    "skyscraper": ("instances/skyscraper/codewars-4x4-1.txt", []),
    "sudoku": ("instances/sudoku/puzzles.txt#1", []),
}


def _load(model: str, inst: str, options: list[str]) -> api.Loaded:
    return api.load_task(model, inst, options)


def run_one(model: str, inst: str, options: list[str], engines: list[str] | None, limit: float | None,
            count: int, kernel: str, jobs: int) -> dict:
    t0 = time.perf_counter()
    loaded = _load(model, inst, options)
    names = engines or crosscheck.default_engines(loaded, kernel)
    v = crosscheck.run(loaded, names, Limits(limit or crosscheck.DEFAULT_TIME_LIMIT), kernel, count, jobs)
    doc = v.to_json(loaded)
    doc["wall_s"] = round(time.perf_counter() - t0, 3)
    return doc


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("model", nargs="?")
    ap.add_argument("instances", nargs="*", help="files or globs (FILE#ID for one record)")
    ap.add_argument("--smallest", action="store_true", help="every bundled model's smallest instance")
    ap.add_argument("--engines", default=None)
    ap.add_argument("--time-limit", type=float, default=None, help="per engine (default: verify's default)")
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--kernel", default="auto")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("-O", dest="options", action="append", default=[])
    ap.add_argument("-o", "--output", default=None, help="JSON lines file (default: stdout only)")
    a = ap.parse_args()
    engines = crosscheck.parse_engines(a.engines) if a.engines else None
    if a.smallest:
        todo = [(m, i, o) for m, (i, o) in SMALLEST.items()]
    else:
        files = sorted({f for pat in a.instances for f in (glob.glob(pat) if "#" not in pat else [pat])})
        todo = [(a.model, f, a.options) for f in files]
    out = open(a.output, "w", encoding="utf-8") if a.output else None
    load = uptime()
    verdicts: dict[str, int] = {}
    rows = []
    for model, inst, opts in todo:
        doc = run_one(model, inst, opts, engines, a.time_limit, a.count, a.kernel, a.jobs)
        verdicts[doc["verdict"]] = verdicts.get(doc["verdict"], 0) + 1
        line = json.dumps(doc, ensure_ascii=False)
        if out:
            out.write(line + "\n")
            out.flush()
        engines_txt = ", ".join(f"{n} {e['status']} {e['time']:.2f}s" for n, e in doc["engines"].items())
        rows.append([model, Path(inst).name, doc["verdict"], doc["claim"], f"{doc['wall_s']:.1f}",
                     engines_txt])
        print(" ".join(rows[-1]), file=sys.stderr, flush=True)
    print(f"load before the run: {load}")
    print(markdown(["model", "instance", "verdict", "claim", "wall s", "engines"], rows))
    print("\n" + ", ".join(f"{k}: {v}" for k, v in sorted(verdicts.items())) + f" (of {len(todo)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
