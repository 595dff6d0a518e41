"""Sokoban: the rules one at a time, both metrics, dead-square pruning and the heuristic against
exact costs-to-go, bfs and astar against the Microban optima table, the kernels against the
reference semantics, and malformed XSB files.

Rule tests draw a state as an XSB picture and compare the *complete* successor set of the
reference semantics -- ``{label: (picture, cost)}`` -- with the one the rules give.  Every test
file carries a ``Title:`` line: puzzleplan's record reader drops lines starting with ``#`` as
comments, so a file of wall rows alone would read as empty (docs/models/sokoban.md).

The Microban optima (instances/sokoban/README.md) were computed by an independent solver, not
by this project.
"""

from __future__ import annotations

import heapq
import random
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import load
from helpers import assert_kernel_matches_reference, cost_to_go, reference_optimum, sample_states
from helpers import run_cli as run_cli_raw

from puzzleplan import api
from puzzleplan.solvers import Limits
from puzzleplan.verify import reference as ref

ROOT = Path(__file__).resolve().parent.parent
MICROBAN = ROOT / "instances" / "sokoban" / "microban.xsb"
# (push-optimal pushes, move-optimal moves) from instances/sokoban/README.md
TABLE = {1: (8, 33), 2: (3, 16), 5: (6, 25), 21: (5, 17), 44: (1, 1)}


def level_file(tmp: Path, rows: list[str], name: str = "t") -> Path:
    p = tmp / f"{name}.xsb"
    p.write_text("; a test level\n" + "\n".join(rows) + f"\nTitle: {name}\n")
    return p


def loaded(tmp: Path, rows: list[str], *options: str) -> api.Loaded:
    return api.load_task("sokoban", str(level_file(tmp, rows)), list(options))


def state_of(L: api.Loaded, picture: list[str]) -> list[int]:
    """A state vector from an XSB picture of the same level (walls and goals as in the level)."""
    rc = sorted((r, c) for r, row in enumerate(picture) for c, ch in enumerate(row) if ch in " .$*@+")
    assert len(rc) == L.task.variables[0].hi + 1, "picture and level must have the same squares"
    squares = {x: i for i, x in enumerate(rc)}
    player = next(squares[x] for x in rc if picture[x[0]][x[1]] in "@+")
    boxes = sorted(squares[x] for x in rc if picture[x[0]][x[1]] in "$*")
    return [player] + boxes


def successors(L: api.Loaded, picture: list[str]) -> dict[str, tuple[str, int]]:
    out: dict[str, tuple[str, int]] = {}
    for k, t, cost in ref.successors(L.task, state_of(L, picture)):
        label = L.task.actions[k].label
        assert label not in out, f"label {label} is ambiguous in this state"
        out[label] = (L.task.renderer(ref.canonical(L.task, t)), cost)
    return out


def pic(*rows: str) -> str:
    return "\n".join(r.rstrip() for r in rows)


ROOM = ["#######",
        "#     #",
        "# @$ .#",
        "#     #",
        "#######"]


# ----------------------------------------------------------------------------- rules
@pytest.mark.parametrize("metric, walk", [("moves", 1), ("pushes", 0)])
def test_walk_and_push_with_their_costs(tmp_path, metric, walk):
    L = loaded(tmp_path, ROOM, f"metric={metric}", "prune=none")
    got = successors(L, ROOM)
    assert got == {
        "u": (pic("#######", "# @   #", "#  $ .#", "#     #", "#######"), walk),
        "d": (pic("#######", "#     #", "#  $ .#", "# @   #", "#######"), walk),
        "l": (pic("#######", "#     #", "#@ $ .#", "#     #", "#######"), walk),
        "R": (pic("#######", "#     #", "#  @$.#", "#     #", "#######"), 1),    # a push costs 1 in both
    }


def test_no_push_into_a_wall_or_another_box(tmp_path):
    rows = ["#######",
            "#   . #",
            "#@$$. #",
            "#     #",
            "#######"]
    L = loaded(tmp_path, rows, "prune=none")
    assert "R" not in successors(L, rows)                       # a box behind the box
    wall = ["#######",
            "#   .$#",
            "#    @#",
            "#    .#",
            "#   $ #",
            "#######"]
    L = loaded(tmp_path, wall, "prune=none")
    got = successors(L, wall)
    assert "U" not in got                                        # a wall behind the box
    assert set(got) == {"l", "d"}
    # and the player never walks into a wall or onto a box without pushing it
    assert "r" not in got and "u" not in got


