"""bfs against sat and cpsat on seeded random small instances: the optima must be identical.

The instances come from a seeded generator, not from files: random sliding-block
layouts on 3x3, 3x4, 4x3 and 4x4 boards (a random target piece of any shape, a
random goal cell, one to three empty cells), each under the ``steps`` and the
``moves`` metric, and 8-puzzle starts from random walks of up to 22 blank moves.
Breadth-first search (numpy kernel) is the judge; every plan is replayed by the
reference checker inside ``api.solve``.

* unit costs (``steps``, 8-puzzle): both symbolic engines run their default horizon
  search and must prove the same optimum;
* 0/1 costs (``moves``): they minimise the cost over plans as long as bfs's optimal
  plan (``horizon`` = its length; the zero-cost run bound, which turns this into a
  proof, has its own tests in test_symbolic.py) -- a plan of that length exists, so
  a cost other than bfs's optimum is a bug on one side;
* layouts bfs proves unsolvable (about one in ten): neither engine may return a plan
  within 6 steps;
* "small" means bfs's optimal plan has at most 24 steps (18 in the default run);
  larger draws (rare) are skipped, and at least 90 % of each chunk must be judged.

The default run draws 200 instances; ``-m slow`` runs the 1,000-instance sweep.
Disagreements are collected and reported together, with the instance text.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import klotski_text, random_walk, sliding_walk

from puzzleplan import api
from puzzleplan.solvers.result import Limits

SHAPES = ((1, 1), (1, 2), (2, 1), (2, 2))  # (height, width)
BOARDS = ((3, 3), (3, 4), (4, 3), (4, 4))  # (width, height)
GOAL8 = [1, 2, 3, 4, 5, 6, 7, 8, 0]


@dataclass
class Case:
    name: str
    model: str
    text: str
    options: list[str]


def random_layout(rng: random.Random, tmp_path: Path) -> tuple[list[str], tuple[int, int], tuple[int, int]]:
    """Rows, size (W, H) and A's goal cell of a random layout with 1-3 empty cells.

    The goal is where A stands after a random walk of the reference semantics (so the
    layout is solvable) in 9 of 10 layouts, and a uniformly random cell otherwise
    (mostly unsolvable ones).
    """
    W, H = rng.choice(BOARDS)
    empty_target = rng.randint(1, 3)
    while True:
        grid = [["."] * W for _ in range(H)]
        letters = iter("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        free = W * H
        shape_a = rng.choice([s for s in SHAPES if s[0] <= H and s[1] <= W and s[0] * s[1] < W * H - 1])
        placed_a = None
        for _ in range(200):
            if free <= empty_target:
                break
            h, w = shape_a if placed_a is None else rng.choice(SHAPES)
            if h * w > free - empty_target:
                continue
            r, c = rng.randrange(H - h + 1), rng.randrange(W - w + 1)
            if any(grid[r + i][c + j] != "." for i in range(h) for j in range(w)):
                continue
            letter = next(letters)
            for i in range(h):
                for j in range(w):
                    grid[r + i][c + j] = letter
            free -= h * w
            if placed_a is None:
                placed_a = (r, c)
        if placed_a is None or free != empty_target:
            continue
        h, w = shape_a
        rows = ["".join(row) for row in grid]
        if rng.random() < 0.9:
            path = tmp_path / "walk.txt"
            path.write_text(klotski_text(rows, (W, H), placed_a), encoding="utf-8")
            task = api.load_task("klotski", str(path), ["metric=steps"]).task
            cell = random_walk(task, rng, rng.randint(3, 24))[-1][task.names.index("pos[A]")]
            goal = divmod(cell, W)
        else:
            goal = (rng.randrange(H - h + 1), rng.randrange(W - w + 1))
        if goal != placed_a:
            return rows, (W, H), goal


_MADE: dict[tuple[int, int], list[Case]] = {}   # the chunks of one sweep share one generation


def cases(n: int, seed: int, tmp_path: Path) -> list[Case]:
    """``n`` seeded cases (``tmp_path``: scratch for the walks that place the goals)."""
    if (n, seed) not in _MADE:
        _MADE[n, seed] = _make_cases(n, seed, tmp_path)
    return _MADE[n, seed]


def _make_cases(n: int, seed: int, tmp_path: Path) -> list[Case]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if i % 4 == 3:
            start = sliding_walk(3, GOAL8, rng, rng.randint(2, 22))
            out.append(Case(f"eight-{i}", "sliding", "\n".join(
                " ".join(str(v) for v in start[r * 3:r * 3 + 3]) for r in range(3)) + "\n", []))
        else:
            rows, size, goal = random_layout(rng, tmp_path)
            metric = "steps" if i % 2 == 0 else "moves"
            out.append(Case(f"layout-{i}", "klotski", klotski_text(rows, size, goal), [f"metric={metric}"]))
    return out


MAX_STEPS = 24  # "small": bfs's optimal plan has at most this many steps (the slow sweep)
MAX_STEPS_DEFAULT = 18  # the default run: the few 19-24-step layouts cost more than the rest together


def judge(case: Case, tmp_path: Path, max_steps: int = MAX_STEPS, time_s: float = 60) -> list[str] | None:
    """Disagreements between bfs and the symbolic engines on one case (empty: all agree).

    None when the case is not small (bfs's optimal plan is longer than ``MAX_STEPS``):
    the symbolic engines' time grows steeply with the horizon, and the point here is
    many instances, not hard ones.
    """
    path = tmp_path / f"{case.name}.txt"
    path.write_text(case.text, encoding="utf-8")
    loaded = api.load_task(case.model, str(path), case.options)
    best = api.solve(loaded, "bfs", kernel="numpy")
    where = f"{case.name} {case.options}:\n{case.text}"
    if best.status not in ("optimal", "unsolvable"):
        return [f"bfs {best.status} on {where}"]
    if best.plan is not None and len(best.plan) > max_steps:
        return None
    problems = []
    unit = loaded.task.cost_kind == "unit"
    for engine in ("sat", "cpsat"):
        if best.status == "unsolvable":
            r = api.solve(loaded, engine, Limits(time_s=time_s), kernel="numpy", horizon=6)
            if r.plan is not None:
                problems.append(f"{engine} found a plan bfs calls impossible on {where}")
            continue
        options: dict[str, object] = {} if unit else {"horizon": len(best.plan or []), "run_bound_s": 0}
        r = api.solve(loaded, engine, Limits(time_s=time_s), kernel="numpy", **options)
        if r.cost != best.cost or not r.stats.get("verified"):
            problems.append(f"{engine} {r.status} cost {r.cost} (bfs {best.cost}) {r.message} on {where}")
        elif unit and r.status != "optimal":
            problems.append(f"{engine} did not prove the unit-cost optimum ({r.status}) on {where}")
    return problems


def test_generator_covers_the_mix(tmp_path: Path) -> None:
    """The generator yields what the docstring promises (so the sweep tests what it claims)."""
    got = cases(200, 7, tmp_path)
    layouts = [c for c in got if c.model == "klotski"]
    assert len(got) == 200 and len(layouts) == 150
    sizes = {c.text.split("\n")[0] for c in layouts}
    assert sizes == {"size: 3x3", "size: 3x4", "size: 4x3", "size: 4x4"}
    assert {tuple(c.options) for c in layouts} == {("metric=steps",), ("metric=moves",)}


def _sweep(todo: list[Case], tmp_path: Path, max_steps: int = MAX_STEPS, time_s: float = 60) -> None:
    verdicts = [judge(c, tmp_path, max_steps, time_s) for c in todo]
    judged = [v for v in verdicts if v is not None]
    assert len(judged) >= 0.9 * len(todo), "the generator drifted: too many cases are not small"
    problems = [p for v in judged for p in v]
    assert not problems, f"{len(problems)} disagreements:\n" + "\n".join(problems)


@pytest.mark.parametrize("chunk", range(4))
def test_bfs_sat_cpsat_agree(tmp_path: Path, chunk: int) -> None:
    """200 instances (4 chunks of 50): 0 disagreements."""
    _sweep(cases(200, 20261126, tmp_path)[chunk * 50:(chunk + 1) * 50], tmp_path, MAX_STEPS_DEFAULT)


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(20))
def test_bfs_sat_cpsat_agree_sweep(tmp_path: Path, chunk: int) -> None:
    """The 1,000-instance sweep (20 chunks of 50, another seed)."""
    _sweep(cases(1000, 1126, tmp_path)[chunk * 50:(chunk + 1) * 50], tmp_path, time_s=180)
