"""Macro walking (Model.walks): same optima as the unit-step search, plans that replay, and the
fast walk-graph closure against the generic one.

The optimum must not depend on which actions are declared walks (solvers/macro.py argues why),
so besides the Sokoban and Kwirk declarations we declare seeded random subsets of other models'
actions as walks and compare with the plain search.  Expected costs come from the plain engines
(and, for Microban, from the independent optima table in instances/sokoban/README.md).
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import load
from helpers import sample_states

from puzzleplan.encodings.kernel import make_kernel
from puzzleplan.encodings.npkernel import evaluate
from puzzleplan.ir.task import ground
from puzzleplan.lang import Act, Model
from puzzleplan.lang.errors import ModelError
from puzzleplan.lang.expr import And, Not, Or, substitute, variables_of, walk
from puzzleplan.solvers import Limits, bestfirst
from puzzleplan.solvers.macro import MacroKernel
from puzzleplan.verify.reference import check_plan

ROOT = Path(__file__).resolve().parent.parent
MICROBAN = str(ROOT / "instances" / "sokoban" / "microban.xsb")
KWIRK = ROOT / "instances" / "kwirk"
# (push-optimal pushes, move-optimal moves), instances/sokoban/README.md (independent solver)
TABLE = {1: (8, 33), 2: (3, 16), 5: (6, 25), 21: (5, 17)}


def _solve(task, macro: bool, heuristic: bool = True, backend: str = "numpy"):
    r = bestfirst.solve(make_kernel(task, backend), Limits(time_s=120), use_heuristic=heuristic, macro=macro)
    assert r.status == "optimal", r
    chk = check_plan(task, r.plan)
    assert chk.ok and chk.cost == r.cost, chk.message
    return r


@pytest.mark.parametrize("level", sorted(TABLE))
@pytest.mark.parametrize("metric", ["pushes", "moves"])
def test_sokoban_macro_matches_table_and_plain_search(level: int, metric: str) -> None:
    task = load("sokoban", MICROBAN, f"level={level}", f"metric={metric}").task
    assert task.walk_actions
    macro = _solve(task, macro=True)
    plain = _solve(task, macro=False)
    want = TABLE[level][0 if metric == "pushes" else 1]
    assert macro.cost == plain.cost == want
    assert macro.stats["macro"]["normalised"] == (metric == "pushes")
    assert macro.stats["states"] <= plain.stats["states"]


@pytest.mark.parametrize("name,metric", [("030.txt", "steps"), ("031-flipped.txt", "steps"),
                                         ("045.txt", "steps"), ("048.txt", "frames"),
                                         ("089.txt", "steps-switches")])
def test_kwirk_rooms_macro_equals_plain(name: str, metric: str) -> None:
    """frames: the walk also resets the aux switch memory, so the generic closure runs."""
    task = load("kwirk", str(KWIRK / "heading-out" / name), f"metric={metric}").task
    assert _solve(task, macro=True).cost == _solve(task, macro=False).cost


def test_kwirk_two_characters_macro_equals_plain() -> None:
    """1-6 has two characters: the walk graph picks the one in control by the selector variable."""
    loaded = load("kwirk", str(KWIRK / "going-up" / "06_1-6.txt"))
    mk = MacroKernel(loaded.kernel("numpy"))
    assert mk.graph is not None and mk.graph.selector is not None
    assert _solve(loaded.task, macro=True).cost == _solve(loaded.task, macro=False).cost == 34


@pytest.mark.parametrize("model,instance,opts", [
    ("sliding", str(ROOT / "instances" / "sliding" / "eight-depths.txt") + "#walk-2034-053", ()),
    ("klotski", str(ROOT / "instances" / "klotski" / "fayaa.txt") + "#fayaa-001", ("metric=steps",)),
])
@pytest.mark.parametrize("seed", [1, 2])
def test_any_walk_declaration_keeps_the_optimum(model: str, instance: str, opts: tuple, seed: int) -> None:
    """A random subset of actions declared as walks (generic closure path) changes no optimum."""
    task = load(model, instance, *opts).task
    rng = random.Random(seed)
    grouped = {v for g in task.groups for obj in g for v in obj}
    free = [i for i, a in enumerate(task.actions) if not any(e.var in grouped for e in a.effects)]
    subset = sorted(rng.sample(free, len(free) // 3))
    walked = replace(task, walk_actions=subset)
    mk = MacroKernel(make_kernel(walked, "numpy"))
    assert mk.graph is None           # not single-agent moves: the generic closure is exercised
    plain = _solve(task, macro=False, heuristic=False)
    macro = _solve(walked, macro=True, heuristic=False)
    assert macro.cost == plain.cost


def _closure_set(C: np.ndarray, origin: np.ndarray, dist: np.ndarray) -> set:
    return {(int(o), int(d), tuple(int(x) for x in row)) for row, o, d in zip(C, origin, dist)}


@pytest.mark.parametrize("model,instance,opts", [
    ("sokoban", MICROBAN, ("level=21", "metric=moves")),
    ("kwirk", str(KWIRK / "going-up" / "06_1-6.txt"), ()),
    ("kwirk", str(KWIRK / "going-up" / "08_1-8.txt"), ()),
])
@pytest.mark.parametrize("backend", ["numpy", "interpreted"])
def test_walk_graph_closure_equals_generic_closure(model: str, instance: str, opts: tuple,
                                                   backend: str) -> None:
    # the edge conditions three ways: bit tables where every condition only forbids values
    # (walkbits.py), else a kernel of their own with one guard per distinct condition (use_kernel,
    # compiled backends), else numpy per edge
    loaded = load(model, instance, *opts)
    fast = MacroKernel(loaded.kernel(backend))
    slow = MacroKernel(loaded.kernel("numpy"), graph=False)
    graph = fast.graph
    assert graph is not None
    if model == "sokoban" or "08_1-8" in instance:   # "no box / block on the square": bit tables
        assert graph.bits is not None
    S = np.array(sample_states(loaded.task, seed=7, n_walks=8, length=40), dtype=np.int64)
    want = _closure_set(*slow.closure(S))
    assert _closure_set(*fast.closure(S)) == want
    if graph.bits is not None:
        graph.bits = None
        if backend != "numpy":
            graph.use_kernel(loaded.task, backend)
            guards = graph._edge_guard
            assert guards is not None and len(guards) == len(graph.rest)
            assert len(set(guards.tolist())) < len(guards)      # edges into one cell share their guard
        assert _closure_set(*fast.closure(S)) == want
    graph.compiled = False       # the numpy breadth-first layers: the same sets
    assert _closure_set(*fast.closure(S)) == want
    C, origin, dist = fast.closure(S)
    assert (origin[: len(S)] == np.arange(len(S))).all() and (dist[: len(S)] == 0).all()


@pytest.mark.parametrize("model,instance,opts", [
    ("sokoban", MICROBAN, ("level=144", "metric=pushes")),
    ("kwirk", str(KWIRK / "going-up" / "08_1-8.txt"), ()),
])
def test_edge_bits_equal_the_edge_conditions(model: str, instance: str, opts: tuple) -> None:
    # walkbits: one table row per variable gives every edge condition of a state at once
    from puzzleplan.solvers.walkbits import EdgeBits, allowed
    from puzzleplan.solvers.walkgraph import analyse

    task = load(model, instance, *opts).task
    graph = analyse(task)
    assert graph is not None and graph.bits is not None
    S = np.array(sample_states(task, seed=13, n_walks=12, length=60), dtype=np.int64)
    bits = graph.bits.open_bits(S)
    for k, rest in enumerate(graph.rest):
        g = int(graph.bits.edge_guard[k])
        got = (bits[:, g >> 6] >> np.uint64(g & 63)) & np.uint64(1)
        assert np.array_equal(got.astype(bool), np.asarray(evaluate(rest, S), dtype=bool)), k
    # a test of two variables at once has no table: the edge-by-edge evaluation stays
    two = Or(*[a for a in graph.rest[0].args[0].args[:2]]) if graph.rest[0].op == "not" else None
    if two is not None and len(variables_of(two)) == 2:
        assert allowed(two, task.var_bounds) is None
        assert EdgeBits.build([two], task.var_bounds) is None


@pytest.mark.parametrize("columns", [1, 63, 64, 65, 130])
def test_boolean_edges_as_bits_round_trip(columns: int) -> None:
    from puzzleplan.solvers.walkbits import as_bits

    en = np.random.default_rng(columns).random((7, columns)) < 0.5
    bits = as_bits(en)
    assert bits.dtype == np.uint64 and bits.shape == (7, -(-columns // 64))
    e = np.arange(columns)
    got = (bits[:, e >> 6] >> (e & 63).astype(np.uint64)) & np.uint64(1)
    assert np.array_equal(got.astype(bool), en)


@pytest.mark.parametrize("model,instance,opts", [
    ("sokoban", MICROBAN, ("level=21", "metric=pushes", "heuristic=matching")),
    ("kwirk", str(KWIRK / "going-up" / "06_1-6.txt"), ()),
])
def test_macro_kernel_evaluates_stored_states_like_its_numpy_base(model: str, instance: str,
                                                                  opts: tuple) -> None:
    # with a compiled backend the macro kernel's goal, heuristic, canonical form and keys come
    # from a compiled kernel of the task without actions; the numpy base is the reference
    loaded = load(model, instance, *opts)
    base = loaded.kernel("numpy")
    fast = MacroKernel(base, backend="interpreted")
    ref = MacroKernel(base, backend="numpy")
    assert fast.evaluator.backend == "interpreted" and ref.evaluator is base
    S = np.array(sample_states(loaded.task, seed=11, n_walks=10, length=40), dtype=np.int64)
    assert np.array_equal(fast.goal(S), ref.goal(S))
    assert np.array_equal(fast.heuristic(S), ref.heuristic(S))
    assert np.array_equal(fast.canonical(S), ref.canonical(S))
    assert np.array_equal(fast.pack(S), ref.pack(S))
    assert np.array_equal(fast.canon_pack(S), ref.canon_pack(S))
    assert np.array_equal(fast.unpack(fast.pack(S)), S)
    if ref.normalise:   # zero-cost walks: a region's key is its least, found without listing it
        listed = MacroKernel(base, backend="numpy", graph=False)    # the least of the listed region
        assert ref.graph is not None and listed.graph is None
        assert np.array_equal(ref.canon_pack(S), listed.canon_pack(S))
        assert np.array_equal(fast.canon_pack(S), listed.canon_pack(S))


def test_substitute_agrees_with_evaluation() -> None:
    """A guard with one variable fixed evaluates like the guard on states with that value."""
    task = load("kwirk", str(KWIRK / "going-up" / "06_1-6.txt")).task
    S = np.array(sample_states(task, seed=3, n_walks=6, length=30), dtype=np.int64)
    rng = random.Random(5)
    for a in rng.sample(task.actions, 40):
        vs = sorted({int(n.val) for n in walk([a.guard]) if n.op == "var"})
        v = rng.choice(vs)
        lo, hi = task.variables[v].lo, task.variables[v].hi
        c = rng.randint(lo, hi)
        T = S.copy()
        T[:, v] = c
        assert (evaluate(substitute(a.guard, {v: c}), S) == evaluate(a.guard, T)).all()


def _corridor() -> Model:
    """A walker on a 1x6 corridor with a door at cell 3 opened by a lever at cell 0; goal: be at 5."""
    m = Model("corridor")
    p = m.var("p", 0, 5, 2)
    door = m.var("door", 0, 1, 0)

    @m.action("walk", c=range(6), d=(-1, 1))
    def step(c: int, d: int) -> Act | None:
        to = c + d
        if not 0 <= to <= 5:
            return None
        blocked = Or(And(to == 3, door == 0)) if to == 3 else Or()
        return Act(guard=And(p == c, Not(blocked)), effects={p: to}, cost=1)

    @m.action("pull")
    def pull() -> Act:
        return Act(guard=And(p == 0, door == 0), effects={door: 1}, cost=2)

    m.walks("walk", reversible=True)
    m.goal(p == 5)
    return m


def test_goal_reached_by_walking_alone() -> None:
    task = ground(_corridor())
    plain = _solve(task, macro=False, heuristic=False)
    macro = _solve(task, macro=True, heuristic=False)
    assert macro.cost == plain.cost == 2 + 2 + 5     # walk 2 to the lever, pull, walk 5
    zero = replace(task, actions=[replace(a, cost=0) if i in task.walk_actions else a
                                  for i, a in enumerate(task.actions)])
    r = _solve(zero, macro=True, heuristic=False)     # zero-cost reversible walks: normalised
    assert r.cost == 2 and r.stats["macro"]["normalised"]


def test_walks_may_not_move_interchangeable_objects() -> None:
    task = load("klotski", f"{ROOT}/instances/klotski/fayaa.txt#fayaa-001", "metric=steps").task
    grouped = {v for g in task.groups for obj in g for v in obj}
    moving = [i for i, a in enumerate(task.actions) if any(e.var in grouped for e in a.effects)]
    with pytest.raises(ModelError, match="interchangeable"):
        MacroKernel(make_kernel(replace(task, walk_actions=moving[:3]), "numpy"))


def test_walk_declaration_errors() -> None:
    m = _corridor()
    m.walks("stroll")
    with pytest.raises(ModelError, match="stroll"):
        ground(m)
    m = _corridor()
    m.walks("walk", "pull")
    with pytest.raises(ModelError, match="share one cost"):
        ground(m)


@pytest.mark.parametrize("level", [5, 21])
def test_normalised_key_is_the_least_canonical_key_of_the_region(level: int) -> None:
    """The zero-cost-walk key (canonicalised once per origin, then packed) equals the least
    ``canon_pack`` over the whole walking region, computed state by state."""
    loaded = load("sokoban", MICROBAN, f"level={level}", "metric=pushes")
    mk = MacroKernel(loaded.kernel("numpy"))
    assert mk.normalise
    rng = np.random.default_rng(level)
    S = np.array(sample_states(loaded.task, seed=level, n_walks=8, length=40), dtype=np.int64)
    S = S[rng.permutation(len(S))]
    C, origin, _ = mk.closure(S)
    K = mk.base.canon_pack(C)
    for i in range(len(S)):
        rows = sorted(tuple(int(w) for w in K[j]) for j in np.flatnonzero(origin == i))
        assert tuple(int(w) for w in mk.canon_pack(S[i:i + 1])[0]) == rows[0]


def test_a_deadline_passing_after_the_goal_keeps_the_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """The search proved the optimum; the time limit strikes while the plan is rebuilt.  The
    result is the proven plan, not an OutOfTime escaping as a traceback (seen once in CI)."""
    task = load("sokoban", MICROBAN, "level=1", "metric=pushes").task
    real = MacroKernel.concretise

    def late(self: MacroKernel, *args: object) -> list[int]:
        assert self.clock is not None
        self.clock.deadline = 0.0          # long past: every clock check from here on stops
        return real(self, *args)           # type: ignore[arg-type]

    monkeypatch.setattr(MacroKernel, "concretise", late)
    r = bestfirst.solve(make_kernel(task, "numpy"), Limits(time_s=120), use_heuristic=True, macro=True)
    assert r.status == "optimal" and r.cost == TABLE[1][0]
    chk = check_plan(task, r.plan)
    assert chk.ok and chk.cost == r.cost
