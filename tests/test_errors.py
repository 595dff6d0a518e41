"""Bad input ends in one line on stderr, ``FILE:LINE: message`` where a line is known, an exit
code >= 30, and never a traceback.  Also the result exit codes 0, 10 and 12.

Each malformed file is written here with the offending line at a known position (after a
comment and header lines, so that "line 1" is never right by accident).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import FAYAA, ROOT, run_cli

from puzzleplan import api
from puzzleplan.lang import ModelError

MODELS_DIR = Path(__file__).parent / "models"
GOOD_KLOTSKI = ["BAAC", "BAAC", "DEEF", "DGHF", "I..J"]




def assert_one_line_error(code: int, out: str, err: str, expected_code: int | None = None) -> str:
    assert code >= 30, (code, err)
    if expected_code is not None:
        assert code == expected_code, (code, err)
    assert "Traceback" not in err and "Traceback" not in out
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert out == "", "errors print nothing on stdout (no JSON either)"
    return lines[0]


def error_line_number(line: str, path: Path) -> int:
    m = re.search(re.escape(str(path)) + r":(\d+): \S", line)
    assert m, f"no '{path}:LINE: message' in {line!r}"
    return int(m.group(1))


def write(path: Path, lines: list[str]) -> dict[str, int]:
    """Write lines; return {line text: 1-based line number} for locating expected errors."""
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    where: dict[str, int] = {}
    for i, text in enumerate(lines, start=1):
        where.setdefault(text, i)
    return where


HEAD = ["# a comment line", "name: test layout"]


# ----------------------------------------------------------------------------- klotski files
KLOTSKI_CASES = {
    # name: (grid rows, the rows on which the error may be reported)
    "ragged row": (["BAAC", "BAAC", "DEEF", "DGH", "I..J"], ["DGH"]),
    "unknown shape 3x1": (["BAAC", "BAAC", "BEEF", "DGHF", "I..J"], ["BAAC", "BEEF"]),
    "L-shaped piece": (["BAAC", "BAAC", "DEEF", "DGHC", "I..J"], ["BAAC", "DGHC"]),
    "missing target A": (["BCCD", "BCCD", "EFFG", "EHIG", "J..K"], None),
    "unknown cell character": (["BAAC", "BAAC", "DEEF", "DGHF", "I.*J"], ["I.*J"]),
    "too few rows": (["BAAC", "BAAC", "DEEF", "DGHF"], None),
    "too many rows": (["BAAC", "BAAC", "DEEF", "DGHF", "I..J", "KL.."], ["KL.."]),
}


@pytest.mark.parametrize("case", list(KLOTSKI_CASES))
def test_malformed_klotski_file(tmp_path, capsys, case):
    rows, at = KLOTSKI_CASES[case]
    path = tmp_path / "bad.txt"
    where = write(path, HEAD + rows)
    code, out, err = run_cli(["solve", "klotski", path], capsys)
    line = assert_one_line_error(code, out, err, expected_code=30)
    no = error_line_number(line, path)
    grid_lines = range(len(HEAD) + 1, len(HEAD) + len(rows) + 1)
    if at is None:
        assert no in grid_lines, (no, line)
    else:
        assert no in {where[r] for r in at}, (no, line)


@pytest.mark.parametrize("header, bad", [
    ("size: 4by5", "size: 4by5"),
    ("goal: 9,9", "goal: 9,9"),
    ("goal: middle", "goal: middle"),
])
def test_malformed_klotski_header(tmp_path, capsys, header, bad):
    path = tmp_path / "h.txt"
    where = write(path, ["# layout", header] + GOOD_KLOTSKI)
    code, out, err = run_cli(["solve", "klotski", path], capsys)
    line = assert_one_line_error(code, out, err, expected_code=30)
    assert error_line_number(line, path) == where[bad]


def test_header_given_twice_points_at_the_second(tmp_path, capsys):
    path = tmp_path / "twice.txt"
    write(path, ["size: 4x5", "name: x", "size: 4x5"] + GOOD_KLOTSKI)
    code, out, err = run_cli(["solve", "klotski", path], capsys)
    line = assert_one_line_error(code, out, err, expected_code=30)
    assert error_line_number(line, path) == 3


def test_error_in_second_record_of_a_multi_record_file(tmp_path, capsys):
    path = tmp_path / "multi.txt"
    lines = ["id: one"] + GOOD_KLOTSKI + ["", "id: two"] + GOOD_KLOTSKI[:3] + ["DGH.F"] + GOOD_KLOTSKI[4:]
    write(path, lines)
    code, out, err = run_cli(["solve", "klotski", f"{path}#two"], capsys)
    line = assert_one_line_error(code, out, err, expected_code=30)
    assert error_line_number(line, path) == lines.index("DGH.F") + 1


# ----------------------------------------------------------------------------- sliding files
SLIDING_CASES = {
    "non-integer tile": (["1 2 3", "4 x 6", "7 8 0"], ["4 x 6"]),
    "row of wrong length": (["1 2 3", "4 5 6 9", "7 8 0"], ["4 5 6 9"]),
    "missing rows": (["1 2 3", "4 5 6"], None),
    "duplicate tile": (["1 2 3", "4 5 6", "7 7 0"], None),
    "tile out of range": (["1 2 3", "4 5 6", "7 9 0"], None),
    "short goal section": (["1 2 3", "4 5 6", "7 8 0", "goal:", "1 2 3", "4 5 6"], None),
    "unexpected line": (["1 2 3", "4 5 6", "7 8 0", "what is this"], ["what is this"]),
}


@pytest.mark.parametrize("case", list(SLIDING_CASES))
def test_malformed_sliding_file(tmp_path, capsys, case):
    rows, at = SLIDING_CASES[case]
    path = tmp_path / "bad.txt"
    where = write(path, HEAD + rows)
    code, out, err = run_cli(["solve", "sliding", path], capsys)
    line = assert_one_line_error(code, out, err, expected_code=30)
    no = error_line_number(line, path)
    if at is None:
        assert no in range(len(HEAD) + 1, len(HEAD) + len(rows) + 1), (no, line)
    else:
        assert no in {where[r] for r in at}, (no, line)


# Regression: a start that is not a permutation was reported at the first grid row.
@pytest.mark.parametrize("rows, bad", [(["1 2 3", "4 5 6", "7 7 0"], "7 7 0"),
                                       (["1 2 3", "4 5 6", "7 9 0"], "7 9 0")])
def test_sliding_permutation_error_names_the_offending_row(tmp_path, capsys, rows, bad):
    path = tmp_path / "perm.txt"
    where = write(path, HEAD + rows)
    code, out, err = run_cli(["solve", "sliding", path], capsys)
    line = assert_one_line_error(code, out, err, expected_code=30)
    assert error_line_number(line, path) == where[bad]


# ----------------------------------------------------------------------------- files and records
@pytest.mark.parametrize("content", ["", "\n\n   \n", "# only a comment\n"],
                         ids=["empty", "blank", "comment"])
def test_empty_instance_file(tmp_path, capsys, content):
    path = tmp_path / "empty.txt"
    path.write_text(content, encoding="utf-8")
    for model in ("klotski", "sliding"):
        code, out, err = run_cli(["solve", model, path], capsys)
        line = assert_one_line_error(code, out, err, expected_code=30)
        assert str(path) in line


def test_nonexistent_instance_file(tmp_path, capsys):
    path = tmp_path / "nope.txt"
    code, out, err = run_cli(["solve", "klotski", path], capsys)
    assert str(path) in assert_one_line_error(code, out, err, expected_code=30)


def test_directory_and_binary_instance_files(tmp_path, capsys):
    code, out, err = run_cli(["solve", "klotski", tmp_path], capsys)
    assert str(tmp_path) in assert_one_line_error(code, out, err, expected_code=30)
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"BAAC\nBAAC\n\xff\xfeEF\nDGHF\nI..J\n")
    code, out, err = run_cli(["solve", "klotski", binary], capsys)
    assert str(binary) in assert_one_line_error(code, out, err, expected_code=30)


def test_unknown_record_id(capsys):
    code, out, err = run_cli(["solve", "klotski", f"{FAYAA}#fayaa-9999"], capsys)
    line = assert_one_line_error(code, out, err, expected_code=30)
    assert str(FAYAA) in line and "fayaa-9999" in line


# ----------------------------------------------------------------------------- options, engines, models
def test_unknown_model_option(capsys):
    code, out, err = run_cli(["solve", "klotski", f"{FAYAA}#fayaa-117", "-O", "colour=red"], capsys)
    assert "colour" in assert_one_line_error(code, out, err, expected_code=31)


def test_model_option_unknown_to_the_model_goes_to_the_engine(capsys):
    """``-O preset=paper`` (the issues' spelling) reaches the engine; the same pair as ``-E`` agrees."""
    sky = str(ROOT / "instances" / "skyscraper" / "tonybank-4x4-1.txt")
    runs = [run_cli(["solve", "skyscraper", sky, "-e", "ga", flag, "preset=paper", "-E", "generations=20",
                     "--seed", "3", "--json"], capsys) for flag in ("-O", "-E")]
    stats = [json.loads(out)["stats"] for code, out, err in runs]
    assert runs[0][0] == runs[1][0] and runs[0][0] in (0, 12)
    assert stats[0]["preset"] == stats[1]["preset"] == "paper"
    assert stats[0]["evaluations"] == stats[1]["evaluations"] > 0
    code, out, err = run_cli(["solve", "skyscraper", sky, "-e", "ga", "-O", "presett=paper"], capsys)
    line = assert_one_line_error(code, out, err, expected_code=31)
    assert "model skyscraper" in line and "engine ga" in line


@pytest.mark.parametrize("opt", ["metric=fast", "metric", "=steps"])
def test_bad_model_option_value(capsys, opt):
    code, out, err = run_cli(["solve", "klotski", f"{FAYAA}#fayaa-117", "-O", opt], capsys)
    assert_one_line_error(code, out, err, expected_code=31)


def test_unknown_engine(capsys):
    code, out, err = run_cli(["solve", "klotski", f"{FAYAA}#fayaa-117", "--engine", "magic"], capsys)
    assert "magic" in assert_one_line_error(code, out, err, expected_code=33)


@pytest.mark.parametrize("argv", [
    ["solve", "klotski"],                                            # missing INSTANCE
    ["frobnicate"],                                                  # unknown command
    ["solve", "klotski", str(FAYAA), "--time-limit", "0"],
    ["solve", "klotski", str(FAYAA), "--max-states", "-3"],
    ["solve", "klotski", str(FAYAA), "--kernel", "gpu"],
    ["solve", "klotski", str(FAYAA), "--engine", "astar", "--enumerate"],
    ["solve", "klotski", str(FAYAA), "--engine", "idastar", "--kernel", "numpy"],
], ids=["missing-instance", "unknown-command", "time-limit-0", "negative-max-states", "bad-kernel",
        "enumerate-astar", "idastar-numpy"])
def test_bad_command_line(capsys, argv):
    code, out, err = run_cli(argv, capsys)
    assert_one_line_error(code, out, err, expected_code=31)


def test_bfs_refuses_general_costs(tmp_path, capsys):
    inst = tmp_path / "j.txt"
    inst.write_text("a: 3\nb: 5\ntarget: 4\n", encoding="utf-8")
    argv = ["solve", MODELS_DIR / "jugs.py", inst, "-O", "cost=litres", "--kernel", "numpy"]
    code, out, err = run_cli(argv, capsys)
    assert_one_line_error(code, out, err, expected_code=31)


def test_nonexistent_model_path(tmp_path, capsys):
    path = tmp_path / "nomodel.py"
    code, out, err = run_cli(["solve", path, f"{FAYAA}#fayaa-117"], capsys)
    assert str(path) in assert_one_line_error(code, out, err, expected_code=32)


def test_unknown_bundled_model_name(capsys):
    code, out, err = run_cli(["solve", "tetris", f"{FAYAA}#fayaa-117"], capsys)
    assert "tetris" in assert_one_line_error(code, out, err, expected_code=32)


@pytest.mark.parametrize("source, line", [
    ("x = 1\n\nraise RuntimeError('boom at import')\n", 3),
    ("import os\nimport puzzleplan_no_such_module_xyz\n", 2),
    ("def parse(rec):\n    return rec\n\nVALUE = 1 / 0\n", 4),
], ids=["raise", "bad-import", "zero-division"])
def test_model_file_that_raises_at_import(tmp_path, capsys, source, line):
    path = tmp_path / "broken_model.py"
    path.write_text(source, encoding="utf-8")
    code, out, err = run_cli(["solve", path, f"{FAYAA}#fayaa-117"], capsys)
    msg = assert_one_line_error(code, out, err, expected_code=32)
    assert error_line_number(msg, path) == line


def test_model_file_without_build(tmp_path, capsys):
    path = tmp_path / "half_model.py"
    path.write_text("def parse(rec):\n    return rec\n", encoding="utf-8")
    code, out, err = run_cli(["solve", path, f"{FAYAA}#fayaa-117"], capsys)
    assert str(path) in assert_one_line_error(code, out, err, expected_code=32)


def test_model_build_that_raises(tmp_path, capsys):
    path = tmp_path / "bad_build.py"
    path.write_text("def parse(rec):\n    return 1\n\n\ndef build(data):\n    return data / 0\n",
                    encoding="utf-8")
    code, out, err = run_cli(["solve", path, f"{FAYAA}#fayaa-117"], capsys)
    assert error_line_number(assert_one_line_error(code, out, err, expected_code=32), path) == 6


# Regression: the line of a syntax error was only inside the message, not in the FILE:LINE: prefix.
def test_model_file_with_syntax_error_names_the_line(tmp_path, capsys):
    path = tmp_path / "syntax_model.py"
    path.write_text("def parse(rec):\n    return rec\n\ndef build(data:\n    pass\n", encoding="utf-8")
    code, out, err = run_cli(["solve", path, f"{FAYAA}#fayaa-117"], capsys)
    msg = assert_one_line_error(code, out, err, expected_code=32)
    assert error_line_number(msg, path) == 4


# Regression: a parse() raising anything but a PuzzleError ended in a traceback and exit code 1.
def test_model_parse_that_raises(tmp_path, capsys):
    path = tmp_path / "bad_parse.py"
    path.write_text("def parse(rec):\n    raise ValueError('cannot read')\n\n\n"
                    "def build(data):\n    return data\n", encoding="utf-8")
    code, out, err = run_cli(["solve", path, f"{FAYAA}#fayaa-117"], capsys)
    assert error_line_number(assert_one_line_error(code, out, err, expected_code=32), path) == 2


# Regression: a domain violation during search went through the CLI as a traceback, exit code 1.
@pytest.mark.parametrize("kernel", ["numpy", "numba", "interpreted"])
def test_model_domain_violation_during_search(tmp_path, capsys, kernel):
    inst = tmp_path / "o.txt"
    inst.write_text("start: 0\n", encoding="utf-8")
    code, out, err = run_cli(["solve", MODELS_DIR / "overflow.py", inst, "--kernel", kernel], capsys)
    assert "up" in assert_one_line_error(code, out, err, expected_code=32)    # names the action


# One rule for every engine: idastar used to skip an out-of-domain successor and search on, and sat
# and cpsat (whose unrolled step treats such a write as impossible) answered "unsolvable".
@pytest.mark.parametrize("engine", ["astar", "ucs", "idastar", "sat", "cpsat"])
def test_model_domain_violation_is_the_same_error_for_every_engine(tmp_path, capsys, engine):
    inst = tmp_path / "o.txt"
    inst.write_text("start: 0\n", encoding="utf-8")
    argv = ["solve", MODELS_DIR / "overflow.py", inst, "-e", engine, "--kernel", "interpreted"]
    assert "up" in assert_one_line_error(*run_cli(argv, capsys), expected_code=32)


# Regression: a model module whose import raised a PuzzleError, or that lacked parse()/build(), stayed
# in sys.modules, and a second load_model of the same path returned it without any error.
@pytest.mark.parametrize("source", [
    "def parse(rec):\n    return rec\n",
    "from puzzleplan.lang import ModelError\nraise ModelError('refused at import')\n",
], ids=["no-build", "puzzle-error-at-import"])
def test_failed_model_load_is_not_cached(tmp_path, source):
    path = tmp_path / "flaky_model.py"
    path.write_text(source, encoding="utf-8")
    for _ in range(2):
        with pytest.raises(ModelError):
            api.load_model(str(path))


# ----------------------------------------------------------------------------- result exit codes
def test_exit_code_0_for_solved(tmp_path, capsys):
    path = tmp_path / "ok.txt"
    write(path, ["size: 3x3", "goal: 2,2", "AB.", "CDE", "F.G"])
    code, out, err = run_cli(["solve", "klotski", path, "--kernel", "numpy", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["status"] == "optimal"


def test_exit_code_10_for_unsolvable(tmp_path, capsys):
    path = tmp_path / "walled.txt"
    write(path, ["BAAC", "BAAC", "DEEF", "DGGF", "H..I"])          # the two 2x1 pieces never clear A's way
    code, out, err = run_cli(["solve", "klotski", path, "--kernel", "numpy"], capsys)
    assert code == 10, err
    assert "unsolvable" in out


def test_exit_code_12_for_max_states(capsys):
    # numpy kernel: the compiled bfs overshoots small limits (see test_cli.py)
    code, out, err = run_cli(["solve", "klotski", f"{FAYAA}#fayaa-001", "--max-states", "10", "--json",
                              "--kernel", "numpy"], capsys)
    assert code == 12, err
    doc = json.loads(out)
    assert doc["status"] == "limit" and doc["cost"] is None and doc["plan"] is None


# ----------------------------------------------------------------------------- as a real process
def _console_script() -> str:
    script = Path(sys.executable).parent / "puzzleplan"
    assert script.exists(), "the puzzleplan console script is not installed in this environment"
    return str(script)


@pytest.mark.parametrize("what", ["ragged", "missing-file", "unknown-engine", "broken-model"])
def test_console_script_errors(tmp_path, what):
    if what == "ragged":
        path = tmp_path / "ragged.txt"
        write(path, ["BAAC", "BAAC", "DEEF", "DG", "I..J"])
        argv, expect_code, expect_line = ["solve", "klotski", str(path)], 30, 4
    elif what == "missing-file":
        path = tmp_path / "missing.txt"
        argv, expect_code, expect_line = ["solve", "sliding", str(path)], 30, None
    elif what == "unknown-engine":
        path = None
        argv, expect_code, expect_line = ["solve", "sliding", "x.txt", "-e", "quantum"], 33, None
    else:
        path = tmp_path / "m.py"
        path.write_text("import sys\nsys.exit_now()\n", encoding="utf-8")
        argv, expect_code, expect_line = ["solve", str(path), "x.txt"], 32, 2
    proc = subprocess.run([_console_script(), *argv], capture_output=True, text=True, timeout=120)
    line = assert_one_line_error(proc.returncode, proc.stdout, proc.stderr, expected_code=expect_code)
    assert line.startswith("puzzleplan: error: ")
    if path is not None:
        assert str(path) in line
    if expect_line is not None:
        assert error_line_number(line, path) == expect_line
