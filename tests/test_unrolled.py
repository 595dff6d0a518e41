"""The shared unrolled step (``encodings/unrolled.py``) that the CNF and CP-SAT encoders translate.

Later writes win: a write overwritten unconditionally is gone, one overwritten by a later
conditional write fires only when that condition is false.  Value sets are sound: every
value a reachable state holds at step ``t`` is in ``sets(t)`` (checked against breadth-first
search with the reference semantics), and the fixpoint contains every reachable value.
Both encoders take the same step: their per-step action sets and state domains agree.
"""

from __future__ import annotations

import pytest

from puzzleplan.encodings.cpsat import CpPlan
from puzzleplan.encodings.invariants import relaxed_fixpoint
from puzzleplan.encodings.sat import CnfPlan
from puzzleplan.encodings.symmetry import canonical, symmetry_groups
from puzzleplan.encodings.unrolled import Unrolled
from puzzleplan.ir.task import Task, ground
from puzzleplan.lang import Act, If, Model, When
from puzzleplan.verify import reference as ref


def _overwrites() -> tuple[Task, object, object, object]:
    m = Model("overwrites")
    x = m.var("x", 0, 5, 0)
    y = m.var("y", 0, 3, 0)
    z = m.var("z", 0, 2, 0)

    @m.action("step")
    def step() -> Act:
        # y: 1, then 2 if x == 1, then 3 if x == 2 (later wins); z: 1 overwritten by 2 unconditionally
        return Act(guard=x < 5, effects={x: x + 1, y: 1},
                   when=[When(x == 1, {y: 2}), When(x == 2, {y: 3})])

    @m.action("jump")
    def jump() -> Act:
        return Act(guard=x == 4, effects={z: 1}, when=[When(x >= 0, {z: 2})])

    @m.action("off")   # never applicable, but the value sets cannot tell (y == 3 and z == 2 never meet);
    def off() -> Act:  # x's new value is 6 (outside) while z is not 1, and only "off" would write z = 1
        return Act(guard=(y == 3) & (z == 2), effects={x: If(z == 1, 0, 6), z: 1})

    m.goal(y == 3)
    return ground(m), x, y, z


def test_later_writes_win_and_firing_conditions() -> None:
    task, *_ = _overwrites()
    layer = Unrolled(task)
    names = [a.name for a in task.actions]
    step, jump = names.index("step"), names.index("jump")
    s1 = layer.step(1)     # x in {0, 1}: "jump" cannot happen, x == 2 cannot hold
    assert [sa.index for sa in s1.actions] == [step]
    ys = [w for w in s1.actions[0].writes if w.var == 1]
    # y := 1 fires unless x == 1 (x == 2 is impossible at step 1: neither condition is kept)
    assert [(w.values, [(str(c), pos) for c, pos in w.when]) for w in ys] == [
        (frozenset({1}), [("(v0 == 1)", False)]), (frozenset({2}), [("(v0 == 1)", True)])]
    assert layer.sets(2)[1] == {0, 1, 2}
    s4 = layer.step(4)
    jumps = [sa for sa in s4.actions if sa.index == jump]
    assert len(jumps) == 1
    # z := 1 is overwritten by the unconditional-at-this-step z := 2 (x >= 0 always holds: no condition)
    assert [(w.var, w.values, w.when) for w in jumps[0].writes] == [(2, frozenset({2}), ())]
    assert [w.action for w in s4.writers[2]] == [jump]


def test_dead_action_is_flagged_and_writes_nothing() -> None:
    task, *_ = _overwrites()
    layer = Unrolled(task)
    off = [a.name for a in task.actions].index("off")
    t = next(t for t in range(10) if any(sa.index == off for sa in layer.step(t).actions))
    assert t == 5     # y == 3 possible from step 3, z == 2 from step 5
    for u in range(t, t + 4):
        sa = next(sa for sa in layer.step(u).actions if sa.index == off)
        assert sa.dead and any(not w.values and not w.when for w in sa.writes)
        # its in-domain write (z := 1) is among z's writers, but adds no value: it never happens
        assert off in [w.action for w in layer.step(u).writers[2]]
        assert layer.sets(u + 1)[2] == {0, 2}
    enc = CnfPlan(task, invariants=None)
    for _ in range(t + 1):
        enc.extend()
    assert off not in enc.acts[t]              # the CNF leaves a dead action out
    cp = CpPlan(task, t + 1)
    assert off in cp.acts[t]                   # CP-SAT posts it and forbids it (as before the layer)


def _bfs_values(task: Task, depth: int) -> list[list[set[int]]]:
    """Per step, each variable's values over the canonical states reachable in at most that many steps."""
    frontier = {tuple(canonical(symmetry_groups(task), task.init))}
    seen = set(frontier)
    out = [[{s[v] for s in seen} for v in range(task.n_vars)]]
    groups = symmetry_groups(task)
    for _ in range(depth):
        nxt = set()
        for s in frontier:
            for _, t, _ in ref.successors(task, list(s)):
                t = tuple(canonical(groups, t))
                if t not in seen:
                    seen.add(t)
                    nxt.add(t)
        frontier = nxt
        out.append([{s[v] for s in seen} for v in range(task.n_vars)])
    return out


@pytest.mark.parametrize("key", ["overwrites", "klotski"])
def test_value_sets_contain_every_reachable_value(key: str, tmp_path) -> None:
    if key == "overwrites":
        task = _overwrites()[0]
    else:
        from helpers import write_klotski

        from puzzleplan import api
        path = write_klotski(tmp_path / "k.txt", ["AAB.", "AAB.", "CCDE"], size=(4, 3))
        task = api.load_task("klotski", str(path)).task
        assert symmetry_groups(task), "the two 1x1 pieces are interchangeable: the sorted case is exercised"
    layer = Unrolled(task, symmetry_groups(task))
    for t, values in enumerate(_bfs_values(task, 6)):
        for v, vals in enumerate(values):
            assert vals <= layer.sets(t)[v], (key, t, task.names[v])
    fix = relaxed_fixpoint(task, symmetric=False)
    assert all(set(d) <= set(f) for d, f in zip(_bfs_values(task, 30)[-1], fix))


def test_both_encoders_take_the_layers_step() -> None:
    task, *_ = _overwrites()
    T = 6
    enc = CnfPlan(task, invariants=None)
    for _ in range(T):
        enc.extend()
    cp = CpPlan(task, T)
    layer = Unrolled(task)
    for t in range(T):
        live = {sa.index for sa in layer.step(t).actions if not sa.dead}
        assert set(enc.acts[t]) == live
        assert set(cp.acts[t]) == {sa.index for sa in layer.step(t).actions}
    for t in range(T + 1):
        assert [set(d) for d in enc.x[t]] == [set(s) for s in layer.sets(t)] == [set(s) for s in cp.sets[t]]
