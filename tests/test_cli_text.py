"""The text output of ``solve`` says what each engine did and how it proved its answer.

Searches over the kernel report states and their kernel; sat and cpsat, which read the task only,
report their horizon and solver effort instead (no kernel, no "0 expanded"); every engine's proof is
printed; constraint models counting solutions (``--count``) say how many were found and what that
means for uniqueness.  ``dump`` calls a guard a guard.
"""

from __future__ import annotations

import re

import pytest
from helpers import ROOT, run_cli

from puzzleplan import cli
from puzzleplan.solvers.csp import CspResult

EIGHT_MID = f"{ROOT}/instances/sliding/eight.txt#eight-mid"          # optimum 14
SKY_UNIQUE = f"{ROOT}/instances/skyscraper/tatham-4x4-easy-1.txt"   # one solution


def _engine_line(out: str) -> str:
    (line,) = [ln for ln in out.splitlines() if ln.startswith("  engine ")]
    return line


def _proof(out: str) -> str | None:
    found = [ln[len("  proof: "):] for ln in out.splitlines() if ln.startswith("  proof: ")]
    assert len(found) <= 1
    return found[0] if found else None


def test_bfs_shows_its_kernel_states_and_proof(capsys):
    code, out, _ = run_cli(["solve", "sliding", EIGHT_MID, "--kernel", "numpy"], capsys)
    assert code == 0
    line = _engine_line(out)
    assert line.startswith("  engine bfs (numpy): ")
    assert re.search(r"[1-9][\d,]* expanded, [1-9][\d,]* generated, peak ", line)
    assert _proof(out) == "bfs layers (exhaustive below the optimum)"


def test_sat_shows_horizon_and_solver_effort_not_a_kernel(capsys):
    code, out, _ = run_cli(["solve", "sliding", EIGHT_MID, "-e", "sat", "--kernel", "numpy"], capsys)
    assert code == 0 and "optimal, cost 14" in out
    line = _engine_line(out)
    assert line.startswith("  engine sat: ")                    # no "(numpy)": sat reads the task only
    assert "expanded" not in line and "generated" not in line
    # the bfs hint's 14 steps, refuted below by one formula of 13 steps (the horizon shown)
    assert re.search(r"horizon 13, \d+ solver calls, [\d,]+ conflicts, [\d,]+ decisions, "
                     r"[\d,]+ variables, [\d,]+ clauses$", line), line
    assert _proof(out) == ("no plan of at most 13 steps (UNSAT at horizon 13, noops allowed); "
                           "the plan came from the bfs hint")


def test_cpsat_shows_horizon_models_and_proof(capsys):
    code, out, _ = run_cli(["solve", "sliding", EIGHT_MID, "-e", "cpsat"], capsys)
    assert code == 0 and "optimal, cost 14" in out
    line = _engine_line(out)
    assert line.startswith("  engine cpsat: ") and "expanded" not in line
    assert re.search(r"horizon \d+, \d+ models solved, [\d,]+ conflicts, [\d,]+ branches, "
                     r"[\d,]+ variables, [\d,]+ constraints$", line), line
    # unit costs: the quick bfs hint gives the plan, CP-SAT refutes one step less
    assert _proof(out).startswith("no plan of cost <= 13 within 13 steps (INFEASIBLE)")
    assert _proof(out).endswith("the plan came from the bfs hint")


def _latin3(tmp_path) -> str:
    """A 3 x 3 Skyscrapers grid without clues: its solutions are the 12 Latin squares of order 3."""
    p = tmp_path / "free3.txt"
    p.write_text("size 3\ntop 0 0 0\nbottom 0 0 0\nleft 0 0 0\nright 0 0 0\n", encoding="utf-8")
    return str(p)


def _solutions_line(out: str) -> str | None:
    found = [ln for ln in out.splitlines() if ln.startswith("  solutions: ")]
    assert len(found) <= 1
    return found[0] if found else None


@pytest.mark.parametrize("engine", ["backtrack", "sat", "cpsat"])
def test_count_exhausted_gives_the_exact_number(engine, tmp_path, capsys):
    code, out, _ = run_cli(["solve", "skyscraper", _latin3(tmp_path), "-e", engine, "--count", "20"], capsys)
    assert code == 0
    assert out.splitlines()[0].endswith(": solved (several)")
    assert _solutions_line(out) == "  solutions: 12 (the search space exhausted): not unique"
    if engine != "backtrack":       # the solvers prove there is no 13th: the last call was infeasible
        assert _proof(out).endswith("once the 12 solutions found were forbidden")


@pytest.mark.parametrize("engine", ["backtrack", "sat"])
def test_count_reached_says_there_may_be_more(engine, tmp_path, capsys):
    code, out, _ = run_cli(["solve", "skyscraper", _latin3(tmp_path), "-e", engine, "--count", "5"], capsys)
    assert code == 0
    assert _solutions_line(out) == "  solutions: at least 5 (stopped at --count 5): not unique"
    assert _proof(out) is None       # nothing was proved: the search stopped at the count


def test_count_two_on_a_unique_puzzle(capsys):
    code, out, _ = run_cli(["solve", "skyscraper", SKY_UNIQUE, "-e", "backtrack", "--count", "2"], capsys)
    assert code == 0
    assert out.splitlines()[0].endswith(": solved (unique)")
    assert _solutions_line(out) == "  solutions: 1 (the search space exhausted): unique"


def test_no_count_no_solutions_line(tmp_path, capsys):
    code, out, _ = run_cli(["solve", "skyscraper", _latin3(tmp_path), "-e", "backtrack"], capsys)
    assert code == 0 and _solutions_line(out) is None


def test_count_cut_short_leaves_uniqueness_open():
    res = CspResult("solved", "sat", cost=0, stats={"complete": False}, assignment=[1], solutions=1)
    assert cli._solution_count(res, 2, None) == \
        "1 found before the search stopped (--count 2): uniqueness not decided"
    assert cli._solution_count(res, 1, None) == ""


def test_dump_calls_a_guard_a_guard(capsys):
    code, out, _ = run_cli(["dump", "sliding", f"{ROOT}/instances/sliding/eight.txt#eight-easy"], capsys)
    assert code == 0
    lines = out.splitlines()
    actions = [i for i, ln in enumerate(lines) if ln.startswith("  action ")]
    assert actions and all(lines[i + 1].startswith("    guard (") for i in actions)
    assert not any(ln.lstrip().startswith("when ") for ln in lines)
