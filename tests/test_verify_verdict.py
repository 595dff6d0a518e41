"""``verify``'s verdict says which independent paradigms proved what (issue: an honest verdict).

The judge is tested on hand-made results for each rule, then end to end: the CLI's defaults, streaming
rows, 100-column text, ``--count`` on constraint models and ``--jobs``.
"""

from __future__ import annotations

import json

import pytest
from helpers import run_cli, write_klotski

from puzzleplan import crosscheck
from puzzleplan.solvers import Result, registry
from puzzleplan.solvers.csp import CspResult

EXP, SYM, EXT = registry.EXPLICIT, registry.SYMBOLIC, registry.EXTERNAL


def _r(status: str, cost: int | None = None, plan: bool = True, verified: bool = True, **stats) -> Result:
    return Result(status, "x", cost, [0] * (cost or 0) if plan and cost is not None else None,
                  {"verified": verified, **stats})


def _judge(**named):
    results = {n: r for n, (r, _) in named.items()}
    return crosscheck.judge(results, {n: p for n, (_, p) in named.items()})


def test_one_paradigm_is_unconfirmed_and_lists_the_others_bounds():
    v = _judge(bfs=(_r("optimal", 18), EXP), sat=(_r("limit", None, lower_bound=10), SYM),
               cpsat=(_r("limit"), SYM))
    assert v.verdict == "unconfirmed" and v.optimum == 18
    assert crosscheck.exit_code(v) == crosscheck.EXIT_UNCONFIRMED == 11
    assert crosscheck.bounds(v.results["sat"]) == (10, None)
    assert "no verdict from sat, cpsat" in crosscheck.verdict_line(v)


def test_two_engines_of_one_paradigm_do_not_confirm():
    v = _judge(bfs=(_r("optimal", 18), EXP), astar=(_r("optimal", 18), EXP))
    assert v.verdict == "unconfirmed"


def test_two_paradigms_confirm():
    v = _judge(bfs=(_r("optimal", 18), EXP), astar=(_r("optimal", 18), EXP), sat=(_r("optimal", 18), SYM))
    assert v.verdict == "confirmed" and crosscheck.exit_code(v) == 0
    assert v.provers == {EXP: ["bfs", "astar"], SYM: ["sat"]}


def test_unsolvability_confirmed_exits_10():
    v = _judge(bfs=(_r("unsolvable", plan=False), EXP), sat=(_r("unsolvable", plan=False), SYM))
    assert v.verdict == "confirmed" and v.claim == "unsolvable" and crosscheck.exit_code(v) == 10


@pytest.mark.parametrize("other", [
    _r("optimal", 17),                       # a different proof
    _r("solved", 16),                        # a verified plan below the proven optimum
    _r("limit", None, lower_bound=19),       # a lower bound above it
    _r("unsolvable", plan=False),            # no plan, but another engine has one
])
def test_contradictions_disagree(other):
    v = _judge(bfs=(_r("optimal", 18), EXP), sat=(other, SYM))
    assert v.verdict == "disagree" and crosscheck.exit_code(v) == 20 and v.problems


def test_bounds_that_fit_do_not_disagree():
    v = _judge(bfs=(_r("optimal", 18), EXP), sat=(_r("solved", 20, lower_bound=12), SYM))
    assert v.verdict == "unconfirmed"


def test_nothing_proven_is_unknown():
    v = _judge(sat=(_r("limit"), SYM), fd=(_r("solved", 30), EXT))
    assert v.verdict == "unknown" and crosscheck.exit_code(v) == 12


def test_a_rejected_plan_is_exit_21_whatever_else():
    v = _judge(bfs=(_r("optimal", 18), EXP), sat=(_r("optimal", 18, verified=False), SYM))
    assert v.plan_rejected and crosscheck.exit_code(v) == 21


def _csp(solutions, complete, status="solved"):
    return CspResult(status, "x", 0, None, {"verified": True, "count": 2, "complete": complete},
                     assignment=[1], solutions=solutions)


