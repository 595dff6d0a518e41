"""The frontier: breadth-first layers enumerated by SAT and by CP-SAT, and the refutations that
start from the last of them (encodings/frontier.py, encodings/cpfrontier.py, solvers/sat.py,
solvers/cpsat.py).

Judged by the reference semantics: the layers must be exactly the canonical states at each
distance by breadth-first search over the plain-Python interpreter, and an engine whose
refutation starts from a frontier must prove the reference optimum (Dijkstra over the same
interpreter) with a plan the checker accepts, also when the plan it is given is too long.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import eight_walk_tasks, reference_optimum, reference_successors, write_klotski
from test_sat_hint import _dear_plan

from puzzleplan import api
from puzzleplan.encodings.cpfrontier import cp_layers
from puzzleplan.encodings.frontier import sat_layers
from puzzleplan.encodings.invariants import mutex_invariants
from puzzleplan.encodings.symmetry import canonical, symmetry_groups
from puzzleplan.solvers import ENGINES, horizon
from puzzleplan.solvers import cpsat as cpsat_engine
from puzzleplan.solvers import sat as sat_engine
from puzzleplan.solvers.result import Limits
from puzzleplan.verify import reference as ref


class _K:
    def __init__(self, task: object):
        self.task = task


def reference_layers(task: object, depth: int) -> list[set[tuple[int, ...]]]:
    """Canonical states by distance from the start, by breadth-first search on the reference."""
    groups = symmetry_groups(task)
    init = tuple(canonical(groups, task.init))
    seen, layers = {init}, [{init}]
    for _ in range(depth):
        new = set()
        for succs in reference_successors(task, sorted(layers[-1])):
            for _, s in succs:
                c = tuple(canonical(groups, s))
                if c not in seen:
                    seen.add(c)
                    new.add(c)
        layers.append(new)
    return layers


def _tasks(tmp_path: Path, seed: int) -> list[tuple[str, object]]:
    """Seeded 8-puzzle walks (no interchangeable objects) and Klotski layouts with interchangeable
    pieces (sorted states), unit steps."""
    out = eight_walk_tasks(tmp_path, seed, 3, 8, 22)
    layouts = [(["A.B", "CCD", "E.D"], (3, 3), (0, 2)), (["A.B", "CCB", "D.E"], (3, 3), (2, 2)),
               (["AAB", "AAC", "D.E", "F.G"], (3, 4), (2, 1)), (["BAA", "CAA", "D.E", ".FG"], (3, 4), (2, 0))]
    for j, (rows, size, target) in enumerate(layouts):
        p = write_klotski(tmp_path / f"k{j}.txt", rows, size, target)
        out.append((p.name, api.load_task("klotski", str(p), ["metric=steps"]).task))
    return out


@pytest.mark.parametrize("enumerate_layers", [sat_layers, cp_layers], ids=["sat", "cpsat"])
def test_the_layers_are_the_reference_breadth_first_layers(tmp_path: Path, enumerate_layers: object) -> None:
    for name, task in _tasks(tmp_path, 20261207):
        want = reference_optimum(task)
        depth = 12 if want is None else min(want, 12)
        expected = reference_layers(task, depth)
        got = enumerate_layers(task, depth, 100_000, mutex_invariants(task))
        if want is not None and want <= 12:    # the enumeration stops at the goal's layer
            assert got.goal_at == want, (name, got.goal_at, want)
            assert [set(x) for x in got.layers[:-1]] == expected[:-1], name
            assert set(got.layers[-1]) <= expected[-1], name
            assert any(ref.is_goal(task, s) for s in got.layers[-1]), name
        else:
            assert got.goal_at is None, name
            n = len(got.layers)   # an empty layer ends it early (an unsolvable layout)
            assert [set(x) for x in got.layers] == expected[:n], name
            assert n == depth + 1 or not got.layers[-1], name
        for layer in got.layers:
            assert len(layer) == len(set(layer)), name


@pytest.mark.parametrize("enumerate_layers", [sat_layers, cp_layers], ids=["sat", "cpsat"])
def test_a_layer_over_the_cap_is_dropped_not_cut(tmp_path: Path, enumerate_layers: object) -> None:
    name, task = _tasks(tmp_path, 5)[0]
    expected = reference_layers(task, 8)
    cap = next(len(layer) for layer in expected if len(layer) > 3) - 1
    got = enumerate_layers(task, 8, cap, None)
    assert got.stopped.startswith("layer") and got.goal_at is None
    assert all(len(x) <= cap for x in got.layers)
    assert [set(x) for x in got.layers] == expected[:len(got.layers)], name
    assert len(expected[len(got.layers)]) > cap


@pytest.mark.parametrize("engine", ["sat", "cpsat"])
@pytest.mark.parametrize("frontier", [None, 3])
def test_refutations_from_the_frontier_prove_the_reference_optimum(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str, frontier: int | None) -> None:
    monkeypatch.setattr(horizon, "HINT_AFTER_S", 0.0)   # the hint path on every task
    monkeypatch.setattr(horizon, "FRONTIER_FROM", 2)    # and the frontier on these short refutations
    used = 0
    for name, task in _tasks(tmp_path, 20261208):
        want = reference_optimum(task)
        if want is None:
            continue
        r = ENGINES[engine](_K(task), Limits(time_s=60), frontier=frontier)
        assert r.status == "optimal" and r.cost == want, (name, r.status, r.cost, r.message)
        check = ref.check_plan(task, r.plan)
        assert check.ok and check.cost == want, name
        k = r.stats.get("frontier_depth")
        if k:
            used += 1
            assert k <= (want - 1) // 2 if frontier is None else k <= frontier, (name, k)
            assert r.stats["frontier_layer"] <= horizon.FRONTIER_AUTO_LAYER or frontier is not None
            assert f"at most {want - 1} steps" in r.proof, r.proof
            assert f"layers 0..{k} enumerated" in r.proof, r.proof
            assert f"at most {want - 1 - k} steps from the" in r.proof, r.proof
    assert used >= 3


@pytest.mark.parametrize("engine,module", [("sat", sat_engine), ("cpsat", cpsat_engine)])
def test_a_longer_hint_is_beaten_through_the_frontier(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      engine: str, module: object) -> None:
    """A plan two steps too long: layers up to half its refutation meet the goal, or the formula from
    the frontier finds a path; either way the engine asks from the start and proves the optimum."""
    monkeypatch.setattr(horizon, "HINT_AFTER_S", 0.0)
    monkeypatch.setattr(horizon, "FRONTIER_FROM", 2)
    for name, task in _tasks(tmp_path, 9)[:2] + _tasks(tmp_path, 9)[4:6]:
        want = reference_optimum(task)
        dear, cost = _dear_plan(task)
        monkeypatch.setattr(module, "explicit_plan", lambda *a, c=cost, p=dear, **kw: (c, p))
        for frontier in (None, cost - 1):
            r = ENGINES[engine](_K(task), Limits(time_s=60), frontier=frontier)
            assert r.status == "optimal" and r.cost == want, (name, frontier, r.status, r.message)
            assert ref.check_plan(task, r.plan).cost == want and "bfs hint" not in r.proof, name


def test_frontier_zero_is_the_plain_refutation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(horizon, "HINT_AFTER_S", 0.0)
    monkeypatch.setattr(horizon, "FRONTIER_FROM", 2)
    name, task = _tasks(tmp_path, 20261208)[0]
    want = reference_optimum(task)
    for engine in ("sat", "cpsat"):
        r = ENGINES[engine](_K(task), Limits(time_s=60), frontier=0)
        assert r.status == "optimal" and r.cost == want, name
        assert "frontier_depth" not in r.stats and "enumerated" not in (r.proof or ""), r.proof


def test_the_default_depth_and_cap() -> None:
    """Below FRONTIER_FROM steps no frontier; from there half the steps by default, K when asked."""
    f = horizon.frontier_depth
    assert f(horizon.FRONTIER_FROM - 1, None) == (0, 0) and f(100, 0) == (0, 0)
    assert f(59, None) == (29, horizon.FRONTIER_AUTO_LAYER)
    assert f(59, 40) == (40, horizon.FRONTIER_MAX_LAYER) and f(59, 500) == (59, horizon.FRONTIER_MAX_LAYER)


def test_a_limit_after_the_layers_keeps_their_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A limit in the formula from the frontier: the plan stands (`solved`), and the lower bound is at
    least the complete layers' depth + 1 (none holds a goal), never more than the optimum."""
    from puzzleplan.encodings import cpfrontier

    monkeypatch.setattr(horizon, "HINT_AFTER_S", 0.0)
    monkeypatch.setattr(horizon, "FRONTIER_FROM", 2)
    tasks = [(n, t) for n, t in _tasks(tmp_path, 20261208) if (reference_optimum(t) or 0) >= 8]
    assert tasks
    name, task = tasks[0]
    want = reference_optimum(task)
    layered: list[int] = []
    real_layers = cpfrontier.cp_layers

    def cp_layers(*args: object, **kw: object) -> object:
        layered.append(1)
        return real_layers(*args, **kw)

    real_sat, real_cp = sat_engine._Sat.solve, cpsat_engine._Runner.solve
    monkeypatch.setattr(sat_engine._Sat, "solve",
                        lambda self, a: None if "frontier_depth" in self.extra else real_sat(self, a))
    monkeypatch.setattr(cpfrontier, "cp_layers", cp_layers)
    monkeypatch.setattr(cpsat_engine._Runner, "solve",
                        lambda self, m, s=None: ("UNKNOWN", None) if layered else real_cp(self, m, s))
    for engine in ("sat", "cpsat"):
        r = ENGINES[engine](_K(task), Limits(time_s=60), heuristic=False)   # no bound from h(init)
        k = r.stats["frontier_depth"]
        assert r.status == "solved" and r.cost == want, (engine, r.status, r.message)
        assert k >= 2 and r.stats["lower_bound"] == k + 1 <= want, (engine, r.stats["lower_bound"], k)
        assert f"fewer than {k + 1} steps" in r.message or f"costs less than {k + 1}" in r.message, r.message


