"""Fast Downward as an external referee: cross-engine verification and a speed comparison.

Usage:
    python bench/fd_compare.py verify --suite microban|klotski|eight [--engines bfs,astar,sat,cpsat,fd]
                                      [--time-limit S] [--part K/N] [-O KEY=VALUE]
                                      [--out results/fd-verify-SUITE.json]
    python bench/fd_compare.py speed [--suite all|microban|klotski|eight|zpg] [--time-limit S]
                                     [--out results/fd-speed.json]
    python bench/fd_compare.py symmetry [--searches blind,lmcut] [--time-limit S]
                                        [--out results/fd-symmetry.json]

``verify`` runs ``puzzleplan verify`` (crosscheck.run: every plan replayed by the reference
checker, optimality claims compared) on each instance of a suite and records, per instance,
whether the engines agree and each engine's status, cost and time.  The suites are the
issue's "small" tasks: Microban levels with push-optimum <= 10 (pushes metric), the Hua Rong
Dao layouts of instances/klotski/ whose block-move optimum is <= 20 (metric moves), and the
nine 8-puzzle starts of instances/sliding/eight-depths.txt.

``speed`` runs, on the same tasks, our ``bfs`` and ``astar`` (numba kernel, compiled before
timing) and FD's ``astar(blind())`` and ``astar(lmcut())`` on the exported PDDL, and reports
states expanded per second of search (each engine's own search time: ours ``time_s``, FD's
"Search time") and total time as ratios FD/ours: wall (ours: search; FD: export + translate +
search, the engine's ``time_s``) and CPU (this process and its children, around the whole
``api.solve`` call including the checker's replay; on a loaded machine the CPU figures are
the meaningful ones).  States are not the same objects:
our engines store canonical states (interchangeable pieces and boxes sorted), FD searches the
states of the PDDL, where interchangeable objects are anonymous when the exporter can write
them so (then the same canonical states) and labelled otherwise; both figures are recorded.

``symmetry`` runs FD (each of ``--searches``) on the anonymous export and on the labelled one
(``symmetric=false``) of 横刀立马 (steps and moves) and Microban 7 (six boxes), recording
status, cost, expanded states, FD's search and translate times, the run's wall time and the
1-minute load average before each run.

Timings on a shared, loaded machine are upper bounds.  The JSON is rewritten after every
instance.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import sys
import time
from pathlib import Path
from typing import Any

from puzzleplan import api, crosscheck
from puzzleplan.bench.scripting import parser, write_json
from puzzleplan.solvers import Limits

ROOT = Path(__file__).resolve().parent.parent
MICROBAN = ROOT / "instances" / "sokoban" / "microban.xsb"
FAYAA = ROOT / "instances" / "klotski" / "fayaa.txt"
EIGHT = ROOT / "instances" / "sliding" / "eight-depths.txt"
ZPG = ROOT / "instances" / "zpg"

# Microban levels whose push-optimum in instances/sokoban/README.md is at most 10
MICROBAN_SMALL = [1, 2, 4, 5, 7, 9, 14, 17, 21, 23, 24, 25, 26, 27, 28, 30, 31, 32, 33, 34, 38, 40, 44, 46,
                  51, 52, 56]


def klotski_small(limit: int = 20) -> list[str]:
    """Layouts of instances/klotski/ whose block-move optimum (README table) is at most ``limit``."""
    out = []
    row = re.compile(r"^\| (\S+) \| [^|]*\| (\d+) \| (\d+) \|")
    for line in (ROOT / "instances" / "klotski" / "README.md").read_text(encoding="utf-8").splitlines():
        m = row.match(line)
        if m and m.group(1).startswith("fayaa-") and int(m.group(3)) <= limit:
            out.append(m.group(1))
    return out


def eight_ids() -> list[str]:
    return re.findall(r"^id: (\S+)", EIGHT.read_text(encoding="utf-8"), flags=re.M)


def suite(name: str) -> list[tuple[str, str, str, list[str]]]:
    """(label, model, instance, options) per task."""
    if name == "microban":
        return [(f"Microban {n}", "sokoban", str(MICROBAN), [f"level={n}"]) for n in MICROBAN_SMALL]
    if name == "klotski":
        return [(i, "klotski", f"{FAYAA}#{i}", []) for i in klotski_small()]
    if name == "eight":
        return [(i, "sliding", f"{EIGHT}#{i}", []) for i in eight_ids()]
    if name == "zpg":
        return [(p.stem, "zpg", str(p), []) for p in sorted(ZPG.glob("waikato-3x3-*.txt"))]
    if name == "all":
        return suite("eight") + suite("klotski") + suite("microban")[:8] + suite("zpg")
    raise SystemExit(f"unknown suite {name}")


def run_verify(a: argparse.Namespace) -> int:
    engines = crosscheck.parse_engines(a.engines)
    out = Path(a.out or ROOT / "results" / f"fd-verify-{a.suite}.json")
    doc: dict[str, Any] = {"suite": a.suite, "engines": engines, "time_limit_s": a.time_limit,
                           "started": time.strftime("%Y-%m-%d %H:%M:%S"), "runs": []}
    bad = 0
    tasks = suite(a.suite)
    k, n = (int(x) for x in a.part.split("/"))
    tasks = tasks[k - 1::n]
    for label, model, inst, opts in tasks:
        loaded = api.load_task(model, inst, opts + a.option)
        v = crosscheck.run(loaded, engines, Limits(a.time_limit), a.kernel)
        rec = v.to_json(loaded)
        rec["label"] = label
        rec["all_optimal"] = all(r.status == "optimal" for r in v.results.values())
        doc["runs"].append(rec)
        bad += not v.agree
        st = " ".join(f"{n}={r.status[:3]}:{r.cost}" for n, r in v.results.items())
        print(f"{label:16} {'agree' if v.agree else 'DISAGREE'} optimum={v.optimum} {st}", flush=True)
        write_json(out, doc)
    runs = doc["runs"]
    doc["summary"] = {"tasks": len(runs), "agree": sum(r["agree"] for r in runs),
                      "all_engines_optimal": sum(r["all_optimal"] for r in runs),
                      "fd_optimal": sum(r["engines"].get("fd", {}).get("optimal", False) for r in runs)}
    write_json(out, doc)
    print(json.dumps(doc["summary"]))
    return 1 if bad else 0


def _cpu() -> float:
    """CPU seconds of this process and its finished children (FD runs as a child process)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _rate(expanded: Any, seconds: Any) -> float | None:
    if not expanded or not seconds:
        return None
    return expanded / seconds


