"""The symbolic engines (``sat``, ``cpsat``) against breadth-first search and the reference semantics.

Differential: on seeded random 8-puzzle starts and small Hua Rong Dao layouts the
optimum of ``sat`` and ``cpsat`` must equal that of ``bfs`` (numpy kernel: no numba
compile), and every plan must replay in the reference checker (``api.solve`` does
the replay and records ``stats["verified"]``).  Synthetic models cover what the
puzzles do not: conditional and overwritten effects, costs 0/1/2 (against an
independent Dijkstra over the reference semantics), interchangeable objects that
may share a value.  Unit: every expression op, encoded by each encoder, takes
exactly the value the reference interpreter gives, on every assignment of two
small variables.

What ``sat`` answers on an unsolvable task: a horizon search cannot stop by itself,
so it returns "unsolvable" only with a proof (the goal impossible in the relaxed
reachability fixpoint, or every horizon up to the value-set state bound refuted);
with ``horizon=H`` it stops with "unknown" after ``H``, otherwise at the time limit
with "limit".  ``cpsat`` with ``horizon=H`` answers "unknown" (INFEASIBLE at ``H``).
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from helpers import FAYAA, random_walk, write_klotski, write_sliding

from puzzleplan import api
from puzzleplan.encodings.cpsat import CpPlan
from puzzleplan.encodings.invariants import mutex_invariants
from puzzleplan.encodings.sat import TOP, CnfPlan
from puzzleplan.ir.task import ground
from puzzleplan.lang import Abs, Act, And, Count, Element, If, Max, Min, Model, Not, Or, Table, ToInt, When
from puzzleplan.lang.errors import OptionError
from puzzleplan.solvers import ENGINES
from puzzleplan.solvers.result import Limits
from puzzleplan.verify import reference as ref

SYMBOLIC = ("sat", "cpsat")
GOAL8 = [1, 2, 3, 4, 5, 6, 7, 8, 0]
EIGHT_UNSOLVABLE = str(Path(FAYAA).parents[1] / "sliding" / "eight-unsolvable.txt") + "#eight-swapped"


def _bfs(loaded: api.Loaded) -> api.Result:
    return api.solve(loaded, "bfs", kernel="numpy")


def _run(loaded: api.Loaded, engine: str, **options: object) -> api.Result:
    return api.solve(loaded, engine, Limits(time_s=60), kernel="numpy", **options)


# --------------------------------------------------------------------------- 8-puzzle
def _eight_starts(tmp_path: Path) -> list[Path]:
    goal_file = write_sliding(tmp_path / "goal.txt", GOAL8, 3)
    goal_task = api.load_task("sliding", str(goal_file)).task
    rng = random.Random(20240611)
    paths = []
    for i, length in enumerate((3, 6, 8, 10, 12, 12)):
        start = random_walk(goal_task, rng, length)[-1]
        paths.append(write_sliding(tmp_path / f"walk{i}.txt", list(start), 3))
    return paths


def test_eight_puzzle_random_walks_match_bfs(tmp_path: Path) -> None:
    for path in _eight_starts(tmp_path):
        loaded = api.load_task("sliding", str(path))
        best = _bfs(loaded)
        assert best.status == "optimal" and best.cost <= 12
        for engine in SYMBOLIC:
            r = _run(loaded, engine)
            assert r.status == "optimal", (engine, path.read_text(), r.message)
            assert r.cost == best.cost, (engine, path.read_text())
            assert r.stats["verified"], (engine, r.message)
            assert r.proof
        variants = [("sat", {"heuristic": True}), ("sat", {"invariants": False}),
                    ("sat", {"solver": "glucose4"}), ("cpsat", {"heuristic": False, "invariants": False})]
        for engine, options in variants:  # the optional parts of the encodings, switched
            r = _run(loaded, engine, **options)
            assert r.status == "optimal" and r.cost == best.cost and r.stats["verified"], (engine, options)


# --------------------------------------------------------------------------- Hua Rong Dao
LAYOUTS = {
    # name: rows, size (W x H), goal (row, col of A's top-left cell)
    "corner-1x1": (["AB.", "CD.", "EF."], (3, 3), (2, 2)),
    "shapes": (["A.B", "CCD", "E.D"], (3, 3), (0, 2)),
    "crowded": (["AB.", "CDE", "FGH"], (3, 3), (2, 2)),
}
UNSOLVABLE = {
    "stuck-2x2": (["BAA", "BAA", "C.."], (3, 3), (1, 0)),
}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
@pytest.mark.parametrize("metric", ["steps", "moves"])
def test_klotski_small_layouts_match_bfs(tmp_path: Path, name: str, metric: str) -> None:
    rows, size, goal = LAYOUTS[name]
    path = write_klotski(tmp_path / f"{name}.txt", rows, size, goal)
    loaded = api.load_task("klotski", str(path), [f"metric={metric}"])
    best = _bfs(loaded)
    assert best.status == "optimal"
    for engine in SYMBOLIC:
        if metric == "steps":  # unit costs: the horizon search proves the optimum
            r = _run(loaded, engine)
            assert r.status == "optimal", (engine, r.message)
        elif name == "shapes" and engine == "sat":  # 0/1 costs, proof by the zero-cost run bound
            r = _run(loaded, engine, run_bound_s=60)
            assert r.status == "optimal" and r.stats["zero_cost_run"] == 2, (engine, r.message)
        else:  # 0/1 costs: minimal over plans as long as bfs's optimal plan (no run bound: "solved")
            r = _run(loaded, engine, horizon=len(best.plan), run_bound_s=0)
            assert r.status in ("solved", "optimal"), (engine, r.message)
        assert r.cost == best.cost, (engine, name, metric, r.message)
        assert r.stats["verified"], (engine, r.message)


@pytest.mark.parametrize("name", sorted(UNSOLVABLE))
def test_klotski_unsolvable_layouts(tmp_path: Path, name: str) -> None:
    rows, size, goal = UNSOLVABLE[name]
    path = write_klotski(tmp_path / f"{name}.txt", rows, size, goal)
    loaded = api.load_task("klotski", str(path), ["metric=steps"])
    assert _bfs(loaded).status == "unsolvable"
    for engine in SYMBOLIC:
        r = _run(loaded, engine, horizon=10)
        assert r.status in ("unsolvable", "unknown", "limit"), engine
        assert r.plan is None
    r = api.solve(loaded, "sat", Limits(time_s=1.5), kernel="numpy")  # no cap: stops at the limit
    assert r.status in ("unsolvable", "limit") and r.plan is None


def test_eight_unsolvable_stops_at_horizon_cap() -> None:
    loaded = api.load_task("sliding", EIGHT_UNSOLVABLE)
    for engine in SYMBOLIC:
        r = api.solve(loaded, engine, Limits(time_s=30), kernel="numpy", horizon=6)
        assert r.status in ("unknown", "limit") and r.plan is None, engine


@pytest.mark.slow
def test_fayaa_117_steps_matches_bfs() -> None:
    """fayaa-117 (14 interchangeable 1x1 pieces; 27 unit steps): about 25 s (sat), 30 s (cpsat)."""
    loaded = api.load_task("klotski", f"{FAYAA}#fayaa-117", ["metric=steps"])
    best = _bfs(loaded)
    assert best.cost == 27
    for engine in SYMBOLIC:
        r = api.solve(loaded, engine, Limits(time_s=300), kernel="numpy")
        assert r.status == "optimal" and r.cost == best.cost and r.stats["verified"], engine


# --------------------------------------------------------------------------- general costs, when-effects
def _counter_task(zero_cost: bool) -> object:
    """x in 0..5, y in 0..3; conditional and overwritten effects; costs 0/1/2 or 1/2."""
    m = Model("counter")
    x = m.var("x", 0, 5, 0)
    y = m.var("y", 0, 3, 1)

    @m.action("inc")
    def inc() -> Act:
        return Act(guard=x < 5, effects={x: x + 1}, cost=1,
                   when=[When(y == 2, {x: Min(x + 2, 5)}), When(y == 3, {x: x})])

    @m.action("twist")
    def twist() -> Act:
        return Act(effects={y: (y * 3 + 1) % 4}, cost=0 if zero_cost else 2)

    @m.action("reset")
    def reset() -> Act:
        return Act(guard=x > 2, effects={x: 0, y: 2}, cost=1)

    m.goal(And(x == 5, y == 0))
    return ground(m)


class _K:
    def __init__(self, task: object):
        self.task = task


@pytest.mark.parametrize("zero_cost", [False, True])
def test_general_costs_and_conditional_effects(zero_cost: bool) -> None:
    from helpers import reference_optimum

    task = _counter_task(zero_cost)
    want = reference_optimum(task)
    for engine in SYMBOLIC:
        # 24 states: a loop-free plan has at most 23 steps, so horizon 24 covers every optimal plan
        r = ENGINES[engine](_K(task), Limits(time_s=60), horizon=24)
        assert r.cost == want, (engine, r.status, r.message)
        check = ref.check_plan(task, r.plan)
        assert check.ok and check.cost == want, (engine, check.message)
        # zero-cost "twist" swaps y between 0 and 1 or between 2 and 3 (y -> 3y + 1 mod 4):
        # no loop-free free run is longer than 1,
        # so the run bound (runbound.py) proves optimality as positive costs do
        assert r.status == "optimal", (engine, r.message)
        if zero_cost:
            assert r.stats["zero_cost_run"] == 1, engine
            r = ENGINES[engine](_K(task), Limits(time_s=60), horizon=24, run_bound_s=0)
            assert r.status == "solved" and r.cost == want, (engine, r.message)  # no bound: no proof
        r = ENGINES[engine](_K(task), Limits(time_s=60))  # no cap: the horizon argument decides
        assert r.status == "optimal" and r.cost == want, engine


def _tokens_task() -> object:
    """Three interchangeable tokens on cells 0..3 that may share a cell (ties in the sorted state)."""
    m = Model("tokens")
    pos = [m.var(f"p{i}", 0, 3, v) for i, v in enumerate((2, 0, 0))]
    flag = m.var("flag", 0, 1, 0)

    @m.action("step", i=range(3), d=(-1, 1))
    def step(i: int, d: int) -> Act:
        p = pos[i]
        # moving right onto an occupied cell costs 2, else 1; the flag records a stacked move
        busy = Or(*[pos[j] == p + d for j in range(3) if j != i])
        return Act(guard=And(p + d >= 0, p + d <= 3), effects={p: p + d},
                   cost=If(And(busy, d > 0), 2, 1), when=[When(busy, {flag: 1})])

    m.interchangeable([(p,) for p in pos])
    m.goal(And(Count([p == 3 for p in pos]) == 2, flag == 1))
    return ground(m)


def test_interchangeable_objects_with_ties() -> None:
    from helpers import reference_optimum

    task = _tokens_task()
    want = reference_optimum(task)
    for engine in SYMBOLIC:
        for symmetry in (True, False):
            r = ENGINES[engine](_K(task), Limits(time_s=60), symmetry=symmetry)
            check = ref.check_plan(task, r.plan)
            assert r.status == "optimal" and r.cost == want, (engine, symmetry, r.status, r.message)
            assert check.ok and check.cost == want, (engine, symmetry, check.message)


# --------------------------------------------------------------------------- expression encodings
def _probe_task() -> tuple[object, object, object]:
    """Two free variables (any value after one step) to evaluate expressions over."""
    m = Model("probe")
    x = m.var("x", 0, 3, 0)
    y = m.var("y", -2, 2, 0)

    @m.action("set", a=range(0, 4), b=range(-2, 3))
    def set_(a: int, b: int) -> Act:
        return Act(effects={x: a, y: b})

    m.goal(x >= 0)  # always true: any assignment is a plan's end
    return ground(m), x, y


def _expressions(x: object, y: object) -> list:
    return [
        x + y, x - y, x * y, (x - y) // 3, (x * y) % 3, Abs(x - 2 * y), Min(x, y, 1), Max(x, y),
        If(x > y, x, y * 2), Table([5, 6, 7], default=-1)[x + y], Element([x, y, x + y], y + 1, default=9),
        x < y, x == y, x != y + 1, x >= y, Or(And(Not(x == 1), y < 0), x == y),
        If(x > 1, y > 0, y < 0), ToInt(x > y) + x, Count([x > 0, y > 0, x == y]),
        Element([x > y, y == 0], x, default=True), Table([1, 0, 1, 1])[x] == 1, (x + 1) * 2 - y,
    ]


def _holds(lit: int, true: set[int]) -> bool:
    return lit in true if lit > 0 else -lit not in true


def test_sat_expression_encoding_matches_reference() -> None:
    from pysat.solvers import Solver

    task, x, y = _probe_task()
    exprs = _expressions(x, y)
    enc = CnfPlan(task, start=[range(0, 4), range(-2, 3)])
    encoded = [enc.encode(e, 0) for e in exprs]
    lits = [r if isinstance(r, int) else {v: r.lit(v) for v in r.values} for r in encoded]  # made lazily
    with Solver(name="cadical195", bootstrap_with=enc.drain()) as s:
        for a, b in itertools.product(range(0, 4), range(-2, 3)):
            assert s.solve(assumptions=[enc.x[0][0][a], enc.x[0][1][b]])
            true = {lit for lit in s.get_model() if lit > 0} | {TOP}
            for e, r in zip(exprs, lits):
                want = ref.evaluate(e, [a, b])
                if isinstance(r, int):
                    got = int(_holds(r, true))
                else:
                    hits = [v for v, lit in r.items() if _holds(lit, true)]
                    assert len(hits) == 1, (e, a, b, hits)
                    got = hits[0]
                assert got == want, (e, a, b)


def test_cpsat_expression_encoding_matches_reference() -> None:
    from ortools.sat.python import cp_model

    task, x, y = _probe_task()
    exprs = _expressions(x, y)
    for a, b in itertools.product(range(0, 4), range(-2, 3)):
        model = CpPlan(task, 1, objective=False, symmetry=False)
        posted = [model._post(e, 1) for e in exprs]
        model.m.add(model.x[1][0] == a)
        model.m.add(model.x[1][1] == b)
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        assert solver.solve(model.m) in (cp_model.OPTIMAL, cp_model.FEASIBLE), (a, b)
        for e, p in zip(exprs, posted):
            want = ref.evaluate(e, [a, b])
            if isinstance(p, bool | int):
                got = int(p)
            elif e.kind == "bool":
                got = int(solver.boolean_value(p))
            else:
                got = int(solver.value(p))
            assert got == want, (e, a, b)


# --------------------------------------------------------------------------- pieces of the machinery
def test_invariants_hold_on_reachable_states(tmp_path: Path) -> None:
    """Every synthesised invariant pair is false in every (canonical or not) reachable state."""
    from helpers import reference_reachable

    rows, size, goal = LAYOUTS["shapes"]
    path = write_klotski(tmp_path / "l.txt", rows, size, goal)
    task = api.load_task("klotski", str(path), ["metric=moves"]).task
    inv = mutex_invariants(task)
    assert inv, "the non-overlap invariants of the pieces were not found"
    for state in reference_reachable(task):
        for (v, w), pairs in inv.items():
            assert (state[v], state[w]) not in pairs


def test_options_are_checked() -> None:
    task = _counter_task(False)
    with pytest.raises(OptionError):
        ENGINES["sat"](_K(task), Limits(), solver="no-such-solver")
    with pytest.raises(OptionError):
        ENGINES["cpsat"](_K(task), Limits(), workers=0)


def test_time_limit_is_honoured() -> None:
    import time

    loaded = api.load_task("sliding", EIGHT_UNSOLVABLE)
    for engine in SYMBOLIC:
        t0 = time.perf_counter()
        r = api.solve(loaded, engine, Limits(time_s=1.0), kernel="numpy")
        assert r.status == "limit" and r.plan is None, engine
        assert time.perf_counter() - t0 < 6, engine


def test_unsolvable_within_the_state_bound_is_proven_by_both() -> None:
    """x can only go 0 -> 1 -> 2 (x < 2 guards the step), the goal x == 4 needs more: the relaxed
    fixpoint has 3 values, so "no plan of at most 2 steps" proves the task unsolvable for sat and cpsat."""
    m = Model("stuck")
    x = m.var("x", 0, 5, 0)

    @m.action("inc")
    def inc() -> Act:
        return Act(guard=x < 2, effects={x: x + 1})

    m.goal(x == 4)
    task = ground(m)
    for engine in SYMBOLIC:
        r = ENGINES[engine](_K(task), Limits(time_s=60))
        assert r.status == "unsolvable" and r.plan is None, (engine, r.status, r.message)
        assert r.proof, engine


def test_invariants_are_synthesised_once_per_task() -> None:
    """sat and cpsat on one task (verify, the differential sweep) share the synthesis: the second
    request returns the same invariants at once; another task is not served from it, and the entry
    goes with its task."""
    import gc

    from puzzleplan.solvers import horizon
    from puzzleplan.solvers.result import Clock

    def task():
        return api.load_task("klotski", f"{FAYAA}#fayaa-001",
                             ["metric=steps"]).task

    first, second = task(), task()
    a = horizon.LazyInvariants(first, Clock(Limits()), True, True).get()
    again = horizon.LazyInvariants(first, Clock(Limits()), True, True)
    assert again.get() is a and again.seconds < 0.05
    other = horizon.LazyInvariants(second, Clock(Limits()), True, True).get()
    assert other is not a and other == a          # computed afresh for another object, same result
    assert horizon.LazyInvariants(first, Clock(Limits()), True, False).get() is not a   # other key
    mine = [(id(first), True), (id(first), False)]
    assert all(k in horizon._SYNTHESISED for k in mine) and (id(second), True) in horizon._SYNTHESISED
    del first, again
    gc.collect()
    assert not any(k in horizon._SYNTHESISED for k in mine)      # the entries went with their task
    assert horizon._SYNTHESISED[id(second), True][1] is other
