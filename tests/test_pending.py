"""A shard's pending candidates (cost and f layers) spill to disk past their cap and come back whole."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from puzzleplan.solvers.distributed.pending import Pending


def _rows(parts):
    K = np.concatenate([p[0] for p in parts]) if parts else np.zeros((0, 2), np.uint64)
    P = np.concatenate([p[1] for p in parts]) if parts else np.zeros((0, 2), np.uint64)
    A = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0, np.int32)
    return sorted(zip(map(tuple, K.tolist()), map(tuple, P.tolist()), A.tolist()))


def test_pending_spills_past_its_cap_and_gives_every_layer_back(tmp_path: Path):
    rng = np.random.default_rng(5)
    W = 2
    pend = Pending(W, cap_bytes=2000, spill_dir=str(tmp_path))
    added: dict[int, list] = {}
    for _ in range(60):
        key = int(rng.integers(3, 12))
        n = int(rng.integers(1, 30))
        keys = rng.integers(0, 2**63, (2, n, W), dtype=np.uint64)
        part = (keys[0], keys[1], rng.integers(0, 40, n).astype(np.int32))
        pend.add(key, *part)
        added.setdefault(key, []).append(part)
        assert pend.nbytes <= 2000     # RAM never holds more than the cap after an add
    assert pend.spilled_bytes > 0 and pend.disk_bytes > 0 and any(tmp_path.iterdir())
    # a checkpoint sees every row, RAM and disk
    assert _rows([p for _, p in pend.parts()]) == _rows([p for parts in added.values() for p in parts])
    while pend:
        key = pend.least()
        assert key == min(added)
        assert _rows(list(pend.take(key))) == _rows(added.pop(key))
    assert not added and pend.nbytes == 0 and pend.disk_bytes == 0
    assert not list(tmp_path.iterdir())    # read-back files are deleted


def test_pending_without_a_cap_stays_in_ram(tmp_path: Path):
    pend = Pending(1, cap_bytes=None, spill_dir=None)
    K = np.arange(10, dtype=np.uint64).reshape(-1, 1)
    pend.add(4, K, K, np.zeros(10, np.int32))
    pend.add(2, K[:3], K[:3], np.zeros(3, np.int32))
    assert pend.least() == 2 and pend.spilled_bytes == 0 and pend.nbytes == 13 * 20
    pend.close()
    assert not pend and pend.least() is None


def test_a_reader_stopped_half_way_leaves_the_rest_filed_and_close_deletes_it(tmp_path: Path):
    """prepare stops reading a layer when the clock says so: the parts not handed out stay in the
    store (a checkpoint would still see them) and close() deletes every file."""
    pend = Pending(1, cap_bytes=100, spill_dir=str(tmp_path))
    rows = []
    for i in range(12):
        K = np.full((3, 1), i, dtype=np.uint64)
        pend.add(5, K, K, np.zeros(3, dtype=np.int32))
        rows.append(i)
    assert pend.disk_bytes > 0
    reader = pend.take(5)
    got = [next(reader) for _ in range(4)]       # four parts handed out, then the reader is dropped
    del reader
    left = [p for _, p in pend.parts()]
    assert sorted(int(p[0][0, 0]) for p in got + left) == rows
    pend.close()
    assert not list(tmp_path.iterdir())
