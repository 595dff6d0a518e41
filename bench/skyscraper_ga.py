"""Skyscrapers: the GA paper's Table III for any instance set, plus exact-engine times.

Usage (from the repository root):

    .venv/bin/python bench/skyscraper_ga.py ga --sizes 4,5,6 --per-size 5 --runs 50 \\
        --presets paper,improved -o results/sky-ga-46.json --plot results/sky-ga-46.png
    .venv/bin/python bench/skyscraper_ga.py ga --sizes 7,8,9 --per-size 0 --runs 10 --presets improved
    .venv/bin/python bench/skyscraper_ga.py exact -o results/sky-exact.json

``ga``: per instance and preset, ``runs`` seeded runs (seed = run index); the table has the
paper's columns -- success %, mean and standard deviation of the solution time over the
successful runs (ms), mean convergence generation (successful runs; for ``improved`` a
"generation" is one local-search step of the whole population), mean and standard deviation
of the best fitness of the unsuccessful runs -- and the evaluations used.  ``--per-size K``
takes the first K instances of each size without givens and with a unique solution
(``index.tsv``), like the paper's brainbashers puzzles; ``0`` takes every feasible instance.
``--plot`` draws best fitness against generation for the first instance of each size, one
run per preset (matplotlib, an optional extra: ``pip install -e '.[plot]'``).

``exact``: every instance on cpsat, sat and backtrack, time to the first solution and to the
uniqueness verdict (``count=2``), beside the CP-SAT and Tatham-solver times of ``index.tsv``.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import time
from multiprocessing import Pool
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKY = ROOT / "instances" / "skyscraper"
INDEX = list(csv.DictReader(open(SKY / "index.tsv", encoding="utf-8"), delimiter="\t"))


def pick(sizes, per_size):
    out = []
    for n in sizes:
        rows = [r for r in INDEX if int(r["size"]) == n and r["unique"] != "infeasible"]
        if per_size:
            rows = [r for r in rows if r["givens"] == "0" and r["unique"] == "yes"][:per_size]
        out += [r["name"] for r in rows]
    return out


def ga_run(job):
    from puzzleplan import api
    from puzzleplan.solvers import Limits

    name, preset, seed, history = job
    loaded = api.load_task("skyscraper", str(SKY / f"{name}.txt"))
    res = api.solve(loaded, "ga", Limits(), preset=preset, seed=seed, history=history)
    st = res.stats
    return {"instance": name, "preset": preset, "seed": seed, "solved": res.status == "solved",
            "verified": st.get("verified"), "time_ms": st["time_s"] * 1000, "generations": st["generations"],
            "evaluations": st["evaluations"], "best_fitness": st["best_fitness"],
            "history": st.get("history")}


def table3(runs):
    rows = []
    keys = sorted({(r["preset"], r["instance"]) for r in runs}, key=lambda k: (k[0], _size(k[1]), k[1]))
    for preset, inst in keys:
        rs = [r for r in runs if r["preset"] == preset and r["instance"] == inst]
        ok = [r for r in rs if r["solved"]]
        bad = [r for r in rs if not r["solved"]]
        rows.append({
            "preset": preset, "instance": inst, "size": _size(inst), "runs": len(rs),
            "success_pct": round(100 * len(ok) / len(rs), 1),
            "mean_time_ms": _mean([r["time_ms"] for r in ok]),
            "std_time_ms": _std([r["time_ms"] for r in ok]),
            "mean_generation": _mean([r["generations"] for r in ok]),
            "mean_fail_fitness": _mean([r["best_fitness"] for r in bad]),
            "std_fail_fitness": _std([r["best_fitness"] for r in bad]),
            "mean_evaluations": _mean([r["evaluations"] for r in rs]),
            "all_verified": all(r["verified"] for r in ok),
        })
    return rows


def _size(name):
    return next(int(r["size"]) for r in INDEX if r["name"] == name)


def _mean(xs):
    return round(statistics.fmean(xs), 2) if xs else None


def _std(xs):
    return round(statistics.stdev(xs), 2) if len(xs) > 1 else (0.0 if xs else None)


def render(rows, cols):
    head = "| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n"
    return head + "\n".join("| " + " | ".join("-" if r[c] is None else str(r[c]) for c in cols) + " |"
                            for r in rows)


def plot(runs, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = [r for r in runs if r["history"]]
    sizes = sorted({_size(r["instance"]) for r in curves})
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.5 * len(sizes), 3.6), squeeze=False)
    for ax, n in zip(axes[0], sizes):
        for r in curves:
            if _size(r["instance"]) == n:
                ax.plot(range(len(r["history"])), r["history"],
                        label=f"{r['preset']} (seed {r['seed']})", lw=1.2)
        ax.set_title(f"{n}x{n}: {next(r['instance'] for r in curves if _size(r['instance']) == n)}")
        ax.set_xlabel("generation (improved: population step)")
        ax.set_ylabel("best fitness (-broken rules)")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=("ga", "exact"))
    p.add_argument("--sizes", default="4,5,6")
    p.add_argument("--per-size", type=int, default=5)
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--presets", default="paper,improved")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("-o", "--out")
    p.add_argument("--plot")
    p.add_argument("--instances", help="comma-separated instance names (overrides --sizes/--per-size)")
    a = p.parse_args(argv)
    t0 = time.time()
    if a.what == "exact":
        return exact(a)
    names = a.instances.split(",") if a.instances else pick([int(s) for s in a.sizes.split(",")], a.per_size)
    presets = a.presets.split(",")
    first = {}
    for nm in names:
        first.setdefault(_size(nm), nm)
    jobs = [(nm, pr, s, bool(a.plot) and s == 0 and first[_size(nm)] == nm)
            for nm in names for pr in presets for s in range(a.runs)]
    with Pool(a.workers) as pool:
        runs = []
        for i, r in enumerate(pool.imap_unordered(ga_run, jobs), 1):
            runs.append(r)
            if i % 50 == 0:
                print(f"{i}/{len(jobs)} runs, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    rows = table3(runs)
    cols = ["preset", "instance", "runs", "success_pct", "mean_time_ms", "std_time_ms", "mean_generation",
            "mean_fail_fitness", "std_fail_fitness", "mean_evaluations", "all_verified"]
    print(render(rows, cols))
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps({"table": rows, "runs": runs, "wall_s": time.time() - t0}))
    if a.plot:
        plot(runs, a.plot)
    return 0


def exact(a):
    from puzzleplan import api
    from puzzleplan.solvers import Limits
    from puzzleplan.solvers.csp import uniqueness

    rows = []
    for r in INDEX:
        loaded = api.load_task("skyscraper", str(SKY / f"{r['name']}.txt"))
        row = {"instance": r["name"], "size": int(r["size"]), "readme": r["unique"],
               "index_cpsat_first_s": r["cpsat_first_s"], "tatham_s": r["tatham_solver_s"]}
        for e in ("cpsat", "sat", "backtrack"):
            one = api.solve(loaded, e, Limits(120))
            two = api.solve(loaded, e, Limits(120), count=2)
            row[f"{e}_s"] = round(one.stats["time_s"], 4)
            row[f"{e}_unique_s"] = round(two.stats["time_s"], 4)
            row[f"{e}_verdict"] = uniqueness(two, 2)
        rows.append(row)
        print(r["name"], {k: v for k, v in row.items() if k.endswith("_s") or k.endswith("verdict")},
              file=sys.stderr, flush=True)
    summary = []
    for n in sorted({r["size"] for r in rows}):
        rs = [r for r in rows if r["size"] == n]
        s = {"size": f"{n}x{n}", "instances": len(rs)}
        for e in ("cpsat", "sat", "backtrack"):
            s[f"{e} mean/max s"] = f"{statistics.fmean(r[e + '_s'] for r in rs):.3f} / " \
                                   f"{max(r[e + '_s'] for r in rs):.3f}"
            s[f"{e} unique mean/max s"] = f"{statistics.fmean(r[e + '_unique_s'] for r in rs):.3f} / " \
                                          f"{max(r[e + '_unique_s'] for r in rs):.3f}"
        ts = [float(r["tatham_s"]) for r in rs if r["tatham_s"] not in ("", "-", "NA")]
        s["tatham mean/max s (index.tsv)"] = f"{statistics.fmean(ts):.3f} / {max(ts):.3f}" if ts else "-"
        summary.append(s)
    print(render(summary, list(summary[0])))
    verdict_ok = all(r[f"{e}_verdict"] == {"yes": "unique", "infeasible": "none"}.get(r["readme"], "several")
                     for r in rows for e in ("cpsat", "sat", "backtrack"))
    print(f"\nuniqueness verdicts match the README for all engines: {verdict_ok}")
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps({"rows": rows, "summary": summary}))
    return 0 if verdict_ok else 20


if __name__ == "__main__":
    raise SystemExit(main())
