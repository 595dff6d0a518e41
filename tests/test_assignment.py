"""MinAssignment: the cheapest assignment of rows to distinct columns as a language node.

The plain-Python Hungarian method (reference checker, constant folding) and its compiled twin
(numpy and numba kernels) are each compared with a brute force over all permutations, on
hypothesis-drawn matrices; the node's folding, bounds and substitution are checked against
evaluation; and the Sokoban ``matching`` heuristic built on it is compared kernel against
reference on random states of a 6-box level, and against the weaker heuristics it must dominate.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from puzzleplan import api
from puzzleplan.encodings.jitlib import assign_rows
from puzzleplan.lang import MinAssignment
from puzzleplan.lang.expr import bounds, const, min_assignment, substitute, var
from puzzleplan.verify import reference as ref

ROOT = Path(__file__).resolve().parent.parent
XSOKOBAN = ROOT / "instances" / "sokoban" / "xsokoban90.xsb"


def brute(flat: list[int], n: int) -> int:
    return min(sum(flat[i * n + p[i]] for i in range(n)) for p in itertools.permutations(range(n)))


matrices = st.integers(1, 6).flatmap(
    lambda n: st.tuples(st.just(n), st.lists(st.integers(-30, 60), min_size=n * n, max_size=n * n)))


@settings(max_examples=300, deadline=None)
@given(matrices)
def test_python_hungarian_equals_brute_force(nm):
    n, flat = nm
    assert min_assignment(flat, n) == brute(flat, n)


@settings(max_examples=300, deadline=None)
@given(matrices)
def test_compiled_hungarian_equals_brute_force(nm):
    n, flat = nm
    got = assign_rows(np.array([flat, [-x for x in flat]], dtype=np.int64), n)
    assert got.tolist() == [brute(flat, n), brute([-x for x in flat], n)]


def test_large_matrices_agree_between_python_and_compiled():
    rng = random.Random(7)
    for n in (10, 17, 30):
        rows = [[rng.randint(0, 99) for _ in range(n * n)] for _ in range(5)]
        assert assign_rows(np.array(rows, dtype=np.int64), n).tolist() == [min_assignment(r, n) for r in rows]


def test_node_folds_constants_and_rejects_non_square_matrices():
    assert MinAssignment([[4, 1], [2, 9]]) is const(3)
    assert MinAssignment([[var(0)]]) is var(0)
    with pytest.raises(ValueError):
        MinAssignment([[1, 2], [3]])
    with pytest.raises(ValueError):
        MinAssignment([])


def test_bounds_substitute_and_evaluation_agree():
    x, y = var(0), var(1)
    e = MinAssignment([[x, y + 2, 7], [x * y, 3, y], [5 - x, x + y, 1]])
    lo, hi = bounds(e, [(-2, 4), (0, 3)])
    for a in range(-2, 5):
        for b in range(0, 4):
            v = ref.evaluate(e, [a, b])
            assert lo <= v <= hi
            assert v == brute([a, b + 2, 7, a * b, 3, b, 5 - a, a + b, 1], 3)
            half = substitute(e, {0: a})
            assert ref.evaluate(half, [0, b]) == v
            assert substitute(e, {0: a, 1: b}) is const(v)


def _sokoban(heuristic: str) -> api.Loaded:
    return api.load_task("sokoban", str(XSOKOBAN), ["level=1", "metric=pushes", "prune=none",
                                                    f"heuristic={heuristic}"])


def test_sokoban_matching_heuristic_numpy_equals_reference_and_dominates():
    """XSokoban 1 has 6 boxes (the old enumeration stopped at 5)."""
    match, near, bip = _sokoban("matching"), _sokoban("nearest"), _sokoban("bipartite")
    task = match.task
    rng = random.Random(3)
    states = [list(task.init)]
    s = list(task.init)
    for _ in range(400):                      # a random walk of reference successors (pushes included)
        nxt = ref.successors(task, s)
        s = list(rng.choice(nxt)[1]) if nxt else list(task.init)
        states.append(s)
    S = np.array(states, dtype=np.int64)
    hm = match.kernel("numpy").heuristic(S).tolist()
    assert hm == [ref.heuristic(task, r) for r in states]
    hn = near.kernel("numpy").heuristic(S).tolist()
    hb = bip.kernel("numpy").heuristic(S).tolist()
    assert all(m >= b >= n for m, b, n in zip(hm, hb, hn))
    assert any(m > b for m, b in zip(hm, hb))    # strictly stronger somewhere on this level
