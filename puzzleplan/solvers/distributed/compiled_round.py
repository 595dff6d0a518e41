"""A bfs layer of every shard in one parallel compiled call, for shards that live in this process.

Why: the thread executor's shards met twice per layer, and each meeting woke a sleeping thread
on the other core and passed the interpreter lock between the shards' Python steps; on the VM
of docs/distributed.md that cost about 60 µs a layer, so layers of a few thousand states took
two workers as long as one.  ``Kernel.expand_layer`` (``encodings/drivers/dbfs_layer.py``) does
what ``Shard.settle_open``'s fast path does -- store the successors each shard was sent, expand
its new states, group theirs by owner -- for all shards in one ``prange`` loop: no interpreter
lock inside, and numba's workers wait for the next layer spinning.

It applies where ``settle_open``'s fast path does (bfs layers, no spill, no checkpoint, no
zero-cost successors arriving) and the new states of a shard are expanded in rounds of at most
``ROUND_STATES``; anything else takes the per-shard calls, and the buckets pass between the two
paths.  The shards' tables stay theirs: the call writes into their arrays (numba typed lists
hold them) and a table that grows is handed back.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit
from numba.typed import List

from ...encodings.drivers.dbfs_layer import (
    LAYER_EXPANDED,
    LAYER_FIRST,
    LAYER_GENERATED,
    LAYER_GOAL_ROW,
    LAYER_GREW,
    LAYER_INFO,
    LAYER_SIZE,
    LAYER_ZERO_OUT,
)
from ...encodings.kernel import Kernel
from ..visited import ID32, capacity_for
from .shard import _NO_LAYERS, Bucket, Shard

# numba's typed lists hold the arrays; they are made, read and written only here, in compiled
# functions numba caches on disk: from Python, each typed-list method is compiled again in every
# process, per element type (0.1-0.3 s each, half a second before a run's first layer)


@njit(cache=True)
def as_list(items):  # noqa: ANN001, ANN201 - compiled  # pragma: no cover
    out = List()
    for x in items:
        out.append(x)
    return out


@njit(cache=True)
def entry(items, j):  # noqa: ANN001, ANN201 - compiled  # pragma: no cover
    return items[j]


@njit(cache=True)
def set_entry(items, j, x) -> None:  # noqa: ANN001 - compiled  # pragma: no cover
    items[j] = x


ROUND_STATES = 1 << 17   # new states a shard expands per call (the clock is read between calls)


def _layer() -> str | None:
    """numba's threading layer, or None while no parallel call has started its workers."""
    import numba

    try:
        return numba.threading_layer()
    except ValueError:
        return None


# GNU OpenMP's workers do not survive a fork: numba ends a child that starts a parallel call
# after its parent's workers ran.  A fork after they started is seen here; workers that ran before
# this module was imported may have started in a parent, so they count as forked too.
_FORKED = _layer() is not None


def _after_fork_in_child() -> None:
    global _FORKED
    _FORKED = _FORKED or _layer() is not None


os.register_at_fork(after_in_child=_after_fork_in_child)


def usable() -> bool:
    """Whether a parallel compiled call is safe here: numba's workers are TBB's, or OpenMP's and
    not inherited through a fork (the ``workqueue`` layer aborts the process when two threads call
    it at once, and its workers sleep, which is what this path avoids)."""
    layer = _layer()
    if layer is None:     # not started: the first call starts them in this process
        return True
    return layer == "tbb" or (layer == "omp" and not _FORKED)