def test_constraint_counts():
    v = _judge(backtrack=(_csp(1, True), registry.CONSTRAINT_SEARCH), sat=(_csp(1, True), SYM))
    assert v.verdict == "confirmed" and v.claim == "unique solution"
    v = _judge(backtrack=(_csp(1, True), registry.CONSTRAINT_SEARCH), sat=(_csp(2, False), SYM))
    assert v.verdict == "disagree"
    v = _judge(backtrack=(_csp(1, True), registry.CONSTRAINT_SEARCH), sat=(_csp(1, False, "limit"), SYM))
    assert v.verdict == "unconfirmed"


# ------------------------------------------------------------------------------------------ end to end
def test_cli_confirmed_across_paradigms_and_narrow_text(tmp_path, capsys):
    p = write_klotski(tmp_path / "t.txt", ["AB.", "CDE", "F.G"], size=(3, 3), goal=(2, 2))
    code, out, err = run_cli(["verify", "klotski", p, "--engines", "bfs,ucs,sat", "--kernel", "numpy",
                              "-O", "metric=steps"], capsys)
    assert code == 0, err
    lines = out.strip().splitlines()
    assert any(ln.startswith("confirmed: optimum ") for ln in lines[-2:])
    assert all(len(ln) <= crosscheck.WIDTH for ln in lines)
    assert sum(ln.split()[0] in ("bfs", "ucs", "sat") for ln in lines[3:-1]) == 3
    code, out, err = run_cli(["verify", "klotski", p, "--engines", "bfs,ucs", "--kernel", "numpy", "--json"],
                             capsys)
    assert code == crosscheck.EXIT_UNCONFIRMED, err
    doc = json.loads(out)
    assert doc["verdict"] == "unconfirmed" and doc["confirmed_by"] == {EXP: ["bfs", "ucs"]}


def test_cli_default_engines_and_limit_are_printed(tmp_path, capsys):
    p = write_klotski(tmp_path / "t.txt", ["AB.", "CDE", "F.G"], size=(3, 3), goal=(2, 2))
    code, out, err = run_cli(["verify", "klotski", p, "-O", "metric=steps", "--kernel", "numpy", "--json"],
                             capsys)
    doc = json.loads(out)
    from puzzleplan import api

    expected = crosscheck.default_engines(api.load_task("klotski", str(p), ["metric=steps"]), "numpy")
    assert list(doc["engines"]) == expected and "sat" in expected and "bfs" in expected
    assert doc["verdict"] == "confirmed" and code == 0, err


def test_cli_count_on_a_constraint_model(capsys):
    inst = "instances/skyscraper/codewars-4x4-1.txt"
    argv = ["verify", "skyscraper", inst, "--count", "2", "--engines", "backtrack,sat,cpsat", "--json"]
    code, out, err = run_cli(argv, capsys)
    doc = json.loads(out)
    assert doc["verdict"] == "confirmed" and doc["claim"] == "unique solution", (doc, err)
    assert code == 0


def test_cli_jobs_gives_the_same_verdict(tmp_path, capsys):
    p = write_klotski(tmp_path / "t.txt", ["AB.", "CDE", "F.G"], size=(3, 3), goal=(2, 2))
    argv = ["verify", "klotski", p, "--engines", "bfs,sat", "--kernel", "numpy", "--json",
            "-O", "metric=steps"]
    code1, out1, _ = run_cli(argv, capsys)
    code2, out2, _ = run_cli([*argv, "--jobs", "2"], capsys)
    a, b = json.loads(out1), json.loads(out2)
    assert code1 == code2 == 0 and a["verdict"] == b["verdict"] == "confirmed"
    assert a["optimum"] == b["optimum"]


def test_cli_refuses_engines_that_do_not_apply(capsys):
    code, out, err = run_cli(["verify", "sliding", "instances/sliding/eight.txt#eight-easy", "--engines",
                              "bfs,backtrack"], capsys)
    assert code == 31 and len(err.strip().splitlines()) == 1 and "constraint models only" in err


