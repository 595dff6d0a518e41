"""Differential tests of the interpreted kernel (``encodings.interp`` over ``encodings.flat``).

Oracle: the numpy kernel (itself tested against the plain-Python reference in test_kernels.py),
and for random expressions the direct Python semantics of test_lang.py's specs.  The interpreter
is compiled once per installation; no test here compiles a per-task kernel.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import load
from helpers import ROOT, assert_kernel_matches_reference, kernel_successors, reference_optimum, sample_states
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_lang import N_VARS, VAR_RANGE, bool_specs, int_specs, py_eval
from test_lang import build as build_expr

from puzzleplan.encodings import flat
from puzzleplan.encodings.interp import InterpretedKernel, driver_source
from puzzleplan.encodings.kernel import BACKENDS, CompiledKernel, DomainError, make_kernel
from puzzleplan.ir.task import Effect, GroundAction, Task
from puzzleplan.lang import TRUE, And, If, Max, Min, Not, Or, const
from puzzleplan.lang.expr import var
from puzzleplan.lang.model import VarInfo

SEED = 20260127
MODELS_DIR = Path(__file__).parent / "models"

# every bundled transition model (skyscraper and sudoku are CSPs: no kernel), small instances
CASES = [
    ("klotski", "instances/klotski/fayaa.txt#fayaa-001", ("metric=steps",)),
    ("klotski", "instances/klotski/fayaa.txt#fayaa-001", ("metric=moves",)),
    ("klotski", "instances/klotski/fayaa.txt#fayaa-001", ("metric=straight",)),
    ("sliding", "instances/sliding/eight.txt#eight-easy", ()),
    ("sliding", "instances/sliding/eight.txt#eight-easy", ("heuristic=none",)),
    ("lightsout", "instances/lightsout/boards.txt", ()),
    ("sokoban", "instances/sokoban/microban.xsb", ("level=21",)),           # MinAssignment heuristic
    ("sokoban", "instances/sokoban/microban.xsb", ("level=1", "metric=moves")),
    ("zpg", "instances/zpg/puzzlescript-L1.txt", ()),                       # conditional effects
    ("kwirk", "instances/kwirk/going-up/01_1-1.txt", ()),
    ("kwirk", "instances/kwirk/heading-out/030.txt", ()),                   # 2,077 actions, dispatch
]


def _states(task, seed: int, n_random: int = 80) -> np.ndarray:
    walk = np.array(sample_states(task, seed, n_walks=6, length=40), dtype=np.int64)
    lo = np.array([v.lo for v in task.variables])
    hi = np.array([v.hi for v in task.variables])
    rnd = np.random.default_rng(seed).integers(lo, hi + 1, size=(n_random, task.n_vars))
    return np.concatenate([walk, rnd]).astype(np.int64)


def _same(ki: InterpretedKernel, kn, S: np.ndarray) -> None:
    try:
        want = kernel_successors(kn, S)
    except DomainError:
        with pytest.raises(DomainError):
            ki.expand(S)
        return
    assert kernel_successors(ki, S) == want
    assert ki.goal(S).dtype == np.bool_
    assert ki.goal(S).tolist() == kn.goal(S).tolist()
    assert ki.heuristic(S).tolist() == kn.heuristic(S).tolist()
    assert np.array_equal(ki.canonical(S), kn.canonical(S))
    assert np.array_equal(ki.canon_pack(S), kn.canon_pack(S))
    assert np.array_equal(ki.unpack(ki.pack(S)), S)


@pytest.mark.parametrize("model,instance,opts", CASES)
def test_interpreted_kernel_equals_numpy_kernel(model, instance, opts):
    loaded = load(model, str(ROOT / instance), *opts)
    task = loaded.task
    ki = loaded.kernel("interpreted")
    assert isinstance(ki, InterpretedKernel) and ki.backend == "interpreted"
    kn = loaded.kernel("numpy")
    S = _states(task, SEED)
    _same(ki, kn, S)
    if task.groups:   # the canonical form is really exercised: some sampled state is not canonical
        assert not np.array_equal(kn.canonical(S), S)
    assert ki.costs.tolist() == [a.cost for a in task.actions]


def test_dispatch_bit_views_and_subroutines_are_used_where_they_apply():
    """The program shapes the speed depends on: jump tables on a common guard expression,
    elements read through bit views, shared nodes computed by one subroutine."""
    kw = load("kwirk", str(ROOT / "instances/kwirk/heading-out/030.txt")).task
    assert flat.OP_DISPATCH in _opcodes(kw)
    hrd = load("klotski", str(ROOT / "instances/klotski/fayaa.txt#fayaa-001"), "metric=moves").task
    assert {flat.OP_BITVIEW, flat.OP_ELEMBITT, flat.OP_DISPATCH} <= _opcodes(hrd)
    zpg = load("zpg", str(ROOT / "instances/zpg/puzzlescript-L1.txt")).task
    assert {flat.OP_CALL, flat.OP_RET, flat.OP_SETIF} <= _opcodes(zpg)


def _opcodes(task) -> set[int]:
    prog = flat.build(task)
    start = int(prog.P[flat.H_INS_OFF])
    return {int(prog.P[start + pc * flat.WIDTH]) for pc in range(prog.n_instructions)}


@pytest.fixture(scope="module")
def ops_task(tmp_path_factory):
    p = tmp_path_factory.mktemp("ops") / "ops.txt"
    p.write_text("x: 1\ny: 2\nz: 0\n", encoding="utf-8")
    return load(str(MODELS_DIR / "ops.py"), str(p))


def test_every_operator_on_every_state(ops_task):
    task = ops_task.task
    grids = np.meshgrid(*[np.arange(v.lo, v.hi + 1) for v in task.variables], indexing="ij")
    S = np.stack([g.ravel() for g in grids], axis=1).astype(np.int64)
    _same(ops_task.kernel("interpreted"), ops_task.kernel("numpy"), S)
    assert any(ops_task.kernel("interpreted").goal(S))


def test_out_of_domain_successor_is_refused(tmp_path):
    inst = tmp_path / "o.txt"
    inst.write_text("start: 0\n", encoding="utf-8")
    loaded = load(str(MODELS_DIR / "overflow.py"), str(inst))
    ki = loaded.kernel("interpreted")
    with pytest.raises(DomainError):
        ki.expand(np.array([[2, 0], [3, 0]]))
    S = np.array([[0, 0], [1, 0], [2, 0], [3, 1]])
    assert kernel_successors(ki, S) == kernel_successors(loaded.kernel("numpy"), S)


def test_batches_larger_than_the_output_buffer_resume():
    loaded = load("sliding", str(ROOT / "instances/sliding/eight.txt#eight-easy"))
    ki, kn = loaded.kernel("interpreted"), loaded.kernel("numpy")
    S = np.repeat(_states(loaded.task, SEED + 1)[:6], 50_000, axis=0)     # > 2**20 successors
    a, b = ki.expand(S), kn.expand(S)
    oa, ob = np.lexsort((a[2], a[1])), np.lexsort((b[2], b[1]))
    for x, y in zip(a, b):
        assert np.array_equal(x[oa], y[ob])


# ----------------------------------------------------------------------------- instruction forms
def _forms_task(unkeyed: bool, goal) -> Task:
    """Actions in two dispatch groups that can both apply in one state (on v0, every value; on
    v1, values 0, 2, 3: a gap), several unguarded actions per value (one EMITSET), guards
    ``v == k`` and ``not v == k`` (fused jumps), a shared ``or`` of computed children (a
    subroutine with jumps), conditional effects, and optionally actions outside the groups."""
    x = [var(i) for i in range(5)]
    s = x[2] + x[3]
    shared = Or(And(s == 3, x[4] != 0), x[2] > x[4])
    acts = []
    for c in range(4):
        acts += [GroundAction(f"a{c}", "a", x[0] == c, (Effect(1, x[2]), Effect(2, x[1])), 1),
                 GroundAction(f"b{c}", "b", x[0] == c, (Effect(3, x[4]), Effect(4, x[3])), 1)]
    for c in (0, 3):
        acts.append(GroundAction(f"c{c}", "c", And(x[0] == c, x[2] == 1), (Effect(0, Min(x[0] + 1, 3)),), 1))
    for c in (0, 2):
        acts += [GroundAction(f"d{c}", "d", And(x[1] == c, shared), (Effect(4, Min(x[4] + 1, 3)),), 1),
                 GroundAction(f"e{c}", "e", And(x[1] == c, Not(x[3] == 2)),
                              (Effect(3, Min(x[3] + 1, 3), shared), Effect(2, const(0))), 1)]
    acts.append(GroundAction("f", "f", And(x[1] == 3, Or(s > 4, x[0] == x[1])), (Effect(0, x[1]),), 1))
    if unkeyed:
        acts += [GroundAction("g", "g", Or(x[2] == 0, x[3] == 0), (Effect(2, x[3]), Effect(3, x[2])), 1),
                 GroundAction("h", "h", TRUE, (Effect(4, const(0)),), 1),
                 GroundAction("i", "i", TRUE, (Effect(4, const(3)), Effect(0, x[4])), 1)]
    heuristic = If(And(x[0] == 0, x[1] == 1), 5, 0) + If(shared, 1, 0)
    return Task("forms", [VarInfo(f"v{i}", 0, 3, 0) for i in range(5)], acts, goal, heuristic)


def _instructions(P: np.ndarray, n: int) -> list[list[int]]:
    start = int(P[flat.H_INS_OFF])
    return [P[start + pc * flat.WIDTH: start + (pc + 1) * flat.WIDTH].tolist() for pc in range(n)]


@pytest.mark.parametrize("unkeyed", [True, False])
def test_fused_instructions_agree_with_the_reference_on_every_state(unkeyed):
    """EMITSET (several actions, and run inside a DISPATCH scan), DISPATCH entries for values
    without actions, a scan that resumes after a group's actions, JNEK/JEQK, short-circuit
    chains (in a subroutine too), ALLEQK as the goal and inside an expression: every state of
    the domain against the reference semantics."""
    x = [var(i) for i in range(5)]
    goal = And(x[0] == 1, x[1] == 2, x[2] == 3) if unkeyed else And(x[0] == 1, x[2] + x[3] > 2)
    task = _forms_task(unkeyed, goal)
    prog = flat.build(task)
    code = _instructions(prog.P, prog.n_instructions)
    ops = {ins[0] for ins in code}
    assert {flat.OP_DISPATCH, flat.OP_EMITSET, flat.OP_JNEK, flat.OP_JEQK, flat.OP_ALLEQK, flat.OP_LOADK,
            flat.OP_CALL, flat.OP_SETIF} <= ops
    assert any(ins[0] == flat.OP_EMITSET and ins[3] >= 2 for ins in code)        # actions merged
    subs = min(ins[3] for ins in code if ins[0] == flat.OP_CALL)
    assert any(ins[0] in flat.JUMP_OPS for ins in code[subs:])                  # a jump in a subroutine
    tables = [int(prog.P[e + 3]) + j for ins in code if ins[0] == flat.OP_DISPATCH
              for e in range(ins[2], ins[2] + 4 * ins[3], 4) for j in range(int(prog.P[e + 2]))]
    entries = {int(prog.P[t]) for t in tables}
    assert -1 in entries and min(entries) < -1 and max(entries) >= 0
    assert any(ins[0] == flat.OP_DISPATCH and (ins[1] == -1) != unkeyed for ins in code)
    grids = np.meshgrid(*[np.arange(4)] * 5, indexing="ij")
    S = np.stack([g.ravel() for g in grids], axis=1).astype(np.int64)
    ki = InterpretedKernel(task, prog)
    assert_kernel_matches_reference(ki, task, S)
    assert ki.goal(S).any() and kernel_successors(ki, S) == kernel_successors(make_kernel(task, "numpy"), S)


# ----------------------------------------------------------------------------- random expressions
def _expr_task(guard, value, goal) -> Task:
    lo, hi = VAR_RANGE
    variables = [VarInfo(f"v{i}", lo, hi, 0) for i in range(N_VARS)]
    acts = [GroundAction("a", "a", guard & goal, (Effect(0, Min(Max(value, lo), hi)),), 1),
            GroundAction("b", "b", TRUE, (Effect(1, Min(Max(value, lo), hi), guard),   # later write wins
                                          Effect(1, const(lo), goal)), 1)]
    return Task("expr", variables, acts, goal, value)


states_strategy = st.lists(st.lists(st.integers(*VAR_RANGE), min_size=N_VARS, max_size=N_VARS),
                           min_size=1, max_size=10)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(b=bool_specs(3), b2=bool_specs(2), i=int_specs(3), states=states_strategy)
def test_random_expressions_agree_with_python_and_numpy(b, b2, i, states):
    """Guards (split into conjuncts), conditional effects (later writes win), goal and heuristic
    built from random expressions: interpreter == numpy kernel == direct Python semantics."""
    guard, goal, value = build_expr(b), build_expr(b2), build_expr(i)
    task = _expr_task(guard, value, goal)
    S = np.array(states, dtype=np.int64)
    ki, kn = InterpretedKernel(task), make_kernel(task, "numpy")
    assert kernel_successors(ki, S) == kernel_successors(kn, S)
    assert ki.goal(S).tolist() == [bool(py_eval(b2, s)) for s in states]
    assert ki.heuristic(S).tolist() == [py_eval(i, s) for s in states]


# ----------------------------------------------------------------------------- engines
@pytest.mark.parametrize("model,instance,opts,engine", [
    ("klotski", "tiny", ("metric=moves",), "bfs"),
    ("klotski", "tiny", ("metric=steps",), "astar"),
    ("sliding", "instances/sliding/eight.txt#eight-mid", (), "bfs"),
    ("sliding", "instances/sliding/eight.txt#eight-mid", (), "idastar"),
    ("lightsout", "instances/lightsout/boards.txt", (), "ucs"),
])
def test_engines_find_the_reference_optimum_on_the_interpreted_kernel(tmp_path, model, instance, opts,
                                                                      engine):
    from puzzleplan import api

    if instance == "tiny":
        inst = tmp_path / "tiny.txt"
        inst.write_text("size: 3x3\ngoal: 2,2\nAB.\nCDE\nFG.\n", encoding="utf-8")
        path = str(inst)
    else:
        path = str(ROOT / instance)
    loaded = load(model, path, *opts)
    res = api.solve(loaded, engine, kernel="interpreted")
    assert res.stats["kernel"] == "interpreted"
    assert res.status == "optimal" and res.stats["verified"]
    assert res.cost == reference_optimum(loaded.task)


def test_bfs_on_the_interpreted_kernel_solves_hua_rong_dao():
    from puzzleplan import api

    loaded = load("klotski", str(ROOT / "instances/klotski/fayaa.txt#fayaa-001"), "metric=moves")
    res = api.solve(loaded, "bfs", kernel="interpreted")
    assert res.cost == 81 and res.status == "optimal" and res.stats["verified"]   # the known optimum
    # the interpreted kernel runs the compiled bfs driver, compiled once for every task
    assert isinstance(loaded.kernel("interpreted"), CompiledKernel)


def test_cli_accepts_the_interpreted_kernel(capsys):
    from helpers import run_cli

    code, out, err = run_cli(["solve", "sliding", ROOT / "instances/sliding/eight.txt#eight-easy",
                              "--kernel", "interpreted"], capsys)
    assert code == 0, err
    assert "(interpreted)" in out and "optimal, cost 2" in out
    assert "interpreted" in BACKENDS


def test_driver_module_is_task_independent():
    """The drivers' module names no task: one compile serves every task (its name is its hash)."""
    src, names = driver_source()
    assert {"bfs_run", "idastar_dfs"} <= set(names)
    assert "N_ACTIONS" not in src and "canon_pack(TABS, " in src and "unpack_rows(TABS, " in src
