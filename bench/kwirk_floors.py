"""Kwirk GOING UP?: try every floor (30 files) step-optimally and tabulate the outcome.

Usage: python bench/kwirk_floors.py [--engine bfs] [--kernel numba] [--time-limit S]
                                    [--max-states N] [--max-memory MB] [--jobs N] [-k TEXT]
                                    [--out results/kwirk-floors.json]
       python bench/kwirk_floors.py --table RESULTS.json [RESULTS.json ...]

Per floor: status, step cost, switches in the plan (steps metric: switches are free, so their
number is whatever the search found, not minimised), proven optimal or not, states stored,
expanded, peak memory (the engine's estimate and the process's peak RSS), search time and wall
time including loading and kernel compilation; compared with known_optima.csv (step optimum
where proven, else the best known DDD-Kwirk/TAS step count).  The JSON is rewritten after every
floor.  Floors are run in the order given by --order (default: known optima first, by size).

Why the numpy kernel by default: every floor has its own kernel structure, which numba must
compile first (minutes for the large floors, docs/models/kwirk.md); the numpy kernel needs no
compilation and is vectorised over whole BFS layers.

Limits: the issue asks for 30 min and 20 GiB per floor: --time-limit (search seconds),
--max-states and --max-memory (the engine's own data, MiB) end a search cleanly with status
"limit".  --jobs runs that many floors at once (one process each; mind the memory: jobs times
--max-memory plus the kernels must fit).  docs/models/kwirk.md states which limits were used.

--table merges the JSON of several runs (floors run in different sessions, engines or limits)
into one Markdown table of all floors, each floor's best outcome: a proven optimum over a limit,
else the highest lower bound; each row names the limits it ran under and what stopped it.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from puzzleplan import api
from puzzleplan.solvers import Limits

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "instances" / "kwirk"


def table() -> dict[str, dict[str, str]]:
    with open(DATA / "known_optima.csv") as fh:
        return {r["file"]: r for r in csv.DictReader(fh) if r["mode"] == "going-up"}


def known_optimum(row: dict[str, str]) -> int | None:
    return int(row["step_optimum"]) if row["step_optimum"] else None


def one(a: argparse.Namespace, f: str, row: dict[str, str]) -> dict:
    """Solve one floor in this process and return its table row."""
    t0 = time.perf_counter()
    loaded = api.load_task("kwirk", str(DATA / f), a.O or [])
    opts = api.engine_options(a.engine, a.E or [], loaded.task)
    lim = Limits(time_s=a.time_limit, max_states=a.max_states, max_mb=a.max_memory)
    res = api.solve(loaded, a.engine, lim, kernel=a.kernel, **opts)
    wall = time.perf_counter() - t0
    labels = api.plan_labels(loaded.task, res.plan) if res.plan else []
    opt = known_optimum(row)
    st = res.stats
    return {"file": f, "floor": row["name"], "engine": a.engine, "kernel": loaded.kernel_note or a.kernel,
            "status": res.status, "steps": res.cost, "switches": labels.count("S") if res.plan else None,
            "optimal": res.status == "optimal", "known_optimum": opt,
            "best_known_steps": int(row["best_known_steps"]),
            "match": (res.cost == opt) if (opt is not None and res.cost is not None) else None,
            "states": st.get("states"), "expanded": st.get("expanded"), "peak_mb": st.get("peak_mb"),
            "rss_peak_mb": st.get("rss_peak_mb"), "search_s": st.get("time_s"), "wall_s": round(wall, 2),
            "verified": st.get("verified"), "time_limit_s": a.time_limit, "max_states": a.max_states,
            "max_memory_mb": a.max_memory,
            "lower_bound": st.get("lower_bound"), "engine_options": a.E or [], "options": loaded.options,
            "actions": len(loaded.task.actions), "plan": "".join(labels),
            "layers": st.get("layers")}   # bfs: states per closed layer, to see where growth goes


def _better(a: dict, b: dict) -> bool:
    """Whether run ``a`` says more about its floor than run ``b``: a proof, else a higher bound;
    on a tie the later run (files are read in the order given) wins."""
    if (a.get("status") == "optimal") != (b.get("status") == "optimal"):
        return a.get("status") == "optimal"
    return (a.get("lower_bound") or 0) >= (b.get("lower_bound") or 0)


def stopped_by(r: dict) -> str:
    """Which limit ended a run with status "limit" (the engine reports only that one did)."""
    if r.get("status") != "limit":
        return ""
    if r.get("max_states") and (r.get("states") or 0) >= r["max_states"]:
        return "states"
    if r.get("search_s") is not None and r.get("time_limit_s") and r["search_s"] >= r["time_limit_s"] - 1:
        return "time"
    return "memory"


def _from_solve(d: dict, tab: dict[str, dict[str, str]]) -> dict:
    """A ``puzzleplan solve kwirk FLOOR --json`` result as a bench run (its limits are not recorded)."""
    f = d["instance"].replace("\\", "/").split("instances/kwirk/")[-1]
    row, st = tab[f], d.get("stats", {})
    opt = known_optimum(row)
    return {"file": f, "floor": row["name"], "engine": d.get("engine", ""), "status": d["status"],
            "steps": d.get("cost"), "switches": d["plan"].count("S") if d.get("plan") else None,
            "match": opt is not None and d.get("cost") == opt, "lower_bound": st.get("lower_bound"),
            **{k: st.get(k) for k in ("states", "rss_peak_mb", "layers")}, "search_s": st.get("time_s")}


def markdown(paths: list[str]) -> str:
    """One row per floor (file order), each floor's most informative run among ``paths`` (bench
    JSON, or the JSON of ``puzzleplan solve kwirk FLOOR --json``)."""
    tab = table()
    best: dict[str, dict] = {}
    for p in paths:
        data = json.loads(Path(p).read_text())
        for r in data["runs"] if "runs" in data else [_from_solve(data, tab)]:
            if r.get("status") != "error" and (r["file"] not in best or _better(r, best[r["file"]])):
                best[r["file"]] = r

    def num(x: float | int | None, fmt: str = ",.0f") -> str:
        return "" if x is None else format(x, fmt)

    head = ["floor", "status", "steps", "switches", "known optimum", "best known", "lower bound", "engine",
            "states", "last layer", "layer growth", "peak RSS MB", "search s", "limits (s / MiB)",
            "stopped by"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for f in sorted(tab):
        r = best.get(f)
        if r is None:
            lines.append(f"| {tab[f]['name']} | not run |" + " |" * (len(head) - 2))
            continue
        layers = r.get("layers") or []
        growth = (layers[-1] / layers[-11]) ** 0.1 if len(layers) > 11 and layers[-11] else None
        status = f"**{r['status']}**" if r["status"] == "optimal" else r["status"]
        mem = num(r.get("max_memory_mb")) or "-"
        lines.append(" | ".join([
            f"| {r['floor']}", status, num(r.get("steps"), ""), num(r.get("switches"), ""),
            tab[f]["step_optimum"], tab[f]["best_known_steps"],
            "" if r["status"] == "optimal" else num(r.get("lower_bound"), ""), r.get("engine", ""),
            num(r.get("states")), num(layers[-1]) if layers else "", num(growth, ".2f"),
            num(r.get("rss_peak_mb")), num(r.get("search_s"), ",.1f"),
            f"{num(r.get('time_limit_s')) or '-'} / {mem}", stopped_by(r)]) + " |")
    runs = list(best.values())
    proven = sum(r["status"] == "optimal" for r in runs)
    matched = sum(bool(r.get("match")) for r in runs)
    known = sum(1 for f in tab if tab[f]["step_optimum"])
    new = sum(r["status"] == "optimal" and not tab[r["file"]]["step_optimum"] for r in runs)
    lines.append(f"\nproven optimal {proven}/{len(tab)}; known optima matched {matched}/{known}; "
                 f"floors without a known optimum proven: {new}/{len(tab) - known}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", default="bfs")
    ap.add_argument("--kernel", default="numpy", choices=("numpy", "numba"))
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--max-states", type=int, default=60_000_000)
    ap.add_argument("--max-memory", type=float, default=None, help="MiB of search data per floor")
    ap.add_argument("--jobs", type=int, default=1, help="floors run at once")
    ap.add_argument("-k", default="", help="only files whose name contains this text (comma: any of several)")
    ap.add_argument("--unknown", action="store_true", help="only floors without a proven step optimum")
    ap.add_argument("-E", action="append", metavar="KEY=VALUE", help="engine option (e.g. macro=false)")
    ap.add_argument("-O", action="append", metavar="KEY=VALUE", help="model option (e.g. prune=none)")
    ap.add_argument("--out", default=str(ROOT / "results" / "kwirk-floors.json"))
    ap.add_argument("--table", nargs="+", metavar="JSON", help="print one Markdown table from these results")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)   # internal: one floor, JSON on stdout
    a = ap.parse_args(argv)
    if a.table:
        print(markdown(a.table))
        return 0
    tab = table()
    if a.one:
        print(json.dumps(one(a, a.one, tab[a.one])))
        return 0
    keys = a.k.split(",")
    files = sorted((f for f in tab if any(k in f for k in keys)
                    and not (a.unknown and tab[f]["step_optimum"])),
                   key=lambda f: (not tab[f]["step_optimum"], f))
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    runs: list[dict] = []

    def run_floor(f: str) -> dict:
        row = tab[f]
        # one process per floor: the peak RSS is that floor's, and a crash ends one row only
        cmd = [sys.executable, __file__, "--one", f, "--engine", a.engine, "--kernel", a.kernel,
               "--time-limit", str(a.time_limit), "--max-states", str(a.max_states)]
        if a.max_memory is not None:
            cmd += ["--max-memory", str(a.max_memory)]
        cmd += [x for e in a.E or [] for x in ("-E", e)]
        cmd += [x for o in a.O or [] for x in ("-O", o)]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        try:
            rec = json.loads(p.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            err = (p.stderr.strip().splitlines() or ["no output"])[-1]
            rec = {"file": f, "floor": row["name"], "status": "error", "error": f"exit {p.returncode}: {err}"}
        rec["process_wall_s"] = round(time.perf_counter() - t0, 2)
        return rec

    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        for rec in pool.map(run_floor, files):
            runs.append(rec)
            if rec["status"] == "error":
                print(f"{rec['floor']:5s} error {rec['error']}", flush=True)
            else:
                print(f"{rec['floor']:5s} {rec['status']:8s} steps {rec['steps']!s:>4} "
                      f"sw {rec['switches']!s:>2} "
                      f"known {rec['known_optimum']!s:>4} best {rec['best_known_steps']:4d} "
                      f"states {rec['states']!s:>10} rss {rec['rss_peak_mb']!s:>8} MB "
                      f"search {rec['search_s'] or 0:8.1f} s wall {rec['wall_s']:7.1f} s", flush=True)
            out.write_text(json.dumps({"bench": "kwirk-floors", "runs": runs}, indent=1))
    out.write_text(json.dumps({"bench": "kwirk-floors", "runs": runs}, indent=1))
    solved = sum(r.get("status") == "optimal" for r in runs)
    matched = sum(bool(r.get("match")) for r in runs)
    known = sum(1 for f in files if tab[f]["step_optimum"])
    print(f"proven optimal {solved}/{len(files)}; known optima matched {matched}/{known}; JSON: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
