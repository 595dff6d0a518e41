"""Weighted A* (``astar -E weight=W``): a plan, never a claim of optimality, and a lower bound
that follows from the weight.  Checked against the plain-Python Dijkstra of the reference
semantics (tests/helpers.py) on seeded random 8-puzzles and on small Microban levels (macro
form, the pushes metric), where the optima come from that reference or from ucs."""

from __future__ import annotations

import math
import random
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from helpers import reference_optimum, sliding_walk, write_sliding

from puzzleplan import api
from puzzleplan.cli import main
from puzzleplan.lang.errors import OptionError
from puzzleplan.solvers import Limits
from puzzleplan.solvers.bestfirst import _scaled
from puzzleplan.solvers.progress import Collect
from puzzleplan.verify import reference as ref

ROOT = Path(__file__).resolve().parent.parent
MICROBAN = ROOT / "instances" / "sokoban" / "microban.xsb"
WEIGHTS = (1.5, 2.0, 5.0)


def _check_weighted(loaded: api.Loaded, res: api.Result, weight: float, optimum: int) -> None:
    assert res.status == "solved", (res.status, res.message)
    chk = ref.check_plan(loaded.task, res.plan)
    assert chk.ok and chk.cost == res.cost, chk.message
    assert optimum <= res.cost <= weight * optimum
    bound = res.stats["lower_bound"]
    assert math.ceil(res.cost / weight) <= bound <= optimum
    assert "at most" in res.message and "optimal" not in res.proof


@pytest.mark.parametrize("seed", range(3))
def test_weighted_plans_cost_at_most_weight_times_the_optimum_on_8_puzzles(tmp_path, seed):
    rng = random.Random(100 + seed)
    goal = list(range(1, 9)) + [0]
    for i in range(3):
        start = sliding_walk(3, goal, rng, rng.randrange(10, 26))
        loaded = api.load_task("sliding", str(write_sliding(tmp_path / f"s{i}.txt", start, 3, goal)), [])
        optimum = reference_optimum(loaded.task)
        plain = api.solve(loaded, "astar", Limits(), kernel="numpy")
        assert plain.status == "optimal" and plain.cost == optimum
        assert api.solve(loaded, "astar", Limits(), kernel="numpy", weight=1.0).cost == optimum
        for w in WEIGHTS:
            _check_weighted(loaded, api.solve(loaded, "astar", Limits(), kernel="numpy", weight=w), w,
                            optimum)


@pytest.mark.parametrize("level", [1, 2, 5, 9])
def test_weighted_plans_on_microban_in_macro_form(level):
    loaded = api.load_task("sokoban", str(MICROBAN), [f"level={level}", "metric=pushes"])
    optimum = api.solve(loaded, "ucs", Limits(), kernel="numpy")
    assert optimum.status == "optimal"
    for w in WEIGHTS:
        _check_weighted(loaded, api.solve(loaded, "astar", Limits(), kernel="numpy", weight=w), w,
                        optimum.cost)


def test_a_weighted_run_at_its_limit_claims_only_the_start_heuristic(tmp_path):
    loaded = api.load_task("sokoban", str(MICROBAN), ["level=144", "metric=pushes"])
    res = api.solve(loaded, "astar", Limits(max_states=2000), kernel="numpy", weight=3.0)
    plain = api.solve(loaded, "astar", Limits(max_states=2000), kernel="numpy")
    assert res.status == "limit" and plain.status == "limit"
    assert res.stats["lower_bound"] <= plain.stats["lower_bound"]   # the start's h, not a weighted f
    assert "the heuristic at the start" in res.message


@pytest.mark.parametrize("text", ["0.5", "0", "-2", "abc", "1000"])
def test_a_weight_out_of_range_is_a_one_line_error(capsys, text):
    rc = main(["solve", "sokoban", str(MICROBAN), "-O", "level=1", "-e", "astar", "-E", f"weight={text}"])
    err = capsys.readouterr().err
    assert rc == 31 and "weight" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_the_weighted_key_is_exact_and_does_not_overflow_on_large_estimates():
    """A tie-broken metric's h can be near 2^40; h * numerator would leave int64 for a weight
    such as 99.999 (99999/1000).  The key is floor(W h), exactly, either way."""
    rng = np.random.default_rng(3)
    h = np.concatenate([rng.integers(0, 1 << 50, 200), np.array([0, 1, 999, (1 << 50) - 1])]).astype(np.int64)
    for w in (Fraction(3, 2), Fraction(99999, 1000), Fraction(100), Fraction(1001, 1000)):
        want = [int(x) * w.numerator // w.denominator for x in h]
        assert _scaled(h, w).tolist() == want
        assert _scaled(int(h[5]), w) == want[5]


def test_a_library_caller_gets_the_option_error_too():
    loaded = api.load_task("sokoban", str(MICROBAN), ["level=1", "metric=pushes"])
    with pytest.raises(OptionError, match="weight"):
        api.solve(loaded, "astar", Limits(), kernel="numpy", weight=0.5)


def test_a_weighted_run_names_its_layers_and_progress_by_the_weighted_key():
    """The weighted keys bound nothing, so they must not be reported as f layers or an f-bound."""
    loaded = api.load_task("sokoban", str(MICROBAN), ["level=144", "metric=pushes"])
    seen = Collect()
    res = api.solve(loaded, "astar", Limits(max_states=3000, progress=seen), kernel="numpy", weight=3.0)
    events = seen.updates
    assert "f_layers" not in res.stats
    assert sum(res.stats["weighted_layers"].values()) == res.stats["expanded"]
    assert events and all("f_bound" not in e and "weighted_key" in e for e in events)
    plain = api.solve(loaded, "astar", Limits(max_states=3000), kernel="numpy")
    assert "weighted_layers" not in plain.stats
    assert sum(plain.stats["f_layers"].values()) == plain.stats["expanded"]
