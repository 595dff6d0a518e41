#!/usr/bin/env python3
"""Generate sliding-tile starts by seeded random walks from the goal, with certified optima.

Each start is reached from the goal (1..n*n-1, blank last) by a random walk of
blank moves that never immediately undoes the previous move.  Every candidate
is then solved twice through the public library API, by ``astar`` (best-first,
explicit state table) and by ``idastar`` (compiled depth-first iterative
deepening): two independent engines.  A record is written only if both report
``optimal``, both plans pass the reference checker, both costs agree, and the
optimum lies in [--min, --max].

The output is deterministic for a given set of arguments (Python's
``random.Random(seed)``; the walk does not depend on solver results).

    .venv/bin/python instances/sliding/make_walks.py \
        --n 4 --seed 1985 --count 10 --min 20 --max 40 \
        -o instances/sliding/fifteen-walks.txt
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

MOVES = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}
INVERSE = {"U": "D", "D": "U", "L": "R", "R": "L"}


def random_walk(n: int, length: int, rng: random.Random) -> list[int]:
    """The board after ``length`` random blank moves from the goal (no immediate undo)."""
    board = list(range(1, n * n)) + [0]
    blank = n * n - 1
    prev = None
    for _ in range(length):
        r, c = divmod(blank, n)
        options = [d for d, (dr, dc) in MOVES.items()
                   if 0 <= r + dr < n and 0 <= c + dc < n and d != (INVERSE[prev] if prev else None)]
        d = rng.choice(options)
        other = (r + MOVES[d][0]) * n + (c + MOVES[d][1])
        board[blank], board[other] = board[other], 0
        blank, prev = other, d
    return board


def record_text(rid: str, n: int, board: list[int], headers: dict[str, object]) -> str:
    width = len(str(n * n - 1))
    lines = [f"id: {rid}"] + [f"{k}: {v}" for k, v in headers.items()]
    for r in range(n):
        lines.append(" ".join(str(x).rjust(width) for x in board[r * n:(r + 1) * n]))
    return "\n".join(lines) + "\n"


def certify(path: Path, rid: str, time_limit: float, lo: int, hi: int) -> tuple[int | None, str]:
    """(optimum, note): the common optimal cost of astar and idastar, or None with the reason.

    idastar is skipped (note "out of range") when astar's optimum is outside [lo, hi].
    """
    from puzzleplan import api
    from puzzleplan.solvers import Limits

    loaded = api.load_task("sliding", f"{path}#{rid}")
    costs = {}
    for engine in ("astar", "idastar"):
        res = api.solve(loaded, engine, Limits(time_s=time_limit))
        if res.status != "optimal" or not res.stats.get("verified"):
            return None, f"{engine}: {res.status} {res.message}".strip()
        costs[engine] = res.cost
        if not lo <= res.cost <= hi:
            return res.cost, "out of range"
    if costs["astar"] != costs["idastar"]:
        return None, f"ENGINES DISAGREE: {costs}"
    return costs["astar"], ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4, help="board side (4 = 15-puzzle)")
    ap.add_argument("--seed", type=int, default=1985)
    ap.add_argument("--count", type=int, default=10, help="records to write")
    ap.add_argument("--min", type=int, default=20, help="smallest optimum kept")
    ap.add_argument("--max", type=int, default=40, help="largest optimum kept")
    ap.add_argument("--walk", type=int, nargs=2, default=(20, 90), metavar=("LO", "HI"),
                    help="random walk length range")
    ap.add_argument("--time-limit", type=float, default=300.0, help="per engine and candidate")
    ap.add_argument("--tries", type=int, default=200, help="give up after this many candidates")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)

    rng = random.Random(args.seed)
    kept: list[str] = []
    seen: set[tuple[int, ...]] = set()
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(1, args.tries + 1):
            if len(kept) == args.count:
                break
            length = rng.randint(*args.walk)
            board = random_walk(args.n, length, rng)
            if tuple(board) in seen:
                continue
            seen.add(tuple(board))
            rid = f"walk-{args.seed}-{k:03d}"
            cand = Path(tmp) / "candidate.txt"
            cand.write_text(record_text(rid, args.n, board, {}), encoding="utf-8")
            opt, note = certify(cand, rid, args.time_limit, args.min, args.max)
            print(f"{rid}: walk {length}, optimum {opt} {note}", file=sys.stderr)
            if note.startswith("ENGINES DISAGREE"):
                return 20
            if opt is None or note:
                continue
            kept.append(record_text(rid, args.n, board, {
                "walk_seed": args.seed,
                "walk_index": k,
                "walk_length": length,
                "optimum": opt,
                "optimum_source": "astar+idastar agreement (puzzleplan)",
            }))
    if len(kept) < args.count:
        print(f"only {len(kept)} of {args.count} records found in {args.tries} tries", file=sys.stderr)
        return 1
    n2 = args.n * args.n - 1
    head = (f"# {n2}-puzzle starts from seeded random walks (goal 1..{n2}, blank last).\n"
            f"# Generated by instances/sliding/make_walks.py --n {args.n} --seed {args.seed} "
            f"--count {args.count} --min {args.min} --max {args.max} --walk {args.walk[0]} {args.walk[1]}\n"
            "# optimum = cost found optimal by both astar and idastar "
            "(plans checked by the reference checker).\n\n")
    Path(args.output).write_text(head + "\n".join(kept), encoding="utf-8")
    print(f"wrote {len(kept)} records to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
