"""A shard's visited set: a hash table in RAM, plus sorted runs on disk once RAM is spent.

Delayed duplicate detection (Korf 2003, "Delayed duplicate detection: extended abstract"): when
the table passes its budget, its records are written out as one *run* -- every state's key,
parent key and action, sorted by the key's 64-bit hash -- and the table starts empty.  A state
is known when the table or any run holds it; candidates are checked against the runs in one
pass per batch (sorted hashes joined with the run window by window, the full key compared on a
hash match), so each run is read sequentially, never probed one state at a time, and the pages
read are dropped again (they would count in the RSS that ``--max-memory`` bounds).  More
than :data:`MAX_RUNS` runs are merged into one (a chunked two-way merge that never holds a whole
run in RAM), which bounds the probes per candidate.

Why sorted by hash and not by key: keys are several words long; one uint64 sorts and searches
at numpy speed, and the hash is already computed to pick the shard.  Equal hashes of distinct
keys are rare and handled (every row of an equal-hash range is compared).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...encodings.hashset import insert_keyed
from ..visited import StateTable, grow
from .keys import key_hash

MAX_RUNS = 4          # more runs than this are merged into one
MERGE_CHUNK = 1 << 20  # rows per window of the chunked merge
WINDOW = 1 << 22       # rows of a run read into RAM at a time by a batch lookup
FEW = 4096             # batches this small binary-search the memory maps directly


def _release(*arrays: np.ndarray) -> None:
    """Drop the resident pages of memory-mapped arrays.

    Pages of a file mapping that were read count in the process's RSS until the kernel reclaims
    them; a lookup over a run of a hundred million states would otherwise hold gigabytes
    "resident" and pass ``--max-memory`` with nothing but page cache.  They are read-only
    copies of the file, so dropping them loses nothing (a later read faults them in again).
    """
    for arr in arrays:
        m = getattr(arr, "_mmap", None)
        if m is not None and hasattr(m, "madvise"):
            try:
                m.madvise(mmap.MADV_DONTNEED)
            except (OSError, ValueError):
                pass


@dataclass
class Run:
    """One sorted run on disk: four .npy files sharing ``stem`` (hashes, keys, parent keys, actions)."""

    stem: str
    n: int

    def __post_init__(self) -> None:
        self.H = np.load(self.stem + ".h.npy", mmap_mode="r")
        self.K = np.load(self.stem + ".k.npy", mmap_mode="r")
        self.P = np.load(self.stem + ".p.npy", mmap_mode="r")
        self.A = np.load(self.stem + ".a.npy", mmap_mode="r")

    @property
    def disk_bytes(self) -> int:
        return int(self.H.nbytes + self.K.nbytes + self.P.nbytes + self.A.nbytes)

    def positions(self, h: np.ndarray, K: np.ndarray) -> np.ndarray:
        """Row of each key (hashes ``h``, rows ``K``) in this run, -1 where absent; ``h`` sorted.

        A large batch is joined with the run window by window (sequential reads, at most
        :data:`WINDOW` rows in RAM); a few keys (rebuilding a plan) binary-search the maps.
        """
        out = np.full(h.shape[0], -1, dtype=np.int64)
        if self.n == 0 or h.shape[0] == 0:
            return out
        if h.shape[0] <= FEW:
            _match(self.H, self.K, 0, h, K, out, 0)
            _release(self.H, self.K)
            return out
        for w0 in range(0, self.n, WINDOW):
            w1 = min(w0 + WINDOW, self.n)
            Hw = np.array(self.H[w0:w1])
            c0 = int(np.searchsorted(h, Hw[0], side="left"))
            c1 = int(np.searchsorted(h, Hw[-1], side="right"))
            if c1 > c0:
                Kw = np.array(self.K[w0:w1])
                _match(Hw, Kw, w0, h[c0:c1], K[c0:c1], out, c0)
            _release(self.H, self.K)
        return out

    def delete(self) -> None:
        for part in ("h", "k", "p", "a"):
            try:
                os.unlink(f"{self.stem}.{part}.npy")
            except OSError:
                pass


def _match(H: np.ndarray, K: np.ndarray, base: int, h: np.ndarray, keys: np.ndarray, out: np.ndarray,
           at0: int) -> None:
    """Set ``out[at0 + i]`` to ``base`` + the row of ``keys[i]`` in (``H``, ``K``) where present."""
    lo = np.searchsorted(H, h, side="left")
    hi = np.searchsorted(H, h, side="right")
    todo = np.flatnonzero(hi > lo)
    d = 0
    while todo.size:
        at = lo[todo] + d
        same = (np.asarray(K[at]) == keys[todo]).all(axis=1)
        out[at0 + todo[same]] = base + at[same]
        todo = todo[~same]
        d += 1
        todo = todo[lo[todo] + d < hi[todo]]


def write_run(stem: str, H: np.ndarray, K: np.ndarray, P: np.ndarray, A: np.ndarray) -> Run:
    """Sort by hash and write; each file goes to a temporary name first, then is renamed."""
    order = np.argsort(H, kind="stable")
    for part, arr in (("h", H), ("k", K), ("p", P), ("a", A)):
        tmp = f"{stem}.{part}.tmp.npy"
        np.save(tmp, np.ascontiguousarray(arr[order]))
        os.replace(tmp, f"{stem}.{part}.npy")
    return Run(stem, int(H.shape[0]))


def merge_runs(a: Run, b: Run, stem: str, between: Callable[[], None] | None = None) -> Run:
    """One run holding both (sorted by hash), window by window: the inputs are read through their
    memory maps (pages dropped after each window), the output written by plain sequential file
    writes, so neither side's pages pile up in the process's RSS.  ``between`` is called before
    each window; if it raises, the partial output is deleted and the inputs stay valid."""
    n = a.n + b.n
    W = a.K.shape[1]
    outs = {}
    for part, dtype, shape in (("h", np.uint64, (n,)), ("k", np.uint64, (n, W)), ("p", np.uint64, (n, W)),
                               ("a", a.A.dtype, (n,))):
        f = open(f"{stem}.{part}.tmp.npy", "wb")  # noqa: SIM115 -- closed below, after the last window
        np.lib.format.write_array_header_2_0(f, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
                                                 "fortran_order": False, "shape": shape})
        outs[part] = f
    i = j = 0
    inf = np.iinfo(np.uint64).max
    done = False
    try:
        while i < a.n or j < b.n:
            if between is not None:
                between()
            i2, j2 = min(i + MERGE_CHUNK, a.n), min(j + MERGE_CHUNK, b.n)
            # everything up to the smaller of the two windows' last hashes is inside both windows
            limit = min(int(a.H[i2 - 1]) if i2 < a.n else inf, int(b.H[j2 - 1]) if j2 < b.n else inf)
            ia = i + int(np.searchsorted(a.H[i:i2], np.uint64(limit), side="right"))
            jb = j + int(np.searchsorted(b.H[j:j2], np.uint64(limit), side="right"))
            H = np.concatenate([a.H[i:ia], b.H[j:jb]])
            order = np.argsort(H, kind="stable")
            outs["h"].write(np.ascontiguousarray(H[order]).tobytes())
            for part, x, y in (("k", a.K, b.K), ("p", a.P, b.P), ("a", a.A, b.A)):
                outs[part].write(np.ascontiguousarray(np.concatenate([x[i:ia], y[j:jb]])[order]).tobytes())
            i, j = ia, jb
            _release(a.H, a.K, a.P, a.A, b.H, b.K, b.P, b.A)
        done = True
    finally:
        for f in outs.values():
            f.close()
        if not done:
            for part in outs:
                with contextlib.suppress(OSError):
                    os.unlink(f"{stem}.{part}.tmp.npy")
    for part in outs:
        os.replace(f"{stem}.{part}.tmp.npy", f"{stem}.{part}.npy")
    return Run(stem, n)


class Visited:
    """The states a shard owns, with each one's parent key and action (-1: the root).

    ``budget_states`` is None for RAM only; else the table spills into ``spill_dir`` as soon as it
    holds more states than that.  Runs are private to this set (checkpoints record the states
    themselves, see checkpoint.py), so merged-away runs are deleted at once.
    """

    def __init__(self, n_words: int, budget_states: int | None = None, spill_dir: str | None = None):
        self.n_words = n_words
        self.budget = budget_states
        self.dir = Path(spill_dir) if spill_dir else None
        if self.budget is not None and self.dir is None:
            raise ValueError("a spill budget needs a spill directory")
        if self.dir is not None:
            self.dir.mkdir(parents=True, exist_ok=True)
        self._tag = uuid.uuid4().hex[:8]
        self._seq = 0
        self.runs: list[Run] = []
        self.spilled_bytes = 0    # written in all (merges included): the disk traffic
        # called before each run a lookup reads and between a merge's windows: the owner's clock
        # check, which may raise to end the search (a merge then leaves its inputs as they were)
        self.between: Callable[[], None] | None = None
        self._fresh_table()

    def _fresh_table(self) -> None:
        cap = 1 << 12 if self.budget is None else max(16, min(1 << 12, 2 * self.budget))
        self.table = StateTable(self.n_words, cap)
        self.pk = np.zeros((self.table.keys.shape[0], self.n_words), dtype=np.uint64)
        self.act = np.full(self.table.keys.shape[0], -1, dtype=np.int32)

    # ------------------------------------------------------------------ queries
    @property
    def size(self) -> int:
        return self.table.size + sum(r.n for r in self.runs)

    @property
    def nbytes(self) -> int:
        return int(self.table.nbytes + self.pk.nbytes + self.act.nbytes)

    @property
    def disk_bytes(self) -> int:
        return sum(r.disk_bytes for r in self.runs)

    def unseen(self, K: np.ndarray) -> np.ndarray:
        """Boolean mask: rows of ``K`` held neither by the table nor by any run (``between`` is
        called before each run is read)."""
        fresh = self.table.lookup(K) < 0
        if not self.runs or not fresh.any():
            return fresh
        with _ONE_DISK_PASS:
            idx = np.flatnonzero(fresh)
            h = key_hash(K[idx])
            order = np.argsort(h, kind="stable")
            idx, h = idx[order], h[order]
            for run in self.runs:
                if self.between is not None:
                    self.between()
                hit = run.positions(h, K[idx]) >= 0
                fresh[idx[hit]] = False
                idx, h = idx[~hit], h[~hit]
                if not idx.size:
                    break
        return fresh

    def find(self, key: np.ndarray) -> tuple[np.ndarray, int] | None:
        """(parent key, action) of one stored key; None if this shard does not hold it."""
        K = np.asarray(key, dtype=np.uint64).reshape(1, -1)
        i = int(self.table.lookup(K)[0])
        if i >= 0:
            return self.pk[i].copy(), int(self.act[i])
        h = key_hash(K)
        for run in self.runs:
            p = int(run.positions(h, K)[0])
            if p >= 0:
                found = np.asarray(run.P[p]).copy(), int(run.A[p])
                _release(run.P, run.A)
                return found
        return None

    # ------------------------------------------------------------------ updates
    def add(self, K: np.ndarray, P: np.ndarray, A: np.ndarray) -> None:
        """Store rows that are new and distinct (the caller has checked with :meth:`unseen`).

        With a budget the table never holds more than ``budget`` states: it spills *before* a
        batch would take it past, and a batch larger than the budget goes in budget-sized
        pieces -- growing the table past its share first and spilling after (the first version)
        doubled its arrays at the worst moment (a whole f layer stored at once)."""
        if K.shape[0] == 0:
            return
        if self.budget is None:
            self._insert(K, P, A)
            return
        for lo in range(0, K.shape[0], self.budget):
            k, p, a = K[lo: lo + self.budget], P[lo: lo + self.budget], A[lo: lo + self.budget]
            if self.table.size and self.table.size + k.shape[0] > self.budget:
                self.spill()
            self._insert(k, p, a)
        if self.table.size >= self.budget:
            self.spill()

    def add_new(self, parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> np.ndarray:
        """Store the rows of ``parts`` (keys, parents' keys, actions) that the table does not hold,
        the first of each key; returns their keys, in order.  RAM only (no budget, so no runs):
        one probe per row, where :meth:`unseen` and :meth:`add` take two and a scratch set."""
        assert self.budget is None and not self.runs
        self.table.reserve(sum(int(k.shape[0]) for k, _, _ in parts))
        self._fit_parents()
        t = self.table
        if not parts:
            return t.keys[:0].copy()
        t.size, new = insert_keyed(t.slots, t.keys, t.size,
                                   tuple(np.ascontiguousarray(K, dtype=np.uint64) for K, _, _ in parts),
                                   tuple(np.ascontiguousarray(P, dtype=np.uint64) for _, P, _ in parts),
                                   tuple(np.ascontiguousarray(A, dtype=np.int32) for _, _, A in parts),
                                   self.pk, self.act)
        return new

    def _insert(self, K: np.ndarray, P: np.ndarray, A: np.ndarray) -> None:
        first = self.table.size
        ids, _ = self.table.insert(K)
        self._fit_parents()
        if self.table.size - first == K.shape[0]:
            # all new (the callers' contract): their ids are the next ones in order, so two block
            # copies instead of two scatters
            self.pk[first: self.table.size] = P
            self.act[first: self.table.size] = A
        else:
            self.pk[ids] = P
            self.act[ids] = A

    def _fit_parents(self) -> None:
        """Parent keys and actions with a row for every id the table has room for."""
        cap = self.table.keys.shape[0]
        self.pk = grow(self.pk, cap, self.pk.shape[0], 0)
        self.act = grow(self.act, cap, self.act.shape[0], -1)

    def spill(self) -> None:
        """Write the table as one sorted run and start an empty table.

        One pass over the disk at a time in a process (this, and :meth:`unseen`'s reading of
        the runs): shards that run as threads would otherwise each hold their windows and copies
        at once and pass ``--max-memory``; the disk is shared anyway."""
        n = self.table.size
        if n == 0 or self.dir is None:
            return
        with _ONE_DISK_PASS:
            K = self.table.keys[:n]
            run = write_run(self._stem(), key_hash(K), K, self.pk[:n], self.act[:n])
            self.runs.append(run)
            self.spilled_bytes += run.disk_bytes
            self._fresh_table()
            if len(self.runs) > MAX_RUNS:
                self._merge()

    def _merge(self) -> None:
        while len(self.runs) > 1:
            self.runs.sort(key=lambda r: r.n)
            a, b = self.runs[0], self.runs[1]
            m = merge_runs(a, b, self._stem(), self.between)
            self.spilled_bytes += m.disk_bytes
            self.runs = [m, *self.runs[2:]]
            a.delete()
            b.delete()

    def close(self) -> None:
        """Delete every file this set wrote."""
        for r in self.runs:
            r.delete()
        self.runs = []

    def _stem(self) -> str:
        assert self.dir is not None
        self._seq += 1
        return str(self.dir / f"run-{self._tag}-{self._seq:05d}")


_ONE_DISK_PASS = threading.Lock()   # see Visited.spill

__all__ = ["MAX_RUNS", "Run", "Visited", "merge_runs", "write_run"]
