"""Engine dbfs (puzzleplan/solvers/distributed): the partitioned search must be bfs, exactly.

Differential against in-process bfs on the same kernel: the same status, optimum and per-layer
state counts, and a plan the reference checker accepts (``api.solve`` replays it) -- on the
8-puzzle's whole space (eight-hardest-a, 31 moves, 181,440 states), bundled Hua Rong Dao layouts
and seeded random small instances (the generator of test_differential.py), with 1, 2 and 4
shards, spilling to disk and not.  Most cases use the in-process executor (the shards as objects
in this process: the same shard code, no Ray start) or the thread executor (the shards at once,
one thread each); one module-scoped local Ray with 2 CPUs runs the cases that need real workers,
a killed worker among them.  Checkpoints: a run broken in the
middle of a layer resumes to the same layers and optimum.
"""

from __future__ import annotations

import json
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT, run_cli
from test_differential import cases

from puzzleplan import api
from puzzleplan.lang.errors import EXIT_BAD_OPTION, OptionError
from puzzleplan.solvers.distributed import keys as keys_module
from puzzleplan.solvers.distributed import spill
from puzzleplan.solvers.distributed.keys import (
    first_rows,
    fresh_parts,
    key_hash,
    owner,
    route,
)
from puzzleplan.solvers.progress import Collect
from puzzleplan.solvers.result import Limits
from puzzleplan.solvers.visited import StateTable

EIGHT = str(ROOT / "instances/sliding/eight.txt")
HARDEST = f"{EIGHT}#eight-hardest-a"
FAYAA = str(ROOT / "instances/klotski/fayaa.txt")
JUGS = ROOT / "tests/models/jugs.py"
SPILL_MB = 0.05   # a few hundred states per shard in RAM: every case that spills writes and merges runs


@pytest.fixture(scope="module")
def eight():
    loaded = api.load_task("sliding", HARDEST)
    return loaded, api.solve(loaded, "bfs", kernel="numpy")


def dbfs(loaded, tmp_path: Path | None = None, kernel: str = "numpy", limits: Limits | None = None,
         spill_on: bool = False, **options):
    options.setdefault("executor", "local")
    if spill_on:
        assert tmp_path is not None
        options.setdefault("spill_mb", SPILL_MB)
        options.update(spill_dir=str(tmp_path / "spill"))
    return api.solve(loaded, "dbfs", limits or Limits(), kernel=kernel, **options)


def same_as_bfs(r, b) -> None:
    assert r.engine == "dbfs"
    assert (r.status, r.cost) == (b.status, b.cost), r.message
    assert r.stats["layers"] == b.stats["layers"]
    if r.plan is not None:
        assert r.stats["verified"] is True and len(r.plan) >= (r.cost or 0) and r.cost == b.cost


# ----------------------------------------------------------------------------- the 8-puzzle's whole space
@pytest.mark.parametrize("shards", [1, 2, 4])
@pytest.mark.parametrize("spill_on", [False, True], ids=["ram", "spill"])
def test_eight_puzzle_whole_space(eight, tmp_path, shards, spill_on):
    loaded, b = eight
    r = dbfs(loaded, tmp_path, workers=shards, spill_on=spill_on)
    same_as_bfs(r, b)
    assert r.cost == 31 and r.stats["states"] == b.stats["states"] == 181_440
    per_worker = r.stats["worker_expanded"]
    assert sum(per_worker) == r.stats["expanded"] and len(per_worker) == shards
    if shards > 1:   # the hash spreads the states: no shard does more than 60 % of the work
        assert max(r.stats["worker_expanded"]) < 0.6 * r.stats["expanded"]
    if spill_on:
        assert r.stats["spill_runs"] >= 1 and r.stats["spill_bytes"] > 0
        assert r.stats["pending_spill_bytes"] > 0      # the next layer's candidates went to disk too
        assert not list((tmp_path / "spill").rglob("*.npy"))   # a finished run removes its runs
    else:
        assert r.stats["spill_runs"] == 0


@pytest.mark.parametrize("executor", ["local", "threads"])
def test_a_layer_closed_and_the_next_opened_in_one_call_is_the_same_search(eight, monkeypatch, executor):
    """Shard.settle_open (one call per bfs layer where no limit needs the next layer's size) against
    two calls per layer: the same layers, counts, optimum and plan."""
    from puzzleplan.solvers.distributed import coordinator

    loaded, b = eight
    one = dbfs(loaded, workers=2, executor=executor, enumerate_all=True)
    limited = dbfs(loaded, workers=2, executor=executor, enumerate_all=True, limits=Limits(max_states=10**9))
    monkeypatch.setattr(coordinator, "FUSE", False)
    two = dbfs(loaded, workers=2, executor=executor, enumerate_all=True)
    assert one.stats["one_call_layers"] >= len(b.stats["layers"]) - 1
    assert two.stats["one_call_layers"] == limited.stats["one_call_layers"] == 0
    for r in (one, limited, two):     # enumerating: one layer more than b's, which ends at the goal
        assert (r.status, r.cost, r.stats["verified"]) == (b.status, b.cost, True)
        assert r.stats["layers"][:-1] == b.stats["layers"] and r.stats["reachable"] == 181_440
    for key in ("layers", "expanded", "generated", "states", "reachable", "worker_expanded"):
        assert one.stats[key] == two.stats[key] == limited.stats[key], key
    assert one.plan == two.plan


def test_enumerate_counts_the_reachable_states(capsys):
    code, out, err = run_cli(["solve", "sliding", HARDEST, "--kernel", "numpy", "--enumerate", "--json",
                              "-e", "dbfs", "-E", "workers=2", "-E", "executor=local"], capsys)
    doc = json.loads(out)
    assert code == 0, err
    assert doc["engine"] == "dbfs" and doc["stats"]["reachable"] == 181_440 and doc["cost"] == 31


