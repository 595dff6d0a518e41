"""The engine registry is the one place engines and their options are declared.

Its records must match the engine functions (so an option added to a function but not to the registry, or
a default changed in one place only, fails here), and every ``-E`` value is range-checked from it.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from helpers import run_cli

from puzzleplan.lang.errors import EXIT_BAD_OPTION, EXIT_UNKNOWN_ENGINE, OptionError, PuzzleError
from puzzleplan.solvers import registry

EIGHT_EASY = "instances/sliding/eight.txt#eight-easy"
PKG = Path(__file__).resolve().parent.parent / "puzzleplan"


def _modes():
    for e in registry.ENGINES:
        for kind in e.kinds:
            yield e.name, kind, e.mode(kind)


@pytest.mark.parametrize("name,kind,mode", list(_modes()), ids=lambda x: x if isinstance(x, str) else "")
def test_record_matches_the_engine_function(name, kind, mode):
    params = inspect.signature(mode.function()).parameters
    first = ("task",) if kind == registry.CONSTRAINT else ("kernel",)
    user = {n: p for n, p in params.items() if n not in (*first, "limits", *mode.internal)}
    declared = {o.name: o for o in mode.options}
    assert set(user) == set(declared), (name, kind)
    for n, p in user.items():
        assert p.default == declared[n].default, (name, kind, n)
        if declared[n].default is not None:
            assert isinstance(declared[n].default, declared[n].type), (name, kind, n)


def test_every_engine_has_a_kind_a_paradigm_and_help():
    for e in registry.ENGINES:
        assert e.kinds and e.description
        for kind in e.kinds:
            m = e.mode(kind)
            assert m.paradigm in (registry.EXPLICIT, registry.SYMBOLIC, registry.EXTERNAL,
                                  registry.CONSTRAINT_SEARCH, registry.HEURISTIC)
            assert all(o.help for o in m.options)


def test_engine_names_appear_nowhere_else_as_a_table():
    """No second list of engine names in the package (the old ENGINES/CSP_ONLY/TASK_ONLY/MACRO sets)."""
    pattern = re.compile(r"(frozenset|set)\(\{\s*\"(bfs|ucs|astar|idastar|sat|cpsat|fd|backtrack|ga)\"")
    offenders = [str(p) for p in PKG.rglob("*.py")
                 if p.name != "registry.py" and pattern.search(p.read_text())]
    assert offenders == []


@pytest.mark.parametrize("pair,ok", [
    ("horizon=40", 40), ("horizon=0", None), ("horizon=1e20", None), ("horizon=100000000000000000000", None),
    ("workers=0", None), ("workers=2", 2), ("symmetry=no", False), ("symmetry=maybe", None),
    ("run_bound_s=nan", None), ("run_bound_s=-1", None), ("run_bound_s=2.5", 2.5), ("seed=-1", None),
])
def test_cpsat_options_are_typed_and_range_checked(pair, ok):
    key = pair.split("=")[0]
    if ok is None:
        with pytest.raises(OptionError) as e:
            registry.parse_options("cpsat", registry.TRANSITION, [pair])
        assert len(str(e.value)) < 200 and key in str(e.value)
    else:
        assert registry.parse_options("cpsat", registry.TRANSITION, [pair]) == {key: ok}


@pytest.mark.parametrize("pair", ["population=-1", "population=1e9", "mutation=2", "keep=nan", "preset=best"])
def test_ga_options_out_of_range_are_refused_at_the_cli(pair, capsys):
    argv = ["solve", "sliding", EIGHT_EASY, "-e", "ga", "-E", pair, "--kernel", "numpy"]
    code, out, err = run_cli(argv, capsys)
    assert code == EXIT_BAD_OPTION, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and out == ""


def test_unknown_engine_and_wrong_model_kind():
    with pytest.raises(PuzzleError) as e:
        registry.get("warp")
    assert e.value.code == EXIT_UNKNOWN_ENGINE
    with pytest.raises(OptionError, match="constraint models only"):
        registry.mode_for("backtrack", registry.TRANSITION, "sliding")
    with pytest.raises(OptionError, match="transition models only"):
        registry.mode_for("bfs", registry.CONSTRAINT, "sudoku")


def test_verify_defaults_follow_kind_cost_and_heuristic():
    unit_h = registry.defaults_for_verify(registry.TRANSITION, "unit", True)
    assert {"bfs", "ucs", "astar", "idastar", "sat", "cpsat"} <= set(unit_h) and "ga" not in unit_h
    general = registry.defaults_for_verify(registry.TRANSITION, "general", False)
    assert "bfs" not in general and "ucs" in general and "astar" not in general and "idastar" not in general
    constraint = registry.defaults_for_verify(registry.CONSTRAINT, None, False)
    assert set(constraint) == {"sat", "cpsat", "backtrack"}
    no_fd = registry.defaults_for_verify(registry.TRANSITION, "unit", False, installed=lambda extra: False)
    assert "fd" not in no_fd


def test_models_lists_every_engine_option(capsys):
    code, out, _ = run_cli(["models"], capsys)
    assert code == 0
    for e in registry.ENGINES:
        assert f"  {e.name}: " in out
        for kind in e.kinds:
            for o in e.mode(kind).options:
                assert f"-E {o.name}=" in out
