"""dbfs with a cost bound (``-E bound=B``): states with g + h above B are dropped.

The bound needs the heuristic admissible only, not consistent, so it is checked where f layers
cannot go: on seeded random Zen gardens, whose ``components`` heuristic is admissible but
inconsistent (f layers refuse some of them, asserted below).  The reference is in-process 0-1 BFS
(no heuristic at all), so every verdict is compared with an engine that does not use the bound's
argument: at or above the optimum the same optimum and a replayed plan, one below it status
``limit`` with the optimum as the proven lower bound, and on unsolvable boards ``limit`` with
B + 1 (never ``unsolvable``: the bound hid the rest of the space).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from helpers import run_cli
from test_distributed import EIGHT, HARDEST
from test_distributed import dbfs as run_dbfs

from puzzleplan import api
from puzzleplan.lang.errors import OptionError
from puzzleplan.solvers.result import Limits


def dbfs(loaded, bound: int, tmp: Path | None = None, workers: int = 1, **options):
    # spilling: about 90 states per shard in RAM, so runs are written and merged
    return run_dbfs(loaded, tmp, spill_on=tmp is not None, spill_mb=0.005, workers=workers, bound=bound,
                    **options)


def check(r, best, bound: int) -> None:
    """One bounded run against the unbounded reference ``best``."""
    assert r.engine == "dbfs" and r.stats["bound"] == bound
    if best.cost is not None and best.cost <= bound:
        assert (r.status, r.cost) == ("optimal", best.cost), r.message
        assert r.stats["verified"] is True and f"above {bound} dropped" in r.proof
    else:
        want = bound + 1 if best.cost is None else min(bound + 1, best.cost)
        assert (r.status, r.plan) == ("limit", None), r.message
        assert r.stats["lower_bound"] == want and f"no plan costs at most {bound}" in r.message


def _gardens(n: int, seed: int, tmp_path: Path):
    mod = api.load_model("zpg")
    rng = random.Random(seed)
    for i in range(n):
        text = mod.generate(rng, rng.randint(3, 4), rng.randint(3, 4), rocks=rng.choice((0.1, 0.35)),
                            ornaments=rng.randint(0, 1), leaves=rng.randint(0, 1))
        path = tmp_path / f"g{i}.txt"
        path.write_text(text, encoding="utf-8")
        yield i, text, api.load_task(mod, str(path))


def _garden_sweep(n: int, seed: int, tmp_path: Path) -> None:
    inconsistent = solvable = pruned = 0
    for i, text, loaded in _gardens(n, seed, tmp_path):
        best = api.solve(loaded, "bfs", kernel="numpy")
        solvable += best.cost is not None
        try:
            dbfs(loaded, 10**6, order="astar")
        except OptionError as e:
            assert "inconsistent" in str(e) and "-E bound=B" in str(e)
            inconsistent += 1
        c = best.cost if best.cost is not None else 3
        for bound in {max(c - 1, 0), c, c + 1}:
            tmp = tmp_path / f"{i}-{bound}" if i % 3 == 0 else None
            r = dbfs(loaded, bound, tmp, workers=(1, 2)[i % 2])
            check(r, best, bound)
            pruned += r.stats["bound_pruned"]
            if tmp is not None:
                assert r.stats["spill_runs"] >= 1 or r.stats["states"] < 90 * r.stats["workers"], text
    # the sample holds what the test is about: boards f layers refuse, solvable and not, pruning
    assert inconsistent >= 2 and 0 < solvable < n and pruned > 0


def test_bound_on_random_gardens_with_an_inconsistent_heuristic(tmp_path):
    _garden_sweep(16, 424, tmp_path)


@pytest.mark.slow
def test_bound_on_random_gardens_sweep(tmp_path):
    """150 more gardens, 3x3 to 4x4."""
    _garden_sweep(150, 2029, tmp_path)


@pytest.mark.parametrize("order", ["ucs", "astar"])
def test_bound_on_the_hardest_eight_puzzle(order):
    """The 31-move 8-puzzle: below the optimum a lower bound, at and above it the optimum (cost
    layers expanding fewer states than without the bound), and bfs given a bound takes cost
    layers."""
    loaded = api.load_task("sliding", HARDEST)
    best = api.solve(loaded, "bfs", kernel="numpy")
    full = api.solve(loaded, "dbfs", Limits(), kernel="numpy", order=order)
    for bound in (30, 31, 33):
        r = dbfs(loaded, bound, workers=2, order=order)
        check(r, best, bound)
        assert r.stats["order"] == order
        if order == "ucs":   # f layers drop nothing the bound would (h is consistent here)
            assert r.stats["expanded"] < full.stats["expanded"] and r.stats["bound_pruned"] > 0
    assert dbfs(loaded, 31, order="bfs").stats["order"] == "ucs"


def test_a_checkpoint_keeps_its_bound(tmp_path):
    loaded = api.load_task("sliding", HARDEST)
    ck = str(tmp_path / "ck")
    first = api.solve(loaded, "dbfs", Limits(max_states=2000), kernel="numpy", bound=31, checkpoint=ck)
    assert first.status == "limit"
    with pytest.raises(OptionError, match="bound 31, not 30"):
        api.solve(loaded, "dbfs", Limits(), kernel="numpy", bound=30, checkpoint=ck, resume=True)
    again = api.solve(loaded, "dbfs", Limits(), kernel="numpy", bound=31, checkpoint=ck, resume=True)
    assert (again.status, again.cost, again.stats["verified"]) == ("optimal", 31, True)


def test_enumerate_takes_no_bound():
    loaded = api.load_task("sliding", f"{EIGHT}#eight-easy")
    with pytest.raises(OptionError, match="takes no bound"):
        api.solve(loaded, "dbfs", Limits(), kernel="numpy", bound=3, enumerate_all=True)


def test_cli_bound_below_the_optimum(capsys):
    code, out, err = run_cli(["solve", "sliding", HARDEST, "--kernel", "numpy", "--json", "-e", "dbfs",
                              "-E", "bound=30"], capsys)
    doc = json.loads(out)
    assert code == 12, err      # status limit
    assert doc["status"] == "limit" and doc["stats"]["lower_bound"] == 31 and doc["plan"] is None
    code, out, err = run_cli(["solve", "sliding", HARDEST, "--kernel", "numpy", "-e", "dbfs",
                              "-E", "bound=-1"], capsys)
    assert code == 31 and len(err.strip().splitlines()) == 1 and "bound" in err
