"""Memory and state limits end a search cleanly with status "limit" and a sound lower bound.

The bound is checked against the optimum the same engine proves without a limit.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import load

from puzzleplan import api
from puzzleplan.solvers import Limits

ROOT = Path(__file__).resolve().parent.parent
EIGHT = f"{ROOT}/instances/sliding/eight-depths.txt#walk-2050-020"
MICROBAN = f"{ROOT}/instances/sokoban/microban.xsb"


@pytest.mark.parametrize("engine", ["bfs", "astar", "ucs"])
@pytest.mark.parametrize("limits", [Limits(max_mb=0.05), Limits(max_states=300)])
def test_limit_reports_a_sound_lower_bound(engine: str, limits: Limits) -> None:
    loaded = load("sliding", EIGHT)
    full = api.solve(loaded, engine, Limits(), kernel="numpy")
    assert full.status == "optimal"
    cut = api.solve(loaded, engine, limits, kernel="numpy")
    assert cut.status == "limit" and cut.plan is None
    assert 0 < cut.stats["lower_bound"] <= full.cost
    assert str(cut.stats["lower_bound"]) in cut.message


def test_macro_search_limit_bound() -> None:
    loaded = load("sokoban", MICROBAN, "level=5", "metric=moves")
    full = api.solve(loaded, "astar", Limits(), kernel="numpy")
    cut = api.solve(loaded, "astar", Limits(max_states=50), kernel="numpy")
    assert cut.status == "limit" and 0 < cut.stats["lower_bound"] <= full.cost == 25


def test_deadline_inside_a_macro_batch_ends_the_search_with_a_bound(monkeypatch) -> None:
    """A macro batch can take minutes; the deadline must stop it from the inside.

    The clock is made to expire at its k-th check inside the macro kernel (deterministic, no
    timing): the search must end right there as "limit", with a sound bound and no plan.
    """
    from puzzleplan.solvers import result

    loaded = load("sokoban", MICROBAN, "level=8", "metric=pushes")
    optimum = 32              # Microban 8, push-optimal: instances/sokoban/README.md (independent solver)
    calls = {"n": 0}

    def check(self) -> None:
        calls["n"] += 1
        if calls["n"] >= 3:
            raise result.OutOfTime

    monkeypatch.setattr(result.Clock, "check", check)
    cut = api.solve(loaded, "astar", Limits(), kernel="numpy")
    assert calls["n"] == 3                       # it stopped at the first check that expired
    assert cut.status == "limit" and cut.plan is None
    assert 0 < cut.stats["lower_bound"] <= optimum
