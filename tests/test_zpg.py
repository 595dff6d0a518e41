"""Zen Puzzle Garden: the rules one mechanic at a time, the kernels against the reference, the
public facts, the board suite, and malformed boards.

Rule tests draw a state as a picture (``.`` unraked, ``~`` raked, ``M`` the monk on a square he
stopped on, ``S`` ornament, ``#`` rock, ``y o r`` uncollected leaves) and compare the *complete*
successor set of the reference semantics -- ``{plan label: picture}`` -- with the one the rules
in docs/models/zpg.md give.  They use ``prune=none`` so that dead states keep their plain moves.

Public facts (shared/instances/zpg/README.md, computed independently of this project):
PuzzleScript L1 / L4 / L5 need 4 / 5 / 7 excursions, the three Waikato gardens 3 each,
L2 and L3 cannot be solved under the sliding rules.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import load
from helpers import (
    assert_kernel_matches_reference,
    cost_to_go,
    reference_optimum,
    run_cli,
    sample_states,
)

from puzzleplan import api
from puzzleplan.solvers import Limits
from puzzleplan.verify import reference as ref

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "instances" / "zpg"
PUBLIC_FACTS = {
    "waikato-3x3-a": 3, "waikato-3x3-b": 3, "waikato-5x3": 3,
    "puzzlescript-L1": 4, "puzzlescript-L4": 5, "puzzlescript-L5": 7,
    "puzzlescript-L2": None, "puzzlescript-L3": None,
}


def board_file(tmp: Path, rows: list[str], name: str = "b") -> Path:
    p = tmp / f"{name}.txt"
    p.write_text(f"# name: {name}\nsize {len(rows)} {len(rows[0])}\ngarden\n" + "\n".join(rows) + "\n")
    return p


def loaded(tmp: Path, rows: list[str], *options: str) -> api.Loaded:
    return api.load_task("zpg", str(board_file(tmp, rows)), list(options))


def state_of(L: api.Loaded, picture: list[str], gate: int = 0) -> list[int]:
    """A state vector from a picture (see the module docstring)."""
    task = L.task
    C = len(picture[0])
    s = list(task.init)
    names = {v.name: i for i, v in enumerate(task.variables)}
    pos = -1
    for r, row in enumerate(picture):
        for c, ch in enumerate(row):
            if ch == "#":
                continue
            i = names[f"sand[{r},{c}]"]
            s[i] = {"~": 1, "M": 1, "S": 2}.get(ch, 0)
            if ch == "M":
                pos = r * C + c
    s[names["pos"]] = pos
    s[names["gate"]] = gate
    return s


def picture_of(L: api.Loaded, s: list[int]) -> str:
    return L.task.renderer(s)


def successor_pictures(L: api.Loaded, picture: list[str], gate: int = 0) -> dict[str, str]:
    s = state_of(L, picture, gate)
    out: dict[str, str] = {}
    for k, t, cost in ref.successors(L.task, s):
        label = L.task.actions[k].label
        assert label not in out, f"label {label} is ambiguous in this state"
        assert cost == (1 if s[-2] == -1 else 0)          # entering costs 1, everything else 0
        out[label] = picture_of(L, t)
    return out


OUT = "(monk on the perimeter)"


def pic(*rows: str, out: bool = False) -> str:
    return "\n".join(rows) + ("\n" + OUT if out else "")


# ----------------------------------------------------------------------------- rule tests
def test_straight_slide_crosses_the_garden_and_steps_out(tmp_path):
    L = loaded(tmp_path, ["....", "...."], "prune=none")
    succ = successor_pictures(L, ["....", "...."])
    assert len(succ) == 12                                   # 2R + 2C entry points, all open
    # an entry slides straight to the far perimeter: one whole row or column, nothing else
    assert succ["right0L"] == pic("~~~~", "....", out=True)
    assert succ["left1R"] == pic("....", "~~~~", out=True)
    assert succ["top2D"] == pic("..~.", "..~.", out=True)
    assert succ["bottom0U"] == pic("~...", "~...", out=True)


def test_slide_stops_in_front_of_raked_sand_rock_and_ornament(tmp_path):
    L = loaded(tmp_path, [".....", "...#.", "....S"], "prune=none")
    succ = successor_pictures(L, [".....", "..~#.", "....S"])
    assert succ["left0R"] == pic("~~~~~", "..~#.", "....S", out=True)
    assert succ["left1R"] == pic(".....", "~M~#.", "....S")          # raked square ahead: stop
    assert succ["right1L"] == pic(".....", "..~#M", "....S")         # rock ahead: stop at once
    assert succ["left2R"] == pic(".....", "..~#.", "~~~MS")          # ornament ahead ...
    assert "left2R+1" not in succ                                    # ... at the edge: no push
    assert succ["top4D"] == pic("....~", "..~#M", "....S")         # ornament ahead ...
    assert "top4D+1" not in succ                                     # ... never onto the perimeter
    assert "right2L" not in succ                                     # the entry square holds an ornament


def test_turn_choices_at_a_stop_are_the_two_sides(tmp_path):
    L = loaded(tmp_path, ["...", "...", "..."], "prune=none")
    # he came from the left along the middle row and stopped before a raked square
    succ = successor_pictures(L, ["...", "~M~", "..."])
    assert succ == {"U": pic(".~.", "~~~", "...", out=True), "D": pic("...", "~~~", ".~.", out=True)}


def test_stuck_monk_has_no_moves(tmp_path):
    L = loaded(tmp_path, ["...", "...", "..."], "prune=none")
    assert successor_pictures(L, ["~~~", "~M~", "~~~"]) == {}
    # a corner square left over is fine (in from one side, out of the other) ...
    assert set(successor_pictures(L, ["~~~", "M~~", "~~."])) == {"L"}
    Lp = loaded(tmp_path, ["...", "...", "..."])
    assert ref.heuristic(Lp.task, state_of(Lp, ["~~~", "~~~", "~~."])) == 1
    # ... a flat-edge square is not (in and straight back out is the forbidden step back): the
    # default prune removes every move out of such a state, and the heuristic calls it dead
    assert set(successor_pictures(L, ["~.~", "M~~", "~~~"])) == {"L"}
    s = state_of(Lp, ["~.~", "M~~", "~~~"])
    assert ref.successors(Lp.task, s) == []
    assert ref.heuristic(Lp.task, s) > 9


def test_perimeter_exit_from_a_stop_on_the_border(tmp_path):
    L = loaded(tmp_path, ["...", "...", "..."], "prune=none")
    # stopped on the border square (0,1), raked squares left and right of him
    succ = successor_pictures(L, ["~M~", "...", "..."])
    assert succ == {"U": pic("~~~", "...", "...", out=True), "D": pic("~~~", ".~.", ".~.", out=True)}


def test_step_back_through_the_gate_is_forbidden(tmp_path):
    L = loaded(tmp_path, ["...", ".#.", "..."], "prune=none")
    after = successor_pictures(L, ["...", ".#.", "..."])["top1D"]
    assert after == pic(".M.", ".#.", "...")                 # rock ahead: stopped on the entry square
    s = state_of(L, [".M.", ".#.", "..."], gate=1)
    assert [L.task.actions[k].label for k, _, _ in ref.successors(L.task, s)] == ["L", "R"]
    # without the gate he could have stepped straight back out
    s0 = state_of(L, [".M.", ".#.", "..."], gate=0)
    assert sorted(L.task.actions[k].label for k, _, _ in ref.successors(L.task, s0)) == ["L", "R", "U"]


def test_gate_at_a_corner_same_versus_any(tmp_path):
    rows = ["..", "#."]
    same = loaded(tmp_path, rows, "prune=none")
    assert successor_pictures(same, rows)["top0D"] == pic("M.", "#.")
    assert set(successor_pictures(same, ["M.", "#."], gate=1)) == {"L", "R"}   # out west is fine
    anyside = loaded(tmp_path, rows, "prune=none", "stepback=any")
    assert set(successor_pictures(anyside, ["M.", "#."], gate=1)) == {"R"}


def test_ornament_push_counts_are_limited_by_sand_rocks_and_the_edge(tmp_path):
    L = loaded(tmp_path, [".....", "..S..", "....."], "prune=none")
    succ = successor_pictures(L, [".....", "..S..", "....."])
    assert succ["left1R"] == pic(".....", "~MS..", ".....")
    assert succ["left1R+1"] == pic(".....", "~~MS.", ".....")
    assert succ["left1R+2"] == pic(".....", "~~~MS", ".....")
    assert "left1R+3" not in succ                                     # never onto the perimeter
    # raked sand beyond stops the ornament too
    succ = successor_pictures(L, [".....", "..S.~", "....."])
    assert "left1R+1" in succ and "left1R+2" not in succ
    # rocks too
    R = loaded(tmp_path, [".....", "..S.#", "....."], "prune=none")
    succ = successor_pictures(R, [".....", "..S.#", "....."])
    assert "left1R+1" in succ and "left1R+2" not in succ


def test_no_turning_into_an_adjacent_ornament(tmp_path):
    L = loaded(tmp_path, ["....", ".S..", "....", "...."], "prune=none")
    # he stands below the ornament, came up column 1
    succ = successor_pictures(L, ["....", ".S..", ".M..", ".~.."])
    # forward is the ornament (no turning into it without a slide), back is raked
    assert succ == {"L": pic("....", ".S..", "~~..", ".~..", out=True),
                    "R": pic("....", ".S..", ".~~~", ".~..", out=True)}


def test_leaves_must_be_collected_yellow_orange_red(tmp_path):
    L = loaded(tmp_path, ["o.y", "..."], "prune=none")
    succ = successor_pictures(L, ["o.y", "..."])
    assert "left0R" not in succ                    # the orange leaf is not collectable yet
    assert "top0D" not in succ
    # from the right: yellow first, then the orange one becomes collectable during the same slide
    assert succ["right0L"] == pic("~~~", "...", out=True)
    # a red leaf waits for the orange one even when every yellow leaf is gone
    R = loaded(tmp_path, ["r.o", "..."], "prune=none")
    succ = successor_pictures(R, ["r.o", "..."])
    assert succ["right0L"] == pic("~~~", "...", out=True)
    assert "left0R" not in succ
    succ = successor_pictures(R, ["r.~", "..."])       # the orange leaf is gone
    assert succ["left0R"] == pic("~M~", "...")


def test_a_slide_from_a_stop_may_push(tmp_path):
    L = loaded(tmp_path, ["....", "..S.", "....", "...."], "prune=none")
    succ = successor_pictures(L, ["~...", "M.S.", "....", "...."])
    assert succ == {
        "R": pic("~...", "~MS.", "....", "...."),
        "R+1": pic("~...", "~~MS", "....", "...."),
        "D": pic("~...", "~.S.", "~...", "~...", out=True),
        "L": pic("~...", "~.S.", "....", "....", out=True),
    }


def test_goal_readings_final_versus_initial(tmp_path):
    # the ornament blocks the only way to finish unless it is pushed onto a square that then stays
    # unraked: solvable under 'final' (the game), lost under 'initial' (the literal wording)
    rows = [".S.#", "....", "....", "..#."]
    final = loaded(tmp_path, rows)
    initial = loaded(tmp_path, rows, "goal=initial")
    assert reference_optimum(final.task) is not None
    assert reference_optimum(initial.task) is None


# ----------------------------------------------------------------------------- kernels vs reference
KERNEL_BOARDS = {
    "rocks": ["#....", "...#.", ".....", "..#.."],
    "ornaments-leaves": ["y.S.", ".#..", "..So", "r..."],
    "small-all": ["yS.", ".#.", "r.o"],     # every mechanic on 3x3: cheap to compile
}


def random_states(task, seed: int) -> np.ndarray:
    walk = sample_states(task, seed, n_walks=8, length=25)
    rng = np.random.default_rng(seed)
    lo = np.array([v.lo for v in task.variables])
    hi = np.array([v.hi for v in task.variables])
    rnd = rng.integers(lo, hi + 1, size=(80, task.n_vars))
    return np.concatenate([np.array(walk, dtype=np.int64), rnd])


@pytest.mark.parametrize("board", list(KERNEL_BOARDS))
@pytest.mark.parametrize("prune", ["dead", "none"])
def test_numpy_kernel_matches_reference_on_random_states(tmp_path, board, prune):
    L = loaded(tmp_path, KERNEL_BOARDS[board], f"prune={prune}")
    task = L.task
    S = random_states(task, 5)
    k = L.kernel("numpy")
    assert_kernel_matches_reference(k, task, S)


def test_compiled_kernel_matches_reference_on_random_states(tmp_path):
    # one compiled board with every mechanic (rocks, an ornament, leaves): the generated kernel is
    # per board, and compiling it is the slow part (seconds here; cached on disk afterwards)
    path = board_file(tmp_path, KERNEL_BOARDS["small-all"], "kernel")
    L = load("zpg", str(path))
    task = L.task
    S = random_states(task, 7)
    kb = L.kernel("numba")
    assert kb.backend == "numba"
    assert_kernel_matches_reference(kb, task, S)
    assert np.array_equal(kb.unpack(kb.pack(S)), S)
    res = api.solve(L, "bfs", Limits(), kernel="numba")
    assert res.status == "optimal" and res.stats["verified"]
    assert res.cost == reference_optimum(task)


# ----------------------------------------------------------------------------- heuristic and prune
@pytest.mark.parametrize("rows", [["#...", "...#", "...."], ["y.S.", ".#..", "..So"],
                                  ["yS..", "..#.", "o..r"], ["....", ".#..", "...."]])
def test_heuristic_never_overestimates_and_the_prune_cuts_only_hopeless_states(tmp_path, rows):
    plain = loaded(tmp_path, rows, "prune=none")
    task = plain.task
    hstar = cost_to_go(task)
    assert any(v is None for v in hstar.values()) and any(v for v in hstar.values())
    pruned = loaded(tmp_path, rows)                  # the same variables, the dead-state test in guards
    cut = 0
    for s, h in hstar.items():
        est = ref.heuristic(task, list(s))
        if h is not None:
            assert est <= h, (s, est, h)
        if not ref.successors(pruned.task, list(s)) and ref.successors(task, list(s)):
            assert h is None, s
            cut += 1
    assert cut > 0, "the prune never fired: the test proved nothing"


# ----------------------------------------------------------------------------- facts and suite
PUBLIC_DIR = SUITE if (SUITE / "puzzlescript-L1.txt").exists() else Path("/work/shared/instances/zpg")


# astar proving L2 / L3 unsolvable walks every reachable state through Python-level buckets
# (~20 s each): that pair runs in the slow sweep; bfs proves them in the default run
ENGINE_FACTS = [
    pytest.param(name, engine, id=f"{name}-{engine}",
                 marks=[pytest.mark.slow] if (engine, PUBLIC_FACTS[name]) == ("astar", None) else [])
    for name in PUBLIC_FACTS for engine in ("bfs", "astar")
]


@pytest.mark.parametrize("name, engine", ENGINE_FACTS)
def test_public_facts_bfs_and_astar(name, engine):
    L = load("zpg", str(PUBLIC_DIR / f"{name}.txt"))
    want = PUBLIC_FACTS[name]
    res = api.solve(L, engine, Limits(), kernel="numpy")
    if want is None:
        assert res.status == "unsolvable", (name, engine)
    else:
        assert res.status == "optimal" and res.cost == want, (name, engine, res.cost)
        assert res.stats["verified"]


def test_public_witness_replays_label_by_label():
    # the L1 witness of the source file is a plan in this model's own labels: 4 excursions
    L = load("zpg", str(PUBLIC_DIR / "puzzlescript-L1.txt"))
    task = L.task
    s = list(task.init)
    cost = 0
    for tok in "top0D | right0L D | bottom5U L D R D | bottom2U R D".replace("|", " ").split():
        acts = [(t, c) for k, t, c in ref.successors(task, s) if task.actions[k].label == tok]
        assert len(acts) == 1, tok
        s, c = acts[0]
        cost += c
    assert ref.is_goal(task, s) and cost == 4


def suite_boards() -> list[tuple[Path, int | None]]:
    out = []
    for p in sorted(SUITE.glob("*.txt")):
        m = re.search(r"^# optimum: (\S+)", p.read_text(), re.M)
        if m:
            out.append((p, None if m.group(1) == "unsolvable" else int(m.group(1))))
    return out


def test_suite_has_the_boards_the_issue_asks_for():
    boards = suite_boards()
    small = [(p, v) for p, v in boards if v is not None and 3 <= v <= 6]
    assert len(small) >= 23
    assert len([v for _, v in boards if v is not None and v >= 7]) >= 6
    assert any(v is None for _, v in boards)
    grids = [p.read_text().split("garden\n", 1)[1] for p, _ in small]
    leaves = set("yor")
    assert any("S" in g and not leaves & set(g) for g in grids)
    assert any("S" not in g and leaves & set(g) for g in grids)
    assert any("S" in g and leaves & set(g) for g in grids)
    assert any("S" not in g and not leaves & set(g) for g in grids)


def _sample() -> list:
    boards = [b for b in suite_boards() if b[1] is None or b[1] <= 6]
    random.Random(5).shuffle(boards)
    return [pytest.param(p, v, id=p.stem) for p, v in boards[:6]]


def _check_board(path: Path, want: int | None) -> None:
    L = load("zpg", str(path))
    for engine in ("bfs", "astar"):
        res = api.solve(L, engine, Limits(), kernel="numpy")
        if want is None:
            assert res.status == "unsolvable", engine
        else:
            assert res.status == "optimal" and res.cost == want and res.stats["verified"], engine


@pytest.mark.parametrize("path, want", _sample())
def test_suite_sample_bfs_and_astar_agree(path, want):
    _check_board(path, want)


@pytest.mark.slow
@pytest.mark.parametrize("path, want", [pytest.param(p, v, id=p.stem) for p, v in suite_boards()])
def test_suite_all_bfs_and_astar_agree(path, want):
    _check_board(path, want)


@pytest.mark.slow
def test_dead_prune_keeps_the_optimum_on_random_boards(tmp_path):
    mod = api.load_model("zpg")
    rng = random.Random(11)
    for i in range(40):
        text = mod.generate(rng, rng.randint(2, 4), rng.randint(2, 4), rocks=0.15,
                            ornaments=rng.randint(0, 1), leaves=rng.randint(0, 2))
        p = tmp_path / f"r{i}.txt"
        p.write_text(text)
        a = api.load_task(mod, str(p), ["prune=none"])
        b = api.load_task(mod, str(p))
        assert reference_optimum(a.task) == reference_optimum(b.task), text


# ----------------------------------------------------------------------------- malformed boards


MALFORMED = {
    # name: (file lines, the line the error must name)
    "unknown symbol": (["# name: x", "size 2 3", "garden", "...", ".X."], 5),
    "ragged row": (["# name: x", "size 3 3", "garden", "...", "..", "..."], 5),
    "too few rows": (["# name: x", "size 3 3", "garden", "...", "..."], 5),
    "no sand": (["# name: x", "size 2 2", "garden", "#S", "##"], 3),
    "bad size line": (["# name: x", "size 3 by 3", "garden", "...", "...", "..."], 2),
    "no size line": (["# name: x", "garden", "...", "..."], None),
    "walkable square": (["# name: x", "size 2 3", "garden", "...", ".=."], 5),
    "line after the garden": (["# name: x", "size 2 2", "garden", "..", "..", "extra"], 6),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_board_is_one_line_with_file_and_line(tmp_path, capsys, case):
    lines, at = MALFORMED[case]
    path = tmp_path / "bad.txt"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run_cli(["solve", "zpg", path], capsys)
    assert code == 30, err
    assert out == "" and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    m = re.search(re.escape(str(path)) + r":(\d+): \S", err.strip())
    assert m, err
    if at is not None:
        assert int(m.group(1)) == at, err


def test_rock_rows_starting_with_hash_are_not_comments(tmp_path):
    # '#' starts comment lines in instance files and is also the rock symbol
    path = tmp_path / "hash.txt"
    path.write_text("# name: hash\nsize 3 3\ngarden\n#..\n...\n..#\n")
    L = api.load_task("zpg", str(path))
    assert L.data.rows == ["#..", "...", "..#"]
    assert L.task.n_vars == 7 + 2


# ----------------------------------------------------------------------------- generator
def test_generate_keeps_a_board_whose_proven_optimum_is_in_range(tmp_path, capsys):
    out = tmp_path / "g.txt"
    code, _, err = run_cli(["generate", "zpg", "--size", "4x3", "--min-moves", "3", "--max-moves", "4",
                            "--seed", "2", "-G", "rocks=0.1", "--out", out], capsys)
    assert code == 0, err
    text = out.read_text()
    claimed = int(re.search(r"^# optimum: (\d+)", text, re.M).group(1))
    assert 3 <= claimed <= 4 and "size 3 4" in text            # --size is width x height
    L = api.load_task("zpg", str(out))
    assert reference_optimum(L.task) == claimed                 # re-proved independently
    code, _, err = run_cli(["generate", "zpg", "--size", "2x2", "--min-moves", "9", "--tries", "2"], capsys)
    assert code == 12 and len(err.strip().splitlines()) == 1


def test_script_genes_follow_the_papers_perimeter_numbering(tmp_path):
    """The GA's entry gene c counts clockwise from the north face of the top-left square (Coldridge &
    Amos): on an open 2 x 3 garden every entry applies, so gene c opens clause 1 at the c-th point."""
    import numpy as np

    from puzzleplan.lang.scripting import spec_of
    from puzzleplan.solvers.scriptga import ScriptDecoder

    L = loaded(tmp_path, ["...", "..."], "prune=none")
    spec = spec_of(L.task.info)
    assert spec.opening_options == 2 * 2 + 2 * 3 and spec.inner_options == 2
    dec = ScriptDecoder(L.kernel("numpy"), spec, clauses=3)
    genomes = np.zeros((10, dec.L), dtype=np.int64)
    genomes[:, 0] = np.arange(10)
    out = dec.decode(genomes)
    first = [L.task.actions[int(a)].label for a in out["taken"][0]]
    assert first == ["top0D", "top1D", "top2D", "right0L", "right1L", "bottom2U", "bottom1U", "bottom0U",
                     "left1R", "left0R"]
