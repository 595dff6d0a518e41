"""Where the shards live: objects in this process (one after the other, or one thread each), or
Ray actors (one process each, any machine).

Both executors offer the coordinator the same few calls: run a shard method on every shard
(``all``) or on one (``one``), and the two calls of a layer (``open_layer``, then ``settle`` once
per round, see shard.py).  Each returns the shards' infos and keeps their buckets; the next
``settle`` hands each shard the buckets every shard made for it.  With Ray the buckets are
objects in Ray's object store and go from actor to actor without passing through the driver.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

from ...encodings.kernel import Kernel, make_kernel
from ...lang.errors import OptionError
from . import compiled_round  # now: its fork hook must see every fork after numba's workers start
from .shard import Shard, ShardConfig, Stopped


class WorkerLost(Exception):
    """A shard's process died (killed, out of memory, node lost): the layer cannot be finished."""


class LocalExecutor:
    """All shards in this process, run one after the other (1 worker, and tests without Ray)."""

    kind = "local"

    def __init__(self, kernel: Kernel, cfg: ShardConfig):
        self.n = cfg.n_shards
        self.shards = [Shard(i, kernel, cfg) for i in range(self.n)]
        self._buckets: list[Any] | None = None

    def _map(self, calls: list[Callable[[], Any]]) -> list[Any]:
        """Run one call per shard; here one after the other (the thread executor: at once)."""
        return [c() for c in calls]

    def all(self, method: str, *args: Any) -> list[Any]:
        return self._map([lambda s=s: getattr(s, method)(*args) for s in self.shards])

    def one(self, index: int, method: str, *args: Any) -> Any:
        return getattr(self.shards[index], method)(*args)

    def open_layer(self, save_dir: str, step: int, deadline: float | None, stop: Callable[[], bool],
                   key: int | None = None) -> list[dict[str, Any]]:
        return self._keep(self._map([lambda s=s: s.open_layer(save_dir, step, deadline, key)
                                     for s in self._with(stop)]))

    def settle(self, final: bool, deadline: float | None, stop: Callable[[], bool],
               open_next: bool = False) -> list[dict[str, Any]]:
        """``open_next`` (with ``final``): ``Shard.settle_open``, the next layer opened in the same call."""
        b, self._buckets = self._buckets, None
        assert b is not None
        n = self.n
        shards = self._with(stop)

        def call(j: int) -> Any:
            mine = [b[i][j] for i in range(n)]
            return shards[j].settle_open(deadline, *mine) if open_next else \
                shards[j].settle(final, deadline, *mine)

        return self._keep(self._map([lambda j=j: call(j) for j in range(n)]))

    def _with(self, stop: Callable[[], bool]) -> list[Shard]:
        for s in self.shards:
            s.stop = stop
        return self.shards

    def _keep(self, out: list[tuple[list[Any], dict[str, Any]]]) -> list[dict[str, Any]]:
        self._buckets = [b for b, _ in out]
        return [info for _, info in out]

    def close(self) -> None:
        for s in self.shards:
            s.close()


SMALL = 4096      # states below which a thread executor's call runs its shards one after the other


