"""The command line: the ``--json`` contract, limits, and the show / dump / models commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import load
from helpers import FAYAA, run_cli, write_klotski, write_sliding

from puzzleplan import api
from puzzleplan.solvers import Limits
from puzzleplan.verify import reference as ref

STATUSES = {"optimal", "solved", "unsolvable", "unknown", "limit"}




def replay_labels(task, labels: list[str]) -> tuple[list[int], int]:
    """Replay action labels from the initial state with the reference (first applicable match)."""
    state = list(task.init)
    cost = 0
    for label in labels:
        ks = [k for k, a in enumerate(task.actions) if a.label == label and ref.applicable(a, state)]
        assert ks, f"{label!r} is not applicable"
        # several ground copies may share a label (split costs); exactly one is applicable
        assert len(ks) == 1
        cost += task.actions[ks[0]].cost
        state = ref.apply(task, task.actions[ks[0]], state)
    return state, cost


# ----------------------------------------------------------------------------- the --json contract
def check_contract(doc: dict) -> None:
    for key in ("status", "cost", "optimal", "plan", "engine", "stats"):
        assert key in doc, key
    assert doc["status"] in STATUSES
    assert doc["optimal"] is (doc["status"] == "optimal")
    assert doc["cost"] is None or (isinstance(doc["cost"], int) and doc["cost"] >= 0)
    assert doc["plan"] is None or all(isinstance(x, str) for x in doc["plan"])
    assert (doc["plan"] is None) == (doc["cost"] is None)
    for key in ("expanded", "generated"):
        assert isinstance(doc["stats"][key], int) and doc["stats"][key] >= 0
    for key in ("time_s", "peak_mb"):
        assert isinstance(doc["stats"][key], (int, float)) and doc["stats"][key] >= 0


def test_json_contract_fayaa_117(capsys):
    inst = f"{FAYAA}#fayaa-117"
    # numpy kernel: this 15-piece layout's compiled kernel alone would take longer than the search
    code, out, err = run_cli(["solve", "klotski", inst, "--json", "--kernel", "numpy"], capsys)
    assert code == 0, err
    assert out.count("\n") == 1                    # one JSON object on one line
    doc = json.loads(out)
    check_contract(doc)
    assert doc["status"] == "optimal" and doc["cost"] == 18    # published minimum (fayaa.com)
    assert doc["engine"] == "bfs"
    assert doc["instance"] == inst
    assert doc["options"] == {"metric": "moves", "action": "cell"}
    assert doc["steps"] == len(doc["plan"])
    assert doc["stats"]["verified"] is True
    # the plan is replayable from the labels alone, independently of the engine's indices
    task = load("klotski", inst).task
    final, cost = replay_labels(task, doc["plan"])
    assert ref.is_goal(task, final) and cost == 18
    assert len(doc["moves"]) == 18


def test_json_is_utf8_not_ascii_escaped(tmp_path, capsys):
    p = tmp_path / "named.txt"
    p.write_text("name: 橫刀立馬\nsize: 3x3\ngoal: 2,2\nAB.\nCDE\nF.G\n", encoding="utf-8")
    code, out, err = run_cli(["solve", "klotski", p, "--json", "--kernel", "numpy"], capsys)
    assert code == 0
    assert "\\u" not in out
    check_contract(json.loads(out))


def test_json_for_unsolvable(tmp_path, capsys):
    p = write_klotski(tmp_path / "u.txt", ["BAAC", "BAAC", "DEEF", "DGGF", "H..I"])   # A is walled in
    code, out, err = run_cli(["solve", "klotski", p, "--json", "--kernel", "numpy"], capsys)
    assert code == 10
    doc = json.loads(out)
    check_contract(doc)
    assert doc["status"] == "unsolvable" and doc["cost"] is None and doc["plan"] is None and doc["proof"]


def test_json_with_enumerate(tmp_path, capsys):
    p = write_klotski(tmp_path / "t.txt", ["AB.", "CDE", "F.G"], size=(3, 3), goal=(2, 2))
    code, out, err = run_cli(["solve", "klotski", p, "--json", "--enumerate", "--kernel", "numpy",
                              "-O", "metric=steps"], capsys)
    assert code == 0
    doc = json.loads(out)
    check_contract(doc)
    task = api.load_task("klotski", str(p), ["metric=steps"]).task
    from helpers import reference_reachable

    assert doc["stats"]["reachable"] == len(reference_reachable(task))


def test_console_script_prints_one_json_line(tmp_path):
    p = write_sliding(tmp_path / "e.txt", [1, 2, 3, 4, 5, 6, 0, 7, 8], 3)
    script = Path(sys.executable).parent / "puzzleplan"
    proc = subprocess.run([str(script), "solve", "sliding", str(p), "--json", "--kernel", "numpy",
                           "--engine", "astar"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1
    doc = json.loads(lines[0])
    check_contract(doc)
    assert doc["cost"] == 2 and doc["plan"] == ["R", "R"]      # the blank moves right twice


# ----------------------------------------------------------------------------- limits
@pytest.mark.parametrize("engine", ["bfs", "ucs", "astar"])
@pytest.mark.parametrize("flag", [["--max-states", "10"], ["--time-limit", "0.000001"]],
                         ids=["max-states", "time-limit"])
def test_limits_end_cleanly_numpy(capsys, engine, flag):
    code, out, err = run_cli(["solve", "klotski", f"{FAYAA}#fayaa-001", "--json", "--kernel", "numpy",
                              "--engine", engine, *flag], capsys)
    assert code == 12, err
    # a time limit spent before the search began (loading) is said in one stderr line; JSON on stdout
    assert err == "" if flag[0] == "--max-states" else (len(err.splitlines()) <= 1 and "Traceback" not in err)
    doc = json.loads(out)
    check_contract(doc)
    assert doc["status"] == "limit" and doc["cost"] is None and doc["plan"] is None
    if flag[0] == "--max-states":
        # stops soon after passing the limit: nowhere near the 25,955 configurations
        assert doc["stats"]["expanded"] < 1000


# Korf (1985) instance 1, optimum 57, turned by 180 degrees so that its goal becomes the standard
# 1..15-blank-last goal (a rotation maps moves to moves, so the optimum is unchanged)
KORF_1 = [14, 13, 15, 7, 11, 12, 9, 5, 6, 0, 2, 1, 4, 8, 10, 3]
KORF_1_ROTATED = [16 - KORF_1[15 - i] if KORF_1[15 - i] else 0 for i in range(16)]


def test_idastar_time_limit_ends_cleanly(tmp_path, capsys):
    # ~10^8 IDA* nodes: far more than half a second allows
    p = write_sliding(tmp_path / "korf1.txt", KORF_1_ROTATED, 4)
    code, out, err = run_cli(["solve", "sliding", p, "--json", "--engine", "idastar", "--time-limit", "0.5"],
                             capsys)
    assert code == 12, err
    doc = json.loads(out)
    check_contract(doc)
    assert doc["status"] == "limit" and doc["cost"] is None


@pytest.mark.slow
def test_korf_1_rotated_published_optimum(tmp_path):
    p = write_sliding(tmp_path / "korf1.txt", KORF_1_ROTATED, 4)
    res = api.solve(api.load_task("sliding", str(p)), "idastar", Limits(), kernel="numba")
    assert res.status == "optimal" and res.cost == 57 and res.stats["verified"] is True


# Regression: the compiled bfs driver once looked at Limits only every 65,536 expansions, so a small
# --max-states (or a short --time-limit) was ignored by any smaller search (status optimal with
# 24,000 states stored for --max-states 10) and overshot by up to a slice otherwise.
def test_max_states_with_the_compiled_bfs(fayaa001_steps, catalog):
    res = api.solve(fayaa001_steps, "bfs", Limits(max_states=10), kernel="numba")
    assert res.status == "limit" and res.cost is None
    # the 8-puzzle's hardest start needs all 181,440 states: stop near the limit, not a slice later
    res = api.solve(catalog("eight"), "bfs", Limits(max_states=1000), kernel="numba")
    assert res.status == "limit"
    assert res.stats["states"] < 1000 + 20_000


def test_max_states_with_the_compiled_bfs_cli(capsys):
    argv = ["solve", "klotski", f"{FAYAA}#fayaa-001", "--max-states", "10", "--json"]
    code, out, err = run_cli(argv, capsys)
    assert code == 12 and json.loads(out)["status"] == "limit"


# ----------------------------------------------------------------------------- show, dump, models
def test_show_replays_a_saved_plan(tmp_path, capsys):
    p = write_klotski(tmp_path / "t.txt", ["AB.", "CDE", "F.G"], size=(3, 3), goal=(2, 2))
    argv = ["solve", "klotski", p, "--json", "--kernel", "numpy", "-O", "metric=steps"]
    code, out, err = run_cli(argv, capsys)
    assert code == 0
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(out, encoding="utf-8")
    n = len(json.loads(out)["plan"])
    code, out, err = run_cli(["show", "klotski", p, "-O", "metric=steps", "--plan", plan_file], capsys)
    assert code == 0, err
    steps = [b for b in out.strip().split("\n\n") if b.startswith("step ")]
    assert len(steps) == n
    assert steps[-1].startswith(f"step {n}: ")
    final_board = steps[-1].splitlines()[1:4]
    assert final_board[2][2] == "A"                    # A drawn on its goal cell


def test_show_rejects_a_plan_that_does_not_apply(tmp_path, capsys):
    p = write_klotski(tmp_path / "t.txt", ["AB.", "CDE", "F.G"], size=(3, 3), goal=(2, 2))
    plan_file = tmp_path / "plan.txt"
    plan_file.write_text("B right\n\nA up\n", encoding="utf-8")     # A up: off the board
    code, out, err = run_cli(["show", "klotski", p, "--plan", plan_file], capsys)
    assert code == 34
    assert err.strip().count("\n") == 0 and f"{plan_file}:3:" in err


def test_dump_json_describes_the_task(capsys):
    code, out, err = run_cli(["dump", "klotski", f"{FAYAA}#fayaa-001", "--json"], capsys)
    assert code == 0
    doc = json.loads(out)
    task = load("klotski", f"{FAYAA}#fayaa-001").task
    assert len(doc["actions"]) == len(task.actions)
    assert [v["name"] for v in doc["variables"]] == task.names
    code, out, err = run_cli(["dump", "klotski", f"{FAYAA}#fayaa-001"], capsys)
    assert code == 0 and out.count("  action ") == len(task.actions)


def test_models_lists_bundled_models_and_engines(capsys):
    code, out, err = run_cli(["models"], capsys)
    assert code == 0
    for name in api.bundled_models():
        assert f"{name}:" in out
    assert {"klotski", "sliding"} <= set(api.bundled_models())
    for engine in ("bfs", "ucs", "astar", "idastar"):
        assert f"  {engine}:" in out


# ----------------------------------------------------------------------------- verify (cross-check)
MODELS_DIR = Path(__file__).parent / "models"


def test_verify_engines_agree(tmp_path, capsys):
    p = write_klotski(tmp_path / "t.txt", ["AB.", "CDE", "F.G"], size=(3, 3), goal=(2, 2))
    code, out, err = run_cli(["verify", "klotski", p, "--engines", "bfs,ucs,astar", "--kernel", "numpy",
                              "--json"], capsys)
    assert code == 11, err     # one paradigm (explicit-state) only: unconfirmed
    doc = json.loads(out)
    from helpers import reference_optimum

    assert doc["agree"] is True and doc["problems"] == [] and doc["verdict"] == "unconfirmed"
    assert doc["optimum"] == reference_optimum(api.load_task("klotski", str(p)).task)
    assert set(doc["engines"]) == {"bfs", "ucs", "astar"}
    assert all(e["verified"] is True and e["cost"] == doc["optimum"] for e in doc["engines"].values())


def test_verify_catches_an_engine_misled_by_a_lying_heuristic(tmp_path, capsys):
    inst = tmp_path / "g.txt"
    inst.write_text("name: graph\n", encoding="utf-8")
    model = MODELS_DIR / "liar.py"
    # the premise: astar alone is fooled (its plan is valid, its "optimal" cost is not)
    loaded = api.load_task(str(model), str(inst))
    assert api.solve(loaded, "bfs", Limits(), kernel="numpy").cost == 2
    fooled = api.solve(loaded, "astar", Limits(), kernel="numpy")
    assert fooled.cost == 3 and fooled.stats["verified"] is True
    code, out, err = run_cli(["verify", model, inst, "--engines", "bfs,astar", "--kernel", "numpy", "--json"],
                             capsys)
    assert code == 20, (out, err)
    doc = json.loads(out)
    assert doc["agree"] is False and doc["problems"]
    code, out, err = run_cli(["verify", model, inst, "--engines", "bfs,ucs", "--kernel", "numpy"], capsys)
    assert code == 11     # no contradiction, but both engines are explicit-state: unconfirmed


def test_verify_unsolvable_and_bad_engine_lists(tmp_path, capsys):
    p = write_klotski(tmp_path / "u.txt", ["BAAC", "BAAC", "DEEF", "DGGF", "H..I"])
    code, out, err = run_cli(["verify", "klotski", p, "--engines", "bfs,ucs", "--kernel", "numpy"], capsys)
    assert code == 11 and "unconfirmed: unsolvable" in out, err   # proven by one paradigm only
    code, out, err = run_cli(["verify", "klotski", p, "--engines", "bfs,warp"], capsys)
    assert code == 33 and len(err.strip().splitlines()) == 1 and out == ""
    code, out, err = run_cli(["verify", "klotski", p, "--engines", " , "], capsys)
    assert code == 31 and len(err.strip().splitlines()) == 1 and out == ""


def test_engine_options_are_checked(capsys):
    base = ["solve", "klotski", f"{FAYAA}#fayaa-117", "--kernel", "numpy"]
    for opt in ("colour=red", "noequals"):
        code, out, err = run_cli([*base, "-E", opt], capsys)
        assert code == 31, (opt, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and out == ""


def test_show_does_not_accept_a_plan_that_misses_the_goal(tmp_path, capsys):
    p = write_klotski(tmp_path / "t.txt", ["AB.", "CDE", "F.G"], size=(3, 3), goal=(2, 2))
    plan_file = tmp_path / "short.txt"
    plan_file.write_text("B right\n", encoding="utf-8")               # applicable, but A is not home
    code, out, err = run_cli(["show", "klotski", p, "--plan", plan_file], capsys)
    assert code == 34
    assert out.count("step ") == 1
