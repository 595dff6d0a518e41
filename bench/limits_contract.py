"""Measure the limits contract (docs/limits.md): wall time against --time-limit, peak RSS against
--max-memory, for every explicit and symbolic engine, each run a fresh `puzzleplan solve` process.

    .venv/bin/python bench/limits_contract.py [--limits 2,5] [--memory 260] [--out DIR]

Writes DIR/limits_contract.json and DIR/limits_contract.md (default DIR: bench/results).  Wall
time is measured from before the process starts to after it exits, so interpreter start-up,
imports, loading, compiling, search, plan check, output and exit all count; the peak RSS is the
process's ru_maxrss.  The machine's load (`uptime`) is recorded next to the figures: on a
shared machine they are upper bounds.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from puzzleplan.bench.scripting import markdown, parser, uptime, write_json

ROOT = Path(__file__).resolve().parent.parent
INSTANCE = f"{ROOT}/instances/sliding/korf100-first.txt#korf-001"   # Korf #1, optimum 57
ENGINES = ["bfs", "ucs", "astar", "idastar", "sat", "cpsat"]
MEASURE = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]).returncode; "
           "sys.stderr.write('\\nRSS_KB %d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
           "sys.exit(r)")


def run(engine: str, *flags: str) -> dict:
    kernel = "numba" if engine == "idastar" else "numpy"
    cmd = [sys.executable, "-m", "puzzleplan.cli", "solve", "sliding", INSTANCE, "-e", engine, "--kernel",
           kernel, "--json", "-q", *flags]
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", MEASURE, *cmd], cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    err, _, rss = out.stderr.rpartition("RSS_KB ")
    try:
        res = json.loads(out.stdout)
    except ValueError:
        res = {"status": "?", "message": err.strip()[-200:], "stats": {}}
    st = res.get("stats") or {}
    return {"engine": engine, "kernel": kernel, "exit": out.returncode, "status": res.get("status"),
            "wall_s": round(wall, 3), "rss_mb": round(int(rss or 0) / 1024, 1),
            "lower_bound": st.get("lower_bound"), "load_s": st.get("load_s"),
            "compile_s": st.get("compile_s"), "search_s": st.get("time_s"), "traceback": "Traceback" in err,
            "message": res.get("message", "")}


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--limits", default="2,5", help="time limits in seconds, comma-separated")
    ap.add_argument("--memory", type=float, default=260.0, help="--max-memory in MiB for the memory rows")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()
    engines = args.engines.split(",")
    # idastar needs the compiled kernel: compile it outside any measured run
    run("idastar", "--max-states", "1")
    load_before = uptime()
    time_rows, mem_rows = [], []
    for limit in (float(x) for x in args.limits.split(",")):
        for e in engines:
            r = run(e, "--time-limit", f"{limit:g}")
            r.update(limit_s=limit, overshoot_pct=round(100 * (r["wall_s"] - limit) / limit, 1),
                     within=r["wall_s"] <= 1.05 * limit + 1.0)
            time_rows.append(r)
            print(json.dumps(r), flush=True)
    for e in [x for x in engines if x in ("bfs", "ucs", "astar")]:
        r = run(e, "--max-memory", f"{args.memory:g}", "--time-limit", "120")
        r.update(max_memory_mb=args.memory, within=r["rss_mb"] <= 1.10 * args.memory)
        mem_rows.append(r)
        print(json.dumps(r), flush=True)
    load_after = uptime()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"instance": INSTANCE.replace(str(ROOT) + "/", ""), "uptime_before": load_before,
           "uptime_after": load_after,
           "ru_maxrss_self_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
           "time": time_rows, "memory": mem_rows}
    write_json(out / "limits_contract.json", doc)
    lines = [f"Machine load: before `{load_before}`; after `{load_after}`.", "",
             markdown(["engine", "kernel", "--time-limit s", "wall s", "overshoot %", "within 5 % + 1 s",
                       "RSS MiB", "status", "lower bound"],
                      [[r["engine"], r["kernel"], f"{r['limit_s']:g}", f"{r['wall_s']:.2f}",
                        f"{r['overshoot_pct']:+.1f}", "yes" if r["within"] else "NO", f"{r['rss_mb']:.0f}",
                        r["status"], str(r["lower_bound"])] for r in time_rows]), "",
             markdown(["engine", "--max-memory MiB", "peak RSS MiB", "within +10 %", "wall s", "status",
                       "lower bound"],
                      [[r["engine"], f"{r['max_memory_mb']:g}", f"{r['rss_mb']:.0f}",
                        "yes" if r["within"] else "NO", f"{r['wall_s']:.2f}", r["status"],
                        str(r["lower_bound"])] for r in mem_rows])]
    (out / "limits_contract.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if all(r["within"] and not r["traceback"] for r in time_rows + mem_rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