def test_cli_certificate_dir_writes_and_checks(tmp_path, capsys):
    p = write_klotski(tmp_path / "t.txt", ["AB.", "CDE", "F.G"], size=(3, 3), goal=(2, 2))
    d = tmp_path / "certs"
    argv = ["verify", "klotski", p, "--engines", "bfs,sat", "--kernel", "numpy", "-O", "metric=steps",
            "--certificate", d, "--json"]
    code, out, err = run_cli(argv, capsys)
    doc = json.loads(out)
    assert code == 0, err
    c = doc["certificate"]
    assert c["check"]["valid"] is True and c["check"]["cost"] == doc["optimum"]
    files = list(d.iterdir())
    assert len(files) == 1 and str(files[0]) == c["path"]
    # with --jobs the check runs in as many processes, to the same verdict and counts
    code, out, err = run_cli([*argv, "--jobs", 2], capsys)
    c2 = json.loads(out)["certificate"]
    assert code == 0 and c2["check"]["valid"] is True, err
    for key in ("states", "transitions", "cost"):
        assert c2["check"][key] == c["check"][key]
    # the file stands on its own: check-certificate accepts it, and rejects it once a byte is changed
    code, out, err = run_cli(["check-certificate", "klotski", p, "-O", "metric=steps", files[0]], capsys)
    assert code == 0, err
    data = bytearray(files[0].read_bytes())
    data[-1] ^= 0xFF
    files[0].write_bytes(bytes(data))
    code, out, err = run_cli(["check-certificate", "klotski", p, "-O", "metric=steps", files[0]], capsys)
    assert code in (22, 30), (out, err)


def test_an_engine_that_refuses_the_task_is_a_row_not_the_end(tmp_path, capsys, monkeypatch):
    """Fast Downward refuses Kwirk's export (a condition too large for PDDL): that engine proved
    nothing, and the others still run and are judged."""
    from puzzleplan import api
    from puzzleplan.lang.errors import ModelError

    real = api.solve

    def solve(loaded, engine, *a, **k):
        if engine == "fd":
            raise ModelError("a condition over 18 variables has too many value combinations")
        return real(loaded, engine, *a, **k)

    monkeypatch.setattr(api, "solve", solve)
    p = write_klotski(tmp_path / "t.txt", ["AB.", "CDE", "F.G"], size=(3, 3), goal=(2, 2))
    argv = ["verify", "klotski", p, "--engines", "bfs,fd,sat", "--kernel", "numpy", "-O", "metric=steps",
            "--json"]
    code, out, err = run_cli(argv, capsys)
    doc = json.loads(out)
    assert code == 0 and doc["verdict"] == "confirmed", err
    assert doc["engines"]["fd"]["status"] == "unknown" and "did not run" in doc["engines"]["fd"]["message"]


def test_without_count_every_engine_proves_only_that_a_solution_exists():
    """backtrack may exhaust a small puzzle after its first solution (complete, one found) while sat
    stops at the first; without --count neither was asked to count, so they agree."""
    v = _judge(backtrack=(_csp(1, True), registry.CONSTRAINT_SEARCH), sat=(_csp(None, False), SYM))
    for r in v.results.values():
        r.stats["count"] = 1
    v = crosscheck.judge(v.results, v.paradigms)
    assert v.verdict == "confirmed" and v.claim == "a solution exists"


def test_a_model_error_met_by_an_engine_still_ends_verify(tmp_path, capsys):
    """An action writing outside its domain is the model's bug, not one engine refusing the task."""
    from pathlib import Path

    inst = tmp_path / "o.txt"
    inst.write_text("start: 0\n", encoding="utf-8")
    model = Path(__file__).parent / "models" / "overflow.py"
    code, out, err = run_cli(["verify", model, inst, "--engines", "bfs,sat", "--kernel", "numpy"], capsys)
    assert code == 32 and "outside its domain" in err and len(err.strip().splitlines()) == 1
