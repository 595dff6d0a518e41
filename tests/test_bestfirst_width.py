"""The capped bucket of ``astar`` / ``ucs`` (engine option ``width``): a batch takes at most
``width`` states of the deepest (f, g) bucket, newest first, so that the last f layer dives
instead of being swept.  The order inside a layer must never change the optimum: checked here
against the plain-Python Dijkstra of the reference semantics (tests/helpers.py), with the cap
at its smallest (one state per batch, so every bucket is split) and with whole buckets."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from helpers import reference_optimum, sliding_walk, write_sliding

from puzzleplan import api
from puzzleplan.solvers import Limits
from puzzleplan.solvers.bestfirst import _take
from puzzleplan.verify import reference as ref

ROOT = Path(__file__).resolve().parent.parent
MICROBAN = ROOT / "instances" / "sokoban" / "microban.xsb"


def test_take_splits_the_newest_entries_off_and_keeps_the_rest_in_order():
    by_g = {3: [np.array([1, 2, 3]), np.array([4, 5, 5, 6])]}
    first = _take(by_g, 3, 3)           # the last three entries of the newest array, distinct
    assert first.tolist() == [5, 6]
    assert [a.tolist() for a in by_g[3]] == [[1, 2, 3], [4]]
    second = _take(by_g, 3, 2)          # the rest of that array, then the older one
    assert second.tolist() == [3, 4]
    assert [a.tolist() for a in by_g[3]] == [[1, 2]]
    rest = _take(by_g, 3, 0)            # 0: the whole bucket, which then disappears
    assert rest.tolist() == [1, 2] and 3 not in by_g


def _check(loaded: api.Loaded, res, optimum: int | None) -> None:
    assert res.status == "optimal", (res.status, res.message)
    assert res.cost == optimum
    chk = ref.check_plan(loaded.task, res.plan)
    assert chk.ok and chk.cost == res.cost, chk.message


@pytest.mark.parametrize("seed", range(3))
def test_capped_buckets_keep_the_optimum_on_random_8_puzzles(tmp_path, seed):
    rng = random.Random(seed)
    goal = list(range(1, 9)) + [0]
    for i in range(4):
        start = sliding_walk(3, goal, rng, rng.randrange(8, 20))
        loaded = api.load_task("sliding", str(write_sliding(tmp_path / f"s{i}.txt", start, 3, goal)),
                               [])
        optimum = reference_optimum(loaded.task)
        for engine, width in (("astar", 1), ("astar", 3), ("astar", 0), ("ucs", 4)):
            res = api.solve(loaded, engine, Limits(), kernel="numpy", width=width, min_batch=1)
            _check(loaded, res, optimum)


SLOW = pytest.mark.slow


# the default run keeps one combination (each is 17-32 s on a slow day); -m slow runs all four
@pytest.mark.parametrize("metric,tiebreak", [("pushes", True), pytest.param("pushes", False, marks=SLOW),
                                             pytest.param("moves", True, marks=SLOW),
                                             pytest.param("moves", False, marks=SLOW)])
def test_capped_buckets_keep_the_optimum_in_macro_form_on_microban(metric, tiebreak):
    # macro walking (player regions) with batches of one state: the zero-cost walks and the
    # re-opened states of the moves metric are where a split bucket could lose a cheaper path;
    # with the tie-break (objects frozen on / standing on targets) every choice inside an (f, g)
    # bucket is made by it, and the optimum must not move either
    for level in range(1, 7):
        loaded = api.load_task("sokoban", str(MICROBAN), [f"level={level}", f"metric={metric}"])
        optimum = reference_optimum(loaded.task)
        for width in (1, 0):
            res = api.solve(loaded, "astar", Limits(time_s=120), kernel="numpy", width=width,
                            min_batch=1, tiebreak=tiebreak)
            _check(loaded, res, optimum)
            assert res.stats.get("macro"), "Sokoban declares walks: astar should search macro form"


def test_the_targets_tiebreak_counts_boxes_on_goals_as_the_level_text_shows():
    from puzzleplan.encodings.kernel import make_kernel
    from puzzleplan.solvers.macro import MacroKernel

    text = "\n".join(r for r in MICROBAN.read_text().splitlines() if not r.startswith(";"))
    levels = [blk for blk in text.split("\n\n") if "#" in blk]
    seen = 0
    for level, block in enumerate(levels[:40], start=1):
        rows = [r for r in block.splitlines() if not r.startswith("Title:")]
        on_goal = sum(r.count("*") for r in rows)
        boxes = on_goal + sum(r.count("$") for r in rows)
        loaded = api.load_task("sokoban", str(MICROBAN), [f"level={level}", "prune=corral"])
        mk = MacroKernel(make_kernel(loaded.task, "numpy"))
        tie = int(mk.tiebreak(mk.init_state())[0])
        assert mk.tie_range == (boxes + 1) ** 2
        assert tie % (boxes + 1) == on_goal, level        # boxes on goals
        assert tie // (boxes + 1) <= on_goal, level       # of which frozen: never more
        seen += on_goal > 0
    assert seen, "no level among those starts with a box on a goal: the test would not bite"


def test_the_tiebreak_puts_a_box_frozen_on_a_goal_above_one_merely_on_a_goal(tmp_path):
    from puzzleplan.encodings.kernel import make_kernel
    from puzzleplan.solvers.macro import MacroKernel

    # three boxes: one on the goal in the corner (it can never be pushed: frozen), one on a goal
    # in the open (free), one off the goals: 1 frozen on a goal, 2 on goals -> 1 * 4 + 2
    level = tmp_path / "l.xsb"
    level.write_text("#######\n#*    #\n#  *  #\n#  $ .#\n#  @  #\n#######\n")
    loaded = api.load_task("sokoban", str(level), ["prune=corral"])
    mk = MacroKernel(make_kernel(loaded.task, "numpy"))
    assert int(mk.tiebreak(mk.init_state())[0]) == 1 * 4 + 2
