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
HARDEST = f"{ROOT}/instances/sliding/eight.txt#eight-hardest-a"


# bfs checks its memory before each growth, so its limit must exceed its first arrays (0.1 MB)
MEMORY = {"bfs": 0.3, "astar": 0.05, "ucs": 0.05}


@pytest.mark.parametrize("engine", ["bfs", "astar", "ucs"])
@pytest.mark.parametrize("kind", ["memory", "states"])
def test_limit_reports_a_sound_lower_bound(engine: str, kind: str) -> None:
    limits = Limits(max_mb=MEMORY[engine]) if kind == "memory" else Limits(max_states=300)
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


@pytest.mark.parametrize("kernel", ["numpy", "numba"])
def test_bfs_memory_limit_is_checked_before_growing(kernel: str) -> None:
    """bfs asks before each doubling whether the old and new arrays fit together, so the bytes
    it accounts never pass the limit (they used to overshoot by one doubling), and a larger
    limit only lets the search go further."""
    loaded = load("sliding", HARDEST)            # all 181,440 states are searched without a limit
    full = api.solve(loaded, "bfs", Limits(), kernel=kernel)
    reached = []
    for mb in (3.0, 4.5, 6.0):
        cut = api.solve(loaded, "bfs", Limits(max_mb=mb), kernel=kernel)
        assert cut.status == "limit" and cut.plan is None
        assert cut.stats["peak_mb"] <= mb
        assert 0 < cut.stats["lower_bound"] <= full.cost
        reached.append(cut.stats["states"])
    assert reached == sorted(reached) and reached[0] < reached[-1] < full.stats["states"]


@pytest.mark.parametrize("kernel", ["numpy", "numba"])
def test_bfs_ids_widen_to_int64_past_the_int32_range(kernel: str, monkeypatch) -> None:
    """Ids are int32 while the table is small enough; past that the parent array (and the
    candidates' parents) must widen without losing a parent.  The threshold is lowered so the
    widening happens inside a small search, whose plan and counts must not change."""
    from puzzleplan.solvers import visited

    loaded = load("sliding", EIGHT)
    narrow = api.solve(loaded, "bfs", Limits(), kernel=kernel)
    monkeypatch.setattr(visited, "ID32", 1 << 10)
    wide = api.solve(loaded, "bfs", Limits(), kernel=kernel)
    assert wide.stats["states"] > 1 << 12          # the table did pass the lowered threshold
    assert (wide.status, wide.cost, wide.plan) == (narrow.status, narrow.cost, narrow.plan)
    assert wide.stats["states"] == narrow.stats["states"]
