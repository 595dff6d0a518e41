"""A shard's candidates of later layers, filed by layer, in RAM up to a byte cap.

Why they can outgrow the visited table: a layer's successors wait here until their layer is
prepared (bfs: the next one; under f layers mostly one two layers on, on unit costs with a
heuristic that changes by one per move) -- the size of a whole layer, several times over, and
with only the visited states spilling that took the resident memory past ``--max-memory``.
So the candidates spill too: when those in RAM pass the cap, the layers farthest ahead go to
disk (each part as three ``.npy`` files: keys, parents, actions), since they are needed last;
a layer is read back, file by file, when it is prepared.  Spill files are private to the
shard and deleted once read back or at the end (checkpoints copy the candidates, see
checkpoint.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np

Part = tuple[np.ndarray, np.ndarray, np.ndarray]    # keys, parent keys, actions
NAMES = ("k", "p", "a")


class Pending:
    def __init__(self, n_words: int, cap_bytes: int | None = None, spill_dir: str | None = None):
        self.W = n_words
        self.cap = cap_bytes if spill_dir else None
        self.dir = Path(spill_dir) if spill_dir else None
        self.ram: dict[int, list[Part]] = {}
        self.disk: dict[int, list[tuple[str, int]]] = {}    # layer -> (file stem, rows)
        self.nbytes = 0            # candidates held in RAM
        self.spilled_bytes = 0     # written in all
        self._tag = uuid.uuid4().hex[:8]
        self._seq = 0

    # ------------------------------------------------------------------ queries
    def __bool__(self) -> bool:
        return self.least() is not None

    def least(self) -> int | None:
        """The least layer with candidates (None: none; a layer a stopped reader emptied is none)."""
        keys = {k for k, v in self.ram.items() if v} | {k for k, v in self.disk.items() if v}
        return min(keys) if keys else None

    @property
    def row_bytes(self) -> int:
        """Bytes per candidate: key, parent key, action."""
        return 16 * self.W + 4

    @property
    def disk_bytes(self) -> int:
        return sum(rows * self.row_bytes for files in self.disk.values() for _, rows in files)

    def parts(self) -> Iterator[tuple[int, Part]]:
        """Every candidate part with its layer, RAM and disk (read-only memory maps), for a checkpoint."""
        for key, parts in self.ram.items():
            for part in parts:
                yield key, part
        for key, files in self.disk.items():
            for stem, _ in files:
                yield key, _load(stem, mmap=True)

    # ------------------------------------------------------------------ updates
    def add(self, key: int, K: np.ndarray, P: np.ndarray, A: np.ndarray) -> None:
        if not K.shape[0]:
            return
        self.ram.setdefault(key, []).append((K, P, A))
        self.nbytes += K.nbytes + P.nbytes + A.nbytes
        if self.cap is not None and self.nbytes > self.cap:
            self._spill()

    def take(self, key: int) -> Iterator[Part]:
        """Remove layer ``key``'s candidates and hand them out part by part, RAM first.  A part
        leaves the store only when it is handed out: a reader stopped half-way (the clock) leaves
        the rest filed, so :meth:`close` still deletes their files."""
        ram = self.ram.get(key, [])
        while ram:
            part = ram.pop(0)
            self.nbytes -= sum(a.nbytes for a in part)
            yield part
        self.ram.pop(key, None)
        files = self.disk.get(key, [])
        while files:
            stem, _ = files.pop(0)
            part = _load(stem, mmap=False)
            _delete(stem)
            yield part
        self.disk.pop(key, None)

    def close(self) -> None:
        for files in self.disk.values():
            for stem, _ in files:
                _delete(stem)
        self.disk = {}
        self.ram = {}
        self.nbytes = 0

    # ------------------------------------------------------------------ inside
    def _spill(self) -> None:
        """Write whole layers, farthest first, until the RAM holds at most half the cap; each part
        to its own files, so that spilling never joins (copies) a layer's parts in RAM."""
        assert self.dir is not None and self.cap is not None
        self.dir.mkdir(parents=True, exist_ok=True)
        for key in sorted(self.ram, reverse=True):
            if self.nbytes <= self.cap // 2:
                break
            for K, P, A in self.ram.pop(key):
                self._seq += 1
                stem = str(self.dir / f"pending-{self._tag}-{self._seq:05d}")
                for name, arr in zip(NAMES, (K, P, A)):
                    np.save(f"{stem}.{name}.npy", arr)
                self.disk.setdefault(key, []).append((stem, int(K.shape[0])))
                size = K.nbytes + P.nbytes + A.nbytes
                self.nbytes -= size
                self.spilled_bytes += size


def _load(stem: str, mmap: bool) -> Part:
    mode = "r" if mmap else None
    K, P, A = (np.load(f"{stem}.{name}.npy", mmap_mode=mode) for name in NAMES)
    return K, P, A


def _delete(stem: str) -> None:
    for name in NAMES:
        Path(f"{stem}.{name}.npy").unlink(missing_ok=True)


__all__ = ["Pending"]
