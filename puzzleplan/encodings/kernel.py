"""One interface over the two successor kernels (compiled numba, plain numpy).

Engines see only this: ``expand`` a batch, test the goal, evaluate the
heuristic, canonicalise-and-pack to keys, unpack keys to states.  The
``numpy`` backend exists for measurement (the bench compares the two) and
for platforms where numba is unavailable.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..ir.task import Task
from .drivers.dbfs_expand import (
    DBFS_BAD_ACTION,
    DBFS_BAD_ROW,
    DBFS_EXPANDED,
    DBFS_GENERATED,
    DBFS_GOAL_ROW,
    DBFS_INFO,
)
from .drivers.dbfs_layer import LAYER_BAD_ROW, LAYER_FIRST
from .npkernel import DomainError, NumpyKernel
from .packing import Layout, group_arrays, layout_for, pack_np, unpack_np

BACKENDS = ("numba", "numpy", "interpreted")

# expand_routed makes successors a slice at a time in a buffer of about this many bytes (their
# unpacked variables): it stays in the core's cache, and the round never holds them all
_ROUTED_BYTES = 1 << 20


class Routed(NamedTuple):
    """A round's successors grouped by owning shard (``Kernel.expand_routed``): keys, parents' keys,
    actions (int32) and action costs, group ``2 * owner + (cost != 0)`` in ``bounds[c]:bounds[c +
    1]``; the first goal row of the expanded keys (-1: none found or not looked for); counts."""

    keys: np.ndarray
    parents: np.ndarray
    actions: np.ndarray
    costs: np.ndarray
    bounds: np.ndarray
    goal_row: int
    expanded: int
    generated: int


class Kernel:
    backend = "numpy"

    def __init__(self, task: Task):
        self.task = task
        self.layout: Layout = layout_for(task)
        self.n_words = self.layout.n_words
        self.n_vars = task.n_vars
        self.costs = np.array([a.cost for a in task.actions], dtype=np.int64)
        self._np = NumpyKernel(task)

    # overridden by the compiled kernel -------------------------------------
    def expand(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        succ, par, act, _ = self._np.successors(S)
        return succ, par, act

    def goal(self, S: np.ndarray) -> np.ndarray:
        return self._np.goal(S)

    def heuristic(self, S: np.ndarray) -> np.ndarray:
        return self._np.heuristic(S)

    def canonical(self, S: np.ndarray) -> np.ndarray:
        return self._np.canonical(S) if self.task.groups else np.asarray(S, dtype=np.int64)

    def pack(self, S: np.ndarray) -> np.ndarray:
        return pack_np(S, self.layout)

    def unpack(self, K: np.ndarray) -> np.ndarray:
        return unpack_np(K, self.layout)

    # shared -------------------------------------------------------------------
    def expand_costs(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``expand`` plus each successor's edge cost (a macro kernel's edges cost more than one action)."""
        succ, par, act = self.expand(S)
        return succ, par, act, self.costs[act]

    def canon_pack(self, S: np.ndarray) -> np.ndarray:
        return self.pack(self.canonical(S))

    def init_state(self) -> np.ndarray:
        return np.array([self.task.init], dtype=np.int64)