def test_goal_is_every_box_on_a_goal(tmp_path):
    L = loaded(tmp_path, ROOM)
    assert not ref.is_goal(L.task, state_of(L, ROOM))
    assert ref.is_goal(L.task, state_of(L, ["#######", "#     #", "#   @*#", "#     #", "#######"]))


def test_dead_squares_are_pruned_and_only_those(tmp_path):
    rows = ["#######",
            "#     #",
            "# @$ .#",
            "#     #",
            "#######"]
    # a box on the top or bottom row can never leave it (nothing to push it down from) and no
    # goal lies there: those squares are dead; so are the corners of the middle row's ends
    dead = set(loaded(tmp_path, rows).task.info["dead"])
    assert dead == {(1, c) for c in range(1, 6)} | {(3, c) for c in range(1, 6)} | {(2, 1)}
    up = ["#######", "#     #", "#  $ .#", "#  @  #", "#######"]
    assert "U" in successors(loaded(tmp_path, rows, "prune=none"), up)
    assert "U" not in successors(loaded(tmp_path, rows), up)


def test_freeze_prune_refuses_a_2x2_block_with_a_box_off_goal(tmp_path):
    rows = ["#######",
            "# *   #",
            "#  $  #",
            "#  @ .#",
            "#######"]
    # pushing up puts the box on (1,3), beside the box on the goal (1,2), both against the top
    # wall: a frozen 2x2 block of walls and boxes with a box off its goal
    assert "U" in successors(loaded(tmp_path, rows), rows)
    got = successors(loaded(tmp_path, rows, "prune=freeze"), rows)
    assert "U" not in got and {"l", "r"} <= set(got)
    # the same push with both boxes landing on goals is fine
    ok = ["#######", "# *.  #", "#  $  #", "#  @  #", "#######"]
    assert "U" in successors(loaded(tmp_path, ok, "prune=freeze"), ok)


# an inner wall above (1,3) and below (3,4): two boxes side by side on row 2 between them pin each
# other (each holds the other's only way out along the row) without forming a 2x2 block
PINS = ["#########",
        "#  #    #",
        "#@$ $   #",
        "#   #   #",
        "# ..    #",
        "#########"]


def test_freeze_prune_refuses_boxes_that_pin_each_other_beyond_a_2x2_block(tmp_path):
    # pushing right puts the box on (2,3): a wall above it, the box on (2,4) beside it with a
    # wall below; neither can ever move again, both off their goals.  No 2x2 block is full:
    # (1,4) and (3,3) are floor
    assert "R" in successors(loaded(tmp_path, PINS, "prune=dead"), PINS)
    assert "R" not in successors(loaded(tmp_path, PINS, "prune=freeze"), PINS)
    # the same push with both squares goals is fine: the pinned boxes are home
    home = ["#########", "#  #    #", "#@$.*   #", "#   #   #", "#       #", "#########"]
    assert "R" in successors(loaded(tmp_path, home, "prune=freeze"), home)


def test_freeze_prune_refuses_a_push_home_that_pins_a_neighbour_off_its_goal(tmp_path):
    # the pushed box lands on its goal (2,3), but the box on (2,4) beside it is then pinned off
    # its goal (wall below it, and along the row the pushed box, pinned by the wall above it)
    rows = ["#########", "#  #    #", "#@$.$   #", "#   #   #", "# .     #", "#########"]
    assert "R" in successors(loaded(tmp_path, rows, "prune=dead"), rows)
    assert "R" not in successors(loaded(tmp_path, rows, "prune=freeze"), rows)


