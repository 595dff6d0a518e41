"""sat's bfs hint: a small bfs at once (the quick hint) or after the horizon chain has run a
while, then one refutation below the bfs plan, on a formula of its own with the goal fixed.

Judged by the reference semantics (breadth-first over the reference interpreter), on
seeded random 8-puzzles and 3x3 sliding-block layouts (unit steps): with the switch
forced at once, sat must prove the reference optimum with a plan the checker accepts.
The hint is only an upper bound: a plan that is too long must be beaten, not trusted,
and a limit during the last refutation keeps the chain's bound, never claims more.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import eight_walk_tasks, reference_optimum, write_klotski

from puzzleplan import api
from puzzleplan.solvers import ENGINES, horizon
from puzzleplan.solvers import sat as sat_engine
from puzzleplan.solvers.result import Limits
from puzzleplan.verify import reference as ref


class _K:
    def __init__(self, task: object):
        self.task = task


def _tasks(tmp_path: Path, seed: int) -> list[tuple[str, object]]:
    out = eight_walk_tasks(tmp_path, seed, 4, 6, 24)
    shapes = write_klotski(tmp_path / "shapes.txt", ["A.B", "CCD", "E.D"], (3, 3), (0, 2))
    tall = write_klotski(tmp_path / "tall.txt", ["A.B", "CCB", "D.E"], (3, 3), (2, 2))
    for p in (shapes, tall):
        out.append((p.name, api.load_task("klotski", str(p), ["metric=steps"]).task))
    return out


@pytest.mark.parametrize("seed", [20261127, pytest.param(7, marks=pytest.mark.slow)])   # 7: -m slow
def test_the_hint_path_proves_the_reference_optimum(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     seed: int) -> None:
    monkeypatch.setattr(horizon, "HINT_AFTER_S", 0.0)   # take the hint after the first horizon
    for name, task in _tasks(tmp_path, seed):
        want = reference_optimum(task)
        assert want is not None, name
        r = ENGINES["sat"](_K(task), Limits(time_s=60))
        assert r.status == "optimal" and r.cost == want, (name, r.status, r.cost, r.message)
        check = ref.check_plan(task, r.plan)
        assert check.ok and check.cost == want, name
        if want > 1:   # horizons 0 and 1 leave something to refute: the hint was taken
            assert "hint_s" in r.stats and r.stats["hint_cost"] == want, name
            assert "bfs hint" in r.proof, (name, r.proof)
            assert f"no plan of at most {want - 1} steps" in r.proof, (name, r.proof)   # the whole claim


def _dear_plan(task: object) -> tuple[list[int], int]:
    """An optimal plan from bfs, made two steps longer by a move and its undoing."""
    from puzzleplan.encodings.kernel import make_kernel
    from puzzleplan.solvers.bfs import solve as bfs

    best = bfs(make_kernel(task, "numpy"), Limits())
    assert best.plan
    back = next(k for k in range(len(task.actions))
                if ref.check_plan(task, [best.plan[0], k] + list(best.plan)).ok)
    dear = [best.plan[0], back] + list(best.plan)
    check = ref.check_plan(task, dear)
    assert check.ok and check.cost == best.cost + 2
    return dear, check.cost


def test_a_longer_hint_is_beaten_not_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, task = _tasks(tmp_path, 3)[1]
    want = reference_optimum(task)
    dear, cost = _dear_plan(task)
    monkeypatch.setattr(horizon, "HINT_AFTER_S", 0.0)
    monkeypatch.setattr(sat_engine, "explicit_plan", lambda *a: (cost, dear))
    r = ENGINES["sat"](_K(task), Limits(time_s=60))
    assert r.status == "optimal" and r.cost == want, r.message
    assert ref.check_plan(task, r.plan).cost == want
    assert "bfs hint" not in r.proof


def test_a_limit_in_the_last_refutation_keeps_only_the_chains_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, task = _tasks(tmp_path, 5)[2]
    want = reference_optimum(task)
    assert want is not None and want >= 4
    from puzzleplan.solvers.horizon import explicit_plan

    monkeypatch.setattr(horizon, "HINT_AFTER_S", 0.0)
    taken: list[int] = []

    def hint(*args: object) -> tuple[int, list[int]] | None:
        taken.append(1)
        return explicit_plan(*args)  # type: ignore[arg-type]

    real_solve = sat_engine._Sat.solve

    def solve(self: object, assumptions: list[int]) -> bool | None:
        return None if taken else real_solve(self, assumptions)   # the limit strikes after the hint

    monkeypatch.setattr(sat_engine, "explicit_plan", hint)
    monkeypatch.setattr(sat_engine._Sat, "solve", solve)
    r = ENGINES["sat"](_K(task), Limits(time_s=60))
    assert taken
    assert r.status == "solved" and r.cost == want, (r.status, r.message)
    assert r.stats["lower_bound"] == 1          # only horizon 0 was refuted before the hint
    assert "no plan has fewer than 1 steps" in r.message
    assert ref.check_plan(task, r.plan).ok


def test_hint_false_keeps_the_chain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(horizon, "HINT_AFTER_S", 0.0)
    monkeypatch.setattr(sat_engine, "explicit_plan", lambda *a: pytest.fail("hint taken"))
    _, task = _tasks(tmp_path, 11)[0]
    r = ENGINES["sat"](_K(task), Limits(time_s=60), hint=False)
    assert r.status == "optimal" and r.cost == reference_optimum(task)
    assert r.proof.startswith("UNSAT at horizons 0..") and "hint" not in r.proof


def _zero_cost_tasks(tmp_path: Path) -> list[tuple[str, object]]:
    from test_cpsat_encodings import _gardens, _layouts
    from test_runbound import _walker

    return _gardens(tmp_path, 4, 20261128) + _layouts(tmp_path)[2:] + [("walker-2", _walker(2))]


def test_with_zero_cost_actions_the_hint_leads_to_the_proof_horizon(tmp_path: Path) -> None:
    """0/1 costs (the hint's default there): the bfs plan's cost fixes the horizon of the one proof."""
    for name, task in _zero_cost_tasks(tmp_path):
        want = reference_optimum(task)
        r = ENGINES["sat"](_K(task), Limits(time_s=60), hint=True)
        if want is None:
            assert r.status == "unsolvable", (name, r.status)
            continue
        assert r.status == "optimal" and r.cost == want, (name, r.status, r.cost, r.message)
        check = ref.check_plan(task, r.plan)
        assert check.ok and check.cost == want, name
        if want > 0:   # every run bound here is established, so the hint is always taken
            assert r.stats["hint_cost"] == want and "bfs hint" in r.proof, (name, r.proof)


def test_with_zero_cost_actions_a_dearer_hint_is_beaten(monkeypatch: pytest.MonkeyPatch) -> None:
    from test_cpsat_encodings import dear_walker_plan

    task, want, cost, dear = dear_walker_plan()
    monkeypatch.setattr(sat_engine, "explicit_plan", lambda *a: (cost, dear))
    r = ENGINES["sat"](_K(task), Limits(time_s=60), hint=True)
    assert r.status == "optimal" and r.cost == want, r.message
    assert ref.check_plan(task, r.plan).cost == want and "bfs hint" not in r.proof


def test_unit_costs_ask_the_quick_hint_first_and_its_budget(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """By default (no switch forced) the small bfs comes right after horizon 0, with QUICK_HINT_S
    seconds; its plan is refuted below at once, and the stats say which hint it was."""
    from puzzleplan.solvers.horizon import explicit_plan

    budgets: list[object] = []

    def hint(*args: object) -> tuple[int, list[int]] | None:
        budgets.append(args[3] if len(args) > 3 else None)
        return explicit_plan(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(sat_engine, "explicit_plan", hint)
    for name, task in _tasks(tmp_path, 31)[:3]:
        budgets.clear()
        want = reference_optimum(task)
        r = ENGINES["sat"](_K(task), Limits(time_s=60))
        assert r.status == "optimal" and r.cost == want, (name, r.status, r.message)
        assert ref.check_plan(task, r.plan).cost == want, name
        if want > 1:
            assert budgets == [horizon.QUICK_HINT_S], (name, budgets)
            assert "quick_hint_s" in r.stats and r.stats["hint_cost"] == want, name
            assert r.proof.startswith(f"no plan of at most {want - 1} steps"), r.proof
            assert "bfs hint" in r.proof, r.proof


def test_a_quick_hint_that_finds_nothing_leaves_the_chain_and_the_full_hint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    budgets: list[object] = []

    def nothing(*args: object) -> None:
        budgets.append(args[3] if len(args) > 3 else None)
        return None

    monkeypatch.setattr(horizon, "HINT_AFTER_S", 0.0)
    monkeypatch.setattr(sat_engine, "explicit_plan", nothing)
    name, task = _tasks(tmp_path, 13)[0]
    want = reference_optimum(task)
    r = ENGINES["sat"](_K(task), Limits(time_s=60))
    assert r.status == "optimal" and r.cost == want, (name, r.message)
    assert budgets == [horizon.QUICK_HINT_S, None]
    assert "hint_cost" not in r.stats and "bfs hint" not in r.proof


def test_quick_hint_zero_keeps_the_chain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(horizon, "QUICK_HINT_S", 0.0)
    monkeypatch.setattr(horizon, "HINT_AFTER_S", 1e9)
    monkeypatch.setattr(sat_engine, "explicit_plan", lambda *a: pytest.fail("hint taken"))
    for name, task in _tasks(tmp_path, 17)[:2]:
        r = ENGINES["sat"](_K(task), Limits(time_s=60))
        assert r.status == "optimal" and r.cost == reference_optimum(task), name
        assert "quick_hint_s" not in r.stats and "hint" not in r.proof