@pytest.mark.parametrize("shards", [2, 4])
def test_threads_agree_with_bfs(eight, tmp_path, shards):
    """The shards at once, one thread each: the same layers and optimum, spilling or not, bfs and f
    layers; the default executor for more than one worker on one machine."""
    loaded, b = eight
    for spill_on in (False, True):
        r = dbfs(loaded, tmp_path / str(spill_on), kernel="interpreted", workers=shards, executor="auto",
                 spill_on=spill_on)
        same_as_bfs(r, b)
        assert r.stats["executor"] == "threads" and r.stats["states"] == 181_440
        assert min(r.stats["worker_expanded"]) > 0.4 * r.stats["expanded"] / (shards / 2)
    f = dbfs(loaded, kernel="interpreted", workers=shards, executor="threads", order="astar")
    assert (f.status, f.cost, f.stats["verified"]) == ("optimal", 31, True)


def test_threads_resume_after_a_crash_and_stop_at_a_time_limit(eight, tmp_path):
    loaded, b = eight
    ck = str(tmp_path / "ck")
    with pytest.raises(Crash):
        dbfs(loaded, tmp_path, workers=2, executor="threads", checkpoint=ck, fault=_crash_at(17))
    r = dbfs(loaded, tmp_path, workers=2, executor="threads", checkpoint=ck, resume=True)
    same_as_bfs(r, b)
    assert r.stats["resumed_at_layer"] == 17
    t = dbfs(loaded, workers=2, executor="threads", limits=Limits(time_s=0.05))
    assert t.status == "limit" and "lower_bound" in t.stats and "no plan costs less" in t.message


def test_workers_flag_runs_threads(capsys):
    code, out, err = run_cli(["solve", "klotski", f"{FAYAA}#fayaa-002", "-O", "metric=steps", "--kernel",
                              "interpreted", "--workers", "2", "--json"], capsys)
    doc = json.loads(out)
    assert code == 0, err
    assert doc["engine"] == "dbfs" and doc["stats"]["executor"] == "threads" and doc["cost"] == 100
    assert doc["stats"]["verified"] and doc["stats"]["workers"] == 2


# ----------------------------------------------------------------------------- Hua Rong Dao layouts
@pytest.mark.parametrize("rid", ["fayaa-001", "fayaa-002"])
def test_hua_rong_dao_layouts(tmp_path, rid):
    loaded = api.load_task("klotski", f"{FAYAA}#{rid}", ["metric=steps"])
    b = api.solve(loaded, "bfs", kernel="interpreted")
    for shards, spill_on in ((1, True), (2, False), (4, True)):
        r = dbfs(loaded, tmp_path / str(shards), kernel="interpreted", workers=shards, spill_on=spill_on)
        same_as_bfs(r, b)
        assert r.stats["states"] == b.stats["states"]


def test_hua_rong_dao_moves_metric_is_a_0_1_bfs(tmp_path):
    """Consecutive steps of one piece are free: zero-cost successors join the layer being expanded.

    (bfs's compiled loop prunes by the model's aux bound and stores fewer states, so only the
    optimum is compared here; the layer-exact 0/1 comparison is in the random sweep below.)"""
    loaded = api.load_task("klotski", f"{FAYAA}#fayaa-001", ["metric=moves"])
    assert loaded.task.cost_kind == "01"
    r = dbfs(loaded, tmp_path, kernel="interpreted", workers=2, spill_on=True)
    assert r.status == "optimal" and r.cost == 81 and r.stats["verified"]


# ----------------------------------------------------------------------------- random small instances
def _random_sweep(n: int, seed: int, tmp_path: Path, configs) -> None:
    problems = []
    for i, case in enumerate(cases(n, seed, tmp_path)):
        path = tmp_path / f"{case.name}.txt"
        path.write_text(case.text, encoding="utf-8")
        loaded = api.load_task(case.model, str(path), case.options)
        b = api.solve(loaded, "bfs", kernel="numpy")
        for shards, spill_on in configs(i):
            executor = "threads" if shards > 1 and i % 4 >= 2 else "local"
            # the interpreter expands a round in one compiled call (Kernel.expand_routed), the
            # numpy kernel a call per step
            kernel = "interpreted" if i % 2 else "numpy"
            r = dbfs(loaded, tmp_path / f"{i}-{shards}-{spill_on}", workers=shards, spill_on=spill_on,
                     executor=executor, kernel=kernel)
            if (r.status, r.cost, r.stats["layers"]) != (b.status, b.cost, b.stats["layers"]) or \
                    (r.plan is not None and not r.stats["verified"]):
                problems.append(f"{case.name} {case.options} shards={shards} spill={spill_on} "
                                f"{executor} {kernel}: dbfs "
                                f"{r.status} {r.cost} {r.stats['layers']} bfs {b.status} {b.cost} "
                                f"{b.stats['layers']}\n{case.text}")
    assert not problems, "\n".join(problems)


def test_random_small_instances(tmp_path):
    """12 seeded instances (layouts under both metrics, 8-puzzle walks), one configuration each."""
    _random_sweep(12, 2111, tmp_path, lambda i: [((1, 2, 4)[i % 3], i % 2 == 0)])


@pytest.mark.slow
def test_random_small_instances_sweep(tmp_path):
    """100 instances, each with 1, 2 and 4 shards, spilling and not."""
    _random_sweep(100, 21, tmp_path, lambda i: [(s, sp) for s in (1, 2, 4) for sp in (False, True)])


# ----------------------------------------------------------------------------- checkpoints
class Crash(Exception):
    pass


def _crash_at(layer: int):
    def fault(g, ex):
        if g == layer:
            raise Crash
    return fault


