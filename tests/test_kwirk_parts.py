"""models/kwirk.py in parts: the static geometry, the push and turn rules, the state predicates.

The model's ``build`` was one 300-line function; it is now assembled from parts that these tests
check on tiny hand-made levels.  The split changed nothing: the grounded task (variables, actions,
guards, effects, costs, goal, heuristic, symmetry, walks, display and picture) is compared with
the one the pre-split ``build`` grounds, kept frozen as tests/models/kwirk_monolith.py.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest
from helpers import ROOT

from puzzleplan import api
from puzzleplan.lang import Model
from puzzleplan.lang.expr import Expr, to_text
from puzzleplan.verify import reference as ref

kw = api.load_model("kwirk")
MONOLITH = str(ROOT / "tests" / "models" / "kwirk_monolith.py")
NEW = str(ROOT / "models" / "kwirk.py")
UP = sorted((ROOT / "instances" / "kwirk" / "going-up").glob("*.txt"))
OUT = sorted((ROOT / "instances" / "kwirk" / "heading-out").glob("*.txt"))
U, R, D, L = range(4)


def level(*rows: str) -> object:
    """A kwirk Level from map rows (the size header is derived)."""
    text = f"size: {len(rows[0])} {len(rows)}\nmap:\n" + "\n".join(rows) + "\n"
    return kw.read_level(text, "tiny.txt")


def cell(lv: object, x: int, y: int) -> int:
    return y * lv.W + x  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------- same task as before the split
def fingerprint(model: str, instance: str, options: list[str]) -> str:
    """A hash of everything the grounded task carries, and of the display of a few states."""
    t = api.load_task(model, instance, options).task
    rng = random.Random(1)
    states = [t.init] + [[rng.randint(v.lo, v.hi) for v in t.variables] for _ in range(3)]
    info = sorted((k, repr(v)) for k, v in t.info.items())          # the look: its layers' expressions
    parts = [t.to_json(), repr(t.walk_actions), repr(t.walk_reversible), repr(t.aux_slack), repr(info),
             repr({k: [to_text(e, t.names) for e in v] for k, v in t.views.items()}),
             *[t.renderer(s) for s in states]]  # type: ignore[misc]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def _id(p: Path, opts: list[str]) -> str:
    return f"{p.parent.name}/{p.stem}:{','.join(o.split('=')[1] for o in opts) or 'default'}"


# the cheap floors (< 1 s to ground) with every metric and both prune settings between them,
# and heading-out rooms with one and with several characters
FAST = ([(UP[k], ["metric=steps"]) for k in (0, 1, 2, 3, 4, 6, 10, 20)]
        + [(UP[0], ["metric=frames", "prune=none"]), (UP[5], ["metric=frames-diagonal"]),
           (UP[14], ["metric=steps-switches", "prune=none"]), (UP[9], ["metric=frames"])]
        + [(OUT[k], [m]) for k, m in ((49, "metric=steps-switches"), (69, "metric=frames"),
                                      (31, "metric=frames-diagonal"), (61, "metric=steps"))])
SLOW = ([(p, ["metric=steps"]) for p in UP] + [(p, ["metric=frames", "prune=none"]) for p in UP]
        + [(p, ["metric=steps-switches"]) for p in OUT[::10]])


@pytest.mark.parametrize(("path", "opts"), FAST, ids=[_id(p, o) for p, o in FAST])
def test_split_build_grounds_the_same_task_as_the_monolith(path: Path, opts: list[str]):
    assert fingerprint(NEW, str(path), opts) == fingerprint(MONOLITH, str(path), opts)


@pytest.mark.slow
@pytest.mark.parametrize(("path", "opts"), SLOW, ids=[_id(p, o) for p, o in SLOW])
def test_split_build_grounds_the_same_task_on_every_floor(path: Path, opts: list[str]):
    assert fingerprint(NEW, str(path), opts) == fingerprint(MONOLITH, str(path), opts)


def test_the_comparison_sees_a_changed_rule(monkeypatch):
    """Guards the oracle: a turn rule without the carry grounds another task on floor 1-1."""
    floor = str(UP[0])
    before = fingerprint(NEW, floor, [])
    real = kw.turn_rule

    def no_carry(*args: object) -> object:
        t = real(*args)
        return None if t is not None and t.carried else t

    monkeypatch.setattr(kw, "turn_rule", no_carry)
    assert fingerprint(NEW, floor, []) != before
    assert fingerprint(NEW, floor, ["metric=frames"]) != fingerprint(NEW, floor, [])


# ----------------------------------------------------------------------------- geometry
BOARD = ("#######",
         "#..Ob.#",
         "#.aa..#",
         "#.....#",
         "#1...E#",
         "#######")


def test_board_steps_stop_at_the_edge_and_open_cells_exclude_walls_pivots_and_the_exit():
    piv = kw.Board(level(*TURN))
    assert not piv.open[cell(level(*TURN), 3, 2)] and not piv.fits(cell(level(*TURN), 2, 2), 2, 1)
    lv = level(*BOARD)
    b = kw.Board(lv)
    assert b.step(cell(lv, 1, 1), U) == cell(lv, 1, 0) and b.step(0, L) is None and b.step(0, U) is None
    assert b.delta(D) == 7 and b.delta(L) == -1
    assert b.rect(cell(lv, 2, 2), 2, 1) == [cell(lv, 2, 2), cell(lv, 3, 2)]
    assert not b.open[cell(lv, 5, 4)] and not b.open[0]
    assert b.walkable[cell(lv, 5, 4)] and b.open[cell(lv, 3, 1)]          # the exit; a hole is open
    assert b.fits(cell(lv, 2, 3), 2, 1) and not b.fits(cell(lv, 4, 4), 2, 1)   # onto the exit
    assert not b.fits(cell(lv, 5, 1), 2, 1)                                    # into the wall


def test_exit_distance_counts_steps_and_a_carry_across_a_pivot_counts_one():
    lv = level("#######",
               "#..^..#",
               "#..*..#",
               "#1...E#",
               "#######")
    d = kw.Board(lv).exit_distance()
    assert d[cell(lv, 5, 3)] == 0 and d[cell(lv, 4, 3)] == 1 and d[cell(lv, 3, 3)] == 2
    # (2,3) -> (4,3) in one step: the cell between is below the pivot
    assert d[cell(lv, 2, 3)] == 2 and d[cell(lv, 1, 3)] == 3
    assert d[cell(lv, 3, 2)] == 4 * 35                   # the pivot: never reached


def test_needed_cells_are_the_cuts_of_the_walkable_grid():
    lv = level("########",
               "#1..#..#",
               "#...#..#",
               "#.....E#",
               "########")
    b = kw.Board(lv)
    need = b.needed_cells(cell(lv, 1, 1))
    gate = cell(lv, 4, 3)
    # the gap in the wall and the cells either side of it: nothing goes round them
    assert set(need) == {gate - 1, gate, gate + 1}
    assert cell(lv, 1, 1) in need[gate] and cell(lv, 5, 3) not in need[gate]


def test_block_moves_ignore_objects_but_need_room_behind_the_block():
    lv = level(*BOARD)
    b = kw.Board(lv)
    moves = b.block_moves(1, 1)
    assert moves[cell(lv, 1, 1)] == []                   # in a corner: no room behind it either way
    assert sorted(moves[cell(lv, 2, 1)]) == [cell(lv, 1, 1), cell(lv, 3, 1)]   # along the wall only
    two = b.block_moves(2, 1)
    assert cell(lv, 4, 4) not in two and cell(lv, 3, 2) in two[cell(lv, 2, 2)]


# ----------------------------------------------------------------------------- push rules (static part)
def test_push_rule_lists_the_lead_edge_and_every_place_to_push_from():
    lv = level(*BOARD)
    b = kw.Board(lv)
    valid = {p for p in range(b.n) if b.fits(p, 2, 1)}
    a = cell(lv, 2, 2)
    up = kw.push_rule(b, a, U, 2, 1, valid)
    assert up.to == cell(lv, 2, 1) and set(up.lead) == {cell(lv, 2, 1), cell(lv, 3, 1)}
    assert set(up.pushers) == {(cell(lv, 2, 3), a), (cell(lv, 3, 3), a + 1)}   # a wide block: two
    assert up.fills == ()                                  # only one of its new cells is a hole
    right = kw.push_rule(b, a, R, 2, 1, valid)
    assert right.lead == (cell(lv, 4, 2),) and right.pushers == ((cell(lv, 1, 2), a),)
    assert kw.push_rule(b, cell(lv, 1, 2), L, 2, 1, valid) is None          # into the wall


def test_push_rule_needs_an_open_cell_behind_and_marks_a_drop_into_holes():
    lv = level(*BOARD)
    b = kw.Board(lv)
    valid = {p for p in range(b.n) if b.fits(p, 1, 1)}
    blk = cell(lv, 4, 1)
    assert kw.push_rule(b, blk, U, 1, 1, valid) is None                   # a wall ahead
    assert kw.push_rule(b, cell(lv, 5, 3), L, 1, 1, valid) is None         # a wall behind: nobody pushes
    left = kw.push_rule(b, blk, L, 1, 1, valid)
    assert left.to == cell(lv, 3, 1) and left.fills == (cell(lv, 3, 1),)
    assert left.pushers == ((cell(lv, 5, 1), blk),)


# ----------------------------------------------------------------------------- turnstile rules (static part)
def test_turnstile_periods_and_rotations():
    assert kw.turnstile_period((U,)) == 4 and kw.turnstile_period((U, R)) == 4
    assert kw.turnstile_period((U, D)) == 2 and kw.turnstile_period((L, R)) == 2
    assert kw.turnstile_period((U, R, D, L)) == 1 and kw.turnstile_period((U, R, D)) == 4
    assert kw.arms_after((U, L), 1) == [U, R] and kw.arms_after((U,), 3) == [L]


def test_arm_places_give_each_reachable_neighbour_its_rotations():
    lv = level("#####",
               "#.^.#",
               "#.*.#",
               "#.v1#",
               "#E..#",
               "#####")
    b = kw.Board(lv)
    pivot = cell(lv, 2, 2)
    assert lv.turnstiles == [(pivot, (U, D))]
    places = kw.arm_places(b, pivot, (U, D), 2)
    assert places == [(U, cell(lv, 2, 1), [0]), (R, cell(lv, 3, 2), [1]),
                      (D, cell(lv, 2, 3), [0]), (L, cell(lv, 1, 2), [1])]
    assert [c for _, c, rs in kw.arm_places(b, pivot, (U, R, D, L), 1) if rs == [0]] == \
        [cell(lv, 2, 1), cell(lv, 3, 2), cell(lv, 2, 3), cell(lv, 1, 2)]


TURN = ("#######",
        "#..^..#",
        "#.<*..#",
        "#.....#",
        "#1...E#",
        "#######")


def test_turn_rule_sweeps_corners_and_destinations_and_carries():
    lv = level(*TURN)
    b = kw.Board(lv)
    pv = cell(lv, 3, 2)
    one = kw.turn_rule(b, pv, [U], U, R)              # a single arm up, pushed right: clockwise
    assert (one.pusher, one.arm, one.sense, one.target, one.carried) == \
        (cell(lv, 2, 1), cell(lv, 3, 1), 1, cell(lv, 3, 1), False)
    assert one.sweep == ((cell(lv, 4, 1), False), (cell(lv, 4, 2), True))
    ccw = kw.turn_rule(b, pv, [U], U, L)
    assert ccw.sense == -1 and ccw.pusher == cell(lv, 4, 1)
    # arms up and left, the up arm pushed right: the left arm swings up into the pusher's way,
    # so the character is carried one cell beyond; the pusher's own cell is no swept corner
    both = kw.turn_rule(b, pv, [U, L], U, R)
    assert both.carried and both.target == cell(lv, 4, 1)
    assert both.sweep == ((cell(lv, 4, 1), False), (cell(lv, 4, 2), True), (cell(lv, 3, 1), True))
    assert kw.turn_rule(b, pv, [U], U, U) is None and kw.turn_rule(b, pv, [U], U, D) is None  # end-on
    assert kw.turn_rule(b, pv, [U], R, U) is None                                            # no arm


def test_turn_rule_refuses_a_wall_in_the_sweep_or_behind_the_pusher():
    lv = level("######",
               "#.#..#",
               "#*>..#",
               "#1..E#",
               "######")
    b = kw.Board(lv)
    pv = cell(lv, 1, 2)
    assert kw.turn_rule(b, pv, [R], R, D) is None        # the pusher would stand in the wall (2,1)
    assert kw.turn_rule(b, pv, [R], R, U) is None        # the arm would sweep through the wall (2,1)
    lv2 = level("######",
                "#....#",
                "#*>..#",
                "#1..E#",
                "######")
    up = kw.turn_rule(kw.Board(lv2), pv, [R], R, U)
    assert up.sense == -1 and up.pusher == cell(lv2, 2, 3)
    assert up.sweep == ((cell(lv2, 2, 1), False), (cell(lv2, 1, 1), True))


# ----------------------------------------------------------------------------- state predicates and guards
def _rules(lv: object, metric: str = "steps") -> tuple[object, object]:
    s = kw.State(Model("t"), lv, kw.Board(lv), track_switch=metric not in ("steps", "steps-switches"))
    return s, kw.Rules(s, metric, None)


def holds(e: Expr, state: list[int]) -> bool:
    return bool(ref.evaluate(e, state))


def test_state_declares_its_variables_in_the_display_order_and_predicates_read_them():
    lv = level(*BOARD)
    s, _ = _rules(lv)
    init = [cell(lv, 1, 4), cell(lv, 4, 1), cell(lv, 2, 2), 1]          # pos, block b, block a, hole
    assert [lv.blocks[k][0] for k in range(2)] == [cell(lv, 4, 1), cell(lv, 2, 2)]
    assert holds(s.occupied(cell(lv, 3, 2)), init) and not holds(s.occupied(cell(lv, 4, 2)), init)
    assert holds(s.char_here(cell(lv, 1, 4)), init) and holds(s.open_hole(cell(lv, 3, 1)), init)
    assert not holds(s.open_hole(cell(lv, 3, 1)), init[:3] + [0])
    # blocks are numbered by top-left cell, and the display letters them by number
    assert kw.show(s, init).splitlines()[1:3] == ["#..Oa.#", "#.bb..#"]


def test_push_guard_needs_the_pusher_in_place_a_free_lead_and_no_open_hole_underfoot():
    lv = level(*BOARD)
    s, rules = _rules(lv)
    a = cell(lv, 2, 2)
    act = rules.push(1, a, R)                      # block 1 is the file's 'a' (numbered by top-left cell)
    at_left = [cell(lv, 1, 2), cell(lv, 4, 1), a, 1]
    assert holds(act.guard, at_left)
    assert not holds(act.guard, [cell(lv, 1, 3), *at_left[1:]])                     # not behind it
    assert not holds(act.guard, [cell(lv, 1, 2), cell(lv, 4, 2), a, 1])            # 'b' in the lead
    up = rules.push(1, a, U)
    assert holds(up.guard, [cell(lv, 3, 3), cell(lv, 5, 1), a, 1])                 # lead onto the hole: fine
    assert not holds(up.guard, [cell(lv, 3, 3), cell(lv, 3, 1), a, 1])             # 'b' on the hole cell


def test_a_push_onto_holes_fills_them_and_the_block_is_gone(tmp_path):
    lv_text = "size: 7 6\nmap:\n" + "\n".join(BOARD) + "\n"
    path = tmp_path / "fill.txt"
    path.write_text(lv_text, encoding="utf-8")
    task = api.load_task("kwirk", str(path), ["prune=none", "metric=frames"]).task
    lv = level(*BOARD)
    state = [cell(lv, 5, 1), cell(lv, 4, 1), cell(lv, 2, 2), 1, 0]       # ... lastsw
    pushes = [a for a in task.actions if a.name == "push0" and a.label == "L" and ref.applicable(a, state)]
    assert len(pushes) == 1
    after = ref.apply(task, pushes[0], state)
    assert after[:4] == [cell(lv, 4, 1), kw.GONE, cell(lv, 2, 2), 0] and pushes[0].cost == 10 + 18


def test_turn_guard_wants_the_sweep_free_but_a_destination_may_hold_an_own_arm():
    lv = level(*TURN)
    s, rules = _rules(lv)
    assert s.periods == [4]
    act = rules.turn(0, 0, U, R)                   # arms up and left, r = 0: carried to (4,1)
    here = [cell(lv, 2, 1), 0]
    assert holds(act.guard, here)
    assert not holds(act.guard, [cell(lv, 2, 1), 1])                       # not that rotation
    assert not holds(act.guard, [cell(lv, 1, 1), 0])                       # not the pusher's cell
    assert act.effects[s.pos[0]] == cell(lv, 4, 1) and act.effects[s.rot[0]] == 1
    assert rules.turn(0, 0, U, D) is None


def test_costs_follow_the_metric():
    lv = level(*TURN)
    for metric, walk, turn in (("steps", 1, 1), ("steps-switches", 1000, 1000), ("frames", 9, 12)):
        _, rules = _rules(lv, metric)
        assert rules.cost(1, 9) == walk and rules.cost(1, 12) == turn
    _, lex = _rules(lv, "steps-switches")
    assert lex.cost(0, 30) == 1                       # a switch: the tie-breaker unit
