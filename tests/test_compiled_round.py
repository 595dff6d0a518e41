"""dbfs's parallel compiled layer (solvers/distributed/compiled_round.py, drivers/dbfs_layer.py)
against the per-shard calls it stands in for.

The thread executor runs a bfs layer of every shard in one ``prange`` call where it can; the
same search with that path switched off must store the same states with the same ids, parents
and actions in every shard after every layer, and give the same layers, counts and plan -- on
the 8-puzzle's whole space (tables growing inside the call), with rounds cut small (work left to
the per-shard path between compiled layers), on Hua Rong Dao under the moves metric (zero-cost
successors: the per-shard path takes those layers; unit steps too) and on a Kwirk floor.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from helpers import ROOT

from puzzleplan import api
from puzzleplan.solvers.distributed import compiled_round, executors
from puzzleplan.solvers.result import Limits

EIGHT = f"{ROOT}/instances/sliding/eight.txt#eight-hardest-a"
FAYAA = f"{ROOT}/instances/klotski/fayaa.txt#fayaa-117"
KWIRK = str(ROOT / "instances/kwirk/going-up/06_1-6.txt")


def _search(loaded, workers: int, compiled: bool, monkeypatch, kernel: str = "interpreted", **options):
    """A thread-executor dbfs with the compiled layer on or off, and every shard's table (keys,
    parents' keys, actions, in id order) at the first round of every layer (later rounds of a
    layer, with unit costs, file their successors for the next layer and store nothing)."""
    snaps: dict[int, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}

    def snapshot(g, ex):
        snaps.setdefault(g, [(s.visited.table.keys[: s.visited.table.size].copy(),
                              s.visited.pk[: s.visited.table.size].copy(),
                              s.visited.act[: s.visited.table.size].copy()) for s in ex.shards])

    with monkeypatch.context() as m:
        if not compiled:
            m.setattr(executors, "_compiled_rounds", lambda kernel, shards: None)
        r = api.solve(loaded, "dbfs", Limits(), kernel=kernel, workers=workers, executor="threads",
                      fault=snapshot, **options)
    return r, snaps


def _same(a, b, exact: bool = True) -> None:
    """``exact``: the same ids, parents and actions; else the same states per shard and layer (where
    the per-shard path stores part of a layer, it files candidates in batches: another order,
    and a state's parent may be another one of the layer before)."""
    (ra, sa), (rb, sb) = a, b
    assert (ra.status, ra.cost) == (rb.status, rb.cost)
    assert ra.plan == rb.plan or not exact
    for key in ("layers", "expanded", "generated", "states", "worker_expanded"):
        assert ra.stats[key] == rb.stats[key], key
    assert sorted(sa) == sorted(sb)
    for g in sa:
        la, lb = sa[g], sb[g]
        for (ka, pa, aa), (kb, pb, ab) in zip(la, lb):
            if exact:
                assert np.array_equal(ka, kb) and np.array_equal(pa, pb) and np.array_equal(aa, ab)
            else:
                assert np.array_equal(np.unique(ka, axis=0), np.unique(kb, axis=0)) and len(ka) == len(kb)


def _spinning_layer_here() -> bool:
    """Whether numba will pick OpenMP or TBB workers here (the layer is chosen at the first parallel
    call; before it, ``compiled_round.usable`` cannot tell)."""
    import importlib

    import numba

    if numba.config.THREADING_LAYER not in ("default", "omp", "tbb", "threadsafe", "forksafe", "safe"):
        return False
    for name in ("numba.np.ufunc.tbbpool", "numba.np.ufunc.omppool"):
        try:
            importlib.import_module(name)
            return True
        except ImportError:
            pass
    return False


needs_parallel = pytest.mark.skipif(
    not (_spinning_layer_here() and compiled_round.usable()),
    reason="numba's threading layer here is not OpenMP or TBB")


@needs_parallel
@pytest.mark.parametrize("workers", [2, 4])
@pytest.mark.parametrize("round_states", [compiled_round.ROUND_STATES, 7])
def test_eight_puzzle_space_with_and_without_the_compiled_layer(monkeypatch, workers, round_states):
    loaded = api.load_task("sliding", EIGHT)
    b = api.solve(loaded, "bfs", kernel="numpy")
    monkeypatch.setattr(compiled_round, "ROUND_STATES", round_states)
    on = _search(loaded, workers, True, monkeypatch, enumerate_all=True)
    off = _search(loaded, workers, False, monkeypatch, enumerate_all=True)
    _same(on, off, exact=round_states > 1000)
    r = on[0]
    assert r.stats["layers"][:-1] == b.stats["layers"] and r.stats["reachable"] == 181_440
    assert r.cost == 31 and r.stats["verified"] is True
    assert off[0].stats["compiled_layers"] == 0
    if round_states > 1000:   # every layer after the first in one call
        assert r.stats["compiled_layers"] == len(r.stats["layers"])
    else:                     # most layers leave work: their later rounds are per-shard calls
        assert 0 < r.stats["compiled_layers"] < len(r.stats["layers"])


@needs_parallel
def test_the_task_compiled_kernel_runs_the_layer_too(monkeypatch):
    """The driver copied into a task's own kernel module (``--kernel numba``), not only the
    interpreter's."""
    loaded = api.load_task("sliding", EIGHT)
    on = _search(loaded, 2, True, monkeypatch, kernel="numba")
    off = _search(loaded, 2, False, monkeypatch, kernel="numba")
    _same(on, off)
    assert on[0].cost == 31 and on[0].stats["verified"] is True and on[0].stats["compiled_layers"] > 0


@needs_parallel
@pytest.mark.parametrize("model,instance,options", [
    ("klotski", FAYAA, ["metric=steps"]),     # interchangeable pieces: canonical keys
    ("klotski", FAYAA, ["metric=moves"]),     # 0/1 costs: zero-cost successors take the other path
    ("kwirk", KWIRK, []),                     # 0/1 costs too
])
def test_searches_to_a_goal_with_and_without_the_compiled_layer(monkeypatch, model, instance, options):
    loaded = api.load_task(model, instance, options)
    b = api.solve(loaded, "bfs", kernel="numpy")
    on = _search(loaded, 2, True, monkeypatch)
    off = _search(loaded, 2, False, monkeypatch)
    _same(on, off)
    r = on[0]
    assert (r.status, r.cost, r.stats["verified"]) == (b.status, b.cost, True)
    assert r.stats["layers"] == b.stats["layers"]
    assert r.stats["compiled_layers"] > 0 or model == "kwirk"   # Kwirk: a zero-cost move in every layer


@needs_parallel
def test_compiled_layer_refuses_a_successor_outside_its_domain(tmp_path):
    """The state whose successor leaves a domain, arriving at a shard, raises the kernel's error."""
    from puzzleplan.encodings.kernel import DomainError
    from puzzleplan.solvers.distributed.shard import Shard, ShardConfig

    inst = tmp_path / "o.txt"
    inst.write_text("start: 0\n", encoding="utf-8")
    loaded = api.load_task(str(ROOT / "tests/models/overflow.py"), str(inst))
    k = loaded.kernel("interpreted")
    shards = [Shard(i, k, ShardConfig(n_shards=2)) for i in range(2)]
    rounds = compiled_round.CompiledRounds(k, shards)
    bad = k.canon_pack(np.array([[3, 0]]))
    W = k.n_words
    empty = (np.zeros((0, W), dtype=np.uint64), np.zeros(0, dtype=np.int32))
    as_list = compiled_round.as_list
    sent = as_list((bad, empty[0])), as_list((np.zeros_like(bad), empty[0])), \
        as_list((np.zeros(1, dtype=np.int32), empty[1])), \
        as_list((np.array([0, 0, 1, 1, 1]), np.zeros(5, dtype=np.int64)))    # shard 0 sends it to shard 0
    with pytest.raises(DomainError, match="up"):
        rounds._sync_in()
        rounds._call(sent, 10)


@needs_parallel
def test_a_forked_child_does_not_use_the_compiled_layer():
    """GNU OpenMP's workers do not survive a fork (numba ends a child that starts a parallel call),
    so a child of a process that ran the compiled layer takes the per-shard calls; a compile
    child's one-state run (api.solve's warm-up) compiles the layer without running it."""
    loaded = api.load_task("sliding", EIGHT)
    r = api.solve(loaded, "dbfs", Limits(), kernel="interpreted", workers=2, executor="threads")
    assert r.stats["compiled_layers"] > 0 and compiled_round.usable()
    pid = os.fork()
    if pid == 0:     # the child: no parallel call, and the search still runs (per-shard calls)
        code = 1
        try:
            if not compiled_round.usable():
                one = api.solve(loaded, "dbfs", Limits(max_states=1), kernel="interpreted", workers=2)
                c = api.solve(loaded, "dbfs", Limits(), kernel="interpreted", workers=2, executor="threads")
                code = 0 if (one.status, c.cost, c.stats["compiled_layers"]) == ("limit", 31, 0) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0


def test_workers_started_before_the_module_count_as_inherited():
    """OpenMP workers that ran before compiled_round was imported may belong to a parent process
    (a fork), so the path is not used then; TBB's survive forks."""
    import subprocess
    import sys

    code = ("import numpy as np, numba\n"
            "from numba import njit, prange\n"
            "@njit(parallel=True)\n"
            "def f(a):\n"
            "    for i in prange(2):\n"
            "        a[i] += 1\n"
            "f(np.zeros(2))\n"
            "from puzzleplan.solvers.distributed import compiled_round\n"
            "print(numba.threading_layer(), compiled_round.usable())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         timeout=300).stdout.split()
    assert out == [out[0], str(out[0] == "tbb")]


@needs_parallel
@pytest.mark.slow   # two cold compiles in subprocesses (about a minute on a slow day)
def test_a_time_limited_run_compiles_the_parallel_layer_in_its_compile_child(tmp_path):
    """With an empty kernel cache, a bfs run on the interpreter marks the interpreter warm; a
    two-worker dbfs run with a time limit still compiles its parallel layer in the stoppable
    compile child (the engine's warm variant ``threads`` has a marker of its own), and the next
    such run finds it warm."""
    import json
    import subprocess
    import sys

    env = {**os.environ, "PUZZLEPLAN_CACHE": str(tmp_path)}

    def run(*args: str) -> tuple[dict, list[str]]:
        out = subprocess.run([sys.executable, "-m", "puzzleplan.cli", "solve", "sliding", EIGHT, *args,
                              "--kernel", "interpreted", "--time-limit", "240", "--json", "-q",
                              "--log-progress"], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, out.stderr[-2000:]
        events = [json.loads(line).get("event") for line in out.stderr.splitlines() if line.startswith("{")]
        return json.loads(out.stdout), events

    r, events = run("-e", "bfs")
    assert r["status"] == "optimal" and "compile_start" in events
    r, events = run("-e", "dbfs", "-E", "workers=2")
    assert r["status"] == "optimal" and "compile_start" in events
    assert r["stats"]["compiled_layers"] > 0
    r, events = run("-e", "dbfs", "-E", "workers=2")
    assert r["status"] == "optimal" and "compile_start" not in events
    assert r["stats"]["compiled_layers"] > 0 and r["stats"]["compile_s"] < 5
