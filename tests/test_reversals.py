"""Undo pairs (encodings/reversals.py) against exhaustive search of the reachable states.

A pair ``(i, j)`` lets both symbolic encoders forbid ``j`` right after ``i``; that is sound
only if ``j`` after ``i`` restores the state in every reachable state where both fire, under
the encodings' own step (successors re-sorted within symmetry groups).  The judge here is a
breadth-first enumeration with the reference semantics, independent of the analysis.
"""

from __future__ import annotations

import pytest
from helpers import encoder_reachable, write_klotski, write_sliding

from puzzleplan import api
from puzzleplan.encodings.invariants import relaxed_fixpoint
from puzzleplan.encodings.reversals import undo_pairs
from puzzleplan.encodings.symmetry import canonical, successor, symmetry_groups
from puzzleplan.ir.task import Task, ground
from puzzleplan.lang import Act, Max, Min, Model
from puzzleplan.solvers.result import Limits


def _violations(task: Task, groups: list[list[int]], pairs: list[tuple[int, int]]) -> list[str]:
    """Reachable states where ``i`` then ``j`` fire and do not come back (none may exist)."""
    bad = []
    for s in sorted(encoder_reachable(task, groups)):
        for i, j in pairs:
            mid = successor(task, i, s)
            if mid is None:
                continue
            mid = canonical(groups, mid)
            end = successor(task, j, mid)
            if end is not None and tuple(canonical(groups, end)) != s:
                bad.append(f"{task.actions[i].label} then {task.actions[j].label} from {s}")
    return bad


def _saturating() -> Task:
    """inc saturates at 3, dec at 0: inc then dec restores x only below 3 -- not an undo pair."""
    m = Model("saturating")
    x = m.var("x", 0, 3, 0)
    y = m.var("y", 0, 2, 0)

    @m.action("inc")
    def inc() -> Act:
        return Act(effects={x: Min(x + 1, 3)})

    @m.action("dec")
    def dec() -> Act:
        return Act(effects={x: Max(x - 1, 0)})

    @m.action("up")         # guarded and exact: up then down restores y wherever both fire
    def up() -> Act:
        return Act(guard=y < 2, effects={y: y + 1})

    @m.action("down")
    def down() -> Act:
        return Act(guard=y > 0, effects={y: y - 1})

    m.goal((x == 3) & (y == 2))
    return ground(m)


def _loaded(key: str, tmp_path) -> Task:
    if key == "sliding":
        return api.load_task("sliding", str(write_sliding(tmp_path / "s.txt", [3, 1, 0, 2], 2))).task
    if key == "klotski":
        # D and E (1x1, sorted by the encodings) pass each other in the sort order when one moves
        path = write_klotski(tmp_path / "k.txt", [".DB", "E.B", "AAC"], size=(3, 3), goal=(0, 0))
        return api.load_task("klotski", str(path), ["metric=steps"]).task
    if key == "lightsout":
        return api.load_task("lightsout", "instances/lightsout/boards.txt#cross-3x3").task
    return _saturating()


@pytest.mark.parametrize("key", ["sliding", "klotski", "lightsout", "saturating"])
@pytest.mark.parametrize("symmetry", [True, False])
def test_every_undo_pair_restores_every_reachable_state(key: str, symmetry: bool, tmp_path) -> None:
    task = _loaded(key, tmp_path)
    groups = symmetry_groups(task) if symmetry else []
    pairs = undo_pairs(task, relaxed_fixpoint(task, symmetric=True), groups)
    assert pairs, f"{key}: every one of these tasks has moves that undo each other"
    assert _violations(task, groups, pairs) == []
    labels = {(task.actions[i].name, task.actions[j].name) for i, j in pairs}
    if key == "saturating":
        assert ("up", "down") in labels and ("down", "up") in labels
        assert ("inc", "dec") not in labels and ("dec", "inc") not in labels


def test_the_sliding_moves_each_find_their_opposite(tmp_path) -> None:
    path = write_sliding(tmp_path / "e.txt", [1, 2, 3, 4, 0, 5, 6, 7, 8], 3)
    task = api.load_task("sliding", str(path)).task
    pairs = undo_pairs(task, relaxed_fixpoint(task, symmetric=True))
    opposite = {"U": "D", "D": "U", "L": "R", "R": "L"}
    for i, a in enumerate(task.actions):
        partners = [task.actions[j] for k, j in pairs if k == i]
        cell, d = dict(a.params)["cell"], dict(a.params)["d"]
        other = next(b for b in partners if b is not a)
        assert other.label == opposite[d] and dict(other.params)["cell"] != cell


def test_grouped_objects_are_left_out_under_symmetry(tmp_path) -> None:
    """The two 1x1 pieces are sorted by the encodings: their moves get no pair then."""
    task = _loaded("klotski", tmp_path)
    groups = symmetry_groups(task)
    grouped = {v for g in groups for v in g}
    pairs = undo_pairs(task, relaxed_fixpoint(task, symmetric=True), groups)
    assert all(not {e.var for e in task.actions[k].effects} & grouped for pair in pairs for k in pair)
    assert len(undo_pairs(task, relaxed_fixpoint(task, symmetric=True))) > len(pairs)


@pytest.mark.parametrize("engine", ["sat", "cpsat"])
def test_engines_prove_the_same_optimum_with_and_without_undo(engine: str, tmp_path) -> None:
    path = write_sliding(tmp_path / "w.txt", [4, 1, 3, 7, 2, 6, 0, 5, 8], 3)
    loaded = api.load_task("sliding", str(path))
    on = api.solve(loaded, engine, Limits(time_s=60), kernel="numpy")
    off = api.solve(loaded, engine, Limits(time_s=60), kernel="numpy", undo=False)
    judge = api.solve(loaded, "bfs", Limits(time_s=60), kernel="numpy")
    assert on.status == off.status == judge.status == "optimal"
    assert on.cost == off.cost == judge.cost
    assert on.stats["undo_pairs"] > 0 and "undo_pairs" not in off.stats
