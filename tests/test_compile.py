"""``puzzleplan compile``: exported formulas mean what the header says, checked by other solvers.

The DIMACS file is read back with pysat's own parser and solved by MiniSat (our engines
use CaDiCaL on an in-memory formula: a different path); the CP-SAT model is parsed from
its text format into a fresh model.  Both must be unsatisfiable one step below the
published-by-bfs optimum and satisfiable at it, and the plan read off the DIMACS model
through the header's ``c var`` lines must replay in the reference checker.  Then the
new flags' malformed inputs: one line, documented exit code.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import FAYAA
from pysat.formula import CNF
from pysat.solvers import Solver
from test_errors import assert_one_line_error, run_cli

from puzzleplan import api
from puzzleplan.lang.errors import EXIT_BAD_OPTION, EXIT_OUTPUT, EXIT_UNKNOWN_ENGINE
from puzzleplan.verify import reference as ref

EIGHT_MID = str(Path(FAYAA).parents[1] / "sliding" / "eight.txt") + "#eight-mid"


def _compile(capsys, tmp_path: Path, fmt: str, horizon: int, name: str, *extra: str) -> Path:
    out = tmp_path / name
    code, stdout, err = run_cli(["compile", "sliding", EIGHT_MID, "--to", fmt, "-T", horizon, "-o", out,
                                 *extra], capsys)
    assert code == 0, err
    assert stdout.startswith(f"wrote {out}")
    return out


def _plan_from_dimacs(path: Path, model: list[int]) -> list[int]:
    """Ground actions per step, decoded through the header's ``c var N action K (LABEL) at step T`` lines."""
    true = {lit for lit in model if lit > 0}
    steps: dict[int, int] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.fullmatch(r"c var (\d+) action (\d+) \(.*\) at step (\d+)", line)
        if m and int(m.group(1)) in true:
            steps[int(m.group(3))] = int(m.group(2))
    return [steps[t] for t in sorted(steps)]


def test_cnf_is_sat_exactly_from_the_optimum(tmp_path: Path, capsys) -> None:
    loaded = api.load_task("sliding", EIGHT_MID)
    best = api.solve(loaded, "bfs", kernel="numpy")
    assert best.status == "optimal" and best.cost == 14
    below = _compile(capsys, tmp_path, "cnf", best.cost - 1, "below.cnf")
    at = _compile(capsys, tmp_path, "cnf", best.cost, "at.cnf")
    assert "c horizon 14: satisfiable iff a plan of at most 14 steps" in at.read_text(encoding="utf-8")
    with Solver(name="minisat22", bootstrap_with=CNF(from_file=str(below)).clauses) as s:
        assert s.solve() is False
    with Solver(name="minisat22", bootstrap_with=CNF(from_file=str(at)).clauses) as s:
        assert s.solve() is True
        plan = _plan_from_dimacs(at, s.get_model())
    check = ref.check_plan(loaded.task, plan)
    assert check.ok and check.cost == best.cost, check.message


def test_cnf_cost_bound(tmp_path: Path, capsys) -> None:
    """``--max-cost`` below the optimum makes even a long horizon unsatisfiable."""
    path = _compile(capsys, tmp_path, "cnf", 16, "bounded.cnf", "--max-cost", 13)
    with Solver(name="minisat22", bootstrap_with=CNF(from_file=str(path)).clauses) as s:
        assert s.solve() is False
    path = _compile(capsys, tmp_path, "cnf", 16, "bounded.cnf", "--max-cost", 14)
    with Solver(name="minisat22", bootstrap_with=CNF(from_file=str(path)).clauses) as s:
        assert s.solve() is True


@pytest.mark.parametrize("name", ["model.pbtxt", "model.pb"])
def test_cpsat_export_solves_to_the_optimum(tmp_path: Path, capsys, name: str) -> None:
    from ortools.sat import cp_model_pb2
    from ortools.sat.python import cp_model

    for horizon, want in ((13, "INFEASIBLE"), (15, "OPTIMAL")):
        path = _compile(capsys, tmp_path, "cpsat", horizon, name)
        m = cp_model.CpModel()
        if name.endswith(".pb"):
            proto = cp_model_pb2.CpModelProto()
            proto.ParseFromString(path.read_bytes())
            m.Proto().parse_text_format(str(proto))
        else:
            m.Proto().parse_text_format(path.read_text(encoding="utf-8"))
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        assert solver.status_name(solver.solve(m)) == want
        if want == "OPTIMAL":
            assert solver.objective_value == 14


@pytest.mark.parametrize("argv, code", [
    (["-T", "0"], EXIT_BAD_OPTION),
    (["-T", "-3"], EXIT_BAD_OPTION),
    (["-T", "x"], EXIT_BAD_OPTION),
    (["-T", "4", "--max-cost", "-1"], EXIT_BAD_OPTION),
    (["-T", "4", "--to", "pdf"], EXIT_BAD_OPTION),
])
def test_bad_compile_arguments(tmp_path: Path, capsys, argv: list[str], code: int) -> None:
    base = ["compile", "sliding", EIGHT_MID, "-o", tmp_path / "x.cnf"]
    if "--to" not in argv:
        base += ["--to", "cnf"]
    line = assert_one_line_error(*run_cli(base + argv, capsys), expected_code=code)
    assert "error" in line


@pytest.mark.parametrize("fmt", ["cnf", "cpsat"])
@pytest.mark.parametrize("where", ["missing-dir", "a-directory"])
def test_unwritable_output(tmp_path: Path, capsys, fmt: str, where: str) -> None:
    out = tmp_path / "no" / "such" / "x.out" if where == "missing-dir" else tmp_path
    line = assert_one_line_error(*run_cli(["compile", "sliding", EIGHT_MID, "--to", fmt, "-T", 3, "-o", out],
                                          capsys), expected_code=EXIT_OUTPUT)
    assert f"cannot write {out}" in line


def test_verify_unknown_engine_in_list(capsys) -> None:
    line = assert_one_line_error(*run_cli(["verify", "sliding", EIGHT_MID, "--engines", "bfs,bogus"], capsys),
                                 expected_code=EXIT_UNKNOWN_ENGINE)
    assert "bogus" in line


@pytest.mark.parametrize("engines", ["", ",", "bfs,,"])
def test_verify_empty_engine_list(capsys, engines: str) -> None:
    code, out, err = run_cli(["verify", "sliding", EIGHT_MID, "--engines", engines], capsys)
    if engines == "bfs,,":  # empty items are ignored: bfs alone runs (one paradigm: unconfirmed)
        assert code == 11, err
    else:
        assert_one_line_error(code, out, err, expected_code=EXIT_BAD_OPTION)


@pytest.mark.parametrize("option", ["horizon=0", "horizon=-2", "horizon=x", "run_bound_s=-1"])
@pytest.mark.parametrize("engine", ["sat", "cpsat"])
def test_bad_engine_horizon(capsys, engine: str, option: str) -> None:
    argv = ["solve", "sliding", EIGHT_MID, "-e", engine, "-E", option]
    line = assert_one_line_error(*run_cli(argv, capsys), expected_code=EXIT_BAD_OPTION)
    assert option.split("=")[0] in line