@pytest.mark.parametrize("before,after", [(2, 2), (2, 4), (1, 2)])
def test_resume_after_a_crash_in_the_middle_of_a_layer(eight, tmp_path, before, after):
    """The run dies half-way through layer 17 (the shards have expanded, not exchanged); resuming from
    the checkpoint -- with as many shards or another number -- gives the same layers and optimum."""
    loaded, b = eight
    ck = str(tmp_path / "ck")
    with pytest.raises(Crash):
        dbfs(loaded, tmp_path, workers=before, checkpoint=ck, fault=_crash_at(17), spill_on=before == 2)
    manifest = json.loads((tmp_path / "ck" / "manifest.json").read_text())
    assert manifest["closed"] == 17 and manifest["layers"] == b.stats["layers"][:17]
    assert manifest["expanded"] == sum(b.stats["layers"][:17])   # unit costs: every closed state, once
    r = dbfs(loaded, tmp_path, workers=after, checkpoint=ck, resume=True)
    same_as_bfs(r, b)
    assert r.stats["resumed_at_layer"] == 17 and r.stats["states"] == 181_440
    assert r.stats["expanded"] >= sum(b.stats["layers"])   # the counters carry over from the checkpoint


def test_checkpoint_refuses_mixups(eight, tmp_path):
    loaded, _ = eight
    ck = str(tmp_path / "ck")
    with pytest.raises(OptionError, match="no checkpoint"):
        dbfs(loaded, checkpoint=ck, resume=True)
    dbfs(loaded, checkpoint=ck, limits=Limits(max_states=1000))
    with pytest.raises(OptionError, match="already holds a checkpoint"):
        dbfs(loaded, checkpoint=ck)
    other = api.load_task("sliding", f"{EIGHT}#eight-easy")
    with pytest.raises(OptionError, match="another task"):
        dbfs(other, checkpoint=ck, resume=True)


# ----------------------------------------------------------------------------- limits, errors, progress
def test_state_limit_gives_the_same_bound_as_bfs(eight):
    loaded, _ = eight
    b = api.solve(loaded, "bfs", Limits(max_states=5000), kernel="numpy")
    r = dbfs(loaded, workers=2, limits=Limits(max_states=5000))
    assert r.status == b.status == "limit"
    assert r.stats["lower_bound"] == b.stats["lower_bound"] and r.stats["layers"] == b.stats["layers"]
    assert r.stats["states"] <= 5000 and r.plan is None


def test_time_limit_ends_with_a_bound(eight):
    loaded, _ = eight
    r = dbfs(loaded, workers=2, limits=Limits(time_s=0.05))
    assert r.status == "limit" and "lower_bound" in r.stats and "no plan costs less" in r.message


def test_progress_figures_per_layer(eight):
    loaded, b = eight
    listener = Collect()
    dbfs(loaded, workers=2, limits=Limits(progress=listener))
    last = listener.updates[-1]
    assert len(listener.updates) == len(b.stats["layers"]) == last["depth"] == 31   # one per closed layer
    assert [u["layer"] for u in listener.updates] == b.stats["layers"]
    for key in ("states", "layer", "frontier", "growth", "bytes_per_state", "spill_bytes", "worker_rates"):
        assert key in last
    assert len(last["worker_rates"]) == 2 and last["bytes_per_state"] > 0


def test_general_costs_are_refused(tmp_path):
    path = tmp_path / "jugs.txt"
    path.write_text("a: 3\nb: 5\ntarget: 4\n", encoding="utf-8")
    loaded = api.load_task(str(JUGS), str(path), ["cost=litres"])
    assert loaded.task.cost_kind == "general"
    with pytest.raises(OptionError, match="unit and 0/1 .* order=ucs"):
        dbfs(loaded)


# ----------------------------------------------------------------------------- cost and f layers
def _jugs(tmp_path: Path, a: int, b: int, t: int):
    path = tmp_path / f"jugs-{a}-{b}-{t}.txt"
    path.write_text(f"a: {a}\nb: {b}\ntarget: {t}\n", encoding="utf-8")
    return api.load_task(str(JUGS), str(path), ["cost=litres"])


def same_optimum(r, best) -> None:
    """Layered dbfs against in-process ucs/astar: the same status and cost, a replayed plan."""
    assert r.engine == "dbfs"
    assert (r.status, r.cost) == (best.status, best.cost), r.message
    if r.plan is not None:
        assert r.stats["verified"] is True


def test_cost_layers_match_ucs_on_random_general_cost_jugs(tmp_path):
    """Two jugs, an action costing the litres it moves (general costs); seeded random capacities and
    targets, solvable and not; 1 and 3 shards, spilling and not."""
    rng = random.Random(2026)
    seen = set()
    for i in range(14):
        a, b = rng.randint(1, 7), rng.randint(2, 11)
        t = rng.randint(1, max(a, b) + 1)
        loaded = _jugs(tmp_path, a, b, t)
        best = api.solve(loaded, "ucs", kernel="numpy")
        seen.add(best.status)
        shards, spill_on = (1, 3)[i % 2], i % 3 == 0
        r = dbfs(loaded, tmp_path / str(i), workers=shards, spill_on=spill_on, order="ucs")
        same_optimum(r, best)
        assert set(r.stats["cost_layers"]) <= set(range((best.cost or 10**6) + 1)) or best.cost is None
    assert seen == {"optimal", "unsolvable"}