@pytest.mark.parametrize("rows", [
    PINS,
    ["########",
     "#   #  #",
     "# $  $ #",
     "##  #  #",
     "#  .. @#",
     "########"],
])
def test_freeze_prune_cuts_only_lost_states(tmp_path, rows):
    """Every push the freeze test refuses, from every reachable state, leads where no plan is left."""
    dead = loaded(tmp_path, rows, "prune=dead").task
    freeze = loaded(tmp_path, rows, "prune=freeze").task
    hstar = cost_to_go(dead)
    refused = 0
    for s in hstar:
        kept = {ref.canonical(freeze, t) for _, t, _ in ref.successors(freeze, list(s))}
        for _, t, _ in ref.successors(dead, list(s)):
            t = ref.canonical(dead, t)
            if t not in kept:
                refused += 1
                assert hstar[t] is None, (s, t)
    assert refused > 0                                      # the test saw the prune at work
    assert reference_optimum(freeze) == hstar[ref.canonical(dead, dead.init)]


def test_pruning_keeps_the_optimum_and_the_heuristic_never_overestimates(tmp_path):
    rows = ["########",
            "#   .  #",
            "# $$ @ #",
            "#  .   #",
            "########"]
    for metric in ("pushes", "moves"):
        plain = loaded(tmp_path, rows, f"metric={metric}", "prune=none")
        hstar = cost_to_go(plain.task)
        assert any(h is None for h in hstar.values())            # there are hopeless states
        for heuristic in ("nearest", "bipartite", "matching"):
            est = loaded(tmp_path, rows, f"metric={metric}", "prune=none", f"heuristic={heuristic}")
            for s, h in hstar.items():
                if h is not None:
                    assert ref.heuristic(est.task, list(s)) <= h, (metric, heuristic, s)
        best = hstar[ref.canonical(plain.task, plain.task.init)]
        assert best is not None and reference_optimum(plain.task) == best
        for prune in ("dead", "freeze"):
            pruned = loaded(tmp_path, rows, f"metric={metric}", f"prune={prune}")
            assert reference_optimum(pruned.task) == best, (metric, prune)


SOKOBAN = api.load_model("sokoban")
DIRS = ((-1, 0), (1, 0), (0, -1), (0, 1))


def board(rows: list[str]):
    return SOKOBAN.Board(SOKOBAN.read_xsb("\n".join(rows) + "\nTitle: t\n", "t").pick("1"))


def lone_box_pushes(b, goal: int) -> dict[tuple[int, int], int]:
    """Fewest pushes from (box on i, player on p) to the box on ``goal``, by Dijkstra backwards
    over the plain (box, player) states of a board with one box: walks cost 0, pushes 1.  An
    independent reference for :meth:`Board.part_distances`, which searches floor parts instead."""
    dist: dict[tuple[int, int], int] = {}
    heap = [(0, goal, p) for p in range(b.n) if p != goal]
    while heap:
        d, y, q = heapq.heappop(heap)
        if (y, q) in dist:
            continue
        dist[y, q] = d
        for dr, dc in DIRS:
            came = b.step(q, dr, dc)              # the player walked from there to q
            if came is not None and came != y and (y, came) not in dist:
                heapq.heappush(heap, (d, y, came))
            x = b.step(y, -dr, -dc)               # the box came from x, pushed from behind x
            behind = b.step(x, -dr, -dc)
            if x == q and behind is not None and (x, behind) not in dist:
                heapq.heappush(heap, (d + 1, x, behind))
    return dist


def pull_distances(b, goal: int) -> list[int | None]:
    """The classic bound: backwards from the goal, a box on y came from x = y - d with the
    player on x - d, wherever the player was before (it may appear on any side)."""
    dist: list[int | None] = [None] * b.n
    dist[goal] = 0
    todo = [goal]
    for y in todo:
        for dr, dc in DIRS:
            x = b.step(y, -dr, -dc)
            if x is not None and b.step(x, -dr, -dc) is not None and dist[x] is None:
                dist[x] = dist[y] + 1
                todo.append(x)
    return dist


def random_boards(seed: int, count: int) -> list[list[str]]:
    """Small walled boards with one or two boxes, player inside (those the parser accepts)."""
    rng = random.Random(seed)
    out: list[list[str]] = []
    while len(out) < count:
        g = [["#"] * 9 for _ in range(7)]
        free = []
        for r in range(1, 6):
            for c in range(1, 8):
                if rng.random() >= 0.3:
                    g[r][c] = " "
                    free.append((r, c))
        nb = rng.choice((1, 2))
        if len(free) < 2 * nb + 1:
            continue
        spots = rng.sample(free, 2 * nb + 1)
        for (r, c), ch in zip(spots, "$" * nb + "." * nb + "@"):
            g[r][c] = ch
        rows = ["".join(x) for x in g]
        try:
            board(rows)
        except Exception:        # a box or goal walled off from the player: not a level
            continue
        out.append(rows)
    return out


