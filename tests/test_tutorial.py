"""The tutorial (docs/tutorial.md) and its model (models/lightsout.py) are executed, not just read.

* The model's code blocks of the tutorial, put together, are models/lightsout.py.
* Every ``$ puzzleplan ...`` command shown runs, and prints what the page shows
  (times and work counters masked: they vary by machine and engine version).
* Differential: the optimum of every tutorial board, by puzzleplan's engines,
  equals an independent computation written here: Lights Out as a linear
  system over GF(2) (a press is a vector of toggled cells, presses commute and
  cancel in pairs), solved by Gaussian elimination, the fewest presses found by
  enumerating the null space. No puzzleplan code is involved in it.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import shlex
from pathlib import Path

import pytest
from helpers import ROOT, run_cli

from puzzleplan import api, crosscheck

TUTORIAL = ROOT / "docs" / "tutorial.md"
MODEL = ROOT / "models" / "lightsout.py"
BOARDS = ROOT / "instances" / "lightsout" / "boards.txt"
MARK = "<!-- model: models/lightsout.py -->"
ENGINES = "bfs,astar,sat,cpsat"
# boards the default run verifies across all four engines (a few seconds each)
QUICK = ["cross-3x3", "all-on-3x3", "all-on-4x4", "window-5x5"]


# --------------------------------------------------------------------------- the page
def _model_blocks(text: str) -> list[str]:
    return re.findall(re.escape(MARK) + r"\n```python\n(.*?)```", text, flags=re.S)


def _squeeze_blank_lines(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text)


def test_tutorial_code_is_the_model_file():
    text = TUTORIAL.read_text(encoding="utf-8")
    blocks = _model_blocks(text)
    assert len(blocks) == text.count(MARK) >= 5, "every marked block must be a ```python block"
    # joined with one blank line; PEP 8's two blank lines between top-level definitions are
    # the only difference allowed
    joined = "\n".join(blocks)
    model = MODEL.read_text(encoding="utf-8")
    assert _squeeze_blank_lines(joined) == _squeeze_blank_lines(model), (
        "docs/tutorial.md's marked code blocks differ from models/lightsout.py: edit both together")


def _console_blocks(text: str) -> list[list[tuple[str, list[str]]]]:
    """Per ```console block: (command, expected output lines) for every ``$ `` line."""
    out = []
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        cmds: list[tuple[str, list[str]]] = []
        for line in block.splitlines():
            if line.startswith("$ "):
                cmds.append((line[2:], []))
            else:
                assert cmds, f"output before any command in a console block: {line!r}"
                cmds[-1][1].append(line)
        out.append(cmds)
    return out


ENGINE_ROW = re.compile(r"^(bfs|ucs|astar|idastar|sat|cpsat|ga|backtrack|fd|pdr)\s+"
                        r"(explicit|symbolic|external|search|heuristic)\s")
# verify's fixed columns (crosscheck._WIDTHS): time s and work vary between runs
_EDGES = [sum(crosscheck._WIDTHS[:k]) for k in range(len(crosscheck._WIDTHS) + 1)]
TIME_COLS, WORK_COLS = slice(_EDGES[5], _EDGES[6]), slice(_EDGES[6], _EDGES[7])


def _normalise(line: str) -> str:
    """One output line with what varies between runs masked: times, memory, counters of work."""
    line = line.rstrip()
    if ENGINE_ROW.match(line):                       # verify's table: time, work (states, conflicts)
        head, proof = line[:_EDGES[-1]], line[_EDGES[-1]:].strip()
        head = head[:TIME_COLS.start] + "<t>" + " " * 4 + "<n>" + " " * 8 + head[WORK_COLS.stop:]
        # the proof's first clause says what kind of proof it is; its figures and the clauses after
        # it detail the horizons an engine happened to try (they vary with its search strategy)
        return " ".join(head.split()) + "  " + re.sub(r"\d+", "<k>", proof.split(";")[0].rstrip("."))
    if re.match(r"^-+(\s+-+)+$", line):              # the table's rule: widths follow the values
        return "<rule>"
    if line.startswith("engine "):                   # the header row, padded to the widths
        return " ".join(line.split())
    if line.lstrip().startswith("engine ") and " s search" in line:
        # --kernel auto: the compiled kernel once it is cached, else the interpreter
        line = re.sub(r"\((numba|interpreted|numpy)\)", "(<kernel>)", line)
        return re.sub(r"\d[\d,.]*", "<n>", line)
    return line


def _matches(expected: list[str], actual: list[str]) -> bool:
    """Line-by-line equality after _normalise; an expected ``...`` line stands for any lines."""
    exp = [_normalise(x) for x in expected]
    act = [_normalise(x) for x in actual]

    def go(i: int, j: int) -> bool:
        if i == len(exp):
            return j == len(act)
        if exp[i] == "...":
            return any(go(i + 1, k) for k in range(j, len(act) + 1))
        return j < len(act) and exp[i] == act[j] and go(i + 1, j + 1)

    return go(0, 0)


def _commands() -> list[tuple[str, list[str]]]:
    text = TUTORIAL.read_text(encoding="utf-8")
    return [c for block in _console_blocks(text) for c in block]


def test_tutorial_shows_commands():
    cmds = [c for c, _ in _commands()]
    assert len(cmds) >= 6
    assert all(c.startswith("puzzleplan ") for c in cmds), cmds
    assert any(c.startswith("puzzleplan verify lightsout") and f"--engines {ENGINES}" in c for c in cmds)


@pytest.mark.parametrize("command,expected", _commands(), ids=[c for c, _ in _commands()])
def test_tutorial_command_prints_what_the_page_shows(command, expected, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)                          # the page's paths are relative to the repository
    argv = shlex.split(command)[1:]
    written = None
    if "-o" in argv:                                 # never write into the checkout: write to tmp
        k = argv.index("-o") + 1
        written, argv[k] = argv[k], str(tmp_path / Path(argv[k]).name)
    code, out, err = run_cli(argv, capsys)
    if written is not None:
        err = err.replace(argv[argv.index("-o") + 1], written)
    actual = (out + err).splitlines()
    unsolvable = bool(actual) and actual[0].endswith(": unsolvable")
    assert code == (10 if unsolvable else 0), f"{command}: exit {code}\n{err}"
    shown = "\n".join(actual)
    assert _matches(expected, actual), (
        f"`{command}` printed\n{shown}\n\nbut docs/tutorial.md shows\n" + "\n".join(expected))
    if written is not None:                          # the checked-in picture is what the command draws
        assert (tmp_path / Path(written).name).read_bytes() == (ROOT / written).read_bytes(), (
            f"{written} is stale: rerun `{command}` from the repository root")


def test_normalise_masks_only_what_varies():
    row = "sat       symbolic optimal  5      proved   0.13   723 conf   ok     UNSAT at horizons 0..4"
    assert _normalise(row) == _normalise(row.replace("0.13 ", "3.50 ").replace("723 conf ", "9.9k conf"))
    assert _normalise(row) != _normalise(row.replace("optimal  5", "optimal  6"))
    assert _normalise(row) != _normalise(row.replace("UNSAT", "SAT  "))
    line = "  engine bfs (numba): 0.001 s search, 256 expanded, 2,304 generated, peak 1.1 MB"
    assert _normalise(line) == _normalise(line.replace("256", "300"))
    assert _normalise(line) == _normalise(line.replace("(numba)", "(interpreted)"))
    assert _matches(["a", "...", "z"], ["a", "b", "c", "z"]) and not _matches(["a", "z"], ["a", "b", "z"])


# --------------------------------------------------------------------------- independent optimum
def _presses(rows: int, cols: int) -> list[int]:
    """Press j as a bit mask of the cells it toggles (cell = r * cols + c)."""
    masks = []
    for r in range(rows):
        for c in range(cols):
            m = 0
            for dr, dc in ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)):
                if 0 <= r + dr < rows and 0 <= c + dc < cols:
                    m |= 1 << ((r + dr) * cols + c + dc)
            masks.append(m)
    return masks


def gf2_fewest_presses(board: list[list[int]]) -> int | None:
    """Fewest presses switching the board off, or None if impossible: min-weight solution of A p = b."""
    rows, cols = len(board), len(board[0])
    n = rows * cols
    presses = _presses(rows, cols)
    lit = sum(1 << (r * cols + c) for r in range(rows) for c in range(cols) if board[r][c])
    # equation k: the presses toggling cell k, summed mod 2, equal its light
    eqs = [[sum(1 << j for j in range(n) if presses[j] >> k & 1), lit >> k & 1] for k in range(n)]
    pivots: list[int] = []
    for col in range(n):                              # Gauss-Jordan elimination over GF(2)
        p = next((i for i in range(len(pivots), n) if eqs[i][0] >> col & 1), None)
        if p is None:
            continue
        top = len(pivots)
        eqs[top], eqs[p] = eqs[p], eqs[top]
        for i in range(n):
            if i != top and eqs[i][0] >> col & 1:
                eqs[i][0] ^= eqs[top][0]
                eqs[i][1] ^= eqs[top][1]
        pivots.append(col)
    if any(eqs[i][1] for i in range(len(pivots), n)):
        return None                                   # 0 = 1: no set of presses does it
    free = [c for c in range(n) if c not in pivots]
    best = None
    for bits in itertools.product((0, 1), repeat=len(free)):   # every solution, one per null-space vector
        p = sum(1 << f for f, v in zip(free, bits) if v)
        for i, col in enumerate(pivots):
            if eqs[i][1] ^ (bin(eqs[i][0] & p).count("1") & 1):
                p |= 1 << col
        weight = bin(p).count("1")
        best = weight if best is None else min(best, weight)
    return best


def _board_records() -> dict[str, tuple[list[list[int]], str]]:
    """The boards of boards.txt read here, not by the model: id -> (rows, optimum header)."""
    recs: dict[str, tuple[list[list[int]], str]] = {}
    for block in BOARDS.read_text(encoding="utf-8").split("\n\n"):
        lines = [ln for ln in block.splitlines() if ln and not ln.startswith("#")]
        if not lines:
            continue
        head = dict(ln.split(": ", 1) for ln in lines if ": " in ln)
        rows = [[1 if ch == "*" else 0 for ch in ln] for ln in lines if ": " not in ln]
        recs[head["id"]] = (rows, head["optimum"])
    return recs


def test_gf2_reference_on_known_facts():
    # a centre press clears the plus sign; a single lit corner of 4 x 4 cannot be cleared
    assert gf2_fewest_presses([[0, 1, 0], [1, 1, 1], [0, 1, 0]]) == 1
    assert gf2_fewest_presses([[0] * 3] * 3) == 0
    corner = [[1, 0, 0, 0]] + [[0] * 4 for _ in range(3)]
    assert gf2_fewest_presses(corner) is None
    # against plain enumeration of every set of presses on small boards
    rng = random.Random(7)
    for rows, cols in ((2, 3), (3, 3), (4, 4)):
        presses = _presses(rows, cols)
        fewest: dict[int, int] = {}
        for s in range(1 << (rows * cols)):
            toggled = 0
            for j in range(rows * cols):
                if s >> j & 1:
                    toggled ^= presses[j]
            w = bin(s).count("1")
            if w < fewest.get(toggled, 1 << 30):
                fewest[toggled] = w
        for _ in range(40):
            b = rng.getrandbits(rows * cols)
            board = [[b >> (r * cols + c) & 1 for c in range(cols)] for r in range(rows)]
            assert gf2_fewest_presses(board) == fewest.get(b)


def test_boards_file_optima_are_the_independent_ones():
    recs = _board_records()
    assert set(QUICK) <= set(recs) and "corner-4x4" in recs and "all-on-5x5" in recs
    for rid, (rows, optimum) in recs.items():
        expect = gf2_fewest_presses(rows)
        assert optimum == ("unsolvable" if expect is None else str(expect)), rid


def _verify(rid: str) -> dict:
    from puzzleplan.solvers import Limits

    loaded = api.load_task("lightsout", f"{BOARDS}#{rid}")
    # the interpreter: no per-board compile (each board size is a kernel structure of its own); the
    # compiled kernels have their own differential tests
    verdict = crosscheck.run(loaded, crosscheck.parse_engines(ENGINES), Limits(120.0), "interpreted")
    return verdict.to_json(loaded)


@pytest.mark.parametrize("rid", QUICK)
def test_verify_agrees_across_bfs_astar_sat_cpsat_and_matches_gf2(rid):
    rows, _ = _board_records()[rid]
    out = _verify(rid)
    runs = out["engines"]
    assert set(runs) == set(ENGINES.split(","))
    assert out["agree"] is True and not out["problems"], json.dumps(out)[:2000]
    expect = gf2_fewest_presses(rows)
    assert out["optimum"] == expect
    for name, r in runs.items():
        assert r["status"] == "optimal" and r["cost"] == expect, (name, r)
        assert r["verified"], name


@pytest.mark.slow
def test_verify_agrees_on_seven_5x5():
    rows, _ = _board_records()["seven-5x5"]
    out = _verify("seven-5x5")
    assert out["agree"] is True
    assert {r["cost"] for r in out["engines"].values()} == {gf2_fewest_presses(rows)} == {7}


def _board_file(tmp_path: Path, rows: list[list[int]]) -> Path:
    f = tmp_path / "board.txt"
    f.write_text("\n".join("".join("*" if v else "." for v in row) for row in rows) + "\n", encoding="utf-8")
    return f


@pytest.mark.parametrize("size", [(2, 2), (3, 3), (3, 4), (4, 4)])
def test_random_boards_bfs_and_astar_match_gf2(size, tmp_path):
    """Random boards, solvable or not: exact engines against the linear-algebra optimum.

    On the numpy kernel: no compilation per board size, and the other kernel than the CLI tests use.
    """
    rows, cols = size
    rng = random.Random(rows * 10 + cols)
    for _ in range(4):
        board = [[rng.randint(0, 1) for _ in range(cols)] for _ in range(rows)]
        expect = gf2_fewest_presses(board)
        loaded = api.load_task("lightsout", str(_board_file(tmp_path, board)))
        for engine in ("bfs", "astar"):
            res = api.solve(loaded, engine, kernel="numpy")
            if expect is None:
                assert res.status == "unsolvable", (board, engine)
            else:
                assert (res.status, res.cost) == ("optimal", expect), (board, engine)
                assert res.stats["verified"]


def test_heuristic_is_admissible_and_helps(tmp_path):
    """h never exceeds the GF(2) optimum on random solvable boards; astar expands less than bfs."""
    from puzzleplan.verify import reference as ref

    rng = random.Random(3)
    for rows, cols in ((1, 4), (2, 5), (3, 3), (5, 5)):
        for _ in range(20):
            board = [[rng.randint(0, 1) for _ in range(cols)] for _ in range(rows)]
            expect = gf2_fewest_presses(board)
            if expect is None:
                continue
            loaded = api.load_task("lightsout", str(_board_file(tmp_path, board)))
            assert ref.heuristic(loaded.task, loaded.task.init) <= expect, board
    loaded = api.load_task("lightsout", f"{BOARDS}#window-5x5")
    bfs, astar = api.solve(loaded, "bfs"), api.solve(loaded, "astar")
    assert bfs.cost == astar.cost == 5
    assert astar.stats["expanded"] < bfs.stats["expanded"] / 10


def test_malformed_board_is_one_line_error(tmp_path, capsys):
    f = tmp_path / "bad.txt"
    f.write_text("id: bad\n**.\n*x.\n", encoding="utf-8")
    code, out, err = run_cli(["solve", "lightsout", f], capsys)
    assert code == 30
    assert err.strip() == f"puzzleplan: error: {f}:3: 'x' is not a light: use * (on) or . (off)"
    f.write_text("**.\n*.\n", encoding="utf-8")
    code, out, err = run_cli(["solve", "lightsout", f], capsys)
    assert code == 30 and f"{f}:2: row has 2 lights" in err and "Traceback" not in err