@pytest.mark.parametrize("shards,spill_on", [(1, False), (2, True), (4, False)])
def test_f_layers_match_astar_on_random_eight_puzzles(tmp_path, shards, spill_on):
    """The 8-puzzle with Manhattan distance (consistent): seeded random walks from the goal."""
    from test_differential import GOAL8, sliding_walk

    rng = random.Random(77 + shards)
    spilled = 0
    for i in range(4):
        start = sliding_walk(3, GOAL8, rng, rng.randint(8, 30))
        path = tmp_path / f"e{i}.txt"
        path.write_text("\n".join(" ".join(str(v) for v in start[r * 3:r * 3 + 3]) for r in range(3)) + "\n",
                        encoding="utf-8")
        loaded = api.load_task("sliding", str(path))
        best = api.solve(loaded, "astar", kernel="numpy")
        # spilling: a budget of 0.001 MB puts some 25 candidates in RAM, the rest on disk
        r = dbfs(loaded, tmp_path / str(i), workers=shards, spill_on=spill_on, order="astar",
                 **({"spill_mb": 0.001} if spill_on else {}))
        same_optimum(r, best)
        spilled += r.stats.get("pending_spill_bytes", 0)
        h0 = int(loaded.kernel("numpy").heuristic(np.array([loaded.task.init]))[0])
        closed = r.stats["f_layers"]     # the first f layer is h(start) (the goal's, when none closed)
        assert (min(closed) if closed else r.cost) == h0 and all(f < r.cost for f in closed)
        assert api.solve(loaded, "dbfs", Limits(), kernel="numpy", order="ucs").cost == best.cost
    assert (spilled > 0) == spill_on     # later layers' candidates went to disk and came back


def test_f_layers_on_a_general_cost_floor():
    """Kwirk floor 1-1 in frames (costs 9-12 and more, walks): cost and f layers agree with ucs."""
    loaded = api.load_task("kwirk", str(ROOT / "instances/kwirk/going-up/01_1-1.txt"), ["metric=frames"])
    assert loaded.task.cost_kind == "general"
    best = api.solve(loaded, "ucs", kernel="numpy")
    for order in ("ucs", "astar"):
        same_optimum(dbfs(loaded, workers=2, order=order), best)


def test_cost_layer_limit_gives_a_sound_bound(eight):
    loaded, b = eight
    r = dbfs(loaded, workers=2, order="ucs", limits=Limits(max_states=5000))
    assert r.status == "limit" and r.plan is None
    assert 0 < r.stats["lower_bound"] <= b.cost and "closed cost layers" in r.message
    r = dbfs(loaded, workers=2, order="astar", limits=Limits(max_states=3000))
    assert r.status == "limit" and 0 < r.stats["lower_bound"] <= b.cost


def test_inconsistent_heuristic_is_refused_by_f_layers(tmp_path):
    path = tmp_path / "bump.txt"
    path.write_text("name: chain\n", encoding="utf-8")
    loaded = api.load_task(str(ROOT / "tests/models/bump.py"), str(path))
    assert api.solve(loaded, "astar", kernel="numpy").cost == 3      # re-opening astar copes
    assert dbfs(loaded, order="ucs").cost == 3
    with pytest.raises(OptionError, match="inconsistent"):
        dbfs(loaded, order="astar")


@pytest.mark.parametrize("order,before,after,crash",
                         [("ucs", 2, 3, 12), ("ucs", 1, 2, 30), ("astar", 2, 1, 5)])
def test_cost_and_f_layers_resume_after_a_crash(eight, tmp_path, order, before, after, crash):
    """A layered run broken in the middle of a layer resumes -- under another shard count, with the
    pending candidates of later layers restored from the checkpoint -- to the same layers and
    optimum.  ucs: jugs 11/15 -> 13 litres, costs by the litre (the pending candidates span many
    later layers); astar: the 8-puzzle."""
    loaded = _jugs(tmp_path, 11, 15, 13) if order == "ucs" else eight[0]
    whole = dbfs(loaded, order=order, workers=2)
    ck = str(tmp_path / "ck")
    with pytest.raises(Crash):
        dbfs(loaded, tmp_path, workers=before, checkpoint=ck, fault=_crash_at(crash), spill_on=True,
             order=order)
    again = dbfs(loaded, workers=after, checkpoint=ck, resume=True, order=order)
    key = f"{'cost' if order == 'ucs' else 'f'}_layers"
    assert again.stats["resumed_at_layer"] == crash and again.stats[key] == whole.stats[key]
    assert (again.status, again.cost, again.stats["verified"]) == ("optimal", whole.cost, True)
    with pytest.raises(OptionError, match="has .* layers, not"):
        dbfs(loaded, checkpoint=ck, resume=True, order="astar" if order == "ucs" else "ucs")


@pytest.mark.parametrize("order,mb,stored", [("astar", 0.001, 2000), ("bfs", 0.02, 5000)])
def test_a_stop_while_a_layer_is_read_back_ends_the_run_and_resumes(eight, tmp_path, monkeypatch, order, mb,
                                                                     stored):
    """The clock says stop between two batches of a layer read back from disk (the step that made
    runs overrun their time limit): the run ends at once with "limit" and a sound bound, and the
    checkpoint -- not written from the half-read layer -- resumes to the optimum."""
    from puzzleplan.solvers import result
    from puzzleplan.solvers.distributed import shard

    loaded, b = eight
    real, prepare, clock = shard.Shard._unseen_part, shard.Shard.prepare, result.Clock.out_of_time
    batches = []    # the batches the current prepare has read (about 6 or 130 candidates each)
    big = [False]   # the shard stores `stored` states: its next layer is many batches long

    def counting_prepare(self, *args):
        batches.clear()
        big[0] = self.visited.size >= stored
        return prepare(self, *args)

    def counting_batch(self, parts):
        batches.append(1)
        return real(self, parts)

    def out_of_time(self):      # the clock says stop once such a layer's prepare has read 3 batches
        return (big[0] and len(batches) >= 3) or clock(self)

    monkeypatch.setattr(shard.Shard, "prepare", counting_prepare)
    monkeypatch.setattr(shard.Shard, "_unseen_part", counting_batch)
    monkeypatch.setattr(result.Clock, "out_of_time", out_of_time)
    ck = str(tmp_path / "ck")
    r = dbfs(loaded, tmp_path, workers=2, checkpoint=ck, spill_on=True, spill_mb=mb, order=order)
    assert len(batches) == 3, "a batch was read after the clock said stop"
    assert not list((tmp_path / "spill").rglob("*.npy")), "a stopped run left spill files"
    assert r.status == "limit" and r.plan is None
    assert 0 < r.stats["lower_bound"] <= b.cost and "no plan costs less" in r.message
    for name, f in (("prepare", prepare), ("_unseen_part", real)):
        monkeypatch.setattr(shard.Shard, name, f)
    monkeypatch.setattr(result.Clock, "out_of_time", clock)
    again = dbfs(loaded, workers=2, checkpoint=ck, resume=True, order=order)
    assert (again.status, again.cost, again.stats["verified"]) == ("optimal", b.cost, True)


