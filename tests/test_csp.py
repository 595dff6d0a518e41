"""Generic constraint models: every exact engine enumerates exactly the assignments a brute-force
loop over the plain-Python checker accepts (seeded random models with plain constraints and globals).
"""

from __future__ import annotations

import itertools
import random

import pytest

from puzzleplan import api
from puzzleplan.solvers import Limits
from puzzleplan.verify.csp import check_assignment

MODEL = '''
"""Random small constraint model for the tests (built from a seed)."""
import random
from puzzleplan.lang import Abs, CspModel, Max, Min, Record

NAME = "randcsp"

def parse(rec: Record) -> int:
    return int(rec.lines[0][1])

def build(seed: int) -> CspModel:
    rng = random.Random(seed)
    m = CspModel("randcsp")
    xs = [m.var(f"x{i}", rng.randint(-1, 1), rng.randint(2, 4)) for i in range(5)]
    pick = lambda k: rng.sample(xs, k)
    for _ in range(rng.randint(2, 4)):
        a, b, c = pick(3)
        form = rng.randrange(6)
        if form == 0:
            m.constraint(a + b != c)
        elif form == 1:
            m.constraint(Abs(a - b) <= rng.randint(0, 3))
        elif form == 2:
            m.constraint((a < b) | (c == rng.randint(0, 3)))
        elif form == 3:
            m.constraint(Max(a, b) - Min(b, c) >= rng.randint(-1, 2))
        elif form == 4:
            m.constraint(a * b % 3 != 1)
        else:
            m.constraint(a // 2 == c // 2)
    if rng.random() < 0.6:
        m.all_different(pick(rng.randint(2, 4)))
    if rng.random() < 0.6:
        s = pick(rng.randint(2, 4))
        m.records(s, rng.randint(1, len(s)))
    return m
'''


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("csp")
    (d / "randcsp.py").write_text(MODEL, encoding="utf-8")
    return d


def brute_force(task) -> set[tuple[int, ...]]:
    doms = [range(v.lo, v.hi + 1) for v in task.variables]
    return {vals for vals in itertools.product(*doms) if check_assignment(task, list(vals)).ok}


@pytest.mark.parametrize("seed", range(30))
def test_exact_engines_enumerate_exactly_the_checker_accepted_assignments(model_file, seed):
    inst = model_file / f"s{seed}.txt"
    inst.write_text(f"{seed}\n", encoding="utf-8")
    loaded = api.load_task(str(model_file / "randcsp.py"), str(inst))
    want = brute_force(loaded.task)
    cap = 25   # enumerate up to 25 solutions: every one blocked and re-solved
    for engine in ("cpsat", "sat", "backtrack"):
        res = api.solve(loaded, engine, Limits(), count=cap)
        if not want:
            assert res.status == "unsolvable", engine
            continue
        assert res.status == "solved" and res.stats["verified"], engine
        assert res.solutions == min(len(want), cap), engine
        assert res.stats["complete"] == (len(want) < cap), engine


def test_ga_on_random_models_returns_only_checked_assignments(model_file):
    rng = random.Random(5)
    for seed in rng.sample(range(30), 4):
        inst = model_file / f"g{seed}.txt"
        inst.write_text(f"{seed}\n", encoding="utf-8")
        loaded = api.load_task(str(model_file / "randcsp.py"), str(inst))
        feasible = bool(brute_force(loaded.task))
        for preset in ("paper", "improved"):
            res = api.solve(loaded, "ga", Limits(), preset=preset, seed=seed, evaluations=20_000)
            if res.status == "solved":
                assert res.stats["verified"] and feasible
            else:
                assert res.status == "limit" and res.stats["best_fitness"] < 0
