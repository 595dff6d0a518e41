"""Klotski's ``action=move``: one action per whole move, checked against the cell-step model.

The option turns the ``moves`` metric (a free continuation of the piece that moved last) into
unit costs, one action per path a piece can take in one move (``whole_move_paths``).  What
must hold, and is checked here against the independent ``action=cell`` formulation:

* from any state, a piece's one-move actions reach exactly the positions its cell steps reach
  while the other pieces stand still (seeded random layouts, random-walk states);
* the optima agree: bfs under ``action=cell`` (0/1 costs) and under ``action=move`` (unit
  costs), and the published minimum move counts of fayaa.com (``published_min_moves``; source
  in instances/klotski/SOURCES.md);
* a whole-move plan, unfolded into its cell steps, replays in the cell model at the same cost;
* sat and cpsat prove, on it, the optimum bfs finds in the cell model (60 seeded random
  layouts) and the published optimum (the horizon counts moves).

Metric ``straight`` (one straight slide per move) is checked the same way, against the cell
model's ``straight`` (no published minima: bfs on the cell model is the judge).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from helpers import FAYAA, klotski_records, klotski_text, random_walk, run_cli
from test_differential import random_layout

from puzzleplan import api
from puzzleplan.solvers import Limits
from puzzleplan.verify import reference as ref


def _load(tmp_path: Path, name: str, text: str, *options: str) -> api.Loaded:
    path = tmp_path / f"{name}.txt"
    path.write_text(text, encoding="utf-8")
    return api.load_task("klotski", str(path), list(options))


def _one_move_by_steps(task, state: tuple[int, ...], k: int, straight: bool = False) -> set[int]:
    """Positions piece ``k`` reaches by its own cell steps alone (reference semantics), start excluded.

    ``straight``: by repeating one direction only.
    """
    letter = task.names[k][4:-1]
    if straight:
        out = set()
        for d in ("up", "down", "left", "right"):
            s = state
            label = f"{letter} {d}"
            while nxt := [tuple(n) for a, n, _ in ref.successors(task, s) if task.actions[a].label == label]:
                s = nxt[0]
                out.add(s[k])
        return out
    mine = {i for i, a in enumerate(task.actions) if a.label.split()[0] == letter}
    seen, todo = {state}, [state]
    while todo:
        s = todo.pop()
        for a, nxt, _ in ref.successors(task, s):
            if a in mine and tuple(nxt) not in seen:
                seen.add(tuple(nxt))
                todo.append(tuple(nxt))
    return {s[k] for s in seen} - {state[k]}


def _one_move_by_paths(task, state: tuple[int, ...], k: int) -> set[int]:
    letter = task.names[k][4:-1]
    return {nxt[k] for a, nxt, _ in ref.successors(task, state) if task.actions[a].label.split()[0] == letter}


def _random_cases(n: int, seed: int, tmp_path: Path) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [(f"layout-{i}", klotski_text(*random_layout(rng, tmp_path))) for i in range(n)]


@pytest.mark.parametrize("metric", ["moves", "straight"])
def test_a_move_reaches_exactly_what_cell_steps_reach(tmp_path: Path, metric: str) -> None:
    """30 seeded layouts (1-3 empty cells), the start and four random-walk states each, every piece."""
    rng = random.Random(11)
    checked = 0
    for name, text in _random_cases(30, 2026, tmp_path):
        steps = _load(tmp_path, name, text, "metric=steps").task
        whole = _load(tmp_path, name, text, "action=move", f"metric={metric}").task
        assert whole.names == steps.names
        states = [tuple(steps.init)] + [tuple(random_walk(steps, rng, rng.randint(1, 30))[-1])
                                        for _ in range(4)]
        for state in states:
            for k in range(len(steps.names)):
                by_steps = _one_move_by_steps(steps, state, k, straight=metric == "straight")
                assert _one_move_by_paths(whole, state, k) == by_steps, \
                    (name, state, steps.names[k], text)
                checked += 1
    assert checked > 300


def _unfold(whole, cell, plan: list[int]) -> list[int]:
    """A whole-move plan as cell steps: "B right,down" is "B right" then "B down".

    A cell label can name two ground actions (the paid step and the free continuation), so
    each step takes the one applicable in the state reached so far.
    """
    state, out = tuple(cell.init), []
    for a in plan:
        letter, path = whole.actions[a].label.split()
        for d in path.split(","):
            step = [(i, tuple(nxt)) for i, nxt, _ in ref.successors(cell, state)
                    if cell.actions[i].label == f"{letter} {d}"]
            assert len(step) == 1, (whole.actions[a].label, d, state)
            out.append(step[0][0])
            state = step[0][1]
    return out


@pytest.mark.parametrize("metric", ["moves", "straight"])
def test_optima_agree_with_the_cell_model_on_random_layouts(tmp_path: Path, metric: str) -> None:
    """40 seeded layouts: bfs under both formulations, and the unfolded plan replays at its cost."""
    solved = 0
    for name, text in _random_cases(40, 7, tmp_path):
        cell = _load(tmp_path, name, text, f"metric={metric}")
        whole = _load(tmp_path, name, text, "action=move", f"metric={metric}")
        a = api.solve(cell, "bfs", Limits(time_s=60), kernel="numpy")
        b = api.solve(whole, "bfs", Limits(time_s=60), kernel="numpy")
        assert (a.status, a.cost) == (b.status, b.cost), (name, text)
        if b.status == "optimal":
            solved += 1
            check = ref.check_plan(cell.task, _unfold(whole.task, cell.task, b.plan))
            assert check.ok and check.cost == b.cost, (name, text)
    assert solved >= 25


# chunks 0 and 1 (one per metric, 30 layouts) by default; all four with -m slow
@pytest.mark.parametrize("chunk", [c if c < 2 else pytest.param(c, marks=pytest.mark.slow) for c in range(4)])
def test_sat_and_cpsat_prove_what_bfs_finds_in_the_cell_model(tmp_path: Path, chunk: int) -> None:
    """60 seeded layouts (4 chunks, metric moves in two, straight in two): the symbolic engines on
    ``action=move`` against the judge, bfs on the cell model; unsolvable layouts: no plan within 6
    moves."""
    problems, judged = [], 0
    metric = ("moves", "straight")[chunk % 2]
    for name, text in _random_cases(60, 99, tmp_path)[chunk * 15:(chunk + 1) * 15]:
        cell = _load(tmp_path, name, text, f"metric={metric}")
        best = api.solve(cell, "bfs", Limits(time_s=60), kernel="numpy")
        whole = _load(tmp_path, name, text, "action=move", f"metric={metric}")
        for engine in ("sat", "cpsat"):
            if best.status == "unsolvable":
                r = api.solve(whole, engine, Limits(time_s=60), kernel="numpy", horizon=6)
                if r.plan is not None:
                    problems.append(f"{engine}: a plan where bfs proves none, {name}:\n{text}")
                continue
            r = api.solve(whole, engine, Limits(time_s=60), kernel="numpy")
            if r.status != "optimal" or r.cost != best.cost or not r.stats.get("verified"):
                problems.append(f"{engine} {r.status} {r.cost} (bfs {best.cost}), {name}:\n{text}")
        judged += 1
    assert judged == 15 and not problems, "\n".join(problems)


FAYAA_RECORDS = {r["id"]: r for r in klotski_records(FAYAA)}


_PUBLISHED = sorted(random.Random(5).sample(
    [r for r, rec in FAYAA_RECORDS.items() if rec["published_min_moves"] != "unsolvable"], 12))


# 12 sampled layouts: every other one in the default run (3-7 s each on a slow day), all with -m slow
@pytest.mark.parametrize("rid", [r if i % 2 == 0 else pytest.param(r, marks=pytest.mark.slow)
                                 for i, r in enumerate(_PUBLISHED)])
def test_bfs_finds_the_published_minimum(rid: str) -> None:
    loaded = api.load_task("klotski", f"{FAYAA}#{rid}", ["action=move"])
    res = api.solve(loaded, "bfs", Limits(time_s=60), kernel="numpy")
    assert res.status == "optimal" and res.cost == int(FAYAA_RECORDS[rid]["published_min_moves"])


def test_no_solution_stays_no_solution() -> None:
    """fayaa-048 ("no way out") has no solution under either formulation."""
    loaded = api.load_task("klotski", f"{FAYAA}#fayaa-048", ["action=move"])
    assert api.solve(loaded, "bfs", Limits(time_s=60), kernel="numpy").status == "unsolvable"


# the two fayaa layouts with the fewest published moves: 7 and 11
SMALL = sorted((int(r["published_min_moves"]), rid) for rid, r in FAYAA_RECORDS.items()
               if r["published_min_moves"] != "unsolvable")[:2]


@pytest.mark.parametrize("engine", ["sat", "cpsat"])
@pytest.mark.parametrize("moves,rid", SMALL)
def test_symbolic_engines_prove_the_published_minimum(engine: str, moves: int, rid: str) -> None:
    loaded = api.load_task("klotski", f"{FAYAA}#{rid}", ["action=move"])
    res = api.solve(loaded, engine, Limits(time_s=120), kernel="numpy")
    assert res.status == "optimal" and res.cost == moves, (res.status, res.cost, res.message)
    assert res.stats["verified"] is True


def test_action_move_needs_a_moves_metric(capsys) -> None:
    argv = ["solve", "klotski", f"{FAYAA}#fayaa-117", "-O", "action=move", "-O", "metric=steps"]
    code, out, err = run_cli(argv, capsys)
    assert code == 31 and out == "" and len(err.strip().splitlines()) == 1 and "metric=moves" in err


def test_too_many_empty_cells_is_a_clear_error(tmp_path: Path, capsys) -> None:
    path = tmp_path / "open.txt"
    path.write_text(klotski_text(["AA..", "AA..", "....", "...."], (4, 4), (2, 2)), encoding="utf-8")
    code, out, err = run_cli(["solve", "klotski", path, "-O", "action=move"], capsys)
    assert code == 31 and out == "" and "12 empty cells" in err and "action=cell" in err