# the box must go up through the gap and come back down: 4 pushes (pull distance 2), because
# the player cannot get above it while it stands in the gap
DOORWAY = ["#########",
           "## #   ##",
           "#   ### #",
           "#   . # #",
           "# #$  # #",
           "#@#  #  #",
           "#########"]


@pytest.mark.parametrize("source", ["random", "microban", "xsokoban-2"])
def test_push_distances_equal_a_search_over_box_and_player_squares(source):
    """Per (box square, player square), and the least over player squares."""
    if source == "random":
        boards = [board(rows) for rows in random_boards(11, 40)] + [board(DOORWAY)]
    elif source == "microban":
        data = SOKOBAN.read_xsb(MICROBAN.read_text(), str(MICROBAN))
        boards = [SOKOBAN.Board(data.pick(str(k))) for k in range(1, 31)]
    else:
        path = ROOT / "instances" / "sokoban" / "xsokoban90.xsb"
        boards = [SOKOBAN.Board(SOKOBAN.read_xsb(path.read_text(), str(path)).pick("2"))]
    stronger = 0
    for b in boards:
        for g in b.goals:
            want = lone_box_pushes(b, g)
            by_part = b.part_distances(g)
            for i in range(b.n):
                for p in range(b.n):
                    if p != i:
                        assert by_part.get((i, b.parts[i][p])) == want.get((i, p)), (g, i, p)
            got, pull = b.push_distances(g), pull_distances(b, g)
            assert got == [min((d for (j, _), d in want.items() if j == i), default=None) for i in range(b.n)]
            assert all(x is None or (p is not None and p <= x) for x, p in zip(got, pull))
            stronger += sum(x != p for x, p in zip(got, pull))
    assert stronger > 0          # boards where following the player matters were among them


def test_the_player_aware_heuristic_is_admissible_where_it_is_stronger(tmp_path):
    for metric in ("pushes", "moves"):
        plain = loaded(tmp_path, DOORWAY, f"metric={metric}", "prune=none")
        hstar = cost_to_go(plain.task)
        for heuristic in ("nearest", "bipartite", "matching"):
            est = loaded(tmp_path, DOORWAY, f"metric={metric}", "prune=none", f"heuristic={heuristic}")
            for s, h in hstar.items():
                if h is not None:
                    assert ref.heuristic(est.task, list(s)) <= h, (metric, heuristic, s)
    b = board(DOORWAY)
    box, goal = b.boxes0[0], b.goals[0]
    pushes = loaded(tmp_path, DOORWAY, "metric=pushes", "prune=none")
    h0 = ref.heuristic(pushes.task, pushes.task.init)
    exact = cost_to_go(pushes.task)[ref.canonical(pushes.task, pushes.task.init)]
    assert h0 == b.push_distances(goal)[box] == exact > pull_distances(b, goal)[box]
    # with one box, `nearest` is the distance with the player wherever suits it best; `matching`
    # reads the player's actual part, and is larger in some states (so the bound above saw it)
    nearest = loaded(tmp_path, DOORWAY, "metric=pushes", "prune=none", "heuristic=nearest")
    hstar = cost_to_go(pushes.task)
    gaps = [ref.heuristic(pushes.task, list(s)) - ref.heuristic(nearest.task, list(s))
            for s, h in hstar.items() if h is not None]
    assert min(gaps) == 0 and max(gaps) > 0


def test_boxes_are_interchangeable(tmp_path):
    rows = ["#######",
            "#.$ $.#",
            "#  @  #",
            "#######"]
    L = loaded(tmp_path, rows)
    a = state_of(L, rows)
    swapped = [a[0], a[2], a[1]]
    assert ref.canonical(L.task, a) == ref.canonical(L.task, swapped)


