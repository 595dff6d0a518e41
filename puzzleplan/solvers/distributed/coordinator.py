"""The driver of the partitioned search: layers, limits, checkpoints, progress and the plan.

It holds no states itself -- only counters, the layer sizes and, at the end, the chain of keys
from the goal back to the root, which it asks the owning shards for one step at a time.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ...encodings.kernel import Kernel
from ...lang.errors import EXIT_OUTPUT, OptionError, PuzzleError
from ..plan import concretise
from ..result import Clock, Limits, Result
from . import checkpoint as ckpt
from .executors import (
    LocalExecutor,
    RayExecutor,
    Stopped,
    ThreadExecutor,
    WorkerLost,
    compile_layer,
    wall_deadline,
)
from .keys import owner
from .keys import release as release_scratch
from .shard import CHUNK, ORDERS, ROUND, ShardConfig

DEFAULT_SPILL_MB = 1024.0   # per worker, when spilling without --max-memory or -E spill_mb
EXECUTORS = ("auto", "local", "threads", "ray")
FUSE = True   # Shard.settle_open where it applies (False: two calls per layer, for comparison)


def bytes_per_state(n_words: int) -> int:
    """RAM per stored state, counting the table's doubling slack: keys, slots, parent key, action."""
    return 2 * (16 * n_words + 12)


