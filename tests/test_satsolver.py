"""Every pysat name reaches the SAT engines either as a working solver or as a one-line refusal.

pysat lists back ends that this build lacks (NoSuchSolverError), that have no conflict-limited solve
(Lingeling: no time limit could stop it) or that ignore assumptions (Kissat: the horizon search's goal
literal would be dropped); each used to end in a traceback.  A solver that is accepted must give the
optimum that bfs proves.
"""

from __future__ import annotations

import pytest
from helpers import ROOT, run_cli
from pysat.solvers import SolverNames

from puzzleplan import api, cli
from puzzleplan.lang.errors import OptionError
from puzzleplan.solvers.result import Limits
from puzzleplan.solvers.satsolver import check_solver, usable

NAMES = sorted(k for k in vars(SolverNames) if not k.startswith("_"))
EIGHT = str(ROOT / "instances" / "sliding" / "eight.txt") + "#eight-mid"


@pytest.fixture(scope="module")
def optimum() -> int:
    r = api.solve(api.load_task("sliding", EIGHT), "bfs", Limits(time_s=60), kernel="numpy")
    assert r.status == "optimal"
    return int(r.cost)


@pytest.mark.parametrize("name", NAMES)
def test_each_pysat_name_solves_right_or_is_refused(name: str, optimum: int,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["solve", "sliding", EIGHT, "-e", "sat", "-E", f"solver={name}",
                              "--kernel", "numpy", "--time-limit", "60", "--json"], capsys)
    assert "Traceback" not in err
    if name in usable():
        assert code == 0, err
        assert f'"cost": {optimum}' in out and '"status": "optimal"' in out
    else:
        assert code == 31, err
        line = err.strip()
        assert line.startswith("puzzleplan: error: engine sat: SAT solver") and "\n" not in line
        assert len(line) <= cli.MAX_ERROR_CHARS


def test_the_default_and_an_unknown_name() -> None:
    assert check_solver("sat", "cadical195") == "cadical195"
    assert "cadical195" in usable()
    with pytest.raises(OptionError, match="no solver by that name"):
        check_solver("pdr", "no-such-solver")


@pytest.mark.parametrize("argv", [
    ["solve", "zpg", str(ROOT / "instances/zpg/suite-unsolvable-01.txt"), "-e", "pdr"],
    ["solve", "sudoku", str(ROOT / "instances/sudoku/puzzles.txt"), "-e", "sat"],
])
def test_pdr_and_the_constraint_engine_refuse_too(argv: list[str],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    bad = next((n for n in NAMES if n not in usable()), "no-such-solver")
    code, _, err = run_cli([*argv, "-E", f"solver={bad}", "--kernel", "numpy"], capsys)
    assert code == 31, err
    assert "Traceback" not in err and "cannot be used" in err
