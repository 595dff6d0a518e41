"""Tables I and II of Coldridge & Amos (the Zen Puzzle Garden GA vs A*) on puzzleplan's ZPG boards.

Why a script: a table needs many GA runs per board (the paper: 50) and three
A* runs per board, then the paper's aggregates (best, average, excess %, and
evaluations until the optimum is first found, as a share of A*'s).  Each board
appends one JSON line to ``--out`` (a partial sweep is a usable record; a
rerun skips boards already there); ``--render`` turns the lines into the two
markdown tables and a PNG.

Per board:

* GA: ``--runs`` runs of ``ga -O preset=paper`` (seeds 0..runs-1), model
  options ``heuristic=area prune=none`` (the paper's simulator: no dead-state
  prune; the heuristic is unused by the GA but shares the task with the
  paper-style A* run), compiled kernel.  ``target`` = the proven optimum, so a
  run stops when it finds the optimum (its best cannot improve on it; the
  evaluations until then are what Table II counts); other runs go the full
  100 generations.  A run's result is the cheapest plan it found.
* A*: ``evaluations`` = states generated (every generated state has its
  heuristic evaluated; the paper counts "boards evaluated").  ``astar`` with
  the admissible ``components`` heuristic and the dead-state prune (ours,
  optimal) and with ``-O heuristic=area -O prune=none`` (the paper's
  AreaFitness-style guidance, not admissible), numpy kernel.

    nice -n 10 .venv/bin/python bench/zpg_ga.py --runs 50 --out results/zpg-ga.jsonl
    .venv/bin/python bench/zpg_ga.py --render results/zpg-ga.jsonl \
        --md results/zpg-ga.md --png results/zpg-ga.png
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from puzzleplan import api  # noqa: E402
from puzzleplan.solvers import Limits  # noqa: E402

BOARDS = ROOT / "instances" / "zpg"
FACTS = {"puzzlescript-L1": 4, "puzzlescript-L4": 5, "puzzlescript-L5": 7, "waikato-3x3-a": 3,
         "waikato-3x3-b": 3, "waikato-5x3": 3}
GA_OPTIONS = ["heuristic=area", "prune=none"]


def optimum_of(path: Path) -> int | None:
    m = re.search(r"^#\s*optimum:\s*(\d+)", path.read_text(encoding="utf-8"), re.MULTILINE)
    return int(m.group(1)) if m else FACTS.get(path.stem)


def default_boards() -> list[Path]:
    """Every solvable board with a known optimum, by optimum then name (the paper orders Table I so)."""
    out = [(optimum_of(p), p.stem, p) for p in BOARDS.glob("*.txt")]
    return [p for o, _, p in sorted((o, s, p) for o, s, p in out if o is not None)]


def ga_runs(path: Path, opt: int, runs: int, time_limit: float, kernel: str,
            preset: str = "paper") -> dict[str, Any]:
    loaded = api.load_task("zpg", str(path), GA_OPTIONS)
    t0 = time.time()
    k = loaded.kernel(kernel)
    compile_s = time.time() - t0
    out = []
    for seed in range(runs):
        r = api.solve(loaded, "ga", Limits(time_limit), kernel, preset=preset, seed=seed, target=opt)
        st = r.stats
        out.append({"seed": seed, "status": r.status, "cost": r.cost, "verified": st.get("verified"),
                    "evaluations": st["evaluations"], "evaluations_to_best": st["evaluations_to_best"],
                    "time_s": st["time_s"], "best_cost_by_generation": st["best_cost_by_generation"]})
    return {"kernel": k.backend, "kernel_s": round(compile_s, 1), "preset": preset, "runs": out}


def astar_run(path: Path, options: list[str], time_limit: float) -> dict[str, Any]:
    loaded = api.load_task("zpg", str(path), options)
    r = api.solve(loaded, "astar", Limits(time_limit), "numpy")
    st = r.stats
    return {"options": options, "status": r.status, "cost": r.cost, "generated": st.get("generated"),
            "expanded": st.get("expanded"), "time_s": st.get("time_s")}


def sweep(a: argparse.Namespace) -> None:
    done = set()
    if a.out.exists():
        done = {json.loads(x)["board"] for x in a.out.read_text().splitlines() if x.strip()}
    boards = [BOARDS / f"{b}.txt" for b in a.boards.split(",")] if a.boards else default_boards()
    for p in boards:
        if p.stem in done:
            continue
        opt = optimum_of(p)
        if opt is None:
            continue
        row: dict[str, Any] = {"board": p.stem, "optimum": opt, "runs_requested": a.runs}
        row["ga"] = ga_runs(p, opt, a.runs, a.ga_time, a.kernel, a.preset)
        if not a.no_astar:
            row["astar"] = astar_run(p, [], a.astar_time)
            row["astar_area"] = astar_run(p, ["heuristic=area", "prune=none"], a.astar_time)
        with a.out.open("a") as f:
            f.write(json.dumps(row) + "\n")
        costs = [r["cost"] for r in row["ga"]["runs"]]
        print(p.stem, opt, costs, flush=True)


# ----------------------------------------------------------------------------- tables and figure
def summarise(row: dict[str, Any]) -> dict[str, Any]:
    opt = row["optimum"]
    runs = row["ga"]["runs"]
    costs = [r["cost"] for r in runs if r["cost"] is not None]
    hits = [r["evaluations_to_best"] for r in runs if r["cost"] == opt]
    avg = sum(costs) / len(costs) if costs else None
    s = {"board": row["board"], "optimum": opt, "runs": len(runs), "solved_runs": len(costs),
         "optimal_runs": len(hits), "best": min(costs) if costs else None, "avg": avg,
         "excess": 100.0 * (avg - opt) / opt if avg is not None else None,
         "ga_evals": sum(hits) / len(hits) if hits else None,
         "unverified": sum(1 for r in runs if r["cost"] is not None and not r["verified"])}
    for key in ("astar", "astar_area"):
        a = row.get(key) or {}
        s[key] = a.get("generated") if a.get("status") in ("optimal", "solved") else None
        s[key + "_status"] = a.get("status")
        s[key + "_cost"] = a.get("cost")
    for key in ("astar", "astar_area"):
        s["pct_" + key] = 100.0 * s["ga_evals"] / s[key] if s["ga_evals"] and s[key] else None
    return s


def _f(x: Any, fmt: str = "{:,.0f}") -> str:
    return "--" if x is None else fmt.format(x)


def render(path: Path) -> tuple[str, list[dict[str, Any]]]:
    rows = [summarise(json.loads(x)) for x in path.read_text().splitlines() if x.strip()]
    t1 = ["| board | optimum | GA best | GA av. | GA excess % | runs (solved / optimal) |",
          "|---|---|---|---|---|---|"]
    for s in rows:
        t1.append(f"| {s['board']} | {s['optimum']} | {_f(s['best'])} | {_f(s['avg'], '{:.2f}')} | "
                  f"{_f(s['excess'], '{:.1f}')} | {s['runs']} ({s['solved_runs']} / {s['optimal_runs']}) |")
    ex = [s["excess"] for s in rows if s["excess"] is not None]
    found = sum(1 for s in rows if s["best"] == s["optimum"])
    t1.append(f"| **average** | | | | **{_f(sum(ex) / len(ex) if ex else None, '{:.2f}')}** | "
              f"optimum found on {found} of {len(rows)} boards |")
    t2 = ["| board | A* evals (ours: components, admissible) | A* evals (heuristic=area, paper-style) | "
          "av. GA evals to optimum | % of ours | % of paper-style |", "|---|---|---|---|---|---|"]
    for s in rows:
        if s["ga_evals"] is None:
            continue
        worse = s["astar_area_cost"] not in (None, s["optimum"])
        note = f" (cost {s['astar_area_cost']})" if worse else ""
        t2.append(f"| {s['board']} | {_f(s['astar'])} | {_f(s['astar_area'])}{note} | {_f(s['ga_evals'])} | "
                  f"{_f(s['pct_astar'], '{:.1f}')} | {_f(s['pct_astar_area'], '{:.1f}')} |")
    p1 = [s["pct_astar"] for s in rows if s["pct_astar"] is not None]
    p2 = [s["pct_astar_area"] for s in rows if s["pct_astar_area"] is not None]
    t2.append(f"| **average** | | | | **{_f(sum(p1) / len(p1) if p1 else None, '{:.1f}')}** | "
              f"**{_f(sum(p2) / len(p2) if p2 else None, '{:.1f}')}** |")
    return "\n".join(t1) + "\n\n" + "\n".join(t2) + "\n", rows


def plot(rows: list[dict[str, Any]], raw: list[dict[str, Any]], png: str) -> None:
    """Left: GA excess % per board (Figure 7's analogue); right: runs holding the optimum by generation."""
    from puzzleplan.bench.plot import _plt, _save

    plt = _plt()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.2))
    names = [s["board"] for s in rows]
    ax1.bar(range(len(rows)), [s["excess"] or 0 for s in rows], color="#c9a86a")
    ax1.set_xticks(range(len(rows)))
    ax1.set_xticklabels(names, rotation=90, fontsize=7)
    ax1.set_ylabel("GA excess over optimum (%)")
    ax1.set_title("paper preset: average excess per board")
    for row in raw:
        runs = row["ga"]["runs"]
        share = []
        for g in range(100):
            at = [r["best_cost_by_generation"][min(g, len(r["best_cost_by_generation"]) - 1)] for r in runs]
            share.append(100.0 * sum(1 for c in at if c == row["optimum"]) / len(runs))
        ax2.plot(range(1, 101), share, lw=0.8, alpha=0.7)
    ax2.set_xlabel("generation (1,000 evaluations each)")
    ax2.set_ylabel("runs that have found the optimum (%)")
    ax2.set_title("one line per board")
    _save(fig, png)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "zpg-ga.jsonl")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--boards", default="", help="comma-separated board names (default: all with an optimum)")
    ap.add_argument("--kernel", default="numba", choices=("numba", "numpy"))
    ap.add_argument("--preset", default="paper", choices=("paper", "improved"))
    ap.add_argument("--ga-time", type=float, default=600.0, help="time limit per GA run (s)")
    ap.add_argument("--astar-time", type=float, default=300.0, help="time limit per A* run (s)")
    ap.add_argument("--no-astar", action="store_true")
    ap.add_argument("--render", type=Path, help="JSON lines of a sweep: print the tables (and --md/--png)")
    ap.add_argument("--md", type=Path)
    ap.add_argument("--png")
    a = ap.parse_args()
    if a.render:
        text, rows = render(a.render)
        print(text)
        if a.md:
            a.md.write_text(text)
        if a.png:
            raw = [json.loads(x) for x in a.render.read_text().splitlines() if x.strip()]
            plot(rows, raw, a.png)
        return
    a.out.parent.mkdir(parents=True, exist_ok=True)
    sweep(a)


if __name__ == "__main__":
    main()
