"""One shard of the partitioned search: the states whose key hashes to it, and its part of a layer.

A layer, as the coordinator drives it (the same for every executor):

1. ``start_layer``: the frontier becomes the work list.
2. ``expand``: goal test, expansion, canonical keys; successors are split by owner into one
   bucket per shard (zero-cost ones apart from cost-1 ones).
3. ``receive`` (on the owner, with the buckets every shard made for it): zero-cost successors
   not seen yet join the *current* layer and become the next work list (0-1 BFS: they are at
   the same distance); cost-1 ones are kept as candidates.  Steps 2-3 repeat until no shard
   has work: the layer is closed under zero-cost moves.
4. ``prepare``: candidates not seen yet, each once -- the next layer (counted before it is
   stored, so ``--max-states`` is exact); ``commit`` stores them.

Each step is a call across processes under Ray, so the coordinator makes two per layer where it
can: ``open_layer`` (commit the previous layer, save it, steps 1-2) and ``settle`` (step 3, then
either the next round's step 2 or, when the coordinator knows the layer closes with this round,
step 4).  The layer closes with a round when no shard has work left and the round's expansions
made no zero-cost successor -- always, on unit-cost tasks.  Where nothing the coordinator checks
between two bfs layers depends on the next one's size (no state or memory limit, no checkpoint),
``settle_open`` closes a layer and opens the next in the same call: one call per layer.

Cost and f layers (``order`` ucs or astar).  A layer is then every state of one cost ``g`` (ucs:
Dial's buckets) or one ``f = g + h`` (astar), in increasing order.  A successor's layer is the
current one plus its *reduced* cost, ``cost + h(succ) - h(state)`` (ucs: ``h = 0``): 0 joins the
layer as a zero-cost move does in 0-1 BFS, more waits among the shard's pending candidates, keyed
by layer, until that layer is prepared.  A state is stored when its layer is, so the first layer
that stores it is its least ``g`` (ucs) or ``f`` (astar, where, ``h`` being fixed per state, that is
its least ``g`` too) -- provided no reduced cost is negative, i.e. the heuristic is consistent on
the expanded edges; every expanded edge is checked (``info["inconsistent"]``) and the
coordinator refuses to go on past one.

A cost bound ``B`` (``cfg.bound``, cost or f layers) drops every successor whose ``g + h``
exceeds ``B``, and needs the heuristic admissible only, not consistent: each state of an optimal
plan of cost ``C <= B`` has ``g* + h <= C <= B``, so the whole plan survives and cost layers reach
its states at their least ``g``; the goal then comes at ``C``.  Layers that run out without a
goal prove that no plan costs at most ``B`` (breadth-first heuristic search, Zhou & Hansen 2006).

A shard only ever talks to the coordinator; the buckets travel between shards once per round.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...encodings.kernel import Kernel
from . import checkpoint
from .keys import first_rows, fresh_parts, owner, route, warm
from .pending import Pending
from .spill import Visited

CHUNK = 1 << 15   # states expanded per kernel call (bounds the successor arrays)
ROUND = 1 << 20   # states expanded per round at most: bounds the buckets held until the exchange

# zero-cost keys, parents, actions; the others' keys, parents, actions and layers (empty with bfs)
Bucket = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
ORDERS = ("bfs", "ucs", "astar")
_ONE_PREPARE = threading.Lock()   # see Shard.prepare
NEXT = 0    # bfs layers: the pending key of the next layer's candidates (there is only that one)
_NO_LAYERS = np.zeros(0, dtype=np.int64)   # a bfs bucket's later-layer keys (none; never written)


class Stopped(Exception):
    """The coordinator's clock said stop (signal, deadline, memory) while shards were working."""


@dataclass
class ShardConfig:
    n_shards: int
    enumerate_all: bool = False
    spill_dir: str | None = None
    budget_states: int | None = None    # states in RAM before a spill (None: never spill)
    keep_delta: bool = False            # keep each layer's new states for the checkpoint
    chunk: int = CHUNK
    round: int = ROUND
    order: str = "bfs"                  # layers by steps (bfs), by cost (ucs) or by f = g + h (astar)
    pending_bytes: int | None = None    # next/later layers' candidates in RAM before they spill (None: never)
    bound: int | None = None            # cost or f layers: drop successors with g + h above it (see below)


