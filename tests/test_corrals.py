"""PI-corral pruning (``Model.corrals``, Sokoban's ``prune=corral``): from every reachable state
the pushes it keeps must still hold an optimal first push, which is what makes A* over the pruned
graph exact (docs/architecture.md, "Corral pruning").

Checked exhaustively against the exact costs-to-go of the reference semantics (Dijkstra over
every reachable state, tests/helpers.py) on hand-drawn rooms with walled-off areas and on seeded
random boards; then end to end, astar with and without the pruning on Microban levels with
published optima, plans replayed by the reference checker.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from helpers import cost_to_go, run_cli

from puzzleplan import api
from puzzleplan.encodings.kernel import make_kernel
from puzzleplan.lang import InstanceError, ModelError
from puzzleplan.solvers import Limits
from puzzleplan.solvers.macro import MacroKernel
from puzzleplan.verify import reference as ref

ROOT = Path(__file__).resolve().parent.parent
MICROBAN = ROOT / "instances" / "sokoban" / "microban.xsb"
# push optima from instances/sokoban/README.md (an independent solver's table)
TABLE = {1: 8, 2: 3, 3: 13, 4: 7, 5: 6, 7: 6, 9: 10, 14: 10, 17: 9, 21: 5, 23: 10, 24: 9}

ROOMS = [
    ["#######",       # boxes wall off the right-hand part; pushes into it are reachable
     "#  #  #",
     "# $$. #",
     "#@ $ .#",
     "#  # .#",
     "#######"],
    ["########",      # a corridor room behind a row of boxes, goals on both sides
     "#.  #  #",
     "#  $$$ #",
     "# @  . #",
     "#   . ##",
     "########"],
    ["#######",       # two areas that only a merged corral explains
     "#. # .#",
     "# $ $ #",
     "#  $  #",
     "# @ . #",
     "#######"],
]


def level(tmp: Path, rows: list[str], name: str) -> Path:
    p = tmp / f"{name}.xsb"
    p.write_text("; a test level\n" + "\n".join(rows) + f"\nTitle: {name}\n")
    return p


def random_board(rng: random.Random, boxes: int) -> list[str]:
    """A walled 5x6 interior with a few inner walls, ``boxes`` boxes and as many goals."""
    R, C = 5, 6
    free = [(r, c) for r in range(1, R + 1) for c in range(1, C + 1)]
    walls = set(rng.sample(free, rng.randrange(3, 7)))
    free = [x for x in free if x not in walls]
    picks = rng.sample(free, 2 * boxes + 1)
    box, goal, player = picks[:boxes], picks[boxes:2 * boxes], picks[-1]
    rows = []
    for r in range(R + 2):
        row = ""
        for c in range(C + 2):
            x = (r, c)
            if r in (0, R + 1) or c in (0, C + 1) or x in walls:
                row += "#"
            elif x == player:
                row += "+" if x in goal else "@"
            elif x in box:
                row += "*" if x in goal else "$"
            else:
                row += "." if x in goal else " "
        rows.append(row)
    return rows


def random_levels(tmp: Path, seed: int, count: int) -> Iterator[Path]:
    """Seeded random boards (2 or 3 boxes, alternately) that load as Sokoban levels; a board with
    a box or goal walled off from the player is an instance error and is skipped."""
    rng = random.Random(seed)
    for i in range(count):
        path = level(tmp, random_board(rng, 2 + i % 2), f"r{i}")
        try:
            api.load_task("sokoban", str(path), [])
        except InstanceError:
            continue
        yield path


def check_keeps_an_optimal_push(path: Path) -> tuple[int, int]:
    """Every reachable state: the kept pushes reach its cost-to-go.  Returns (states whose pushes
    were cut to one corral's, pushes cut)."""
    task = api.load_task("sokoban", str(path), ["metric=pushes", "prune=corral"]).task
    hstar = cost_to_go(task)
    base = make_kernel(task, "numpy")
    pruned, full = MacroKernel(base, corrals=True), MacroKernel(base, corrals=False)
    assert pruned.corrals is not None and full.corrals is None
    states = list(hstar)
    S = np.array(states, dtype=np.int64)
    cut = 0
    for mk in (full, pruned):
        succ, par, _, cost = mk.expand_costs(S)
        best: dict[int, int | None] = {}
        for t, p, c in zip(succ.tolist(), par.tolist(), cost.tolist()):
            h = hstar[ref.canonical(task, t)]
            if h is not None and (best.get(p) is None or c + h < best[p]):
                best[p] = c + h
        for i, s in enumerate(states):
            want = hstar[s]
            if want is None or ref.is_goal(task, list(s)):
                continue
            assert best.get(i) == want, (path.name, mk is pruned, s, want, best.get(i))
        if mk is full:
            n_full = succ.shape[0]
        else:
            cut = n_full - succ.shape[0]
    return pruned.corrals.pruned_states, cut


# the first room by default (8 s); the other two are 17-24 s each on a slow day: -m slow
@pytest.mark.parametrize("k", [k if k == 0 else pytest.param(k, marks=pytest.mark.slow)
                               for k in range(len(ROOMS))])
def test_corral_pruning_keeps_an_optimal_push_in_every_state_of_a_room(tmp_path, k):
    states, cut = check_keeps_an_optimal_push(level(tmp_path, ROOMS[k], f"room{k}"))
    assert states > 0 and cut > 0            # the prune was at work here


def test_corral_pruning_keeps_an_optimal_push_on_random_boards(tmp_path):
    cut_somewhere = 0
    for path in random_levels(tmp_path, 7, 8):
        _, cut = check_keeps_an_optimal_push(path)
        cut_somewhere += cut > 0
    assert cut_somewhere >= 3


@pytest.mark.parametrize("lv", sorted(TABLE))
def test_astar_with_corrals_finds_the_published_push_optima(lv):
    loaded = api.load_task("sokoban", str(MICROBAN), [f"level={lv}", "metric=pushes", "prune=corral"])
    res = api.solve(loaded, "astar", Limits(time_s=60), kernel="interpreted", min_batch=1)
    assert res.status == "optimal" and res.cost == TABLE[lv], (res.status, res.cost)
    chk = ref.check_plan(loaded.task, res.plan)
    assert chk.ok and chk.cost == res.cost, chk.message


def test_moves_metric_leaves_the_pushes_alone():
    # walks cost 1 there: reordering pushes changes walking, so the engine must not prune
    loaded = api.load_task("sokoban", str(MICROBAN), ["level=1", "metric=moves", "prune=corral"])
    mk = MacroKernel(make_kernel(loaded.task, "numpy"))
    assert mk.corrals is None


def test_a_corral_declaration_on_non_push_actions_is_a_model_error(tmp_path, capsys):
    model = tmp_path / "bad.py"
    model.write_text(
        "from puzzleplan.lang import Act, And, Model, Not, split_headers\n"
        "NAME = 'bad'\n"
        "def parse(rec):\n"
        "    split_headers(rec)\n"
        "def build(data=None):\n"
        "    m = Model('bad')\n"
        "    p = m.var('p', 0, 3, 0)\n"
        "    b = m.var('b', 0, 3, 2)\n"
        "    @m.action('walk', i=range(3))\n"
        "    def walk(i):\n"
        "        return Act(guard=And(p == i, Not(b == i + 1)), effects={p: i + 1}, cost=0)\n"
        "    @m.action('jump', i=range(4))\n"
        "    def jump(i):\n"
        "        return Act(guard=b == i, effects={b: 3 - i}, cost=1)\n"
        "    m.walks('walk', reversible=True)\n"
        "    m.corrals(p, [b], [3])\n"
        "    m.goal(b == 3)\n"
        "    return m\n")
    inst = tmp_path / "one.txt"
    inst.write_text("a line\n")
    loaded = api.load_task(str(model), str(inst), [])
    with pytest.raises(ModelError, match="corrals\\(\\): action .* is not a push"):
        api.solve(loaded, "astar", Limits(time_s=10), kernel="numpy")
    code, _, err = run_cli(["solve", str(model), str(inst), "-e", "astar"], capsys)
    assert code != 0 and "Traceback" not in err and "not a push" in err and "bad.py" in err


def reference_qualifies(geo, boxes: set[int], reach: np.ndarray, U: set[int]) -> bool:
    """The PI-corral definition, read plainly: is ``U`` (squares) a corral that may be kept?"""
    adj: dict[int, set[int]] = {v: set() for v in range(geo.size)}
    for v in range(geo.size):
        adj[v].update(int(w) for w in geo.adj[geo.adj_start[v]: geo.adj_start[v + 1]])
    barrier = {w for v in U for w in adj[v] if w in boxes}
    target = {int(t) for t in np.flatnonzero(geo.target)}
    if not (U & target or barrier - target):
        return False                                    # solved: nothing forces a push there
    for x in barrier:
        for k in range(geo.push_start[x], geo.push_start[x + 1]):
            p, y = int(geo.push_p[k]), int(geo.push_y[k])
            if p in U or p in barrier:
                continue
            if y in U:
                if not reach[p]:
                    return False                        # (P)
            elif y not in barrier:
                return False                            # (I)
    return True


def test_the_chosen_corral_meets_the_definition_on_random_states():
    """The compiled search against the definition, on random box placements of real levels."""
    rng = np.random.default_rng(3)
    checked = chosen_any = 0
    for lv in (1, 9, 32, 60, 93):
        task = api.load_task("sokoban", str(MICROBAN), [f"level={lv}", "metric=pushes", "prune=corral"]).task
        mk = MacroKernel(make_kernel(task, "numpy"))
        pr, K, n = mk.corrals, len(task.corrals.objects), task.variables[0].hi + 1
        rows = []
        for _ in range(400):                            # any squares: the definition holds everywhere
            squares = rng.choice(n, size=K + 1, replace=False)
            rows.append([int(squares[0])] + sorted(int(v) for v in squares[1:]))
        S = np.array(rows, dtype=np.int64)
        dist, _ = mk.graph.regions(S)
        label, chosen = pr.regions(S, dist >= 0)
        for r in range(S.shape[0]):
            boxes = set(S[r, 1:].tolist())
            free = {v for v in range(n) if v not in boxes and dist[r, v] < 0}
            areas, seen = [], set()
            for v0 in sorted(free):                     # the walled-off areas, by a plain search
                if v0 in seen:
                    continue
                area, todo = {v0}, [v0]
                while todo:
                    v = todo.pop()
                    for w in pr.geo.adj[pr.geo.adj_start[v]: pr.geo.adj_start[v + 1]].tolist():
                        if w in free and w not in area:
                            area.add(w)
                            todo.append(w)
                seen |= area
                areas.append(area)
            assert {v for v in range(n) if label[r, v] > 0} == free
            checked += 1
            if chosen[r] == 0:
                continue
            chosen_any += 1
            U = {v for v in range(n) if label[r, v] == chosen[r]}
            assert all(a <= U or not (a & U) for a in areas)      # a union of whole areas
            assert reference_qualifies(pr.geo, boxes, dist[r] >= 0, U), (lv, S[r].tolist(), sorted(U))
    assert chosen_any > 100 and checked == 2000


def test_corrals_declaration_checks_its_arguments():
    from puzzleplan.lang import Model
    m, other = Model("m"), Model("o")
    p, b = m.var("p", 0, 3, 0), m.var("b", 0, 3, 1)
    q = other.var("q", 0, 3, 0)
    with pytest.raises(ModelError, match="takes state variables"):
        m.corrals(p + 1, [b], [2])
    with pytest.raises(ModelError, match="this model's state variables"):
        m.corrals(q, [b], [2])
    with pytest.raises(ModelError, match="as many distinct targets as objects"):
        m.corrals(p, [b], [2, 3])
    with pytest.raises(ModelError, match="this model's state variables"):
        m.pattern([q], keep=[1])
    m.corrals(p, [b], [2])
    assert (m.corral_decl.agent, m.corral_decl.objects, m.corral_decl.targets) == (0, (1,), (2,))