def run_speed(a: argparse.Namespace) -> int:
    out = Path(a.out or ROOT / "results" / "fd-speed.json")
    doc: dict[str, Any] = {"suite": a.suite, "time_limit_s": a.time_limit,
                           "started": time.strftime("%Y-%m-%d %H:%M:%S"), "runs": []}
    for label, model, inst, opts in suite(a.suite):
        loaded = api.load_task(model, inst, opts)
        rec: dict[str, Any] = {"label": label, "model": model, "instance": inst, "options": opts}
        t0 = time.perf_counter()
        loaded.kernel(a.kernel)  # compile before timing (cached on disk after the first run)
        rec["kernel_build_s"] = round(time.perf_counter() - t0, 3)
        for name, engine, extra in (("bfs", "bfs", {}), ("astar", "astar", {}),
                                    ("fd_blind", "fd", {"search": "blind"}),
                                    ("fd_lmcut", "fd", {"search": "lmcut"})):
            cpu0 = _cpu()
            try:
                r = api.solve(loaded, engine, Limits(a.time_limit), a.kernel, **extra)
            except Exception as e:  # e.g. lmcut on a task needing derived predicates
                rec[name] = {"error": str(e)[:200]}
                continue
            cpu = round(_cpu() - cpu0, 3)
            st = r.stats
            search_s = st.get("fd_search_s") if engine == "fd" else st.get("time_s")
            rec[name] = {"status": r.status, "cost": r.cost, "expanded": st.get("expanded"),
                         "generated": st.get("generated"), "search_s": search_s, "total_s": st.get("time_s"),
                         "translate_s": st.get("fd_translate_s"), "export_s": st.get("export_s"),
                         "cpu_s": cpu, "states_per_s": _rate(st.get("expanded"), search_s),
                         "verified": st.get("verified")}
        ratios = {}
        for ours in ("bfs", "astar"):
            for theirs in ("fd_blind", "fd_lmcut"):
                o, t = rec.get(ours, {}), rec.get(theirs, {})
                if o.get("states_per_s") and t.get("states_per_s"):
                    ratios[f"{theirs}/{ours} states_per_s"] = round(t["states_per_s"] / o["states_per_s"], 3)
                if o.get("total_s") and t.get("total_s"):
                    ratios[f"{theirs}/{ours} total_s"] = round(t["total_s"] / o["total_s"], 3)
                if o.get("cpu_s") and t.get("cpu_s"):
                    ratios[f"{theirs}/{ours} cpu_s"] = round(t["cpu_s"] / o["cpu_s"], 3)
        rec["ratios"] = ratios
        doc["runs"].append(rec)
        write_json(out, doc)
        line = "  ".join(f"{n}: {rec[n].get('status', 'err')[:3]} {rec[n].get('cost')} "
                         f"exp={rec[n].get('expanded')} t={rec[n].get('total_s')}"
                         for n in ("bfs", "astar", "fd_blind", "fd_lmcut"))
        print(f"{label:16} {line}", flush=True)
    return 0