class Shard:
    def __init__(self, index: int, kernel: Kernel, cfg: ShardConfig):
        warm()
        self.index = index
        self.kernel = kernel
        self.cfg = cfg
        self.n = cfg.n_shards
        W = kernel.n_words
        self.W = W
        spill = None
        if cfg.spill_dir:
            spill = f"{cfg.spill_dir}/shard-{index:03d}"
        self.visited = Visited(W, cfg.budget_states if spill else None, spill)
        self.visited.between = self._check_stop     # lookups and merges of runs ask the clock
        self.frontier = _empty(W)
        self.work = _empty(W)
        self.prepared: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self.delta: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]] = []
        self.goal_seen = False
        self.expanded = 0
        self.generated = 0
        self.busy_s = 0.0       # seconds spent expanding (for the per-worker rate)
        self.stop: Callable[[], bool] | None = None    # in-process only: the coordinator's clock
        self.key = 0            # the layer being expanded: its step count, cost or f
        # later layers' candidates, by layer (bfs: all under NEXT, the layer after this one)
        self.pending = Pending(W, cfg.pending_bytes, spill)
        self.layered = cfg.order != "bfs"
        self.use_h = cfg.order == "astar" and kernel.task.heuristic is not None
        self.bound_h = cfg.bound is not None and not self.use_h and kernel.task.heuristic is not None
        # a round in one compiled call where the kernel has the driver and nothing needs the
        # successors' states (f layers and the cost bound evaluate the heuristic on them)
        self.routed = getattr(kernel, "expand_routed", None)
        if self.use_h or cfg.bound is not None or self.routed is None:
            self.routed = None
        else:     # numba compiles it, or loads it from its cache, now: not inside a layer
            self.routed(kernel.canon_pack(kernel.init_state()), 1, True, False)
        # bfs: the next layer's candidate batches since the last prepare, and the table's version
        # (stores so far) when the last one was checked against it -- see _prepare
        self._version = 0
        self._batches = 0
        self._batch_version = -1

    # ------------------------------------------------------------------ set-up
    def seed(self, root: np.ndarray) -> int:
        """Store the root if this shard owns it; its frontier is then the root alone."""
        root = np.asarray(root, dtype=np.uint64).reshape(1, self.W)
        if int(owner(root, self.n)[0]) != self.index:
            return 0
        P, A = np.zeros_like(root), np.full(1, -1, dtype=np.int32)
        self._store(root, P, A)
        self.frontier = root.copy()
        self._note("f", root, P, A)
        return 1

    def mark_goal_seen(self) -> None:
        """A resumed enumeration already found its goal: test no more states."""
        self.goal_seen = True

    # ------------------------------------------------------------------ one layer
    def start_layer(self) -> int:
        self.work, self.frontier = self.frontier, _empty(self.W)
        return int(self.work.shape[0])

    def expand(self, deadline: float | None = None,
               stop: Callable[[], bool] | None = None) -> tuple[list[Bucket], dict[str, Any]]:
        """Expand up to ``cfg.round`` states of the work list (``info["left"]``: how many wait for the
        next round); ``deadline`` (``time.time()``) or ``stop()`` end it early (``info["stopped"]``:
        the layer is then incomplete and the coordinator ends the run)."""
        t0 = time.perf_counter()
        stop = stop or self.stop
        n, W = self.n, self.W
        work, self.work = self.work[: self.cfg.round], self.work[self.cfg.round:]
        if not self.work.shape[0]:   # an empty view would keep the whole layer's array alive
            self.work = _empty(W)
        info = _round_info(left=int(self.work.shape[0]))
        if self.routed is not None and not self.layered and work.shape[0] <= self.cfg.chunk:
            # one chunk in one compiled call: the buckets are views of its groups (most rounds;
            # two workers run the small layers' calls one after the other, so their Python counts)
            return self._expand_once(work, info, stop, deadline, t0)
        parts: list[list[tuple[np.ndarray, ...]]] = [[] for _ in range(2 * n)]
        later: list[list[np.ndarray]] = [[] for _ in range(n)]    # layered: the later layers' keys
        for lo in range(0, work.shape[0], self.cfg.chunk):
            if (stop is not None and stop()) or (deadline is not None and time.time() > deadline):
                info["stopped"] = True
                break
            Kw = np.ascontiguousarray(work[lo: lo + self.cfg.chunk])
            routed = self._expand_chunk(Kw, info) if self.routed is not None else self._expand_steps(Kw, info)
            if routed is None:
                break
            K, P, A, step, bounds = routed
            for c in range(2 * n):
                a, b = bounds[c], bounds[c + 1]
                if b > a:
                    parts[c].append((K[a:b], P[a:b], A[a:b]))
                    if self.layered and c % 2:
                        later[c // 2].append(self.key + step[a:b])
        buckets = []
        for d in range(n):
            zero = _cat(parts[2 * d], W)
            one = _cat(parts[2 * d + 1], W)
            keys = np.concatenate(later[d]) if later[d] else np.zeros(0, dtype=np.int64)
            buckets.append((*zero, *one, keys))
        info["zero_out"] = sum(int(b[0].shape[0]) for b in buckets)
        return self._expanded(buckets, info, t0)

    def _expand_once(self, work: np.ndarray, info: dict[str, Any], stop: Callable[[], bool] | None,
                     deadline: float | None, t0: float) -> tuple[list[Bucket], dict[str, Any]]:
        """``expand`` for a work list of one chunk, bfs layers, on a kernel with the compiled round."""
        n, W = self.n, self.W
        buckets: list[Bucket] | None = None
        if (stop is not None and stop()) or (deadline is not None and time.time() > deadline):
            info["stopped"] = True
        else:
            routed = self._expand_chunk(np.ascontiguousarray(work), info)
            if routed is not None:
                K, P, A, _, b = routed
                buckets = [(K[b[c]:b[c + 1]], P[b[c]:b[c + 1]], A[b[c]:b[c + 1]],
                            K[b[c + 1]:b[c + 2]], P[b[c + 1]:b[c + 2]], A[b[c + 1]:b[c + 2]], _NO_LAYERS)
                           for c in range(0, 2 * n, 2)]
                info["zero_out"] = int(sum(b[c + 1] - b[c] for c in range(0, 2 * n, 2)))
        if buckets is None:     # stopped, or a goal ends the search: its successors are not needed
            buckets = [_empty_bucket(W) for _ in range(n)]
            info["zero_out"] = 0
        return self._expanded(buckets, info, t0)

    def _expanded(self, buckets: list[Bucket], info: dict[str, Any], t0: float
                  ) -> tuple[list[Bucket], dict[str, Any]]:
        """The end of ``expand``: the shard's counters and busy time (its rate in the progress)."""
        self.expanded += info["expanded"]
        self.generated += info["generated"]
        dt = time.perf_counter() - t0
        self.busy_s += dt
        info["seconds"] = dt
        return buckets, info

    def _expand_chunk(self, Kw: np.ndarray, info: dict[str, Any]
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """One chunk of ``expand`` in the kernel's compiled round (``Kernel.expand_routed``): the
        successors' keys, parents' keys, actions, costs and groups' bounds, as ``_expand_steps``
        gives them.  None: a goal was met and the search ends (not enumerating)."""
        r = self.routed(Kw, self.n, not self.goal_seen, not self.cfg.enumerate_all)
        info["expanded"] += r.expanded
        info["generated"] += r.generated
        if r.goal_row >= 0:
            self.goal_seen = True
            info["goal"] = Kw[r.goal_row].copy()
            if not self.cfg.enumerate_all:
                return None
        return r.keys, r.parents, r.actions, r.costs, r.bounds

    def _expand_steps(self, Kw: np.ndarray, info: dict[str, Any]
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """One chunk of ``expand`` a call per step: the numpy kernel (no compiled driver), and
        whatever needs the successors' states -- the heuristic (f layers) and the cost bound.
        None: a goal was met and the search ends (not enumerating)."""
        k, n = self.kernel, self.n
        S = k.unpack(Kw)
        if not self.goal_seen:
            hit = np.flatnonzero(k.goal(S))
            if hit.size:
                self.goal_seen = True
                info["goal"] = Kw[hit[0]].copy()
                if not self.cfg.enumerate_all:
                    return None
        succ, par, act = k.expand(S)
        info["expanded"] += Kw.shape[0]
        info["generated"] += succ.shape[0]
        step = k.costs[act]
        if self.use_h:
            step = step + k.heuristic(succ) - k.heuristic(S)[par]
            info["inconsistent"] += int(np.count_nonzero(step < 0))
        if self.cfg.bound is not None:
            # the successor's g + h: its layer's key (cost, or f with the reduced cost) plus h
            f = self.key + step + (k.heuristic(succ) if self.bound_h else 0)
            keep = np.flatnonzero(f <= self.cfg.bound)
            info["pruned"] += succ.shape[0] - keep.size
            if keep.size < succ.shape[0]:
                succ, par, act, step = succ[keep], par[keep], act[keep], step[keep]
        # per shard: zero-cost first, then the others
        return route(k.canon_pack(succ), Kw, par, act, step, n)

    def receive(self, *buckets: Bucket) -> int:
        """Take the buckets every shard made for this one; returns how many zero-cost successors are
        new (they are this layer's states too, and the next work list)."""
        zk, zp, za = _cat([(b[0], b[1], b[2]) for b in buckets if b[0].shape[0]], self.W)
        cost1 = [b for b in buckets if b[3].shape[0]]
        # most successors are stored already (a state's parent, its siblings): drop the ones the
        # RAM table knows, so the candidates held until their layer closes stay few; with bfs
        # layers, repeats too (in later layers a repeat may come with a smaller key: kept)
        if cost1 and self.layered:
            ok, op, oa = _cat([(b[3], b[4], b[5]) for b in cost1], self.W)
            keep = np.flatnonzero(self.visited.table.lookup(ok) < 0)
            ol = np.concatenate([b[6] for b in cost1])
            self._add_pending(ok[keep], op[keep], oa[keep], ol[keep])
        elif cost1:
            # each bucket's kept rows taken from it directly: joining the buckets first copied
            # every successor once more
            self.pending.add(NEXT, *fresh_parts([(b[3], b[4], b[5]) for b in cost1], self.visited.table))
            self._batches += 1
            self._batch_version = self._version
        if not zk.shape[0]:
            return 0
        keep = self._fresh(zk)
        zk, zp, za = zk[keep], zp[keep], za[keep]
        self._store(zk, zp, za)
        self.work = np.concatenate([self.work, zk]) if self.work.shape[0] else zk
        self._note("z", zk, zp, za)
        return int(zk.shape[0])

    def _add_pending(self, K: np.ndarray, P: np.ndarray, A: np.ndarray, L: np.ndarray) -> None:
        """File candidates under their layers, each key's rows without repeats."""
        if not K.shape[0]:
            return
        for key in np.unique(L):
            self._check_stop()
            sel = np.flatnonzero(L == key)
            sel = sel[first_rows(K[sel])]
            self.pending.add(int(key), K[sel], P[sel], A[sel])

    def next_key(self) -> int | None:
        """Layered search: the least layer among the pending candidates (None: none pending)."""
        return self.pending.least()

    def prepare(self, key: int | None = None) -> int:
        """The next layer: candidates not stored yet, each once.  Returns their number.  Layered
        search: the pending candidates of layer ``key`` (the least pending over all shards).

        The candidates are checked against the stored states in batches of about half
        ``cfg.pending_bytes`` (when set), so that a layer read back from disk is never held whole
        before its known states are dropped; the first occurrence of each key is kept, as in
        one batch.

        With a spill directory, one shard of a process prepares at a time: prepared batches are
        sized to a shard's share of ``--max-memory``, and shards running as threads would
        otherwise hold theirs at once (a 600 MiB two-thread run peaked at 680-700 MiB)."""
        with _ONE_PREPARE if self.visited.dir is not None else contextlib.nullcontext():
            return self._prepare(key)

    def _prepare(self, key: int | None) -> int:
        if self.layered:
            parts = self.pending.take(key) if key is not None else iter(())
        else:
            batches, self._batches = self._batches, 0
            if batches <= 1 and self._batch_version == self._version and not self.visited.runs \
                    and not self.pending.disk:
                # one batch, checked against this very table (nothing stored since, no runs) and
                # without repeats when it was filed: it is the next layer as it stands
                K, P, A = _cat(list(self.pending.take(NEXT)), self.W)
                self.prepared = (K, P, A)
                return int(K.shape[0])
            parts = self.pending.take(NEXT)
        cap = self.cfg.pending_bytes
        limit = max(1, cap // 2 // self.pending.row_bytes) if cap else None
        kept: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        batch: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        rows = 0
        for part in parts:
            size = int(part[0].shape[0])
            step = limit if limit is not None else max(size, 1)
            for lo in range(0, size, step):     # a part larger than a batch is cut (views)
                piece = (part[0][lo: lo + step], part[1][lo: lo + step], part[2][lo: lo + step])
                batch.append(piece)
                rows += int(piece[0].shape[0])
                if limit is not None and rows >= limit:
                    self._check_stop()
                    kept.append(self._unseen_part(batch))
                    batch, rows = [], 0
            del part
        if batch:
            self._check_stop()
            kept.append(self._unseen_part(batch))
        several = len(kept) > 1
        K, P, A = _join(kept, self.W)
        if several and K.shape[0]:      # a key may have survived in two batches
            keep = first_rows(K)
            if keep.shape[0] < K.shape[0]:
                K = K[keep]
                P = P[keep]
                A = A[keep]
        self.prepared = (K, P, A)
        return int(K.shape[0])

    def _unseen_part(self, parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        K, P, A = _cat(parts, self.W)
        if not K.shape[0]:
            return K, P, A
        keep = self._fresh(K)
        return K[keep], P[keep], A[keep]

    def commit(self, finishing: bool = False) -> dict[str, Any]:
        """Store the prepared layer; it is the frontier of the next one.  ``finishing``: the run
        ends at a limit and this layer still goes to the checkpoint, so the clock (out of time
        already) must not interrupt the table's merges."""
        assert self.prepared is not None
        K, P, A = self.prepared
        self.prepared = None
        between = self.visited.between
        if finishing:
            self.visited.between = None
        try:
            self._store(K, P, A)
        finally:
            self.visited.between = between
        self.frontier = K
        self._note("f", K, P, A)
        return self.figures()

    def open_layer(self, save_dir: str, step: int, deadline: float | None = None,
                   key: int | None = None) -> tuple[list[Bucket], dict[str, Any]]:
        """Steps 4b, 1 and 2 in one call: store the prepared layer (if one is prepared), save it as
        checkpoint step ``step`` (when ``save_dir`` is given), start the next layer (``key``: its
        cost or f, layered search) and expand its first round.  ``info`` adds the layer's size, the
        saved file's name and the figures."""
        if key is not None:
            self.key = key
        if self.prepared is not None:
            self.commit()
        saved = self.save(save_dir, step) if save_dir else ""
        size = self.start_layer()
        buckets, info = self.expand(deadline)
        info.update(layer=size, saved=saved, figures=self.figures())
        return buckets, info

    def settle(self, final: bool, deadline: float | None,
               *incoming: Bucket) -> tuple[list[Bucket], dict[str, Any]]:
        """Step 3 with the buckets every shard made for this one, then step 2 on the work it left
        (``final`` false) or step 4a (``final``: the coordinator knows no shard has work after this
        round, so the candidates are complete).  ``info["new"]``: zero-cost states added;
        ``info["fresh"]``: the next layer's size, when prepared."""
        new = self.receive(*incoming)
        if final:
            assert not self.work.shape[0], "a final round left work"
            buckets = [_empty_bucket(self.W) for _ in range(self.n)]
            info = _round_info(zero_out=0)
            if self.layered:
                info["next_key"] = self.next_key()
            else:
                info["fresh"] = self.prepare()
        else:
            buckets, info = self.expand(deadline)
        info["new"] = new
        return buckets, info

    def settle_open(self, deadline: float | None, *incoming: Bucket) -> tuple[list[Bucket], dict[str, Any]]:
        """A final ``settle`` and the next ``open_layer`` in one call: receive, prepare the next layer,
        store it and expand its first round.  For bfs layers when nothing the coordinator checks
        between the two depends on the next layer's size (no state or memory limit, no
        checkpoint): the shards then meet once per layer instead of twice.  ``info`` is the opened
        layer's, plus ``new`` and ``fresh`` (as ``settle`` gives them)."""
        assert not self.layered, "settle_open is for bfs layers"
        if self.stores_directly() and not any(b[0].shape[0] for b in incoming):
            # the layer's successors go straight into the table, one probe each (receive, prepare
            # and commit would look each up, keep it in a scratch set, copy it, and look it up again)
            self.frontier = self.visited.add_new([(b[3], b[4], b[5]) for b in incoming if b[3].shape[0]])
            self._version += 1
            new, fresh = 0, int(self.frontier.shape[0])
        else:
            new = self.receive(*incoming)
            assert not self.work.shape[0], "a final round left work"
            fresh = self.prepare()
        buckets, info = self.open_layer("", 0, deadline)
        info.update(new=new, fresh=fresh)
        return buckets, info

    def stores_directly(self) -> bool:
        """Whether a closing bfs layer's successors, when none costs zero, may go straight into the
        table (``settle_open``; the parallel compiled layer too): no spill, no checkpoint, no
        earlier batch of this layer, nothing prepared or left to expand."""
        return self.visited.budget is None and not self.cfg.keep_delta and not self._batches \
            and self.prepared is None and not self.work.shape[0]

    def opened_compiled(self, first: int, size: int, limit: int, expanded: int, generated: int,
                        goal_row: int, zero_out: int, seconds: float) -> dict[str, Any]:
        """The shard's state after the parallel compiled layer (``compiled_round.py``) stored ids
        ``first..size`` in its table and expanded the first ``limit`` of them; returns the info
        ``settle_open`` would have given."""
        self.visited.table.size = size
        self._version += 1
        fresh = size - first
        m = min(fresh, limit)
        self.work = self.visited.table.keys[first + m: size].copy() if fresh > m else _empty(self.W)
        self.frontier = _empty(self.W)
        self.expanded += expanded
        self.generated += generated
        self.busy_s += seconds
        info = _round_info(expanded=expanded, generated=generated, left=fresh - m, zero_out=zero_out,
                           seconds=seconds)
        if goal_row >= 0:
            self.goal_seen = True
            info["goal"] = self.visited.table.keys[first + goal_row].copy()
        info.update(layer=fresh, saved="", figures=self.figures(), new=0, fresh=fresh)
        return info

    def _store(self, K: np.ndarray, P: np.ndarray, A: np.ndarray) -> None:
        self.visited.add(K, P, A)
        self._version += 1

    def _check_stop(self) -> None:
        """Between the batches of a long step (a layer read back from disk, candidates filed and
        spilled), an in-process shard asks the coordinator's clock, as the expansion does per
        chunk; a Ray actor has no clock (its driver stops waiting instead).  The step is left
        half done: the run ends as "limit", and no checkpoint is written from this state."""
        if self.stop is not None and self.stop():
            raise Stopped

    def _fresh(self, K: np.ndarray) -> np.ndarray:
        """Indices of the rows of ``K`` not stored yet, the first of each distinct row."""
        if not self.visited.runs:
            return first_rows(K, self.visited.table)
        idx = np.flatnonzero(self.visited.unseen(K))
        return idx[first_rows(K[idx])]

    # ------------------------------------------------------------------ queries
    def figures(self) -> dict[str, Any]:
        return {"states": self.visited.size, "frontier": int(self.frontier.shape[0]),
                "ram_bytes": self.visited.nbytes + 8 * self.W * int(self.frontier.shape[0])
                + self.pending.nbytes,
                "disk_bytes": self.visited.disk_bytes + self.pending.disk_bytes,
                "spilled_bytes": self.visited.spilled_bytes + self.pending.spilled_bytes,
                "pending_spilled_bytes": self.pending.spilled_bytes,
                "runs": len(self.visited.runs), "expanded": self.expanded, "generated": self.generated,
                "busy_s": self.busy_s}

    def find(self, key: np.ndarray) -> tuple[np.ndarray, int] | None:
        return self.visited.find(key)

    def close(self) -> None:
        self.visited.close()
        self.pending.close()

    # ------------------------------------------------------------------ checkpoints
    def _note(self, part: str, K: np.ndarray, P: np.ndarray, A: np.ndarray) -> None:
        if self.cfg.keep_delta and K.shape[0]:
            self.delta.append((part, K, P, A))

    def save(self, directory: str, step: int) -> str:
        """Write the states stored since the last save (see checkpoint.py); returns the file name."""
        name = checkpoint.write_delta(directory, step, self.index, self.n, self.delta, self.W)
        self.delta = []
        if self.layered:
            checkpoint.write_pending(directory, step, self.index, self.n, self.pending.parts(), self.W)
        return name

    def restore(self, directory: str, groups: list[list[str]], key: int = 0) -> int:
        """Load the states this shard owns from a checkpoint's delta files (written with any shard
        count): ``groups`` holds one list of files per closed layer, oldest first; the next-layer
        part of the last group is the frontier.  Cost and f layers: the pending candidates of the
        last step too, and ``key``, the layer to go on with.  Returns the states stored."""
        if self.layered:
            self.key = key
            for key, (K, P, A) in checkpoint.read_pending(directory, len(groups) - 1, len(groups[-1]),
                                                          self.W):
                mine = owner(K, self.n) == self.index
                self.pending.add(key, np.asarray(K[mine]), np.asarray(P[mine]), np.asarray(A[mine]))
        frontier = []
        for i, names in enumerate(groups):
            for name in names:
                for part, K, P, A in checkpoint.read_delta(directory, name, self.W):
                    mine = owner(K, self.n) == self.index
                    K, P, A = K[mine], P[mine], A[mine]
                    self._store(K, P, A)
                    if i == len(groups) - 1 and part == "f":
                        frontier.append(K)
        self.frontier = np.concatenate(frontier) if frontier else _empty(self.W)
        return self.visited.size


def _round_info(**figures: Any) -> dict[str, Any]:
    """A round's info as the coordinator reads it, with ``figures`` over the zero defaults."""
    info: dict[str, Any] = {"goal": None, "expanded": 0, "generated": 0, "stopped": False, "left": 0,
                            "inconsistent": 0, "pruned": 0}
    info.update(figures)
    return info


def _empty(W: int) -> np.ndarray:
    return np.zeros((0, W), dtype=np.uint64)


def _empty_bucket(W: int) -> Bucket:
    k, p, a = _empty(W), _empty(W), np.zeros(0, dtype=np.int32)
    return (k, p, a, k, p, a, np.zeros(0, dtype=np.int64))


def _join(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
          W: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Like :func:`_cat`, but emptying ``parts`` as it copies, so a whole layer is held about once
    (``np.concatenate`` holds every part and the result together: a 21 M-state layer being
    prepared was held two to three times and took the RSS past the budget, docs/distributed.md)."""
    if len(parts) <= 1:
        out = _cat(parts, W)
        parts.clear()
        return out
    n = sum(int(p[0].shape[0]) for p in parts)
    K, P = np.empty((n, W), dtype=np.uint64), np.empty((n, W), dtype=np.uint64)
    A = np.empty(n, dtype=np.int32)
    at = 0
    parts.reverse()
    while parts:
        k, p, a = parts.pop()
        m = int(k.shape[0])
        K[at: at + m], P[at: at + m], A[at: at + m] = k, p, a
        at += m
        del k, p, a
    return K, P, A


def _cat(parts: list[tuple[np.ndarray, ...]], W: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not parts:
        return _empty(W), _empty(W), np.zeros(0, dtype=np.int32)
    if len(parts) == 1:
        return parts[0][0], parts[0][1], parts[0][2]
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]))


__all__ = ["CHUNK", "ORDERS", "Shard", "ShardConfig", "Stopped"]