class ThreadExecutor(LocalExecutor):
    """All shards in this process, one thread each, run at once.

    Why it scales: the compiled kernels and the hash table are compiled with ``nogil`` and numpy's
    sorts and copies release the GIL too, so the shards' expansion runs in parallel while their
    Python glue takes turns.  A round costs a thread hand-off (microseconds) instead of a Ray
    call (milliseconds), which is what small layers need; ``--max-memory`` bounds every shard, as
    they live in this process.  One machine only: a cluster needs ``ray``.
    """

    kind = "threads"

    def __init__(self, kernel: Kernel, cfg: ShardConfig):
        from concurrent.futures import ThreadPoolExecutor

        super().__init__(kernel, cfg)
        # no more threads than cores: this thread takes shards too, and more threads would only
        # take turns (shards may still outnumber them: each thread then takes the next one left)
        self.threads = max(1, min(self.n - 1, (os.cpu_count() or 1) - 1))
        self.pool = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="puzzleplan-shard")
        # start the threads now, with the executor (as Ray's actors are started before the search):
        # the pool starts one on the first call that needs it, which cost the first parallel layer
        # of the enumeration measured in docs/distributed.md 0.5 ms of its 0.9
        for f in [self.pool.submit(time.sleep, 0.001) for _ in range(self.threads)]:
            f.result()
        self._work = 0     # successors or states the next call will handle, from the last infos
        self._zero = 0     # zero-cost successors the last call made
        self._generated = 0
        self.rounds = _compiled_rounds(kernel, self.shards)

    @property
    def compiled_layers(self) -> int:
        return self.rounds.layers if self.rounds is not None else 0

    def open_layer(self, save_dir: str, step: int, deadline: float | None, stop: Callable[[], bool],
                   key: int | None = None) -> list[dict[str, Any]]:
        self._materialise()
        return super().open_layer(save_dir, step, deadline, stop, key)

    def settle(self, final: bool, deadline: float | None, stop: Callable[[], bool],
               open_next: bool = False) -> list[dict[str, Any]]:
        """A layer closed and the next opened (``open_next``) runs as one parallel compiled call
        where ``compiled_round.CompiledRounds.applies``; anything else as per-shard calls."""
        r = self.rounds
        if open_next and r is not None and r.applies(self._buckets, self._zero, self._generated):
            infos = r.run(self._buckets, deadline, stop)
            if infos is not None:
                self._buckets = None    # the compiled call's outputs stand for them
                self._note(infos)
                return infos
        self._materialise()
        return super().settle(final, deadline, stop, open_next)

    def _materialise(self) -> None:
        if self._buckets is None and self.rounds is not None and self.rounds.layers:
            self._buckets = self.rounds.buckets()

    def _map(self, calls: list[Callable[[], Any]]) -> list[Any]:
        """Run the calls at once; every one has ended before this returns or re-raises the first
        shard's exception (Stopped included), so no shard still works while the coordinator reads
        or saves their state.  Calls on fewer than ``SMALL`` states run one after the other on this
        thread: waking a thread and passing it the interpreter lock costs 0.2-0.4 ms here, more
        than such a call's work (the first and last layers of a search)."""
        from concurrent.futures import wait

        if self._work < SMALL:
            return super()._map(calls)
        out: list[Any] = [None] * len(calls)
        errors: list[BaseException | None] = [None] * len(calls)
        left = iter(range(len(calls)))
        lock = threading.Lock()

        def take() -> None:
            while True:
                with lock:
                    i = next(left, None)
                if i is None:
                    return
                try:
                    out[i] = calls[i]()
                except BaseException as e:   # re-raised below, once every call has ended
                    errors[i] = e

        futures = [self.pool.submit(take) for _ in range(min(self.threads, len(calls) - 1))]
        try:
            take()            # this thread takes calls too: one hand-off fewer per call
        finally:
            wait(futures)
        for e in errors:
            if e is not None:
                raise e
        return out

    def _keep(self, out: list[tuple[list[Any], dict[str, Any]]]) -> list[dict[str, Any]]:
        return self._note(super()._keep(out))

    def _note(self, infos: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self._work = sum(i["generated"] + i["left"] + i.get("fresh", 0) for i in infos)
        self._zero = sum(i.get("zero_out", 0) for i in infos)
        self._generated = sum(i["generated"] for i in infos)
        return infos

    def close(self) -> None:
        self.pool.shutdown(wait=True)
        if self.rounds is not None:
            self.rounds.close()
        super().close()


def compile_layer(kernel: Kernel, cfg: ShardConfig) -> None:
    """Compile the thread executor's parallel layer for ``cfg.n_shards`` shards, without running it:
    a compile child's one-state run (see ``coordinator.solve``) uses one worker, and the first
    real run would otherwise compile it inside its time limit."""
    if cfg.order != "bfs":
        return
    shards = [Shard(i, kernel, cfg) for i in range(cfg.n_shards)]
    if _layer_possible(kernel, shards):
        compiled_round.CompiledRounds(kernel, shards).compile()


def _layer_possible(kernel: Kernel, shards: list[Shard]) -> bool:
    """Two shards or more on bfs layers, each expanding a round in one compiled call."""
    return len(shards) >= 2 and hasattr(kernel, "expand_layer") \
        and all(s.routed is not None and not s.layered for s in shards)


def _compiled_rounds(kernel: Kernel, shards: list[Shard]) -> Any:
    """The parallel compiled layer for these shards, where the kernel has it and it is safe here
    (``compiled_round.usable``); None otherwise."""
    if not _layer_possible(kernel, shards) or not compiled_round.usable():
        return None
    rounds = compiled_round.CompiledRounds(kernel, shards)
    rounds.warm()
    if compiled_round.usable():
        return rounds
    rounds.close()
    return None


class ShardActor:
    """A shard in its own process: it rebuilds the task (``task_source()``) and its kernel there."""

    def __init__(self, index: int, task_source: Callable[[], Any], backend: str, cfg: ShardConfig):
        kernel = make_kernel(task_source(), backend, fallback=True)
        self.n = cfg.n_shards
        self.shard = Shard(index, kernel, cfg)

    def call(self, method: str, *args: Any) -> Any:
        return getattr(self.shard, method)(*args)

    def open_layer(self, save_dir: str, step: int, deadline: float | None,
                   key: int | None) -> tuple[Any, ...]:
        buckets, info = self.shard.open_layer(save_dir, step, deadline, key)
        return (*buckets, info)

    def settle(self, final: bool, deadline: float | None, *incoming: Any) -> tuple[Any, ...]:
        buckets, info = self.shard.settle(final, deadline, *incoming)
        return (*buckets, info)

    def settle_open(self, deadline: float | None, *incoming: Any) -> tuple[Any, ...]:
        buckets, info = self.shard.settle_open(deadline, *incoming)
        return (*buckets, info)


def _messages_to_stderr(ray: Any) -> None:
    """Ray's driver prints the raylet's warnings (e.g. "N PYTHON worker processes have been
    started ...", with 8 or more actors on a small machine) on stdout, even with
    ``log_to_driver=False``; ``--json`` promises stdout holds the result alone, so they go to
    stderr.  Ray has no option for it: its printing function is wrapped (private API, so only
    where it exists)."""
    mod = getattr(getattr(ray, "_private", None), "worker", None)
    original = getattr(mod, "print_to_stdstream", None)
    if original is None or getattr(original, "_puzzleplan", False):
        return

    def to_stderr(data: dict, *args: Any, **kwargs: Any) -> Any:
        return original({**data, "is_err": True}, *args, **kwargs)

    to_stderr._puzzleplan = True   # type: ignore[attr-defined]
    mod.print_to_stdstream = to_stderr


POLL_S = 0.05   # seconds between two looks at the clock while actors work


class RayExecutor:
    """One Ray actor per shard.  Starts a local Ray (``num_cpus=workers``) unless Ray is running in
    this process already or ``address`` names a cluster; stops only a Ray it started."""

    kind = "ray"

    def __init__(self, cfg: ShardConfig, task_source: Callable[[], Any] | None, backend: str,
                 address: str = ""):
        if task_source is None:
            raise OptionError("engine dbfs on Ray rebuilds the task in every worker: run it through "
                              "puzzleplan solve or api.solve")
        try:
            import ray
        except ImportError:
            raise OptionError("engine dbfs with workers > 1 or a Ray address needs Ray: "
                              "pip install 'puzzleplan[distributed]'") from None
        import logging

        self.ray = ray
        self.n = cfg.n_shards
        self.started = False
        if not ray.is_initialized():
            kw: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False,
                                      logging_level=logging.ERROR)
            try:
                if address:
                    ray.init(address=address, **kw)
                else:
                    ray.init(num_cpus=self.n, **kw)
            except Exception as e:   # ConnectionError, RuntimeError, ValueError: the message says which
                where = f"the Ray cluster at {address}" if address else "a local Ray"
                raise OptionError(f"cannot start {where}: {_first_line(e)}") from None
            self.started = True
        _messages_to_stderr(ray)
        cpus = float(ray.cluster_resources().get("CPU", self.n))
        per = max(min(1.0, cpus / self.n), 0.001)
        actor = ray.remote(ShardActor)
        self.actors = [actor.options(num_cpus=per, max_restarts=0).remote(i, task_source, backend, cfg)
                       for i in range(self.n)]
        self._buckets: list[Any] | None = None

    def _get(self, refs: list[Any], stop: Callable[[], bool] | None = None) -> list[Any]:
        ray = self.ray
        pending = list(refs)
        try:
            while pending:
                _, pending = ray.wait(pending, num_returns=len(pending), timeout=POLL_S)
                if pending and stop is not None and stop():
                    raise Stopped
            return ray.get(refs)
        except ray.exceptions.RayActorError as e:
            raise WorkerLost(_first_line(e)) from None

    def all(self, method: str, *args: Any) -> list[Any]:
        return self._get([a.call.remote(method, *args) for a in self.actors])

    def one(self, index: int, method: str, *args: Any) -> Any:
        return self._get([self.actors[index].call.remote(method, *args)])[0]

    def open_layer(self, save_dir: str, step: int, deadline: float | None, stop: Callable[[], bool],
                   key: int | None = None) -> list[dict[str, Any]]:
        n = self.n
        return self._keep([a.open_layer.options(num_returns=n + 1).remote(save_dir, step, deadline, key)
                           for a in self.actors], stop)

    def settle(self, final: bool, deadline: float | None, stop: Callable[[], bool],
               open_next: bool = False) -> list[dict[str, Any]]:
        n, b, self._buckets = self.n, self._buckets, None
        assert b is not None
        if open_next:
            return self._keep([a.settle_open.options(num_returns=n + 1).remote(deadline,
                                                                               *[b[i][j] for i in range(n)])
                               for j, a in enumerate(self.actors)], stop)
        return self._keep([a.settle.options(num_returns=n + 1).remote(final, deadline,
                                                                      *[b[i][j] for i in range(n)])
                           for j, a in enumerate(self.actors)], stop)

    def _keep(self, refs: list[Any], stop: Callable[[], bool]) -> list[dict[str, Any]]:
        """Keep the buckets' references for the next round; wait for the infos."""
        n = self.n
        self._buckets = [r[:n] for r in refs]
        return self._get([r[n] for r in refs], stop)

    def close(self) -> None:
        ray = self.ray
        try:
            done = [a.call.remote("close") for a in self.actors]
            ray.wait(done, num_returns=len(done), timeout=2)
        except Exception:   # a dead actor cannot clean up: its spill files stay (docs/distributed.md)
            pass
        for a in self.actors:
            try:
                ray.kill(a, no_restart=True)
            except Exception:
                pass
        self.actors = []
        if self.started:
            ray.shutdown()


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:160] if text else type(e).__name__


def wall_deadline(clock_deadline: float | None) -> float | None:
    """A ``perf_counter`` deadline as ``time.time()``, which other processes can compare against."""
    if clock_deadline is None:
        return None
    return time.time() + (clock_deadline - time.perf_counter())


__all__ = ["LocalExecutor", "RayExecutor", "ShardActor", "Stopped", "ThreadExecutor", "WorkerLost",
           "compile_layer", "wall_deadline"]
