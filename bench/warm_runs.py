"""Warm whole runs (issue 18): ``puzzleplan solve`` run here, served by ``puzzleplan serve``, and Fast
Downward's whole run on the same task -- wall time of each process, in one run.

Usage:
    python bench/warm_runs.py [--repeat 5] [--out results/warm-runs.json]

Per task: the PDDL export is written once (``puzzleplan compile --to pddl``); then, alternating so
that drifts in the machine's load hit every column alike, ``--repeat`` rounds of

* *local*: ``puzzleplan solve TASK`` with ``PUZZLEPLAN_SERVER=off`` (kernels warm in the cache:
  one untimed run first);
* *served*: the same command with a server running (``puzzleplan serve`` on a temporary socket,
  started by this script with the same environment, stopped at the end) and
  ``PUZZLEPLAN_SERVER_REQUIRED=1``, so a run the server did not take fails instead of passing
  as local;
* *Fast Downward*: ``fast-downward.py domain.pddl problem.pddl --search astar(blind())`` -- its
  driver, translator and search (the ``up-fast-downward`` wheel; skipped when not installed).

The median and the best wall time per column are reported, with the load (``uptime``) before and
after.  Writes JSON and a Markdown table next to it (same name, ``.md``).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from puzzleplan.bench.scripting import parser, uptime, write_json

ROOT = Path(__file__).resolve().parent.parent
TASKS = {
    "横刀立马 (fayaa-001, moves)": ["klotski", "instances/klotski/fayaa.txt#fayaa-001"],
    "8-puzzle, hardest (31)": ["sliding", "instances/sliding/eight.txt#eight-hardest-a"],
}


def command() -> list[str]:
    """The installed console script when there is one (what a user runs), else the same entry point."""
    script = shutil.which("puzzleplan", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-c", "from puzzleplan.launch import main; main()"]


def timed(cmd: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, int]:
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 10):
        raise SystemExit(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    return wall, p.returncode


def fd_driver() -> Path | None:
    """The planner driver inside the ``up-fast-downward`` wheel (found, not imported: importing the
    package needs ``unified_planning``, which the driver does not)."""
    import importlib.util

    spec = importlib.util.find_spec("up_fast_downward")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "downward" / "fast-downward.py"
    return path if path.exists() else None


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__, "results/warm-runs.json")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args(argv)
    cli = command()
    load_before = uptime()
    tmp = Path(tempfile.mkdtemp(prefix="pp-warm-"))
    sock = tmp / "s.sock"
    local_env = {**os.environ, "PUZZLEPLAN_SERVER": "off"}
    served_env = {**os.environ, "PUZZLEPLAN_SERVER": str(sock), "PUZZLEPLAN_SERVER_REQUIRED": "1"}
    server = subprocess.Popen([*cli, "serve", "--idle", "30"], cwd=ROOT, text=True,
                              env={**os.environ, "PUZZLEPLAN_SERVER": str(sock)},
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    driver = fd_driver()
    records = []
    try:
        for name, task in TASKS.items():
            solve = [*cli, "solve", *task]
            timed(solve, local_env)                       # warm the kernel cache (and numba's)
            pddl = tmp / name.split()[0]
            subprocess.run([*cli, "compile", *task, "--to", "pddl", "-o", str(pddl)], env=local_env,
                           cwd=ROOT, check=True, capture_output=True)
            while not sock.exists():
                if server.poll() is not None:
                    err = server.stderr.read() if server.stderr else ""
                    raise SystemExit(f"puzzleplan serve ended: {err}")
                time.sleep(0.1)
            fd = None
            if driver is not None:
                fd = [sys.executable, str(driver), str(pddl / "domain.pddl"), str(pddl / "problem.pddl"),
                      "--search", "astar(blind())"]
                timed(fd, {**os.environ, "PYTHONHASHSEED": "0"}, cwd=tmp)
            cols: dict[str, list[float]] = {"local": [], "served": [], "fast_downward": []}
            for _ in range(a.repeat):
                cols["local"].append(timed(solve, local_env)[0])
                cols["served"].append(timed(solve, served_env)[0])
                if fd is not None:
                    cols["fast_downward"].append(timed(fd, {**os.environ, "PYTHONHASHSEED": "0"}, cwd=tmp)[0])
            rec = {"task": name, "command": " ".join(["puzzleplan", "solve", *task])}
            for col, xs in cols.items():
                if xs:
                    rec[f"{col}_median_s"] = round(statistics.median(xs), 3)
                    rec[f"{col}_best_s"] = round(min(xs), 3)
                    rec[f"{col}_s"] = [round(x, 3) for x in xs]
            records.append(rec)
            print(rec, flush=True)
    finally:
        subprocess.run([*cli, "serve", "--stop"], env={**os.environ, "PUZZLEPLAN_SERVER": str(sock)},
                       capture_output=True, check=False)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    doc = {"load_before": load_before, "load_after": uptime(), "repeat": a.repeat, "records": records}
    lines = ["| task | local median / best s | served median / best s | Fast Downward median / best s |",
             "|---|---|---|---|"]
    for r in records:
        cell = [f"{r[f'{c}_median_s']:.2f} / {r[f'{c}_best_s']:.2f}" if f"{c}_median_s" in r else "-"
                for c in ("local", "served", "fast_downward")]
        lines.append(f"| {r['task']} | " + " | ".join(cell) + " |")
    out = write_json(a.out, doc)
    out.with_suffix(".md").write_text("\n".join(lines) + f"\n\nload before {load_before}, after "
                                      f"{doc['load_after']}\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