def test_cli_workers_with_astar_runs_f_layers(capsys):
    code, out, err = run_cli(["solve", "sliding", HARDEST, "--kernel", "numpy", "--json", "-e", "astar",
                              "--workers", "2", "-E", "executor=local"], capsys)
    doc = json.loads(out)
    assert code == 0, err
    assert doc["engine"] == "dbfs" and doc["stats"]["order"] == "astar" and doc["cost"] == 31
    assert doc["stats"]["verified"] and "f_layers" in doc["stats"] and doc["proof"].startswith("f layers")


@pytest.mark.parametrize("argv,needle", [
    (["-e", "idastar", "--workers", "2"], "--workers works with --engine bfs, ucs, astar or dbfs only"),
    (["--resume"], "--resume needs --checkpoint"),
    (["-e", "dbfs", "-E", "workers=0"], "option workers='0' is not an integer in 1..4096"),
    (["-e", "dbfs", "-E", "executor=mpi"], "executor"),
    (["--ray-address", "127.0.0.1:1", "-E", "executor=threads"], "needs executor ray"),
])
def test_cli_errors_are_one_line(capsys, argv, needle):
    code, out, err = run_cli(["solve", "sliding", f"{EIGHT}#eight-easy", "--kernel", "numpy", *argv], capsys)
    assert code == EXIT_BAD_OPTION and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err


def test_cli_spill_dir_runs_bfs_as_dbfs(tmp_path, capsys):
    code, out, err = run_cli(["solve", "sliding", HARDEST, "--kernel", "numpy", "--json", "--spill-dir",
                              tmp_path / "s", "-E", f"spill_mb={SPILL_MB}", "--checkpoint", tmp_path / "c"],
                             capsys)
    doc = json.loads(out)
    assert code == 0, err
    assert doc["engine"] == "dbfs" and doc["cost"] == 31 and doc["stats"]["verified"]
    assert doc["stats"]["spill_runs"] >= 1 and doc["stats"]["checkpoint_layers"] == 31


# ----------------------------------------------------------------------------- the spill store itself
@pytest.mark.parametrize("lookup", ["direct", "windowed", "windowed-collisions"])
def test_runs_find_every_key_and_merge_in_windows(tmp_path, monkeypatch, lookup):
    """Two-word keys, a budget of 50 states, windows of 7 rows in the merge: every stored key is
    found with its parent, no unstored key is, and the runs stay few.  ``windowed``: lookups join
    the runs 5 rows at a time; ``collisions``: a hash with 3 values, so runs of equal hashes
    cross every window boundary."""
    monkeypatch.setattr(spill, "MERGE_CHUNK", 7)
    if lookup != "direct":
        monkeypatch.setattr(spill, "WINDOW", 5)
        monkeypatch.setattr(spill, "FEW", 0)
    if lookup == "windowed-collisions":
        monkeypatch.setattr(spill, "key_hash", lambda K: (np.asarray(K)[:, 0] % 3).astype(np.uint64))
    rng = np.random.default_rng(5)
    v = spill.Visited(2, budget_states=50, spill_dir=str(tmp_path))
    sizes: list[int] = []
    insert = v._insert
    monkeypatch.setattr(v, "_insert", lambda *a: (insert(*a), sizes.append(v.table.size)))
    stored: dict[tuple[int, int], tuple[int, int, int]] = {}
    for i in range(30):
        K = rng.integers(0, 400, size=(130 if i % 7 == 0 else 40, 2)).astype(np.uint64)
        keep = np.flatnonzero(v.unseen(K))
        keep = keep[first_rows(K[keep])]
        assert all(tuple(int(x) for x in K[i]) not in stored for i in keep)
        assert all(tuple(int(x) for x in row) in stored for row in np.delete(K, keep, axis=0))
        P = K[keep][:, ::-1].copy()
        A = rng.integers(0, 9, size=keep.size).astype(np.int32)
        v.add(K[keep], P, A)
        for row, p, a in zip(K[keep], P, A, strict=True):
            stored[(int(row[0]), int(row[1]))] = (int(p[0]), int(p[1]), int(a))
    assert v.size == len(stored) and 1 <= len(v.runs) <= spill.MAX_RUNS
    assert max(sizes) <= 50      # the table never passes its budget, batches larger than it included
    for key, (p0, p1, a) in random.Random(1).sample(sorted(stored.items()), 200):
        parent, action = v.find(np.array(key, dtype=np.uint64))
        assert (int(parent[0]), int(parent[1]), action) == (p0, p1, a)
    assert v.find(np.array([999, 999], dtype=np.uint64)) is None
    for run in v.runs:
        assert (np.diff(run.H.astype(np.float64)) >= 0).all()
    v.close()
    assert not list(tmp_path.glob("*.npy"))


