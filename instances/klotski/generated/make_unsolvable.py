#!/usr/bin/env python3
"""Generate random unsolvable 3x4 / 4x3 sliding-block layouts (unit steps), judged by bfs.

Why: unsolvability is the claim a bounded-horizon engine cannot make by itself, so the
symbolic paradigm's unsolvability proofs (``pdr``; ``sat``/``cpsat`` through the state bound)
need instances with a known answer.  Each layout is drawn with ``random.Random(seed)``: a
board of 3x4 or 4x3 cells, a target piece A of a random shape, further random pieces of
the four shapes until one to three cells stay empty, and a random goal cell for A other
than its start.  A layout is kept only when breadth-first search through the public API
exhausts its reachable states without reaching the goal (status ``unsolvable``) and they
number at least ``--min-states``; the number is written beside it.

    .venv/bin/python instances/klotski/generated/make_unsolvable.py --seed 20261127 --count 20 \\
        -o instances/klotski/generated/unsolvable-3x4.txt
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

SHAPES = ((1, 1), (1, 2), (2, 1), (2, 2))  # (height, width)


def draw(rng: random.Random) -> tuple[list[str], tuple[int, int], tuple[int, int]]:
    """Rows, (width, height) and A's goal cell of one random layout."""
    W, H = rng.choice(((3, 4), (4, 3)))
    while True:
        empty = rng.randint(1, 3)
        grid = [["."] * W for _ in range(H)]
        letters = iter("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        free, start = W * H, None
        for _ in range(300):
            if free <= empty:
                break
            h, w = rng.choice(SHAPES)
            if start is None and h * w >= W * H - 1:
                continue
            if h > H or w > W or h * w > free - empty:
                continue
            r, c = rng.randrange(H - h + 1), rng.randrange(W - w + 1)
            if any(grid[r + i][c + j] != "." for i in range(h) for j in range(w)):
                continue
            letter = next(letters)
            for i in range(h):
                for j in range(w):
                    grid[r + i][c + j] = letter
            free -= h * w
            if start is None:
                start, shape = (r, c), (h, w)
        if start is None or free != empty:
            continue
        goal = (rng.randrange(H - shape[0] + 1), rng.randrange(W - shape[1] + 1))
        if goal != start:
            return ["".join(row) for row in grid], (W, H), goal


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=20261127)
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--min-states", type=int, default=10, help="keep layouts with at least this many "
                    "reachable states (a start with no move proves nothing)")
    ap.add_argument("-o", "--out", type=Path, required=True)
    a = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    from puzzleplan import api

    rng = random.Random(a.seed)
    records: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "layout.txt"
        while len(records) < a.count:
            rows, (W, H), goal = draw(rng)
            head = [f"size: {W}x{H}", f"goal: {goal[0]},{goal[1]}"]
            path.write_text("\n".join(head + rows) + "\n", encoding="utf-8")
            result = api.solve(api.load_task("klotski", str(path), ["metric=steps"]), "bfs", kernel="numpy")
            if result.status != "unsolvable" or result.stats["states"] < a.min_states:
                continue
            n = len(records) + 1
            records.append("\n".join([f"id: unsolvable-{n:02d}", "expected: unsolvable",
                                      f"reachable_states: {result.stats['states']}", *head, *rows]))
    intro = ("# Random unsolvable 3x4 / 4x3 layouts, unit steps (metric=steps); each judged unsolvable by\n"
             "# bfs exhausting its reachable states. Generated, not published: see make_unsolvable.py\n"
             f"# (--seed {a.seed} --count {a.count} --min-states {a.min_states}) and SOURCES.md.\n\n")
    a.out.write_text(intro + "\n\n".join(records) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
