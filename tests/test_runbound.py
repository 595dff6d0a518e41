"""The zero-cost run bound behind sat's and cpsat's optimality proofs on 0/1 costs.

Both numbers are checked against brute force over the reference semantics: the
bound from any state must be at least the longest loop-free free run from every
reachable state (soundness), and the bound from the initial state must be exactly
the longest one from there (it is asked of one concrete state).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from helpers import reference_optimum, reference_reachable, write_klotski

from puzzleplan import api
from puzzleplan.encodings.invariants import mutex_invariants
from puzzleplan.encodings.runbound import cost_lower_bound, horizon_for_cost, zero_cost_run_bound
from puzzleplan.ir.task import ground
from puzzleplan.lang import Act, And, Model
from puzzleplan.solvers import ENGINES
from puzzleplan.solvers.result import Limits
from puzzleplan.verify import reference as ref


def _walker(start: int, width: int = 6) -> object:
    """A token on 0..width: stepping right is free, left costs 1; marking at the right end costs 1."""
    m = Model("walker")
    x = m.var("x", 0, width, start)
    y = m.var("y", 0, 1, 0)

    @m.action("right")
    def right() -> Act:
        return Act(guard=x < width, effects={x: x + 1}, cost=0)

    @m.action("left")
    def left() -> Act:
        return Act(guard=x > 0, effects={x: x - 1}, cost=1)

    @m.action("mark")
    def mark() -> Act:
        return Act(guard=And(x == width, y == 0), effects={y: 1}, cost=1)

    m.goal(And(x == 0, y == 1))
    return ground(m)


def _longest_free_run(task, state: tuple[int, ...]) -> int:
    """Longest path of zero-cost actions from ``state`` that repeats no state (depth-first, small tasks)."""
    best = 0
    path = {state}

    def go(s: tuple[int, ...], depth: int) -> None:
        nonlocal best
        best = max(best, depth)
        for _, nxt, cost in ref.successors(task, s):
            n = tuple(nxt)
            if cost == 0 and n not in path:
                path.add(n)
                go(n, depth + 1)
                path.discard(n)

    go(state, 0)
    return best


def _tasks(tmp_path: Path) -> list[tuple[str, object]]:
    rng = random.Random(20261127)
    out: list[tuple[str, object]] = [(f"walker-{s}", _walker(s)) for s in (0, 6, rng.randrange(1, 6))]
    shapes = write_klotski(tmp_path / "shapes.txt", ["A.B", "CCD", "E.D"], (3, 3), (0, 2))
    out.append(("klotski-moves", api.load_task("klotski", str(shapes), ["metric=moves"]).task))
    garden = tmp_path / "garden.txt"
    garden.write_text("size 3 3\ngarden\n...\n.#.\n...\n", encoding="utf-8")
    out.append(("zpg-3x3", api.load_task("zpg", str(garden)).task))
    return out


def test_run_bounds_match_brute_force(tmp_path: Path) -> None:
    for name, task in _tasks(tmp_path):
        runs = zero_cost_run_bound(task, mutex_invariants(task))
        assert runs.length is not None and runs.first is not None, name
        init = tuple(task.init)
        assert runs.first == _longest_free_run(task, init), name
        worst = max(_longest_free_run(task, s) for s in reference_reachable(task))
        assert runs.length >= worst >= runs.first, name


def test_the_first_run_shortens_the_proof_horizon() -> None:
    runs = zero_cost_run_bound(_walker(2))
    assert (runs.length, runs.first) == (6, 4)   # six free steps from 0, four from the start at 2
    assert horizon_for_cost(6, 1, runs.length, runs.first) < horizon_for_cost(6, 1, runs.length)
    assert horizon_for_cost(6, 1, runs.length, None) == 6 + 7 * 6


class _K:
    def __init__(self, task: object):
        self.task = task


@pytest.mark.parametrize("engine", ["sat", "cpsat"])
@pytest.mark.parametrize("start", [0, 2, 6])
def test_symbolic_optimum_with_the_first_run_bound_matches_the_reference(engine: str, start: int) -> None:
    task = _walker(start)
    want = reference_optimum(task)
    r = ENGINES[engine](_K(task), Limits(time_s=60))
    assert r.status == "optimal" and r.cost == want, (engine, r.message)
    check = ref.check_plan(task, r.plan)
    assert check.ok and check.cost == want


def _fewest_steps(task) -> int:
    """Breadth-first by steps over the reference semantics: the length of the shortest plan."""
    start = tuple(task.init)
    seen, layer, depth = {start}, [start], 0
    while layer:
        if any(ref.is_goal(task, s) for s in layer):
            return depth
        nxt = []
        for s in layer:
            for _, succ, _ in ref.successors(task, s):
                t = tuple(succ)
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        layer, depth = nxt, depth + 1
    raise AssertionError("unsolvable")


def test_cost_lower_bound_from_refuted_horizons_is_sound_and_not_vacuous(tmp_path: Path) -> None:
    """Every horizon below the shortest plan holds no plan; the cost bound drawn from that never
    exceeds the optimum, and on the walker it says something (the free walk is long)."""
    said = 0
    for name, task in _tasks(tmp_path):
        runs = zero_cost_run_bound(task, mutex_invariants(task))
        best = reference_optimum(task)
        if best is None:   # unsolvable: no plan to bound
            continue
        fewest = _fewest_steps(task)
        cpos = min(a.cost for a in task.actions if a.cost > 0)
        for refuted in range(-1, fewest):
            lower = cost_lower_bound(refuted, cpos, runs.length, runs.first)
            assert lower <= best, (name, refuted, lower, best)
            said = max(said, lower)
        assert cost_lower_bound(fewest - 1, cpos, None) == 0
    assert said >= 1


def test_cost_lower_bound_is_the_least_cost_whose_horizon_was_not_refuted() -> None:
    """Every cost below the bound has a proof horizon within the refuted ones; the bound's own does not."""
    rng = random.Random(7)
    for _ in range(2000):
        run, cpos = rng.randrange(0, 9), rng.choice((1, 1, 2, 3))
        first = rng.choice((None, rng.randrange(0, run + 1)))
        refuted = rng.randrange(-1, 80)
        lower = cost_lower_bound(refuted, cpos, run, first)
        assert all(horizon_for_cost(b, cpos, run, first) <= refuted for b in range(lower))
        if lower or refuted >= 0:
            assert horizon_for_cost(lower + cpos - 1, cpos, run, first) > refuted, (refuted, cpos, run, first)