def test_add_new_stores_what_unseen_and_add_store():
    """``Visited.add_new`` (a bfs layer's successors stored with one probe each) against the two-step
    path -- ``unseen`` plus ``first_rows``, then ``add`` -- on seeded random batches of 2-word keys
    with many repeats and keys stored already, split into parts: the same new keys in the same
    order, the same table, parents and actions, across the table's growth."""
    rng = np.random.default_rng(77)
    a, b = spill.Visited(2), spill.Visited(2)
    for _ in range(40):
        parts = []
        for _ in range(rng.integers(1, 4)):
            n = int(rng.integers(0, 300))
            K = rng.integers(0, 60, size=(n, 2)).astype(np.uint64)
            parts.append((K, rng.integers(0, 1 << 40, size=(n, 2)).astype(np.uint64),
                           rng.integers(0, 9, size=n).astype(np.int32)))
        K, P, A = (np.concatenate([p[c] for p in parts]) for c in range(3))
        keep = np.flatnonzero(a.unseen(K))
        keep = keep[first_rows(K[keep])]
        a.add(K[keep], P[keep], A[keep])
        got = b.add_new(parts)
        assert np.array_equal(got, K[keep])
        n = a.table.size
        assert b.table.size == n and np.array_equal(a.table.keys[:n], b.table.keys[:n])
        assert np.array_equal(a.pk[:n], b.pk[:n]) and np.array_equal(a.act[:n], b.act[:n])
    assert a.table.size > 3000      # the table grew several times


def test_lookups_and_merges_ask_between_runs_and_windows_and_can_be_stopped(tmp_path, monkeypatch):
    """``Visited.between`` is called before a lookup reads each run on disk and before each window of
    a merge; an exception from it (a shard's clock saying stop) ends the step there, and a stopped
    merge deletes its partial output and leaves its inputs whole."""
    monkeypatch.setattr(spill, "MERGE_CHUNK", 7)
    monkeypatch.setattr(spill, "MAX_RUNS", 3)
    v = spill.Visited(1, budget_states=10, spill_dir=str(tmp_path))
    calls = []
    v.between = lambda: calls.append(1)
    for i in range(3):
        K = np.arange(30 * i, 30 * i + 30, dtype=np.uint64).reshape(-1, 1)
        v.add(K, K, np.zeros(30, dtype=np.int32))
    assert len(v.runs) >= 2
    probe = np.arange(0, 120, dtype=np.uint64).reshape(-1, 1)
    calls.clear()
    fresh = v.unseen(probe)
    assert np.flatnonzero(fresh).min() == 90 and 1 <= len(calls) <= len(v.runs)

    class Stop(Exception):
        pass

    def stop_at_third():
        calls.append(1)
        if len(calls) == 3:
            raise Stop

    calls.clear()
    v.between = stop_at_third
    with pytest.raises(Stop):
        v.unseen(probe)
    assert len(calls) == 3
    runs_before = [(r.stem, r.n) for r in v.runs]
    a, b = v.runs[0], v.runs[1]
    calls.clear()
    with pytest.raises(Stop):      # a merge of two 10-row runs in windows of 7 rows: 3 windows
        spill.merge_runs(a, b, str(tmp_path / "merged"), v.between)
    assert not list(tmp_path.glob("merged*")) and [(r.stem, r.n) for r in v.runs] == runs_before
    v.between = None
    assert not v.unseen(np.arange(0, 90, dtype=np.uint64).reshape(-1, 1)).any()   # every run still reads
    v.close()


