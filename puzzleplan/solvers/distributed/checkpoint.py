"""Checkpoints at layer boundaries: each shard's new states per layer, and a manifest that commits them.

Layout of a checkpoint directory::

    manifest.json                 the commit point: closed layers, counters, the files that count
    d000000-s000-of002.npz        step 0 (the root), written by shard 0 of 2
    d000001-s001-of002.npz        step 1: what shard 1 stored while closing layer 0
    ...
    p000001-s001-of002.npz        cost and f layers: shard 1's pending candidates at step 1

A *delta* file holds the states one shard stored during one layer, with their parent keys and
actions: the zero-cost ones that joined that layer (``z*``) and the next layer (``f*``).  The
union of all committed deltas is every stored state, so resuming replays them into empty shards;
the last step's ``f`` part is the frontier.  Why deltas and not snapshots: each state is written
once (O(states) disk in all, not O(states x layers)), and resuming may use another number of
workers -- each shard keeps the rows it owns under the new count.

Every file is written under a temporary name and renamed; the manifest is renamed last, so a run
killed at any moment leaves the previous checkpoint whole (files of an uncommitted step are
ignored and overwritten).
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ...ir.task import Task
from ...lang.errors import OptionError

MANIFEST = "manifest.json"
VERSION = 1


def fingerprint(task: Task) -> str:
    """Identifies the task (its whole JSON form): a checkpoint resumes only the search it belongs to."""
    return hashlib.sha256(task.to_json().encode()).hexdigest()[:32]


def delta_name(step: int, index: int, n_shards: int) -> str:
    return f"d{step:06d}-s{index:03d}-of{n_shards:03d}.npz"


def write_delta(directory: str, step: int, index: int, n_shards: int,
                delta: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]], W: int) -> str:
    arrays: dict[str, np.ndarray] = {}
    for part in ("z", "f"):
        rows = [d for d in delta if d[0] == part]
        arrays[f"{part}k"] = np.concatenate([d[1] for d in rows]) if rows else np.zeros((0, W), np.uint64)
        arrays[f"{part}p"] = np.concatenate([d[2] for d in rows]) if rows else np.zeros((0, W), np.uint64)
        arrays[f"{part}a"] = np.concatenate([d[3] for d in rows]) if rows else np.zeros(0, np.int32)
    name = delta_name(step, index, n_shards)
    _atomic(Path(directory) / name, lambda f: np.savez(f, **arrays))
    return name


def pending_name(step: int, index: int, n_shards: int) -> str:
    return f"p{step:06d}-s{index:03d}-of{n_shards:03d}.npz"


def write_pending(directory: str, step: int, index: int, n_shards: int,
                  parts: Iterable[tuple[int, tuple[np.ndarray, np.ndarray, np.ndarray]]], W: int) -> None:
    """Cost and f layers: a shard's candidates of later layers, whole at each step -- they change
    every layer, unlike the stored states.  One array triple per part (``k3``, ``p3``, ``a3``) and
    the parts' layers (``l``), so that parts spilled to disk are copied one at a time, never joined
    in RAM.  The file of two steps back is removed: the manifest committed since names a later one."""
    def write(f: Any) -> None:
        with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
            layers = []
            for i, (key, part) in enumerate(parts):
                layers.append(key)
                for name, arr in zip("kpa", part):
                    with z.open(f"{name}{i}.npy", "w", force_zip64=True) as out:
                        np.lib.format.write_array(out, np.asarray(arr))
            with z.open("l.npy", "w") as out:
                np.lib.format.write_array(out, np.array(layers, dtype=np.int64))
    _atomic(Path(directory) / pending_name(step, index, n_shards), write)
    if step >= 2:
        (Path(directory) / pending_name(step - 2, index, n_shards)).unlink(missing_ok=True)


def read_pending(directory: str, step: int, n_shards: int,
                 W: int) -> Iterator[tuple[int, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """The parts :func:`write_pending` wrote at ``step`` by every shard, one at a time, with their layer."""
    for index in range(n_shards):
        name = pending_name(step, index, n_shards)
        try:
            with np.load(Path(directory) / name) as z:
                layers = z["l"]
                if "k" in z.files:     # one row per candidate (the first format): split by layer
                    K, P, A = z["k"].reshape(-1, W), z["p"].reshape(-1, W), z["a"]
                    for key in np.unique(layers):
                        sel = layers == key
                        yield int(key), (K[sel], P[sel], A[sel])
                    continue
                for i, key in enumerate(layers):
                    yield int(key), (z[f"k{i}"].reshape(-1, W), z[f"p{i}"].reshape(-1, W), z[f"a{i}"])
        except (OSError, KeyError, ValueError, zipfile.BadZipFile) as e:
            raise OptionError(f"checkpoint {directory}: cannot read {name} ({type(e).__name__})") from None


def read_delta(directory: str, name: str, W: int) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    path = Path(directory) / name
    try:
        with np.load(path) as z:
            out = [(part, z[f"{part}k"].reshape(-1, W), z[f"{part}p"].reshape(-1, W), z[f"{part}a"])
                   for part in ("z", "f")]
    except (OSError, KeyError, ValueError) as e:
        raise OptionError(f"checkpoint {directory}: cannot read {name} ({type(e).__name__})") from None
    return out


def write_manifest(directory: str, data: dict[str, Any]) -> None:
    text = json.dumps({"version": VERSION, **data}, indent=1)
    _atomic(Path(directory) / MANIFEST, lambda f: f.write(text.encode()))


def read_manifest(directory: str) -> dict[str, Any] | None:
    """The committed manifest, or None when the directory holds no checkpoint."""
    path = Path(directory) / MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise OptionError(f"checkpoint {directory}: {MANIFEST} is unreadable") from None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise OptionError(f"checkpoint {directory}: not a dbfs checkpoint of version {VERSION}")
    return data


def prepare_dir(directory: str, resume: bool, task: Task) -> dict[str, Any] | None:
    """Check the directory for a new run (no checkpoint in it yet) or a resume (one of this task)."""
    try:
        Path(directory).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OptionError(f"cannot create checkpoint directory {directory}: {e.strerror}") from None
    found = read_manifest(directory)
    if not resume:
        if found is not None:
            raise OptionError(f"{directory} already holds a checkpoint: add --resume to continue it, "
                              "or choose an empty directory")
        return None
    if found is None:
        raise OptionError(f"--resume: no checkpoint in {directory}")
    if found.get("fingerprint") != fingerprint(task):
        raise OptionError(f"--resume: the checkpoint in {directory} belongs to another task "
                          "(model, instance or options differ)")
    return found


def _atomic(path: Path, write: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


__all__ = ["fingerprint", "prepare_dir", "read_delta", "read_manifest", "read_pending", "write_delta",
           "write_manifest", "write_pending"]
