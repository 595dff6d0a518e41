"""The frozen-target bound (``solvers/frozen.py``, drawn from ``Model.corrals``): admissible and
dead only where no plan exists, on every reachable state of small boards, against the exact
costs-to-go of the reference semantics (Dijkstra over every state, tests/helpers.py); its
agent-aware push distances against the Sokoban model's own, independently written tables; and
end to end, astar with it on Microban levels with published optima.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import cost_to_go
from test_corrals import MICROBAN, level, random_levels

from puzzleplan import api
from puzzleplan.encodings.kernel import make_kernel
from puzzleplan.solvers import Limits
from puzzleplan.solvers.frozen import DEAD
from puzzleplan.solvers.macro import MacroKernel
from puzzleplan.verify import reference as ref

# rooms where a box parked on a goal walls off other goals or the way to them
ROOMS = [
    ["########",      # goals in a dead-end corridor: filled in the wrong order, one is cut off
     "#...   #",
     "### $  #",
     "#  $ $ #",
     "# @    #",
     "########"],
    ["#######",       # corner goals that freeze a box at once, and a doorway between them
     "#.  . #",
     "## #  #",
     "# $ $ #",
     "#@ $ .#",
     "#######"],
    ["#######",       # a goal room behind a one-square door
     "#..#  #",
     "#.   $#",
     "## #$ #",
     "#  $ @#",
     "#######"],
]


def check_bound(path: Path, metric: str) -> tuple[int, int]:
    """Every reachable state: bound <= cost-to-go, DEAD only without a plan.  Returns (states
    where the bound beat the model's heuristic, states called dead)."""
    task = api.load_task("sokoban", str(path), [f"metric={metric}", "prune=corral"]).task
    hstar = cost_to_go(task)
    mk = MacroKernel(make_kernel(task, "numpy"))
    assert mk.frozen is not None
    states = list(hstar)
    S = np.array(states, dtype=np.int64)
    bound = mk.frozen.bound(S)
    model = mk.evaluator.heuristic(S)
    for s, b in zip(states, bound.tolist()):
        want = hstar[s]
        if b >= DEAD:
            assert want is None, (path.name, metric, s, want)
        elif want is not None:
            assert b <= want, (path.name, metric, s, b, want)
    beat = int(np.count_nonzero((bound > model) & (bound < DEAD)))
    return beat, int(np.count_nonzero(bound >= DEAD))


# room 0 under both metrics and room 1 under pushes by default; room 1 under moves with -m slow
@pytest.mark.parametrize("k,metric", [(0, "pushes"), (0, "moves"), (1, "pushes"),
                                      pytest.param(1, "moves", marks=pytest.mark.slow)])
def test_frozen_bound_is_admissible_in_every_state_of_a_room(tmp_path, k, metric):
    beat, dead = check_bound(level(tmp_path, ROOMS[k], f"room{k}"), metric)
    assert beat + dead > 0          # the bound was at work here


def test_frozen_bound_is_admissible_on_random_boards(tmp_path):
    at_work = 0
    for path in random_levels(tmp_path, 11, 10):
        beat, dead = check_bound(path, "pushes")
        at_work += beat + dead > 0
    assert at_work >= 3


@pytest.mark.parametrize("lv", [1, 17, 60, 93, 121, 150])
def test_push_distances_match_the_model_tables_with_nothing_frozen(lv):
    """With no square blocked, the generic tables (from the ground pushes and the walk graph)
    give, for every box square and agent square, the model's own agent-aware push distance."""
    loaded = api.load_task("sokoban", str(MICROBAN), [f"level={lv}", "metric=pushes", "prune=corral"])
    mk = MacroKernel(make_kernel(loaded.task, "numpy"))
    fb = mk.frozen
    assert fb is not None
    blocked, parts, dist = fb._tables(np.zeros(fb.words, dtype=np.uint64))
    assert not blocked.any()
    sokoban = api.load_model("sokoban")
    board = sokoban.Board(sokoban.read_xsb(MICROBAN.read_text(), str(MICROBAN)).pick(str(lv)))
    assert board.n == fb.geo.size and fb.geo.lo == 0     # squares are the values 0..n-1
    goal_col = {int(t): j for j, t in enumerate(fb.targets)}
    for g, by_part in zip(board.goals, board.by_part):
        j = goal_col[g]
        for c in range(board.n):
            for s in range(board.n):
                if s == c:
                    continue
                want = by_part.get((c, board.parts[c][s]))
                got = int(dist[j, c * fb.width + int(parts[c, s])])
                assert (None if got < 0 else got) == want, (lv, g, c, s, got, want)


@pytest.mark.parametrize("lv", [1, 2, 3, 9, 14, 23])
def test_astar_with_the_frozen_bound_finds_the_published_push_optima(lv):
    """Push optima from instances/sokoban/README.md (an independent solver's table)."""
    table = {1: 8, 2: 3, 3: 13, 9: 10, 14: 10, 23: 10}
    loaded = api.load_task("sokoban", str(MICROBAN), [f"level={lv}", "metric=pushes", "prune=corral"])
    res = api.solve(loaded, "astar", Limits(time_s=60), kernel="interpreted")
    assert res.status == "optimal" and res.cost == table[lv], (res.status, res.cost)
    chk = ref.check_plan(loaded.task, res.plan)
    assert chk.ok and chk.cost == res.cost, chk.message


def test_a_state_with_a_box_frozen_off_its_goal_is_never_queued(tmp_path):
    """A box in a corner off its goal: the start is dead.  astar says unsolvable without expanding
    anything, and agrees with the run without the bound, which has to exhaust the states."""
    rows = ["#######",
            "#$  . #",
            "#  $ .#",
            "# @   #",
            "#######"]
    path = level(tmp_path, rows, "cornered")
    loaded = api.load_task("sokoban", str(path), ["metric=pushes", "prune=none"])
    decl = api.load_task("sokoban", str(path), ["metric=pushes", "prune=corral"])
    with_bound = api.solve(decl, "astar", Limits(time_s=60), kernel="interpreted")
    plain = api.solve(loaded, "astar", Limits(time_s=60), kernel="interpreted")
    assert with_bound.status == plain.status == "unsolvable"
    assert with_bound.stats["expanded"] == 0 < plain.stats["expanded"]