def test_compiled_row_helpers_match_their_numpy_definitions():
    """owner, first_rows and route are compiled (nogil, for the thread executor); each against
    its plain numpy definition on seeded random keys with many repeats, 1 to 3 words per key."""
    rng = np.random.default_rng(2026)
    for W in (1, 2, 3):
        for n in (0, 1, 2, 7, 3000):
            K = rng.integers(0, 4, size=(n, W)).astype(np.uint64)
            K[:, 0] |= rng.integers(0, 2, size=n).astype(np.uint64) << np.uint64(63)   # the top bit too
            for shards in (1, 2, 3, 16):
                high = key_hash(K) >> np.uint64(32)      # the hash's high half, scaled to the shards
                want = ((high * np.uint64(shards)) >> np.uint64(32)).astype(np.int64) if n else \
                    np.zeros(0, np.int64)
                assert np.array_equal(owner(K, shards), want)
            rows = np.ascontiguousarray(K).view(np.dtype((np.void, 8 * W))).ravel()
            _, idx = np.unique(rows, return_index=True)
            assert np.array_equal(first_rows(K), np.sort(idx))
            assert np.array_equal(first_rows(K[::2]), first_rows(np.ascontiguousarray(K[::2])))
            table = StateTable(W, 16)                      # with a table: its keys are skipped too
            table.insert(rng.integers(0, 4, size=(n // 3, W)).astype(np.uint64))
            unseen = np.flatnonzero(table.lookup(K) < 0)
            assert np.array_equal(first_rows(K, table), unseen[first_rows(K[unseen])])
            Kw = rng.integers(0, 1 << 40, size=(max(n, 1), W)).astype(np.uint64)
            par = rng.integers(0, Kw.shape[0], size=n)
            act = rng.integers(0, 9, size=n)
            step = rng.integers(0, 2, size=n) * rng.integers(1, 4, size=n)
            for shards in (1, 3):
                code = 2 * owner(K, shards) + (step != 0)
                order = np.argsort(code, kind="stable")
                OK, OP, OA, OS, bounds = route(K, Kw, par, act, step, shards)
                assert np.array_equal(OK, K[order]) and np.array_equal(OP, Kw[par][order])
                assert np.array_equal(OA, act[order]) and OA.dtype == np.int32
                assert np.array_equal(OS, step[order])
                sizes = np.bincount(code, minlength=2 * shards)
                assert np.array_equal(bounds, np.concatenate([[0], np.cumsum(sizes)]))


def goal_key(loaded, k) -> np.ndarray:
    """The packed key of a goal state: bfs's plan replayed by the reference."""
    from puzzleplan.verify import reference as ref

    s = list(loaded.task.init)
    for a in api.solve(loaded, "bfs", kernel="interpreted").plan:
        s = ref.apply(loaded.task, loaded.task.actions[a], s)
    return k.canon_pack(np.array([s], dtype=np.int64))


def _steps(k, KW: np.ndarray, shards: int):
    """A round's expansion one call per step: the reference for ``Kernel.expand_routed``."""
    S = k.unpack(KW)
    succ, par, act = k.expand(S)
    return route(k.canon_pack(succ), KW, par, act, k.costs[act], shards)


@pytest.mark.parametrize("model,instance,options,backends", [
    ("sliding", HARDEST, [], ("interpreted", "numba")),
    ("klotski", f"{FAYAA}#fayaa-117", ["metric=moves"], ("interpreted",)),     # 0/1 costs, groups
    ("kwirk", str(ROOT / "instances/kwirk/going-up/06_1-6.txt"), [], ("interpreted",)),
    ("zpg", str(ROOT / "instances/zpg/puzzlescript-L1.txt"), [], ("interpreted",)),
])
def test_expand_routed_equals_the_steps(model, instance, options, backends, monkeypatch):
    """dbfs's round in one compiled call (drivers/dbfs_expand.py) against unpack, goal, expand,
    canon_pack and route one after the other: the same successors, parents, actions, costs and
    groups, in the same order, for 1 to 4 shards; the first goal row; with slices of a few states
    too (the successor buffers then grow), and stopping at the goal's slice."""
    from helpers import sample_states

    from puzzleplan.encodings import kernel as kernel_module

    loaded = api.load_task(model, instance, options)
    task = loaded.task
    states = np.array(sample_states(task, 2026, n_walks=8, length=40), dtype=np.int64)
    grew = False
    for backend in backends:
        k = loaded.kernel(backend)
        KW = k.canon_pack(states)
        goal_rows = np.flatnonzero(k.goal(k.unpack(KW)))
        for tiny in (False, True):
            if tiny:      # the smallest buffers: a slice of half the task's actions in states
                monkeypatch.setattr(kernel_module, "_ROUTED_BYTES", 8)
            for shards in (1, 2, 3, 4):
                r = k.expand_routed(KW, shards, True, False)
                want = _steps(k, KW, shards)
                for got, ref in zip(r[:5], want):
                    assert got.dtype == ref.dtype and np.array_equal(got, ref)
                assert r.expanded == KW.shape[0] and r.generated == want[0].shape[0]
                assert r.goal_row == (goal_rows[0] if goal_rows.size else -1)
                grew |= r.generated > max(64, 4 * KW.shape[0])
            # a goal in the middle: with stop_at_goal nothing from its slice on is expanded
            g = KW.shape[0] // 2
            KG = np.concatenate([KW[:g], goal_key(loaded, k), KW[g:]])
            r = k.expand_routed(KG, 2, True, True)
            assert r.goal_row == min([g, *goal_rows[goal_rows < g]])
            assert r.expanded <= r.goal_row
            for got, ref in zip(r[:5], _steps(k, KG[: r.expanded], 2)):
                assert np.array_equal(got, ref)
            monkeypatch.undo()
    assert grew or model == "sliding"     # the buffers for a batch's successors grew at least once


def test_expand_routed_refuses_a_successor_outside_its_domain(tmp_path):
    inst = tmp_path / "o.txt"
    inst.write_text("start: 0\n", encoding="utf-8")
    loaded = api.load_task(str(ROOT / "tests/models/overflow.py"), str(inst))
    k = loaded.kernel("interpreted")
    fine = k.canon_pack(np.array([[0, 0], [2, 0]]))
    assert k.expand_routed(fine, 2, True, False).generated == 2
    from puzzleplan.encodings.kernel import DomainError

    with pytest.raises(DomainError, match="up"):
        k.expand_routed(k.canon_pack(np.array([[2, 0], [3, 0]])), 2, True, False)


def test_first_rows_reuses_a_scratch_table_left_empty():
    """first_rows keeps one scratch table per thread and clears the slots it took (newest first):
    a call after a larger one, after one of another width, and in another thread, each gives the
    first occurrences again; a clearing order that cut a probe chain would leave slots taken and
    make a later call skip a row as a repeat."""
    rng = np.random.default_rng(7)
    sizes = [3000, 5, 400, 2, 3000, 60, 1200]
    for i, n in enumerate(sizes * 3):
        W = 1 + i % 3
        K = rng.integers(0, 1 + n // 2, size=(n, W)).astype(np.uint64)    # many repeats: long chains
        rows = np.ascontiguousarray(K).view(np.dtype((np.void, 8 * W))).ravel()
        assert np.array_equal(first_rows(K), np.sort(np.unique(rows, return_index=True)[1]))
        if n > 1:
            assert (keys_module._SCRATCH.slots == -1).all()
    K = rng.integers(0, 50, size=(500, 1)).astype(np.uint64)
    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(lambda _: first_rows(K), range(8)))
    want = np.sort(np.unique(K[:, 0], return_index=True)[1])
    assert all(np.array_equal(g, want) for g in got)
    keys_module.release()
    assert keys_module._SCRATCH.slots is None


@pytest.mark.parametrize("kept_slots", [None, 64])
@pytest.mark.parametrize("W", [0, 1, 2, 3])
def test_fresh_parts_keeps_the_first_unseen_rows_with_their_parents_and_actions(W, kept_slots, monkeypatch):
    """What a shard does with the buckets it receives, in one compiled call per bucket: the rows
    first_rows keeps of the joined keys, with their parents' keys and actions, in order -- and
    arrays that own exactly those rows (pending candidates are counted by their size).  With
    ``kept_slots`` 64, most calls (first_rows' too) take scratch tables too large to keep, used once."""
    if kept_slots is not None:
        monkeypatch.setattr(keys_module, "KEEP", kept_slots)
        keys_module.release()
    rng = np.random.default_rng(23 + W)
    for trial in range(40):
        parts = []
        for _ in range(int(rng.integers(1, 5))):
            n = int(rng.integers(0, 150))
            parts.append((rng.integers(0, 2 + trial, size=(n, W)).astype(np.uint64),
                          rng.integers(0, 1 << 40, size=(n, W)).astype(np.uint64),
                          rng.integers(0, 9, size=n).astype(np.int32)))
        table = None
        if trial % 2:
            table = StateTable(W, 16)
            table.insert(rng.integers(0, 2 + trial, size=(1 + trial // 3, W)).astype(np.uint64))
        K, P, A = (np.concatenate([p[c] for p in parts]) for c in range(3))
        keep = first_rows(K, table)
        OK, OP, OA = fresh_parts(parts, table)
        assert np.array_equal(OK, K[keep]) and np.array_equal(OP, P[keep]) and np.array_equal(OA, A[keep])
        assert OA.dtype == np.int32 and OK.flags.owndata and OK.nbytes == 8 * W * keep.size
        held = getattr(keys_module._SCRATCH, "keys", None)     # this thread's key set, if it took one
        assert held is None or not held[1].any()
        if kept_slots is not None:
            assert held is None or held[1].shape[0] <= kept_slots


def test_hash_spreads_keys_and_marks_first_rows():
    K = np.arange(10_000, dtype=np.uint64).reshape(-1, 1)
    counts = np.bincount(owner(K, 4), minlength=4)
    assert counts.min() > 2300                     # a blank position in the low bits does not skew it
    assert key_hash(K).dtype == np.uint64 and np.unique(key_hash(K)).size == 10_000
    rows = np.array([[3, 1], [2, 2], [3, 1], [2, 2], [5, 0]], dtype=np.uint64)
    assert list(first_rows(rows)) == [0, 1, 4]


# ----------------------------------------------------------------------------- Ray: real workers
@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray")
    import logging

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    yield ray
    ray.shutdown()


def test_ray_workers_agree_with_bfs(ray_local, eight, tmp_path):
    loaded, b = eight
    r = dbfs(loaded, tmp_path, workers=2, executor="ray", spill_on=True)
    same_as_bfs(r, b)
    assert r.stats["executor"] == "ray" and r.stats["states"] == 181_440
    assert r.stats["one_call_layers"] > 0      # Shard.settle_open through the actors
    assert min(r.stats["worker_expanded"]) > 0.4 * r.stats["expanded"]
    f = dbfs(loaded, workers=2, executor="ray", order="astar")      # f layers: the key travels too
    assert (f.status, f.cost, f.stats["verified"]) == ("optimal", 31, True) and f.stats["executor"] == "ray"


def _wait_until_dead(ray, actor, timeout: float = 60.0) -> None:
    """``ray.kill`` returns before the actor is gone; without this wait the next exchange can still
    reach it, and the loss shows up one layer later."""
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            ray.get(actor.__ray_ready__.remote(), timeout=5)
        except Exception:
            return
        time.sleep(0.05)
    raise AssertionError("the killed actor is still answering")


def test_ray_worker_killed_then_resumed(ray_local, eight, tmp_path):
    """A worker killed mid-layer ends the run at its last closed layer (a sound bound, status limit);
    --resume from the checkpoint finishes with the same layers and optimum."""
    loaded, b = eight
    ck = str(tmp_path / "ck")

    def kill(g, ex):
        if g == 12:
            ray_local.kill(ex.actors[1])
            _wait_until_dead(ray_local, ex.actors[1])

    r = dbfs(loaded, workers=2, executor="ray", checkpoint=ck, fault=kill)
    assert r.status == "limit" and "worker was lost in layer 12" in r.message and "--resume" in r.message
    assert r.stats["lower_bound"] == 12 and r.plan is None
    again = dbfs(loaded, workers=2, executor="ray", checkpoint=ck, resume=True)
    same_as_bfs(again, b)
    assert again.stats["resumed_at_layer"] == 12


def test_ray_from_the_command_line(ray_local, capsys):
    code, out, err = run_cli(["solve", "klotski", f"{FAYAA}#fayaa-002", "-O", "metric=steps", "--kernel",
                              "interpreted", "--workers", "2", "-E", "executor=ray", "--json"], capsys)
    doc = json.loads(out)
    assert code == 0, err
    assert doc["engine"] == "dbfs" and doc["stats"]["executor"] == "ray" and doc["cost"] == 100
    assert doc["stats"]["verified"] and doc["stats"]["workers"] == 2


def test_ray_driver_messages_are_sent_to_stderr():
    """Ray prints raylet warnings on the driver's stdout; --json keeps stdout for the result."""
    from types import SimpleNamespace

    from puzzleplan.solvers.distributed.executors import _messages_to_stderr

    seen = []
    worker = SimpleNamespace(
        print_to_stdstream=lambda data, ignore_prefix: seen.append((data, ignore_prefix)))
    fake = SimpleNamespace(_private=SimpleNamespace(worker=worker))
    _messages_to_stderr(fake)
    _messages_to_stderr(fake)                  # wrapped once, not twice
    worker.print_to_stdstream({"lines": ["warning"], "pid": "raylet", "is_err": False}, ignore_prefix=False)
    assert seen == [({"lines": ["warning"], "pid": "raylet", "is_err": True}, False)]
    _messages_to_stderr(SimpleNamespace())     # a Ray without the private function: nothing to do