class CompiledRounds:
    """The typed lists the compiled layer reads and writes, kept from layer to layer (building them
    costs about 14 µs each, an entry set 1 µs), and the shards' state around each call."""

    def __init__(self, kernel: Kernel, shards: list[Shard]):
        self.kernel, self.shards, self.n = kernel, shards, len(shards)
        W = kernel.n_words
        self.W = W
        t = [s.visited for s in shards]
        self.tables = (as_list(tuple(v.table.slots for v in t)), as_list(tuple(v.table.keys for v in t)),
                       as_list(tuple(v.pk for v in t)), as_list(tuple(v.act for v in t)))
        self._seen = [[v.table.slots, v.table.keys, v.pk, v.act] for v in t]   # what the lists hold
        k0 = np.zeros((0, W), dtype=np.uint64)
        a0 = np.zeros(0, dtype=np.int32)
        c0 = np.zeros(0, dtype=np.int64)
        b0 = np.zeros(2 * self.n + 1, dtype=np.int64)
        # two sets of outputs: a layer reads the set the layer before wrote
        self.outs = [tuple(as_list((x,) * self.n) for x in (k0, k0, a0, c0, b0)) for _ in range(2)]
        self.parity = 0
        self.info = np.zeros((self.n, LAYER_INFO), dtype=np.int64)
        self.find = np.zeros(self.n, dtype=np.int8)
        self.layers = 0      # layers run here (stats)
        self.stop_at_goal = not shards[0].cfg.enumerate_all
        self._threads_before: int | None = None

    def warm(self) -> None:
        """Compile (or load from numba's cache) the parallel layer and start its workers now, not in
        the first layer: a call with nothing arriving."""
        self._sync_in()
        self.threads()
        ins = self.outs[self.parity]
        self._call((ins[0], ins[1], ins[2], ins[4]), 0)

    def compile(self) -> None:
        """Only compile the parallel layer (into numba's disk cache), starting no worker: what a
        compile child does for a later run (``coordinator.solve`` with one state)."""
        ins = self.outs[self.parity]
        self.kernel.compile_layer(self.tables, (ins[0], ins[1], ins[2], ins[4]), self.find,
                                  self.stop_at_goal, 0, self.outs[1 - self.parity], self.info)

    def applies(self, buckets: list[list[Bucket]] | None, zero_out: int, generated: int) -> bool:
        """Whether the next layer can run here: every shard on ``settle_open``'s fast path, no
        zero-cost successor arriving, and every table's ids still int32 after it grows."""
        for s in self.shards:
            t = s.visited.table
            if not s.stores_directly() or t.slots.dtype != np.int32 \
                    or capacity_for(t.size + generated) * 2 > ID32:
                return False
        if buckets is None:
            return not zero_out
        return not any(b[0].shape[0] for row in buckets for b in row)

    def run(self, buckets: list[list[Bucket]] | None, deadline: float | None,
            stop: Callable[[], bool] | None) -> list[dict[str, Any]] | None:
        """The layer, as ``Shard.settle_open`` on every shard would give its infos; None when the
        clock says stop before it starts (the per-shard path then reports it)."""
        if (stop is not None and stop()) or (deadline is not None and time.time() > deadline):
            return None
        ins = self._incoming(buckets)
        t0 = time.perf_counter()
        self._sync_in()
        limit = min(ROUND_STATES, self.shards[0].cfg.round)
        self._call(ins, limit)
        dt = time.perf_counter() - t0
        return self._sync_out(limit, dt)

    def buckets(self) -> list[list[Bucket]]:
        """The last layer's successors as the per-shard path's buckets (views of the outputs)."""
        K, P, A, _, B = self.outs[self.parity]
        out = []
        for i in range(self.n):
            k, p, a, b = entry(K, i), entry(P, i), entry(A, i), entry(B, i)
            out.append([(k[b[2 * j]: b[2 * j + 1]], p[b[2 * j]: b[2 * j + 1]], a[b[2 * j]: b[2 * j + 1]],
                         k[b[2 * j + 1]: b[2 * j + 2]], p[b[2 * j + 1]: b[2 * j + 2]],
                         a[b[2 * j + 1]: b[2 * j + 2]], _NO_LAYERS) for j in range(self.n)])
        return out

    # ------------------------------------------------------------------ inside
    def _call(self, ins: tuple, limit: int) -> None:
        out = self.outs[1 - self.parity]
        self.kernel.expand_layer(self.tables, ins, self.find, self.stop_at_goal, limit, out, self.info)
        self.parity = 1 - self.parity

    def threads(self) -> None:
        """numba's workers for this thread's parallel calls: one per shard, at most numba's number
        (more would wait, spinning, for shards there are not); ``close`` sets the number back."""
        import numba

        want = max(1, min(self.n, numba.config.NUMBA_NUM_THREADS))
        if self._threads_before is None and numba.get_num_threads() != want:
            self._threads_before = numba.get_num_threads()
            numba.set_num_threads(want)

    def close(self) -> None:
        if self._threads_before is not None:
            import numba

            numba.set_num_threads(self._threads_before)
            self._threads_before = None

    def _incoming(self, buckets: list[list[Bucket]] | None) -> tuple:
        """The arriving successors: the last compiled layer's outputs as they are, or the per-shard
        path's buckets joined per sending shard (cost-paying groups only: ``applies`` checked that
        the zero-cost ones are empty)."""
        if buckets is None:
            K, P, A, _, B = self.outs[self.parity]
            return K, P, A, B
        ks, ps, as_, bs = [], [], [], []
        for row in buckets:      # one bucket per receiving shard
            bounds = np.zeros(2 * self.n + 1, dtype=np.int64)
            bounds[2::2] = np.cumsum([b[3].shape[0] for b in row])
            bounds[1:-1:2] = bounds[:-2:2]
            ks.append(np.concatenate([b[3] for b in row]))
            ps.append(np.concatenate([b[4] for b in row]))
            as_.append(np.concatenate([b[5] for b in row]).astype(np.int32, copy=False))
            bs.append(bounds)
        return as_list(tuple(ks)), as_list(tuple(ps)), as_list(tuple(as_)), as_list(tuple(bs))

    def _sync_in(self) -> None:
        """Hand the lists any table array the shards replaced since the last call; the sizes."""
        for j, s in enumerate(self.shards):
            v = s.visited
            now = (v.table.slots, v.table.keys, v.pk, v.act)
            seen = self._seen[j]
            for c in range(4):
                if now[c] is not seen[c]:
                    set_entry(self.tables[c], j, now[c])
                    seen[c] = now[c]
            self.info[j, LAYER_SIZE] = v.table.size
            self.find[j] = 0 if s.goal_seen else 1

    def _sync_out(self, limit: int, dt: float) -> list[dict[str, Any]]:
        infos = []
        res = self.info
        for j, s in enumerate(self.shards):
            if res[j, LAYER_GREW]:
                got = [entry(self.tables[c], j) for c in range(4)]
                v = s.visited
                v.table.slots, v.table.keys, v.pk, v.act = got
                self._seen[j] = got
            infos.append(s.opened_compiled(int(res[j, LAYER_FIRST]), int(res[j, LAYER_SIZE]), limit,
                                           int(res[j, LAYER_EXPANDED]), int(res[j, LAYER_GENERATED]),
                                           int(res[j, LAYER_GOAL_ROW]), int(res[j, LAYER_ZERO_OUT]), dt))
        self.layers += 1
        return infos
