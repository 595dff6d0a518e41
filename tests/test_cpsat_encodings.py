"""cpsat's two CP-SAT models (integer variables, or the sat engine's clauses) and its bfs hint.

Judged by the reference semantics: on seeded random Zen gardens and sliding-block
layouts under the moves metric (0/1 costs, where the proof needs the zero-cost run
bound) and on unit-cost layouts, every combination of ``encoding`` and ``hint``
must prove the reference optimum, with a plan the checker accepts.  A hint that is
not optimal must be beaten, not trusted.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from helpers import reference_optimum, write_klotski
from test_runbound import _walker

from puzzleplan import api
from puzzleplan.lang.errors import OptionError
from puzzleplan.solvers import ENGINES, horizon
from puzzleplan.solvers import cpsat as cpsat_engine
from puzzleplan.solvers.result import Limits
from puzzleplan.verify import reference as ref


class _K:
    def __init__(self, task: object):
        self.task = task


def _gardens(tmp_path: Path, n: int, seed: int) -> list[tuple[str, object]]:
    from puzzleplan.api import load_model

    zpg = load_model("zpg")
    rng = random.Random(seed)
    out = []
    for i in range(n):
        w, h = rng.choice([(3, 3), (3, 4), (4, 3)])
        path = tmp_path / f"garden-{seed}-{i}.txt"
        path.write_text(zpg.generate(rng, w, h, rocks=0.2), encoding="utf-8")
        out.append((path.name, api.load_task("zpg", str(path)).task))
    return out


def _layouts(tmp_path: Path) -> list[tuple[str, object]]:
    """Two 3x3 layouts; the moves metric of the first only (the integer model needs > 30 s there)."""
    shapes = write_klotski(tmp_path / "shapes.txt", ["A.B", "CCD", "E.D"], (3, 3), (0, 2))
    tall = write_klotski(tmp_path / "tall.txt", ["A.B", "CCB", "D.E"], (3, 3), (2, 2))
    runs = [(shapes, "steps"), (tall, "steps"), (tall, "moves")]
    return [(f"{p.name} {m}", api.load_task("klotski", str(p), [f"metric={m}"]).task) for p, m in runs]


@pytest.mark.parametrize("encoding", ["int", "clauses"])
@pytest.mark.parametrize("hint", [True, False])
def test_both_models_prove_the_reference_optimum(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 encoding: str, hint: bool) -> None:
    monkeypatch.setattr(horizon, "HINT_AFTER_S", 0.0)   # unit costs too: the hint at once
    tasks = _gardens(tmp_path, 4, 20261127) + _layouts(tmp_path) + [("walker-2", _walker(2))]
    for name, task in tasks:
        want = reference_optimum(task)
        r = ENGINES["cpsat"](_K(task), Limits(time_s=60), encoding=encoding, hint=hint)
        if want is None:
            assert r.status == "unsolvable", (name, r.status, r.message)
            continue
        assert r.status == "optimal" and r.cost == want, (name, encoding, hint, r.status, r.cost, r.message)
        check = ref.check_plan(task, r.plan)
        assert check.ok and check.cost == want, name
        assert set(r.stats["models_by_encoding"]) == {encoding}
        assert ("hint_s" in r.stats) == hint, name


def test_auto_takes_clauses_for_proof_models_only_with_zero_cost_actions(tmp_path: Path) -> None:
    for name, task in _layouts(tmp_path) + _gardens(tmp_path, 2, 7):
        r = ENGINES["cpsat"](_K(task), Limits(time_s=60))
        zero = any(a.cost == 0 for a in task.actions)
        assert r.status == "optimal", name
        models = r.stats["models_by_encoding"]
        # the bfs hint (the quick one under unit costs) leads straight to the proof model:
        # in clauses with zero-cost actions, in integers under unit costs
        assert models == ({"clauses": 1} if zero else {"int": 1}), (name, models)
        assert "hint_s" in r.stats and "bfs hint" in r.proof, name


def test_unit_costs_run_the_schedule_without_the_quick_hint(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """QUICK_HINT_S = 0: no bfs before the schedule, which proves these small layouts on its own."""
    monkeypatch.setattr(horizon, "QUICK_HINT_S", 0.0)
    monkeypatch.setattr(cpsat_engine, "explicit_plan", lambda *a, **k: pytest.fail("hint taken"))
    for name, task in _layouts(tmp_path)[:2]:
        want = reference_optimum(task)
        r = ENGINES["cpsat"](_K(task), Limits(time_s=60))
        assert r.status == "optimal" and r.cost == want, (name, r.message)
        assert "hint_s" not in r.stats and "bfs hint" not in r.proof


def test_a_quick_hint_that_finds_nothing_leaves_the_full_one_due(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """No plan within the quick hint's seconds: the schedule runs, the full hint stays due."""
    name, task = _layouts(tmp_path)[1]
    assert task.cost_kind == "unit"
    want = reference_optimum(task)
    budgets: list[float | None] = []

    def nothing(*args: object, seconds: float | None = None) -> None:
        budgets.append(seconds)
        return None

    monkeypatch.setattr(horizon, "HINT_AFTER_S", 0.0)
    monkeypatch.setattr(cpsat_engine, "explicit_plan", nothing)
    r = ENGINES["cpsat"](_K(task), Limits(time_s=60))
    assert r.status == "optimal" and r.cost == want, (name, r.message)
    assert budgets == [horizon.QUICK_HINT_S, None]