def test_a_box_sealed_on_its_goal_outside_the_player_area_is_left_out(tmp_path):
    # Microban 155 has such boxes: already solved, never movable, so not part of the state
    rows = ["#########",
            "#@$ .#*##",
            "#########"]
    L = loaded(tmp_path, rows)
    assert [v.name for v in L.task.variables] == ["player", "box[0]"]
    assert L.task.info["sealed"] == 1
    r = api.solve(L, "bfs", Limits(), kernel="numpy")
    assert r.status == "optimal" and r.cost == 2


# ----------------------------------------------------------------------------- optima
@pytest.mark.parametrize("level", sorted(TABLE))
def test_bfs_and_astar_agree_with_the_microban_table(level):
    for metric, want in zip(("pushes", "moves"), TABLE[level]):
        L = load("sokoban", str(MICROBAN), f"level={level}", f"metric={metric}")
        for engine in ("bfs", "astar"):
            r = api.solve(L, engine, Limits(time_s=120), kernel="numpy")
            assert r.status == "optimal" and r.stats["verified"], (level, metric, engine, r.message)
            assert r.cost == want, (level, metric, engine)


def test_level_chosen_by_title_is_the_same_as_by_number():
    a = load("sokoban", str(MICROBAN), "level=21")
    b = load("sokoban", str(MICROBAN), "level=Microban 21")
    assert a.task.init == b.task.init and a.task.info["title"] == "Microban 21"


# ----------------------------------------------------------------------------- kernels
def random_states(task, seed: int) -> np.ndarray:
    """Reachable states from random walks plus arbitrary in-domain vectors (boxes may overlap)."""
    walk = sample_states(task, seed, n_walks=8, length=40)
    rng = random.Random(seed)
    n = task.variables[0].hi + 1
    rnd = [[rng.randrange(n) for _ in task.variables] for _ in range(40)]
    return np.array(walk + rnd, dtype=np.int64)


@pytest.mark.parametrize("metric, options",
                         [("pushes", ()), ("moves", ("prune=freeze", "heuristic=matching"))])
def test_numpy_kernel_matches_reference_on_random_states(metric, options):
    L = load("sokoban", str(MICROBAN), "level=5", f"metric={metric}", *options)
    task = L.task
    S = random_states(task, 3)
    k = L.kernel("numpy")
    assert_kernel_matches_reference(k, task, S)


@pytest.mark.slow
def test_compiled_kernel_matches_reference_on_random_states():
    # compiling the per-level kernel takes seconds to a minute on a busy machine: slow-marked
    L = load("sokoban", str(MICROBAN), "level=5", "metric=moves")
    task = L.task
    S = random_states(task, 5)
    kb = L.kernel("numba")
    assert kb.backend == "numba"
    assert_kernel_matches_reference(kb, task, S)
    res = api.solve(L, "astar", Limits(), kernel="numba")
    assert res.status == "optimal" and res.cost == TABLE[5][1]


# ----------------------------------------------------------------------------- malformed XSB
def run_cli(argv: list[str], capsys) -> tuple[int, str]:
    code, out, err = run_cli_raw(argv, capsys)
    assert out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return code, lines[0]


BAD = {
    # name: (rows, 1-based row of the offending line within the board, message fragment)
    "no player": (["#####", "#$ .#", "#####"], 1, "no player"),
    "two players": (["######", "#@$.@#", "######"], 2, "2 players"),
    "boxes != goals": (["######", "#@$$.#", "######"], 1, "2 boxes but 1 goals"),
    "unknown character": (["######", "#@$x.#", "######"], 2, "unknown character 'x'"),
    "walls not closed": (["######", " @$ .#", "######"], 2, "not closed"),
    "box outside the player's area": (["########", "#@$..#$#", "########"], 2, "outside the player's area"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_malformed_xsb_is_one_line_error_with_file_and_line(tmp_path, capsys, case):
    rows, row, fragment = BAD[case]
    path = level_file(tmp_path, rows)                  # line 1 is a comment: the board starts on line 2
    code, line = run_cli(["solve", "sokoban", path], capsys)
    assert code == 30
    m = re.search(re.escape(str(path)) + r":(\d+): (.*)", line)
    assert m, line
    assert int(m.group(1)) == 1 + row
    assert fragment in m.group(2)


def test_unknown_level_is_an_instance_error(capsys):
    code, line = run_cli(["solve", "sokoban", MICROBAN, "-O", "level=156"], capsys)
    assert code == 30 and "no level '156'" in line
