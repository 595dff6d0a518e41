"""Cross-check every board of instances/zpg with bfs, astar, sat and cpsat (issue 5).

Why a script and not a default test: the symbolic engines need seconds to
minutes per board (sat's optimality proof grows with the zero-cost run bound),
far beyond the default test budget.  Each board runs ``puzzleplan verify`` in
its own process (a crash or memory blow-up of one board cannot take the sweep
down); one JSON line per board is appended to the output, so a partial sweep is
still a usable record.  ``--table`` turns such a file into the markdown table of
docs/models/zpg.md.

    nice -n 10 .venv/bin/python bench/zpg_verify.py --out results/zpg-verify.jsonl --time-limit 180
    .venv/bin/python bench/zpg_verify.py --table results/zpg-verify.jsonl
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

from puzzleplan.bench.scripting import append_jsonl, markdown, parser, read_jsonl

ROOT = Path(__file__).resolve().parent.parent
BOARDS = ROOT / "instances" / "zpg"
ENGINES = ("bfs", "astar", "sat", "cpsat")


def recorded(path: Path) -> str:
    """The optimum recorded in the board file (``# optimum: N``) or the README facts for public gardens."""
    m = re.search(r"^#\s*optimum:\s*(\S+)", path.read_text(encoding="utf-8"), re.MULTILINE)
    if m:
        return m.group(1)
    facts = {"puzzlescript-L1": "4", "puzzlescript-L4": "5", "puzzlescript-L5": "7",
             "puzzlescript-L2": "unsolvable", "puzzlescript-L3": "unsolvable", "waikato-3x3-a": "3",
             "waikato-3x3-b": "3", "waikato-5x3": "3"}
    return facts.get(path.stem, "?")


def boards(skip: set[str]) -> list[Path]:
    """Every board file, smallest garden first (so a partial sweep covers the most boards)."""
    out = []
    for p in sorted(BOARDS.glob("*.txt")):
        if p.stem in skip:
            continue
        text = p.read_text(encoding="utf-8")
        m = re.search(r"^\s*size\s+(\d+)\s+(\d+)", text, re.MULTILINE | re.IGNORECASE)
        out.append((int(m.group(1)) * int(m.group(2)) if m else 999, p.name, p))
    return [p for _, _, p in sorted(out)]


def sweep(out: Path, time_limit: float, engines: str, skip: set[str]) -> None:
    done = {r["board"] for r in read_jsonl(out) if "engines" in r}      # a crashed board is tried again
    for p in boards(skip):
        if p.stem in done:
            continue
        t0 = time.time()
        cmd = [str(Path(sys.executable).parent / "puzzleplan"), "verify", "zpg", str(p), "--engines", engines,
               "--json", "--kernel", "numpy", "--time-limit", str(time_limit)]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        try:
            body = json.loads(proc.stdout)
        except json.JSONDecodeError:
            body = {"error": (proc.stderr or proc.stdout).strip()[-500:]}
        row = {"board": p.stem, "recorded": recorded(p), "exit": proc.returncode,
               "wall_s": round(time.time() - t0, 1), "time_limit": time_limit, **body}
        append_jsonl(out, row)
        print(p.stem, proc.returncode, row.get("optimum"), flush=True)


def cell(e: dict | None) -> str:
    if not e:
        return "--"
    st = e["status"]
    cost = "" if e["cost"] is None else f" {e['cost']}"
    t = e.get("time")
    return f"{st}{cost} ({t:.1f} s)" if t is not None else f"{st}{cost}"


def table(path: Path) -> str:
    rows = []
    for r in read_jsonl(path):
        eng = r.get("engines", {})
        opt = r.get("optimum")
        if opt is None and any(e.get("status") == "unsolvable" for e in eng.values()):
            opt = "unsolvable"
        rows.append([r["board"], r["recorded"], opt if opt is not None else "--",
                     "yes" if r.get("agree") else "NO", *(cell(eng.get(n)) for n in ENGINES)])
    return markdown(["board", "recorded", "agreed optimum", "agree", *ENGINES], rows)


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "zpg-verify.jsonl")
    ap.add_argument("--time-limit", type=float, default=180.0, help="seconds per engine per board")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--skip", default="fiit-zen-10x12", help="comma-separated board names left out")
    ap.add_argument("--table", type=Path, help="print the markdown table of a finished sweep and exit")
    a = ap.parse_args()
    if a.table:
        print(table(a.table))
        return
    a.out.parent.mkdir(parents=True, exist_ok=True)
    sweep(a.out, a.time_limit, a.engines, set(filter(None, a.skip.split(","))))


if __name__ == "__main__":
    main()