class CompiledKernel(Kernel):
    backend = "numba"

    def __init__(self, task: Task, budget: int | None = None):
        """``budget``: branches per generated function (``compiled.SPLIT_BRANCHES`` by default)."""
        super().__init__(task)
        from . import compiled

        self._mod, tables = compiled.load_module(task, budget)
        self._tabs = np.array(tables, dtype=np.int64)
        self._bind_arrays()
        # compile everything now, so search time excludes it
        s0 = self.init_state()
        self.expand(s0)
        self.goal(s0)
        self.heuristic(s0)
        self.unpack(self.canon_pack(s0))

    def _bind_arrays(self) -> None:
        """The per-task arrays every compiled call takes (domains, groups, key layout): one place for
        the specialised kernel and the interpreter, which call the same engine drivers."""
        from . import packing

        task = self.task
        self._seen = 0     # the most successors per state seen in one expand call (sizes the buffers)
        self._lo = np.array([v.lo for v in task.variables], dtype=np.int64)
        self._hi = np.array([v.hi for v in task.variables], dtype=np.int64)
        self._pk = packing
        self._groups = group_arrays(task)
        lay = self.layout
        self._pack_args = (lay.lo, lay.word, lay.shift, lay.n_words)
        self._unpack_args = (lay.lo, lay.word, lay.shift, lay.mask)

    def expand(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        S = np.ascontiguousarray(S, dtype=np.int64)
        n = S.shape[0]
        n_act = self._mod.N_ACTIONS
        seen = self._seen
        per = min(n_act, 2 * seen) if seen else n_act
        cap = int(min(max(n * per, 1024, 2 * n_act), max(1 << 20, 2 * n_act)))
        outs, pars, acts = [], [], []
        start = 0
        while True:
            OUT = np.empty((cap, self.n_vars), dtype=np.int64)
            PAR = np.empty(cap, dtype=np.int64)
            ACT = np.empty(cap, dtype=np.int64)
            m, nxt = self._mod.expand(S, start, OUT, PAR, ACT, self._tabs, self._lo, self._hi)
            if m < 0:
                r = -1 - m
                act = self.task.actions[int(ACT[r])]
                bad = [v.name for j, v in enumerate(self.task.variables)
                       if not v.lo <= OUT[r, j] <= v.hi]
                raise DomainError(f"action {act.label} sets {', '.join(bad)} outside its domain")
            outs.append(OUT[:m])
            pars.append(PAR[:m])
            acts.append(ACT[:m])
            if nxt > start and m > seen * (nxt - start):
                seen = self._seen = max(self._seen, -(-m // (nxt - start)))
            if nxt >= n:
                break
            start = nxt
        if len(outs) == 1:
            return outs[0], pars[0], acts[0]
        return np.concatenate(outs), np.concatenate(pars), np.concatenate(acts)

    def goal(self, S: np.ndarray) -> np.ndarray:
        S = np.ascontiguousarray(S, dtype=np.int64)
        out = np.empty(S.shape[0], dtype=np.bool_)
        self._mod.goal(S, out, self._tabs)
        return out

    def expand_routed(self, KW: np.ndarray, n_shards: int, find_goal: bool, stop_at_goal: bool) -> Routed:
        """Expand the states of the packed keys ``KW`` and group the successors by owning shard, in
        one compiled call (the distributed search's round; ``drivers/dbfs_expand.py`` says why).
        ``find_goal``: report the first goal row of ``KW``; ``stop_at_goal``: and expand nothing
        from the slice that holds it on.  The same as ``unpack``, ``goal``, ``expand``,
        ``canon_pack`` and ``solvers.distributed.keys.route`` one after the other (a test compares
        them), but the successors' variables are never held all at once."""
        KW = np.ascontiguousarray(KW, dtype=np.uint64)
        info = np.empty(DBFS_INFO, dtype=np.int64)
        rows = max(1, _ROUTED_BYTES // (8 * max(1, self.n_vars)))
        K, P, A, cost, bounds = self._mod.dbfs_expand(KW, self._tabs, self._lo, self._hi, self.costs,
                                                      n_shards, find_goal, stop_at_goal, rows, info)
        bad = int(info[DBFS_BAD_ROW])
        if bad >= 0:    # expand that state alone: the step-by-step kernel names the action and variables
            self.expand(self.unpack(KW[bad: bad + 1]))
            raise DomainError(f"action {self.task.actions[int(info[DBFS_BAD_ACTION])].label} leaves "
                              "a variable's domain")
        return Routed(K, P, A, cost, bounds, int(info[DBFS_GOAL_ROW]), int(info[DBFS_EXPANDED]),
                      int(info[DBFS_GENERATED]))

    def expand_layer(self, tables: tuple, incoming: tuple, find: np.ndarray, stop_at_goal: bool,
                     limit: int, out: tuple, info: np.ndarray) -> None:
        """Every shard's part of a bfs layer at once, the shards in parallel: store what each was
        sent, expand up to ``limit`` of its new states and group their successors by owner
        (``drivers/dbfs_layer.py`` gives the arguments: ``tables`` = SLOTS, KEYS, PKS, ACTS and
        ``incoming`` = IK, IP, IA, IB and ``out`` = OK, OP, OA, OC, OB, numba typed lists with one
        entry per shard).  A domain violation is raised as ``expand_routed`` raises it."""
        args = self._layer_args(tables, incoming, find, stop_at_goal, limit, out, info)
        if not self._mod.dbfs_layer(*args):
            return
        for j in np.flatnonzero(info[:, LAYER_BAD_ROW] >= 0):
            first = int(info[j, LAYER_FIRST]) + int(info[j, LAYER_BAD_ROW])
            self.expand_routed(tables[1][j][first: first + 1], len(info), False, False)

    def compile_layer(self, tables: tuple, incoming: tuple, find: np.ndarray, stop_at_goal: bool,
                      limit: int, out: tuple, info: np.ndarray) -> None:
        """Compile (or load from numba's cache) ``expand_layer`` for these argument types without
        running it: a compile child may not start numba's parallel workers (a fork of a process
        whose OpenMP workers run cannot; ``solvers/distributed/compiled_round.py``)."""
        import numba

        args = self._layer_args(tables, incoming, find, stop_at_goal, limit, out, info)
        self._mod.dbfs_layer.compile(tuple(numba.typeof(a) for a in args))

    def _layer_args(self, tables: tuple, incoming: tuple, find: np.ndarray, stop_at_goal: bool, limit: int,
                    out: tuple, info: np.ndarray) -> tuple:
        rows = max(1, _ROUTED_BYTES // (8 * max(1, self.n_vars)))
        return (*tables, *incoming, self._tabs, self._lo, self._hi, self.costs, find, stop_at_goal, rows,
                limit, *out, info)

    def heuristic(self, S: np.ndarray) -> np.ndarray:
        S = np.ascontiguousarray(S, dtype=np.int64)
        out = np.empty(S.shape[0], dtype=np.int64)
        self._mod.heuristic(S, out, self._tabs)
        return out

    def canonical(self, S: np.ndarray) -> np.ndarray:
        S = np.array(S, dtype=np.int64, copy=True, order="C")
        if self.task.groups:
            self._pk.canonicalise_nb(S, *self._groups)
        return S

    def canon_pack(self, S: np.ndarray) -> np.ndarray:
        S = np.ascontiguousarray(S, dtype=np.int64)
        K = np.empty((S.shape[0], self.n_words), dtype=np.uint64)
        self._mod.canon_pack(S, K)
        return K

    def pack(self, S: np.ndarray) -> np.ndarray:
        S = np.ascontiguousarray(S, dtype=np.int64)
        K = np.empty((S.shape[0], self.n_words), dtype=np.uint64)
        self._pk.pack_nb(S, *self._pack_args, K)
        return K

    def unpack(self, K: np.ndarray) -> np.ndarray:
        S = np.empty((K.shape[0], self.n_vars), dtype=np.int64)
        self._pk.unpack_nb(np.ascontiguousarray(K), *self._unpack_args, S)
        return S


def make_kernel(task: Task, backend: str = "numba", fallback: bool = False) -> Kernel:
    """``fallback``: where numba cannot compile the task (recursion or memory exhausted by a very
    large generated kernel), return the numpy kernel instead -- same semantics, slower; the
    caller sees it in ``kernel.backend``."""
    if backend == "numba":
        if not fallback:
            return CompiledKernel(task)
        from numba.core.errors import NumbaError

        try:
            return CompiledKernel(task)
        except (RecursionError, MemoryError, NumbaError):
            return Kernel(task)
    if backend == "numpy":
        return Kernel(task)
    if backend == "interpreted":   # no per-task compile: one interpreter runs the task as data
        from .interp import InterpretedKernel

        return InterpretedKernel(task)
    raise ValueError(f"unknown kernel backend {backend!r} (choose from {', '.join(BACKENDS)})")


# exit codes of the compiling child (compile_in_child)
CHILD_OK, CHILD_NO_NUMBA, CHILD_FAILED = 0, 3, 4
CHILD_OVER_MEMORY = -1   # compile_in_child stopped the child at its memory budget (not an exit code)


def start_child(work: Callable[[], int]) -> int:
    """Fork a child that runs ``work`` and exits with its value; returns the child's pid.

    The child is quiet (stdout and stderr to /dev/null), deaf to the terminal's Ctrl-C (its
    parent ends it) and has no timer of its parent's.
    """
    pid = os.fork()
    if pid == 0:
        code = CHILD_FAILED
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            code = work()
        except BaseException:
            code = CHILD_FAILED
        finally:
            os._exit(code)
    return pid


def child_done(pid: int) -> int | None:
    """The exit code of child ``pid`` once it has ended (reaped here), else None (a cheap test)."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return CHILD_FAILED
    return os.waitstatus_to_exitcode(status) if done else None


def stop_child(pid: int) -> None:
    """Kill child ``pid`` and reap it (nothing if it is gone already)."""
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass


def compile_in_child(work: Callable[[], int], wait_s: float | None,
                     should_stop: Callable[[], bool] = lambda: False,
                     max_rss: int | None = None) -> int | None:
    """Run ``work`` (which compiles, filling numba's disk cache) in a forked child.

    Why: numba's compiler cannot be stopped from inside the process, and an interrupt raised in
    it ends in an llvmlite traceback.  A child can be killed at a deadline or on a signal, and
    what it compiled is then loaded from the disk cache in a fraction of the time.  Returns the
    child's exit code (``work()``'s value), or None when it was stopped: after ``wait_s`` seconds,
    or when ``should_stop()`` (polled every 20 ms) says so; :data:`CHILD_OVER_MEMORY` when the
    child's resident memory passed ``max_rss`` bytes (LLVM on a large kernel takes gigabytes, and
    ``--max-memory`` bounds the whole run, the compile included).  Without ``os.fork``: runs
    ``work`` here.
    """
    if not hasattr(os, "fork"):
        return work()
    pid = start_child(work)
    end = None if wait_s is None else time.perf_counter() + max(wait_s, 0.0)
    try:
        while True:
            code = child_done(pid)
            if code is not None:
                pid = 0
                return code
            if should_stop() or (end is not None and time.perf_counter() >= end):
                return None
            if max_rss is not None and _rss_of(pid) > max_rss:
                return CHILD_OVER_MEMORY
            time.sleep(0.02)
    finally:
        if pid:   # stopped (or interrupted by an exception): the child goes too
            stop_child(pid)


def _rss_of(pid: int) -> int:
    """Bytes process ``pid`` holds beyond what it shares with its parent (0 where /proc cannot tell).

    A forked child's resident set starts as the parent's pages, shared copy-on-write: those count
    once, in the parent, so the child is charged only its private pages (smaps_rollup), or its
    whole resident set where the kernel does not give the split.
    """
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as f:
            private = [int(line.split()[1]) for line in f
                       if line.startswith(("Private_Clean", "Private_Dirty"))]
        if private:
            return sum(private) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


__all__ = ["BACKENDS", "CompiledKernel", "DomainError", "Kernel", "child_done", "compile_in_child",
           "make_kernel", "start_child", "stop_child"]