@pytest.mark.parametrize("engine", ["sat", "cpsat"])
def test_the_enumeration_reports_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          engine: str) -> None:
    """While the layers are enumerated the listener hears the question (horizon, plan cost), the layers'
    depth and states, and a lower bound the layers prove and the optimum never passes."""
    from puzzleplan.solvers.progress import Collect

    monkeypatch.setattr(horizon, "HINT_AFTER_S", 0.0)
    monkeypatch.setattr(horizon, "FRONTIER_FROM", 2)
    heard = 0
    for name, task in _tasks(tmp_path, 20261208):
        want = reference_optimum(task)
        if want is None or want < 6:
            continue
        seen = Collect(every=0.0)
        r = ENGINES[engine](_K(task), Limits(time_s=60, progress=seen))
        assert r.status == "optimal" and r.cost == want, (name, r.message)
        ups = [u for u in seen.updates if "frontier_depth" in u]
        if "frontier_depth" not in r.stats:
            continue
        heard += 1
        assert ups, (name, seen.updates[-3:])
        depths, states = [u["frontier_depth"] for u in ups], [u["states"] for u in ups]
        assert depths == sorted(depths) and states == sorted(states), name
        assert depths[-1] <= r.stats["frontier_depth"] and states[-1] <= r.stats["frontier_states"], name
        for u in ups:
            assert u["horizon"] == want - 1 and u["best_cost"] == want, (name, u)
            assert u["frontier_depth"] + 1 <= u["lower_bound"] <= want, (name, u)
    assert heard >= 2
