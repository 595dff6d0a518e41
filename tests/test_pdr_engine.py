"""Engine ``pdr`` (solvers/pdr.py): unsolvability proofs by IC3/PDR, checked against bfs.

Soundness is the point: on seeded random small tasks, solvable or not, pdr never says
``unsolvable`` where bfs finds a plan, and it proves the unsolvable ones bfs exhausts.  The
instances are written by tests/helpers.py (independent of the models' readers), and the truth
comes from bfs on the numpy kernel and, for sliding puzzles, from the parity rule.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from helpers import run_cli, sliding_solvable, write_klotski, write_sliding

from puzzleplan import api
from puzzleplan.lang.errors import OptionError
from puzzleplan.solvers import Limits


def _solve(path: Path, model: str, engine: str, opts: list[str] | None = None, **kw: object) -> str:
    loaded = api.load_task(model, str(path), opts or [])
    return api.solve(loaded, engine, Limits(time_s=60), kernel="numpy", **kw).status


def random_klotski(rng: random.Random, w: int, h: int, empty: int) -> list[str] | None:
    """A random layout: the 2x2 'A' and 1x1, 1x2 and 2x1 pieces, ``empty`` cells left free."""
    grid = [["."] * w for _ in range(h)]
    ax, ay = rng.randrange(w - 1), rng.randrange(h - 1)
    for dy, dx in itertools.product(range(2), range(2)):
        grid[ay + dy][ax + dx] = "A"
    cells = [(x, y) for y in range(h) for x in range(w) if grid[y][x] == "."]
    rng.shuffle(cells)
    free, n = len(cells), 0
    for x, y in cells:
        if grid[y][x] != "." or free <= empty:
            continue
        for pw, ph in rng.sample([(1, 1), (1, 2), (2, 1)], 3):
            spots = [(x + i, y + j) for j in range(ph) for i in range(pw)]
            fits = all(sx < w and sy < h and grid[sy][sx] == "." for sx, sy in spots)
            if fits and free - len(spots) >= empty:
                for sx, sy in spots:
                    grid[sy][sx] = str(n)
                free -= len(spots)
                n += 1
                break
    if free != empty:
        return None
    names: dict[str, str] = {}       # pieces lettered B.. in reading order of their top-left cells
    for row in grid:
        for ch in row:
            if ch not in ".A" and ch not in names:
                names[ch] = "BCDEFGHIJK"[len(names)]
    return ["".join(names.get(ch, ch) for ch in row) for row in grid]


def _klotski_cases(seed: int, count: int) -> list[list[str]]:
    rng = random.Random(seed)
    out: list[list[str]] = []
    while len(out) < count:
        rows = random_klotski(rng, 3, 3, 2)
        if rows is not None and rows not in out:
            out.append(rows)
    return out


CASES = _klotski_cases(3, 10)      # 3x3 boards, A to the bottom-right: 2 of them unsolvable


@pytest.mark.parametrize("rows", CASES, ids="/".join)
def test_pdr_agrees_with_bfs_on_random_klotski_layouts(tmp_path, rows):
    path = write_klotski(tmp_path / "k.txt", rows, size=(3, 3), goal=(1, 1))
    truth = _solve(path, "klotski", "bfs")
    got = _solve(path, "klotski", "pdr")
    if truth == "unsolvable":
        assert got == "unsolvable", rows
    else:
        assert truth == "optimal" and got == "unknown", (rows, got)   # a path found: no false proof


def test_the_random_layouts_hold_both_kinds(tmp_path):
    truths = {_solve(write_klotski(tmp_path / f"k{k}.txt", rows, size=(3, 3), goal=(1, 1)), "klotski", "bfs")
              for k, rows in enumerate(CASES)}
    assert truths == {"optimal", "unsolvable"}


@pytest.mark.parametrize("backward", [True, False])
def test_pdr_never_calls_a_solvable_sliding_puzzle_unsolvable_and_proves_the_rest(tmp_path, backward):
    """All 24 2x2 sliding puzzles: half are unsolvable by parity; pdr must agree on every one."""
    goal = [1, 2, 3, 0]
    for k, start in enumerate(itertools.permutations(range(4))):
        path = write_sliding(tmp_path / f"s{k}.txt", list(start), 2, goal)
        got = _solve(path, "sliding", "pdr", backward=backward)
        want = "unknown" if sliding_solvable(list(start), goal, 2) else "unsolvable"
        assert got == want, (start, got)


UNSOLVABLE = [".AA", "BAA", "CDE", "CD."]      # 3x4: A (2x2) never reaches the bottom-left corner


def test_pdr_on_the_command_line_and_its_options(tmp_path, capsys):
    path = write_klotski(tmp_path / "u.txt", UNSOLVABLE, size=(3, 4), goal=(2, 0))
    code, out, err = run_cli(["solve", "klotski", path, "-e", "pdr"], capsys)
    assert code == 10 and "unsolvable" in out and "inductive invariant" in out, (out, err)
    code, out, err = run_cli(["solve", "klotski", path, "-e", "pdr", "-E", "backward=maybe"], capsys)
    assert code == 31 and err.startswith("puzzleplan: error:") and "backward" in err
    loaded = api.load_task("klotski", str(path))
    with pytest.raises(OptionError):
        api.solve(loaded, "pdr", Limits(time_s=10), kernel="numpy", solver="no-such-solver")


def test_pdr_stops_at_its_time_limit():
    """PuzzleScript L2 (6x6 garden): out of PDR's reach; the engine must end at the limit."""
    root = Path(__file__).resolve().parents[1]
    loaded = api.load_task("zpg", str(root / "instances" / "zpg" / "puzzlescript-L2.txt"))
    r = api.solve(loaded, "pdr", Limits(time_s=2), kernel="numpy")
    assert r.status == "limit" and "time limit" in r.message and r.stats["time_s"] < 10