SYMMETRY_TASKS = [("fayaa-001 steps", "klotski", f"{FAYAA}#fayaa-001", ["metric=steps"]),
                  ("fayaa-001 moves", "klotski", f"{FAYAA}#fayaa-001", []),
                  ("Microban 7", "sokoban", str(MICROBAN), ["level=7"])]


def run_symmetry(a: argparse.Namespace) -> int:
    import os

    out = Path(a.out or ROOT / "results" / "fd-symmetry.json")
    doc: dict[str, Any] = {"time_limit_s": a.time_limit, "started": time.strftime("%Y-%m-%d %H:%M:%S"),
                           "runs": []}
    for label, model, inst, opts in SYMMETRY_TASKS:
        loaded = api.load_task(model, inst, opts)
        for symmetric in (True, False):
            for search in a.searches.split(","):
                load = os.getloadavg()[0]
                t0 = time.perf_counter()
                r = api.solve(loaded, "fd", Limits(a.time_limit), search=search, symmetric=symmetric)
                st = r.stats
                rec = {"label": label, "symmetric": symmetric, "search": search, "status": r.status,
                       "cost": r.cost, "expanded": st.get("expanded"), "fd_search_s": st.get("fd_search_s"),
                       "fd_translate_s": st.get("fd_translate_s"), "export_s": st.get("export_s"),
                       "pddl_actions": st.get("pddl_actions"), "wall_s": round(time.perf_counter() - t0, 2),
                       "load_1min": round(load, 2)}
                doc["runs"].append(rec)
                write_json(out, doc)
                print(f"{label:16} {'anonymous' if symmetric else 'labelled':9} {search:6} {r.status:8} "
                      f"cost={r.cost} expanded={rec['expanded']} wall={rec['wall_s']}s "
                      f"load={rec['load_1min']}",
                      flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("verify")
    v.add_argument("--suite", choices=("microban", "klotski", "eight"), required=True)
    v.add_argument("--engines", default="bfs,astar,sat,cpsat,fd")
    v.add_argument("--time-limit", type=float, default=300.0, help="per engine and task (s)")
    v.add_argument("--kernel", default="numba")
    v.add_argument("-O", dest="option", action="append", default=[], help="model option for every task")
    v.add_argument("--part", default="1/1", help="K/N: every N-th task from the K-th (parallel runs)")
    v.add_argument("--out", default=None)
    s = sub.add_parser("speed")
    s.add_argument("--suite", choices=("all", "microban", "klotski", "eight", "zpg"), default="all")
    s.add_argument("--time-limit", type=float, default=300.0)
    s.add_argument("--kernel", default="numba")
    s.add_argument("--out", default=None)
    y = sub.add_parser("symmetry")
    y.add_argument("--searches", default="blind,lmcut")
    y.add_argument("--time-limit", type=float, default=120.0)
    y.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    if a.cmd == "symmetry":
        return run_symmetry(a)
    return run_verify(a) if a.cmd == "verify" else run_speed(a)


if __name__ == "__main__":
    sys.exit(main())