def dear_walker_plan() -> tuple[object, int, int, list[int]]:
    """The walker from 0, its optimum, and a valid plan one unit dearer (a step right and back first)."""
    task = _walker(0)
    want = reference_optimum(task)
    acts = {a.name: k for k, a in enumerate(task.actions)}
    dear = [acts["right"], acts["left"]] + [acts["right"]] * 6 + [acts["mark"]] + [acts["left"]] * 6
    check = ref.check_plan(task, dear)
    assert check.ok and check.cost == want + 1
    return task, want, check.cost, dear


def test_a_costlier_hint_is_beaten_not_trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hint is only an upper bound: given a plan one unit too dear, cpsat finds the optimum."""
    task, want, cost, dear = dear_walker_plan()
    monkeypatch.setattr(cpsat_engine, "explicit_plan", lambda *a: (cost, dear))
    for encoding in ("int", "clauses"):
        r = ENGINES["cpsat"](_K(task), Limits(time_s=60), encoding=encoding, hint=True)
        assert r.status == "optimal" and r.cost == want, (encoding, r.message)
        assert ref.check_plan(task, r.plan).cost == want
        assert "bfs hint" not in r.proof


def test_the_hint_plan_stands_when_nothing_cheaper_exists(monkeypatch: pytest.MonkeyPatch) -> None:
    task = _walker(3)
    want = reference_optimum(task)
    r = ENGINES["cpsat"](_K(task), Limits(time_s=60), hint=True)
    assert r.status == "optimal" and r.cost == want
    assert r.stats["hint_cost"] == want and "bfs hint" in r.proof
    calls = []
    monkeypatch.setattr(cpsat_engine, "explicit_plan", lambda *a: calls.append(1))   # no plan: schedule
    r = ENGINES["cpsat"](_K(task), Limits(time_s=60), hint=True)
    assert calls and r.status == "optimal" and r.cost == want and "bfs hint" not in r.proof


def test_option_errors(tmp_path: Path) -> None:
    task = _walker(1)
    with pytest.raises(OptionError, match="encoding"):
        ENGINES["cpsat"](_K(task), Limits(), encoding="bdd")
    with pytest.raises(OptionError, match="encoding=int"):
        ENGINES["cpsat"](_K(task), Limits(), encoding="clauses", heuristic=True)


@pytest.mark.parametrize("model", ["int", "clauses"])
def test_a_long_model_build_stops_when_asked(tmp_path: Path, model: str) -> None:
    """Building hundreds of steps takes seconds: the limit must be able to cut it short."""
    from puzzleplan.encodings.cpclauses import CpClauses
    from puzzleplan.encodings.cpsat import BuildStopped, CpPlan

    task = _walker(2)
    asked = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 5

    cls = CpPlan if model == "int" else CpClauses
    with pytest.raises(BuildStopped):
        cls(task, 40, stop=stop)
    cls(task, 40, stop=lambda: False)   # never asked to stop: builds


def test_the_engine_ends_with_its_bound_when_a_build_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    from puzzleplan.encodings import cpsat as enc

    real = enc.CpPlan

    def limited(task: object, horizon: int, **kw: object) -> object:
        if horizon >= 5:
            raise enc.BuildStopped("the clock said so")
        return real(task, horizon, **kw)

    monkeypatch.setattr(enc, "CpPlan", limited)
    task = _walker(2)
    r = ENGINES["cpsat"](_K(task), Limits(time_s=60), encoding="int", hint=False)
    assert r.status == "limit" and r.plan is None
    assert r.stats["horizon"] == 5 and "no plan has fewer than" in r.message


def test_unit_costs_take_the_hint_when_a_schedule_model_runs_past_its_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The schedule's model is cut when the hint falls due; the hint then leads to the proof."""
    name, task = _layouts(tmp_path)[1]
    want = reference_optimum(task)
    monkeypatch.setattr(horizon, "HINT_AFTER_S", 100.0)
    monkeypatch.setattr(horizon, "QUICK_HINT_S", 0.0)
    real = cpsat_engine._Runner.solve
    cut: list[float] = []

    def solve(self: object, plan: object, seconds: float | None = None) -> tuple[str, object]:
        if seconds is not None:   # a schedule model while the hint is due in `seconds`: cut it
            cut.append(seconds)
            return "UNKNOWN", None
        return real(self, plan)

    monkeypatch.setattr(cpsat_engine._Runner, "solve", solve)
    r = ENGINES["cpsat"](_K(task), Limits(time_s=60))
    assert len(cut) == 1 and 0 < cut[0] <= 100, cut
    assert r.status == "optimal" and r.cost == want and "bfs hint" in r.proof, (name, r.message)
    assert ref.check_plan(task, r.plan).cost == want


def test_a_plan_from_a_cut_schedule_model_is_refuted_below(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A schedule model cut with a plan (FEASIBLE) gives the upper bound instead of the hint."""
    name, task = _layouts(tmp_path)[0]
    want = reference_optimum(task)
    monkeypatch.setattr(horizon, "HINT_AFTER_S", 100.0)
    monkeypatch.setattr(horizon, "QUICK_HINT_S", 0.0)
    monkeypatch.setattr(cpsat_engine, "explicit_plan", lambda *a: pytest.fail("the hint was not needed"))
    real = cpsat_engine._Runner.solve

    def solve(self: object, plan: object, seconds: float | None = None) -> tuple[str, object]:
        status, solver = real(self, plan)
        return ("FEASIBLE" if seconds is not None and status == "OPTIMAL" else status), solver

    monkeypatch.setattr(cpsat_engine._Runner, "solve", solve)
    r = ENGINES["cpsat"](_K(task), Limits(time_s=60))
    assert r.status == "optimal" and r.cost == want, (name, r.message)
    assert r.proof.startswith(f"no plan of cost <= {want - 1}") and "hint" not in r.proof, r.proof
    assert ref.check_plan(task, r.plan).cost == want