def solve(kernel: Kernel, limits: Limits, workers: int = 1, executor: str = "auto", ray_address: str = "",
          spill_dir: str = "", spill_mb: float = 0.0, checkpoint: str = "", resume: bool = False,
          enumerate_all: bool = False, order: str = "bfs", bound: int | None = None,
          task_source: Callable[[], Any] | None = None,
          fault: Callable[[int, Any], None] | None = None) -> Result:
    """Layer-synchronous search over hash-partitioned shards: breadth-first (0-1 BFS for 0/1
    costs), or with layers of equal cost (``order`` ucs) or equal f (astar), see shard.py.

    ``bound``: drop states with ``g + h`` above it (the heuristic need only be admissible), so a
    run that exhausts its layers proves that no plan costs at most ``bound``.  It needs cost or f
    layers; with ``order`` bfs it takes cost layers, which are the same layers on unit and 0/1
    costs.

    ``task_source`` (given by ``api.solve``) rebuilds the task in another process; ``fault`` is a
    test hook called in the middle of every layer with (layer, executor).
    """
    task = kernel.task
    if order not in ORDERS:
        raise OptionError(f"engine dbfs: order {order!r} is not one of {', '.join(ORDERS)}")
    if task.cost_kind == "general" and order == "bfs":
        raise OptionError("engine dbfs with order=bfs is exact for unit and 0/1 action costs only; "
                          "this model has larger costs: use -E order=ucs or order=astar")
    if bound is not None:
        if enumerate_all:
            raise OptionError("engine dbfs: --enumerate counts every reachable state; it takes no bound")
        order = "ucs" if order == "bfs" else order
    if executor not in EXECUTORS:
        raise OptionError(f"engine dbfs: executor {executor!r} is not one of {', '.join(EXECUTORS)}")
    if resume and not checkpoint:
        raise OptionError("--resume needs --checkpoint DIR (the directory of the run to continue)")
    if limits.max_states == 1:
        # api.solve's compile warm-up (a forked child runs the engine for one state): nothing to
        # distribute, spill or save there; the thread executor's parallel layer is compiled
        if workers > 1 and executor in ("auto", "threads") and not ray_address:
            compile_layer(kernel, ShardConfig(n_shards=workers, enumerate_all=enumerate_all, order=order,
                                              bound=bound))
        workers, executor, ray_address, spill_dir, checkpoint, resume = 1, "local", "", "", "", False
    # auto: a Ray address means the cluster; otherwise threads (one machine: no actor start-up, a
    # thread hand-off per round instead of a Ray call, docs/distributed.md "Measured")
    kind = executor if executor != "auto" else (
        "ray" if ray_address else "threads" if workers > 1 else "local")
    if ray_address and kind != "ray":
        raise OptionError(f"engine dbfs: executor {kind} runs in this process; a Ray address needs "
                          "executor ray (or auto)")
    clock = Clock(limits)
    manifest = ckpt.prepare_dir(checkpoint, resume, task) if checkpoint else None
    budget = None
    if spill_dir:
        try:
            os.makedirs(spill_dir, exist_ok=True)
        except OSError as e:
            raise OptionError(f"cannot create spill directory {spill_dir}: {e.strerror}") from None
        # a third of the budget per worker for its table: the rest holds a layer's frontier and
        # candidates and the sort of a spill (with a half, a 160 M-state run passed its budget:
        # docs/distributed.md)
        mb = spill_mb if spill_mb > 0 else (clock.max_bytes / 2**20 / workers / 3 if clock.max_bytes
                                            else DEFAULT_SPILL_MB)
        budget = max(16, int(mb * 2**20) // bytes_per_state(kernel.n_words))
    cfg = ShardConfig(n_shards=workers, enumerate_all=enumerate_all, spill_dir=spill_dir or None,
                      budget_states=budget, keep_delta=bool(checkpoint), order=order, bound=bound)
    if budget is not None:
        # rounds no larger than the RAM table: the buckets then fit the same budget
        cfg.round = max(CHUNK, min(ROUND, budget))
        # the next (cost/f: later) layers' candidates: a quarter of the table's share in RAM, the
        # rest spills (pending.py); a layer is prepared in batches of half that (a half share and
        # whole-share batches passed the budget: docs/distributed.md, "Cost and f layers")
        cfg.pending_bytes = max(1 << 8, int(mb * 2**20) // 4)
    if kind == "local":
        ex: Any = LocalExecutor(kernel, cfg)
    elif kind == "threads":
        ex = ThreadExecutor(kernel, cfg)
    else:
        ex = RayExecutor(cfg, task_source, kernel.backend, ray_address)
    try:
        return _Run(kernel, clock, ex, cfg, checkpoint, manifest, fault).go()
    finally:
        ex.close()
        release_scratch()


class _Run:
    def __init__(self, kernel: Kernel, clock: Clock, ex: Any, cfg: ShardConfig, checkpoint: str,
                 manifest: dict[str, Any] | None, fault: Callable[[int, Any], None] | None):
        self.kernel, self.clock, self.ex, self.cfg = kernel, clock, ex, cfg
        self.dir = checkpoint
        self.manifest = manifest
        self.fault = fault
        self.layers: list[int] = []
        self.keys: list[int] = []      # each closed layer's step count, cost or f
        self.key = 0                   # the layer being searched
        self.layered = cfg.order != "bfs"
        self.next: int | None = None   # layered search: the layer after the one being closed
        self.groups: list[list[str]] = []
        self.expanded = self.generated = 0
        self.pruned = 0                # successors dropped by the cost bound
        self.states = 0
        self.goal: tuple[np.ndarray, int] | None = None
        self.status: str | None = None
        self.lost = ""
        self.figs: list[dict[str, Any]] = []
        self.resumed_at: int | None = None
        self.stopped = False    # stopped while shards worked: Ray actors may still be busy
        self.startup_s = 0.0    # until the shards hold the root (Ray: actors started) or the checkpoint
        self.one_call_layers = 0    # layers opened in the call that closed the one before (settle_open)

    # ------------------------------------------------------------------ the search
    def go(self) -> Result:
        try:
            self._start()
            self._layers()
        except Stopped:
            self.status = "limit"
            self.stopped = True
        except WorkerLost as e:
            self.status = "limit"
            self.lost = str(e)
        except OSError as e:    # a spill run or a checkpoint file that cannot be written (disk full)
            where = f" {e.filename}" if getattr(e, "filename", None) else ""
            raise PuzzleError(f"dbfs: cannot write{where}: {e.strerror or type(e).__name__}",
                              code=EXIT_OUTPUT) from None
        return self._result()

    def _start(self) -> None:
        k, ex = self.kernel, self.ex
        m = self.manifest
        if m is not None:
            self.groups = [list(g) for g in m["groups"]]
            if m.get("order", "bfs") != self.cfg.order:
                had = m.get("order", "bfs")
                raise OptionError(f"--resume: the checkpoint in {self.dir} has {had} layers, "
                                  f"not {self.cfg.order}")
            if m.get("bound") != self.cfg.bound:
                raise OptionError(f"--resume: the checkpoint in {self.dir} was written with bound "
                                  f"{m.get('bound')}, not {self.cfg.bound}")
            self.key = int(m.get("key", 0))
            self.keys = [int(x) for x in m.get("keys", [])]
            ex.all("restore", self.dir, self.groups, self.key)
            self.layers = [int(x) for x in m["layers"]]
            self.expanded, self.generated = int(m["expanded"]), int(m["generated"])
            if m.get("goal") is not None:
                self.goal = (np.array(m["goal"]["key"], dtype=np.uint64), int(m["goal"]["cost"]))
                ex.all("mark_goal_seen")
            self.resumed_at = len(self.layers)
        else:
            ex.all("seed", k.canon_pack(k.init_state())[0])
            if self.cfg.order == "astar" and k.task.heuristic is not None:
                self.key = int(k.heuristic(k.canonical(k.init_state()))[0])
            if self.dir:
                self.groups = [ex.all("save", self.dir, 0)]
                self._commit_checkpoint()
        self.figs = ex.all("figures")
        self.states = sum(f["states"] for f in self.figs)
        self.startup_s = self.clock.elapsed()

    def _layers(self) -> None:
        """Two calls per layer where the layer allows (see shard.py): ``open_layer`` stores the
        layer closed before (the checkpoint follows), starts this one and expands its first round;
        each ``settle`` delivers a round's buckets and either expands the next round or, when no
        shard has work left and the round made no zero-cost successor, prepares the next layer --
        and, where nothing between depends on that layer's size, opens it (``settle_open``): then one
        call per layer."""
        ex, clock = self.ex, self.clock
        stop = clock.out_of_time
        prev = self.layers[-1] if self.layers else 1
        closed: tuple[int, int, int] | None = None   # (layer, size, next size) stored by the next open_layer
        # nothing checked between closing a bfs layer and opening the next depends on its size: the
        # shards then do both in one call (Shard.settle_open), and meet once per layer
        fuse = FUSE and not self.layered and not self.dir and clock.max_states is None \
            and clock.max_bytes is None and clock.max_rss is None
        opened: list[dict[str, Any]] | None = None   # the infos of a layer opened by settle_open
        while self.status is None:
            g = len(self.layers)
            if not self.layered:
                self.key = g
            if opened is not None:
                # its first round ran already and its goal test counts; the clock is read again
                # before the layer's next call
                infos, opened = opened, None
            else:
                if self._limited():
                    if closed is not None and self.dir:     # the closed layer still goes to the checkpoint
                        self.figs = ex.all("commit", True)
                        self.groups.append(ex.all("save", self.dir, g))
                        self._commit_checkpoint()
                    return
                infos = ex.open_layer(self.dir if closed else "", g, wall_deadline(clock.deadline), stop,
                                      self.key if self.layered else None)
            self.figs = [i["figures"] for i in infos]
            self.states = sum(f["states"] for f in self.figs)
            if closed is not None:
                ram = sum(f["ram_bytes"] for f in self.figs)
                clock.note_bytes(ram)
                if self.dir:
                    self.groups.append([i["saved"] for i in infos])
                    self._commit_checkpoint()
                self._report(closed[0], closed[1], prev, closed[2], ram)
                prev = closed[1]
            layer_size = sum(i["layer"] for i in infos)
            if layer_size == 0:
                break
            settled = False
            while True:     # rounds: the infos of one expansion, then its buckets delivered
                self.expanded += sum(i["expanded"] for i in infos)
                self.generated += sum(i["generated"] for i in infos)
                self.pruned += sum(i.get("pruned", 0) for i in infos)
                if any(i["stopped"] for i in infos):
                    self.status = "limit"
                    return
                if any(i["inconsistent"] for i in infos):
                    raise OptionError(
                        f"engine dbfs with order=astar: the model's heuristic drops by more than an "
                        f"action's cost on {sum(i['inconsistent'] for i in infos)} expanded edge(s) of "
                        f"layer f={self.key} (inconsistent), so f layers are not exact: use astar "
                        "(which re-opens states), order=ucs, or order=ucs with -E bound=B (an "
                        "admissible heuristic suffices there)")
                goals = [i["goal"] for i in infos if i["goal"] is not None]
                if goals and self.goal is None:
                    self.goal = (np.asarray(goals[0], dtype=np.uint64), self.key)
                    if not self.cfg.enumerate_all:
                        self.status = "optimal"
                        return
                if settled and not any(i["expanded"] or i["left"] for i in infos):
                    # the last round's zero-cost successors were all known: the layer closed with it
                    fresh = self._prepare(ex.all("next_key") if self.layered else None)
                    break
                if self.fault is not None:
                    self.fault(g, ex)
                if self._limited():
                    return
                final = not any(i["left"] for i in infos) and not any(i["zero_out"] for i in infos)
                infos = ex.settle(final, wall_deadline(clock.deadline), stop, final and fuse)
                settled = True
                new = sum(i["new"] for i in infos)
                self.states += new
                layer_size += new
                if final:
                    fresh = self._prepare([i["next_key"] for i in infos]) if self.layered else \
                        sum(i["fresh"] for i in infos)
                    if fuse:
                        opened = infos
                        self.one_call_layers += 1
                    break
            self.layers.append(layer_size)
            self.keys.append(self.key)
            if self.layered:
                if self.next is None:    # nothing pending anywhere: every reachable state is stored
                    break
                self.key = self.next
            if not clock.room(self.states, fresh) or not self._affords(fresh):
                self.status = "limit"
                return
            closed = (self.keys[-1], layer_size, fresh)

    def _prepare(self, keys: list[int | None] | None) -> int:
        """The next layer on every shard; layered search: the least pending key of any shard
        (``self.next``, None when none is pending)."""
        if keys is None:
            return sum(self.ex.all("prepare"))
        known = [k for k in keys if k is not None]
        self.next = min(known) if known else None
        return sum(self.ex.all("prepare", self.next)) if self.next is not None else 0

    def _proof(self) -> str:
        if not self.layered:
            return "bfs layers (exhaustive below the optimum)"
        if self.cfg.order == "astar" and self.kernel.task.heuristic is not None:
            how = ("f layers (every state of f below the optimum expanded; the heuristic admissible, "
                   "and consistent on every expanded edge: checked)")
        else:
            how = "cost layers (every state cheaper than the optimum expanded)"
        return how + self._pruning()

    def _pruning(self) -> str:
        return "" if self.cfg.bound is None else \
            f"; states with g + h above {self.cfg.bound} dropped ({self._h_note()})"

    def _h_note(self) -> str:
        """What the cost bound's argument rests on."""
        return "h admissible" if self.kernel.task.heuristic is not None else "no heuristic: g alone"

    def _limited(self) -> bool:
        """Time or states are up: the run ends with the layers closed so far."""
        if self.clock.out_of_time() or self.clock.too_many(self.states):
            self.status = "limit"
            return True
        return False

    def _affords(self, fresh: int) -> bool:
        """Whether storing ``fresh`` more states stays under the memory budget (RAM only: with a
        spill directory the shards' tables and pending candidates spill instead, and what stays in
        RAM -- the tables, frontiers, and pending candidates under their cap -- must fit)."""
        cap = self.clock.max_bytes
        if cap is None:
            return True
        ram = sum(f["ram_bytes"] for f in self.figs)
        if self.cfg.spill_dir:   # the tables spill; what does not is the frontier and, layered, the pending
            ok = not self.layered or ram <= cap
            self.clock.memory_refused |= not ok
            return ok
        ok = ram + fresh * bytes_per_state(self.kernel.n_words) <= cap
        self.clock.memory_refused |= not ok
        return ok

    def _commit_checkpoint(self) -> None:
        goal = None if self.goal is None else {"key": [int(x) for x in self.goal[0]], "cost": self.goal[1]}
        ckpt.write_manifest(self.dir, {
            "fingerprint": ckpt.fingerprint(self.kernel.task), "closed": len(self.layers),
            "layers": self.layers,
            "expanded": self.expanded, "generated": self.generated, "workers": self.ex.n,
            "order": self.cfg.order, "bound": self.cfg.bound, "key": self.key, "keys": self.keys,
            "groups": self.groups, "goal": goal})

    def _report(self, g: int, layer_size: int, prev: int, fresh: int, ram: int) -> None:
        if self.clock.progress is None:
            return
        rates = [round(f["expanded"] / f["busy_s"]) if f["busy_s"] > 0 else 0 for f in self.figs]
        self.clock.report(depth=self.key, layer=layer_size, frontier=fresh, states=self.states,
                          expanded=self.expanded, generated=self.generated,
                          growth=round(fresh / layer_size, 3) if layer_size else 0.0,
                          bytes_per_state=round(ram / max(self.states, 1), 1),
                          spill_bytes=sum(f["disk_bytes"] for f in self.figs), worker_rates=rates)

    # ------------------------------------------------------------------ the answer
    def _plan(self, goal_key: np.ndarray) -> tuple[np.ndarray, list[int]]:
        """Keys root..goal and the actions between them, asking each key's owner for its parent."""
        keys = [np.asarray(goal_key, dtype=np.uint64)]
        acts: list[int] = []
        while True:
            key = keys[-1]
            where = int(owner(key.reshape(1, -1), self.ex.n)[0])
            found = self.ex.one(where, "find", key)
            if found is None:
                raise RuntimeError("dbfs: a state on the plan's parent chain is missing from its shard")
            parent, action = found
            if action < 0:
                break
            acts.append(int(action))
            keys.append(np.asarray(parent, dtype=np.uint64))
        keys.reverse()
        acts.reverse()
        return np.array(keys, dtype=np.uint64), acts

    def _result(self) -> Result:
        clock, n = self.clock, self.ex.n
        figs = self.figs
        if not (self.lost or (self.stopped and self.ex.kind == "ray")):
            try:
                figs = self.ex.all("figures")
            except WorkerLost:
                pass
        stats: dict[str, Any] = dict(
            expanded=self.expanded, generated=self.generated, states=self.states, layers=list(self.layers),
            workers=n, executor=self.ex.kind, order=self.cfg.order, startup_s=round(self.startup_s, 3),
            worker_expanded=[int(f["expanded"]) for f in figs], one_call_layers=self.one_call_layers,
            compiled_layers=getattr(self.ex, "compiled_layers", 0),
            spill_bytes=sum(int(f["spilled_bytes"]) for f in figs),
            spill_runs=sum(int(f["runs"]) for f in figs))
        if self.cfg.bound is not None:
            stats.update(bound=self.cfg.bound, bound_pruned=self.pruned)
        if self.cfg.pending_bytes is not None:
            stats["pending_spill_bytes"] = sum(int(f.get("pending_spilled_bytes", 0)) for f in figs)
        if self.layered:    # layers named by their cost (ucs) or f (astar), as astar's f_layers
            stats[f"{'cost' if self.cfg.order == 'ucs' else 'f'}_layers"] = dict(zip(self.keys, self.layers))
        if self.resumed_at is not None:
            stats["resumed_at_layer"] = self.resumed_at
        if self.dir:
            stats["checkpoint_layers"] = len(self.groups) - 1
        if self.cfg.enumerate_all and self.status is None:
            stats["reachable"] = self.states
            if not any(v.aux for v in self.kernel.task.variables):
                stats["configurations"] = self.states
        status = self.status or ("optimal" if self.goal is not None else "unsolvable")
        bounded = status == "unsolvable" and self.cfg.bound is not None
        if bounded:   # the layers ran out under the bound: only plans dearer than it may exist
            status = "limit"
        result = Result(status, "dbfs", stats=clock.stats(**stats))
        if self.goal is not None and status != "limit":
            keys, acts = self._plan(self.goal[0])
            result.plan = concretise(self.kernel, keys, acts)
            result.cost = int(sum(self.kernel.task.actions[a].cost for a in acts)) if self.layered \
                else self.goal[1]
            result.status = "optimal"
            result.proof = self._proof()
        elif bounded:
            result.stats["lower_bound"] = self.cfg.bound + 1
            b = self.cfg.bound
            result.message = (f"no plan costs at most {b}: the layers ran out with every state of "
                              f"g + h at most {b} expanded ({self._h_note()}); lower bound {b + 1}")
        elif status == "unsolvable":
            result.proof = "reachable states exhausted"
        elif status == "limit" and not self.cfg.enumerate_all:
            if self.layered:   # every layer below the current one is closed (astar: h admissible)
                what = "closed cost layers" if self.cfg.order == "ucs" else "closed f layers, h admissible"
                result.message = clock.bounded(result.stats, self.key, what)
            else:
                result.message = clock.bounded(result.stats, len(self.layers), "closed bfs layers")
        elif status == "limit":
            result.message = clock.reason()
        if self.lost:
            again = f"; --resume continues from {self.dir}" if self.dir else ""
            result.message = f"a worker was lost in layer {len(self.layers)} ({self.lost}); " \
                             f"{result.message}{again}"
        return result


__all__ = ["EXECUTORS", "bytes_per_state", "solve"]
