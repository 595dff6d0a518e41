"""Pair deadlocks (``solvers/pairs.py``, drawn from ``Model.corrals``): a state is called dead only
where no plan exists, on every reachable state of small boards against the exact costs-to-go of
the reference semantics (tests/helpers.py); the table against a plain search of the two-object
problem; and end to end, astar with it on Microban levels with published optima.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

import numpy as np
import pytest
from helpers import cost_to_go
from test_corrals import MICROBAN, level, random_levels
from test_frozen import ROOMS

from puzzleplan import api
from puzzleplan.encodings.kernel import make_kernel
from puzzleplan.solvers import Limits
from puzzleplan.solvers.macro import MacroKernel
from puzzleplan.verify import reference as ref

CORRIDOR = [        # two boxes, one target at the end of a dead-end corridor: pushed in, a pair is lost
    "#########",
    "#.     .#",
    "### ### #",
    "#  $$   #",
    "#@      #",
    "#########",
]


def check_dead(path: Path, metric: str) -> int:
    """Every reachable state: dead only without a plan, and the pair bound at most the cost still
    needed.  Returns the states called dead plus those whose bound beat the lone matching."""
    task = api.load_task("sokoban", str(path), [f"metric={metric}", "prune=corral"]).task
    hstar = cost_to_go(task)
    mk = MacroKernel(make_kernel(task, "numpy"), pairs=True)
    assert mk.pairs is not None and mk.pairs.lone is not None
    states = list(hstar)
    S = np.array(states, dtype=np.int64)
    dead = mk.pairs.dead(S)
    bound = mk.pairs.bound(S)
    for s, d, b in zip(states, dead.tolist(), bound.tolist()):
        if d:
            assert hstar[s] is None, (path.name, metric, s)
        if hstar[s] is not None:
            assert b <= hstar[s], (path.name, metric, s, b, hstar[s])
    return int(np.count_nonzero(dead)) + mk.pairs.raised


@pytest.mark.parametrize("metric", ["pushes", "moves"])
@pytest.mark.parametrize("k", range(len(ROOMS) + 1))
def test_pair_deadlocks_only_where_no_plan_exists(tmp_path, k, metric):
    rows = (ROOMS + [CORRIDOR])[k]
    dead = check_dead(level(tmp_path, rows, f"room{k}"), metric)
    if k == len(ROOMS):
        assert dead > 0             # the corridor's lost pairs are found


def test_pair_deadlocks_only_where_no_plan_exists_on_random_boards(tmp_path):
    found = 0
    for path in random_levels(tmp_path, 12, 10):
        found += check_dead(path, "pushes") > 0
    assert found >= 2


def _pair_live(geo, a: int, b: int, agent: int) -> bool:
    """Plain breadth-first search of the two-object problem: can objects on ``a`` and ``b`` (the
    agent on ``agent``, nothing else on the board) both be pushed onto targets?"""
    adj = {v: [int(w) for w in geo.adj[geo.adj_start[v]: geo.adj_start[v + 1]]] for v in range(geo.size)}
    pushes = {x: [(int(geo.push_p[k]), int(geo.push_y[k]))
                  for k in range(geo.push_start[x], geo.push_start[x + 1])] for x in range(geo.size)}

    def reach(boxes: frozenset[int], s: int) -> set[int]:
        seen, todo = {s}, [s]
        while todo:
            v = todo.pop()
            for w in adj[v]:
                if w not in seen and w not in boxes:
                    seen.add(w)
                    todo.append(w)
        return seen

    start = (frozenset((a, b)), min(reach(frozenset((a, b)), agent)))
    seen, todo = {start}, deque([start])
    while todo:
        boxes, s = todo.popleft()
        if all(geo.target[x] for x in boxes):
            return True
        area = reach(boxes, s)
        for x in boxes:
            for p, y in pushes[x]:
                if p in area and y not in boxes:
                    nb = (boxes - {x}) | {y}
                    nxt = (frozenset(nb), min(reach(frozenset(nb), x)))
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
    return False


@pytest.mark.parametrize("lv", [1, 9, 60])
def test_pair_table_against_a_plain_search(lv):
    """The backward-computed table against a forward search of each two-object problem, on random
    pairs of squares and agent squares of Microban levels."""
    task = api.load_task("sokoban", str(MICROBAN), [f"level={lv}", "metric=pushes", "prune=corral"]).task
    mk = MacroKernel(make_kernel(task, "numpy"), pairs=True)
    pd = mk.pairs
    assert pd is not None
    geo, rng = pd.geo, np.random.default_rng(lv)
    dead_seen = live_seen = 0
    for _ in range(150):
        a, b, s = (int(v) for v in rng.choice(geo.size, size=3, replace=False))
        a, b = min(a, b), max(a, b)
        want = _pair_live(geo, a, b, s)
        assert bool(pd.live[a, b, pd.rep[a, b, s]]) == want, (lv, a, b, s)
        dead_seen += not want
        live_seen += want
    assert dead_seen and live_seen


@pytest.mark.parametrize("lv,optimum", [(2, 3), (9, 10), (17, 9), (60, 44)])
def test_astar_with_pair_deadlocks_keeps_published_optima(lv, optimum):
    """Published push optima (instances/sokoban/README.md, an independent solver) with the pair
    check on, and the same optimum with it off, in fewer or as many expansions."""
    loaded = api.load_task("sokoban", str(MICROBAN), [f"level={lv}", "metric=pushes", "prune=corral"])
    on = api.solve(loaded, "astar", Limits(time_s=120), kernel="interpreted", pairs=True)
    off = api.solve(loaded, "astar", Limits(time_s=120), kernel="interpreted", pairs=False)
    assert on.status == off.status == "optimal" and on.cost == off.cost == optimum
    assert on.stats["expanded"] <= off.stats["expanded"]
    for res in (on, off):
        chk = ref.check_plan(loaded.task, res.plan)
        assert chk.ok and chk.cost == res.cost, chk.message
