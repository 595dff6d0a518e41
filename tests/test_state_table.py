"""The visited set (solvers.visited.StateTable) against a plain dict, and its growth rule.

The engines' memory limits rest on one promise: where astar/ucs could afford a batch only by
counting its distinct new keys (``new_count``), the insertion grows the table for those alone
(``tight``), so a batch of mostly known keys does not double it past their estimate.
"""

from __future__ import annotations

import numpy as np
import pytest

from puzzleplan.solvers.bestfirst import _fits
from puzzleplan.solvers.result import Clock, Limits
from puzzleplan.solvers.visited import Growable, StateTable, growth_peak


def _rows(rng: np.random.Generator, n: int, words: int, hi: int) -> np.ndarray:
    return rng.integers(0, hi, size=(n, words), dtype=np.uint64)


@pytest.mark.parametrize("tight", [False, True])
@pytest.mark.parametrize("words", [1, 2, 3])
@pytest.mark.parametrize("seed", range(3))
def test_ids_and_new_flags_match_a_dict(words: int, seed: int, tight: bool) -> None:
    rng = np.random.default_rng(seed)
    table = StateTable(words, capacity=16)
    ref: dict[tuple[int, ...], int] = {}
    for _ in range(30):
        # a small value range makes repeats within a batch and across batches common
        K = _rows(rng, int(rng.integers(0, 400)), words, hi=40 if words > 1 else 3000)
        ids, new = table.insert(K, tight=tight)
        for row, i, fresh in zip(map(tuple, K.tolist()), ids.tolist(), new.tolist()):
            if row in ref:
                assert i == ref[row] and not fresh
            else:
                assert fresh and i == len(ref)
                ref[row] = i
        assert table.size == len(ref)
        assert table.keys.shape[0] >= table.size and table.slots.shape[0] == 2 * table.keys.shape[0]
    probe = _rows(rng, 500, words, hi=40 if words > 1 else 3000)
    want = [ref.get(tuple(r), -1) for r in probe.tolist()]
    assert table.lookup(probe).tolist() == want


def test_a_batch_of_known_keys_does_not_double_the_table() -> None:
    rng = np.random.default_rng(7)
    table = StateTable(2, capacity=64)
    held = np.unique(_rows(rng, 60, 2, hi=1 << 40), axis=0)
    table.insert(held)
    cap = table.keys.shape[0]
    fresh = np.array([[1 << 50, 1], [1 << 50, 2]], dtype=np.uint64)
    K = np.concatenate([held, held[:20], fresh, fresh])     # 144 rows, 2 of them new
    assert table.size + K.shape[0] > cap                    # every row new would need a doubling
    assert table.new_count(K) == 2
    assert growth_peak(table, (), table.size + table.new_count(K)) == 0   # what an engine estimates
    ids, new = table.insert(K, tight=True)
    assert table.keys.shape[0] == cap                       # and what the insertion does
    assert int(new.sum()) == 2 and table.size == held.shape[0] + 2
    table.insert(K)                                         # the default makes room for every row
    assert table.keys.shape[0] > cap


def test_the_table_still_doubles_for_the_keys_it_lacks() -> None:
    rng = np.random.default_rng(8)
    table = StateTable(1, capacity=32)
    per = Growable(np.int64, -1)
    K = np.unique(_rows(rng, 100, 1, hi=1 << 60), axis=0)
    estimate = growth_peak(table, (per,), table.size + table.new_count(K))
    assert estimate > 0
    table.insert(K, tight=True)
    per.ensure(table.size)
    assert table.size == K.shape[0] and table.keys.shape[0] >= K.shape[0]
    # the estimate counted the grown arrays: they are all alive now, so they are at most it
    assert table.nbytes + per.a.nbytes <= estimate


def test_astar_inserts_tight_when_only_the_new_keys_fit_the_budget() -> None:
    """``_fits`` against the insertion: a budget between the growth for the new keys and the
    growth for the whole batch is met only by a tight insertion, and the arrays it leaves are
    within that budget."""
    rng = np.random.default_rng(9)
    table = StateTable(1, capacity=1 << 10)
    per = tuple(Growable(np.int64, -1) for _ in range(3))
    held = np.unique(_rows(rng, 900, 1, hi=1 << 60), axis=0)
    table.insert(held)
    for a in per:
        a.ensure(table.size)
    fresh = np.unique(_rows(rng, 40, 1, hi=1 << 60), axis=0)
    K = np.concatenate([held, fresh])
    whole = growth_peak(table, per, table.size + K.shape[0])
    assert whole > 0 and growth_peak(table, per, table.size + fresh.shape[0]) == 0
    clock = Clock(Limits(max_mb=(whole - 1) / 2**20))
    fits, tight = _fits(clock, table, per, K, 0)
    assert fits and tight
    table.insert(K, tight=tight)
    for a in per:
        a.ensure(table.size)
    assert table.nbytes + sum(a.a.nbytes for a in per) <= clock.max_bytes
    assert _fits(Clock(Limits()), table, per, K, 0) == (True, False)    # no budget: the default
