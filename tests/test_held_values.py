"""Held values (encodings/invariants.py, ``exactly_one_values``) against exhaustive search.

A claim ``(variables, a)`` lets both symbolic encoders post "some variable holds ``a``" at
every step; that is sound only if exactly one of the variables holds ``a`` in every state
the encodings reach, re-sorted within symmetry groups as they are.  The judge is a
breadth-first enumeration with the reference semantics, independent of the analysis.
"""

from __future__ import annotations

import random

import pytest
from helpers import encoder_reachable, sliding_walk, write_klotski, write_sliding
from pysat.solvers import Solver

from puzzleplan import api
from puzzleplan.encodings.invariants import exactly_one_values, mutex_invariants, relaxed_fixpoint
from puzzleplan.encodings.sat import CnfPlan
from puzzleplan.encodings.symmetry import symmetry_groups
from puzzleplan.ir.task import Task, ground
from puzzleplan.lang import Act, Model


def _broken(task: Task, groups: list[list[int]], claims) -> list[str]:
    """Reachable states where a claimed value is held by no variable, or by two."""
    return [f"{a} held {sum(s[v] == a for v in g)} times in {s}"
            for s in encoder_reachable(task, groups) for g, a in claims if sum(s[v] == a for v in g) != 1]


def _claims(task: Task, symmetric: bool) -> tuple:
    groups = symmetry_groups(task) if symmetric else []
    return exactly_one_values(task, relaxed_fixpoint(task, symmetric), groups), groups


def _copying() -> Task:
    """``copy`` overwrites x0 with x1: values flow between x0, x1, x2, but counts change."""
    m = Model("copying")
    x = m.vars("x", 0, 2, [0, 1, 2])

    @m.action("copy")
    def copy() -> Act:
        return Act(effects={x[0]: x[1]})

    @m.action("swap")
    def swap() -> Act:
        return Act(effects={x[1]: x[2], x[2]: x[1]})

    m.goal(x[0] == 2)
    return ground(m)


def _board(rows: int, cols: int, start: list[int]) -> Task:
    """A rows x cols sliding board, written here (the bundled model is square only)."""
    m = Model(f"board-{rows}x{cols}")
    t = m.vars("t", 0, rows * cols - 1, start)
    steps = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}

    @m.action("move", cell=range(rows * cols), d=tuple(steps))
    def move(cell: int, d: str) -> Act | None:
        r, c = divmod(cell, cols)
        rr, cc = r + steps[d][0], c + steps[d][1]
        if not (0 <= rr < rows and 0 <= cc < cols):
            return None
        other = rr * cols + cc
        return Act(guard=t[cell] == 0, effects={t[cell]: t[other], t[other]: 0})

    m.goal(t[0] == 1)
    return ground(m)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("symmetric", [True, False])
def test_every_held_value_holds_in_every_reachable_state(seed: int, symmetric: bool) -> None:
    rng = random.Random(seed)
    rows, cols = (2, 3) if seed % 2 else (3, 2)      # 360 reachable states each
    start = list(range(rows * cols))
    rng.shuffle(start)
    task = _board(rows, cols, start)
    claims, groups = _claims(task, symmetric)
    assert {a for _, a in claims} == set(range(rows * cols)), "every tile and the blank sit on one cell"
    assert _broken(task, groups, claims) == []


@pytest.mark.parametrize("seed", range(3))
def test_the_bundled_sliding_model_gets_its_claims(seed: int, tmp_path) -> None:
    start = sliding_walk(2, [1, 2, 3, 0], random.Random(seed), 7)
    task = api.load_task("sliding", str(write_sliding(tmp_path / "s.txt", start, 2))).task
    claims, groups = _claims(task, True)
    assert len(claims) == 4
    assert _broken(task, groups, claims) == []


def test_values_that_get_copied_are_not_claimed() -> None:
    task = _copying()
    claims, groups = _claims(task, True)
    assert claims == ()
    # the judge sees why: some reachable state holds a value twice and another none
    every = [((0, 1, 2), a) for a in range(3)]
    assert len(_broken(task, groups, every)) > 0


@pytest.mark.parametrize("symmetric", [True, False])
def test_klotski_claims_hold_under_its_symmetry(symmetric: bool, tmp_path) -> None:
    path = write_klotski(tmp_path / "k.txt", [".DB", "E.B", "AAC"], size=(3, 3), goal=(0, 0))
    task = api.load_task("klotski", str(path), ["metric=steps"]).task
    claims, groups = _claims(task, symmetric)
    assert _broken(task, groups, claims) == []


def test_the_cnf_places_a_tile_every_other_cell_excludes(tmp_path) -> None:
    """With the claims, unit propagation on one step's free start layer puts tile 1 on the only
    cell left for it; with the pairs alone it does not (they only say "at most one")."""
    path = write_sliding(tmp_path / "e.txt", [1, 2, 3, 4, 0, 5, 6, 7, 8], 3)
    task = api.load_task("sliding", str(path)).task
    inv = mutex_invariants(task)
    assert inv is not None and inv.exactly_one
    sets = relaxed_fixpoint(task, symmetric=True)
    for claims, placed in ((inv.exactly_one, True), ((), False)):
        inv.exactly_one = claims
        enc = CnfPlan(task, start=sets, invariants=inv, symmetry=False)
        x0 = enc.x[0]
        excluded = [-x0[c][1] for c in range(1, 9)]
        with Solver(name="cadical195", bootstrap_with=enc.drain()) as s:
            ok, implied = s.propagate(assumptions=excluded)
        assert ok
        assert (x0[0][1] in implied) is placed
