"""Writing certificates of an optimum or of unsolvability (checked by ``verify.certificate``).

The set S (every canonical state reachable at cost below the optimum C, each with its
cost-to-reach g) is collected by a pass of its own over the kernel, a Dijkstra by cost
buckets that never stores a state at cost C or more; for unsolvability it is every
reachable state.  It does not reuse the engine's visited table: that way any engine that
proved an optimum (bfs, ucs, astar, idastar, even sat or fd) gets the same certificate, a
bfs run with a dominance prune (``Model.aux_bound``), whose table lacks the pruned states,
does too, and the engines carry no certificate code.  The price is a second enumeration,
about as long as one bfs run, and it can hold far more states than the search did (astar
never stores most of S), so the pass keeps the run's limits too: past the deadline, the
memory or the state limit, or at a signal, it stops and nothing is written.  The writer's
correctness does not matter for soundness: the checker recomputes every successor with the
reference semantics.

With ``bound="f"`` the pass also drops every successor whose g + h reaches C (h the model's
admissible heuristic, ``kernel.heuristic``): S then holds what an A* search to C would reach,
not everything cheaper than C, which on Sokoban is thousands of times fewer states (Microban
146: 5,966 against more than 60 M).  The checker recomputes h and excuses exactly those
successors; the price is that the claim trusts the heuristic's admissibility
(docs/certificates.md).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from . import __version__
from .lang.errors import EXIT_BAD_OPTION, EXIT_OUTPUT, PuzzleError
from .solvers.result import Clock, Limits, Result
from .solvers.visited import Growable, StateTable, growth_peak
from .verify import certificate as fmt

CHUNK = 1 << 15


BOUNDS = ("g", "f")


def check_bound(task: Any, by: str) -> None:
    """A clear error (exit 31) before any search when ``--certificate-bound`` cannot apply:
    ``f`` needs the model's heuristic declared admissible."""
    if by not in BOUNDS:
        raise PuzzleError(f"unknown certificate bound {by!r} (g or f)", code=EXIT_BAD_OPTION)
    if by == "f" and (task.heuristic is None or not task.heuristic_admissible):
        raise PuzzleError("--certificate-bound f needs a heuristic the model declares admissible; "
                          "this model has none (use g)", code=EXIT_BAD_OPTION)


class NoCertificate(Exception):
    """Nothing is written, for the reason given, and the search's result stands as it was."""


class CertificateLimit(NoCertificate):
    """The certificate pass reached a limit (time, memory, states) or a signal."""


def collect(kernel: Any, bound: int | None, clock: Clock | None = None,
            by_h: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(keys (N, W) uint64 sorted ascending as integers, g (N,) unsigned, as narrow as the largest g
    allows): the canonical states reachable at cost < ``bound`` (every reachable state when
    None) with their least costs; with ``by_h``, only those reached with g + h < ``bound``
    through such states.

    ``clock``: the limits to keep, checked before each chunk, before the table grows, and before
    the sort (``CertificateLimit`` past them)."""
    W = kernel.n_words
    if bound is not None and bound <= 0:
        return np.zeros((0, W), dtype=np.uint64), np.zeros(0, dtype=np.uint8)
    # every g stored is below the bound: int32 where the bound fits it (half of int64's bytes)
    gtype = np.int32 if bound is not None and bound < np.iinfo(np.int32).max else np.int64
    if by_h and bound is not None and int(kernel.heuristic(kernel.init_state())[0]) >= bound:
        return np.zeros((0, W), dtype=np.uint64), np.zeros(0, dtype=np.uint8)
    table = StateTable(W)
    g = Growable(gtype, np.iinfo(gtype).max)
    done = Growable(np.bool_, False)
    ids, _ = table.insert(kernel.canon_pack(kernel.init_state()))
    g.ensure(table.keys.shape[0])
    done.ensure(table.keys.shape[0])
    g.a[ids[0]] = 0
    buckets: dict[int, list[np.ndarray]] = {0: [ids]}
    while buckets:
        c = min(buckets)
        todo = np.unique(np.concatenate(buckets.pop(c)))
        todo = todo[(g.a[todo] == c) & ~done.a[todo]]
        for lo in range(0, todo.size, CHUNK):
            if clock is not None:
                clock.note_bytes(table.nbytes + g.a.nbytes + done.a.nbytes)
                if clock.out_of_time() or clock.too_many(table.size):
                    over = clock.max_states is not None and table.size > clock.max_states
                    raise CertificateLimit(f"{'state limit' if over else clock.reason()} in the certificate "
                                           f"pass, after {table.size:,} states below the bound in "
                                           f"{clock.elapsed():.1f} s")
            part = todo[lo: lo + CHUNK]
            done.a[part] = True
            succ, _, act = kernel.expand(kernel.unpack(table.keys[part]))
            nc = c + kernel.costs[act]
            if bound is not None:
                keep = nc < bound
                succ, nc = succ[keep], nc[keep]
                if by_h and nc.size:
                    keep = nc + kernel.heuristic(succ) < bound
                    succ, nc = succ[keep], nc[keep]
            if not nc.size:
                continue
            packed = kernel.canon_pack(succ)
            if clock is not None and clock.max_bytes is not None:
                _room_to_grow(table, g, done, table.size + packed.shape[0], clock)
            tids, _ = table.insert(packed)
            g.ensure(table.keys.shape[0])
            done.ensure(table.keys.shape[0])
            before = g.a[tids].copy()
            np.minimum.at(g.a, tids, nc.astype(gtype))
            better = np.unique(tids[g.a[tids] < before])
            if better.size:
                gv = g.a[better]
                for v in np.unique(gv):
                    buckets.setdefault(int(v), []).append(better[gv == v])
    n = table.size
    keys_all, g_all = table.keys, g.a
    del table, g, done       # the hash slots and the done flags: not needed to sort and write
    gb = fmt.g_bytes(int(g_all[:n].max()) if n else 0)
    if clock is not None and clock.max_bytes is not None:
        need = finish_peak(keys_all.nbytes, g_all.nbytes, n, W, gb)
        if need > clock.max_bytes:
            raise CertificateLimit(f"memory limit in the certificate pass: sorting and writing {n:,} states "
                                   f"needs about {need / 2**20:,.0f} MiB, over the budget of "
                                   f"{clock.max_bytes / 2**20:,.0f} MiB")
    keys = keys_all[:n]
    # the keys are distinct (one row a state), so an unstable sort gives the one order
    order = np.argsort(keys[:, 0]) if W == 1 else np.lexsort(keys.T)
    gs = g_all[:n].astype(f"<u{gb}")
    del g_all
    gs = gs[order]
    keys = keys[order]
    del keys_all, order
    return keys, gs


def _room_to_grow(table: StateTable, g: Growable, done: Growable, n: int, clock: Clock) -> None:
    """``CertificateLimit`` when room for ``n`` states (what ``StateTable.insert`` reserves for a
    batch) would take the table past the memory budget at the peak of its growth (the engines'
    ``growth_peak``)."""
    need = growth_peak(table, (g, done), n)
    if need > clock.max_bytes:  # type: ignore[operator]
        clock.memory_refused = True
        raise CertificateLimit(f"memory limit in the certificate pass: growing to {n:,} states needs "
                               f"about {need / 2**20:,.0f} MiB, over the budget of "
                               f"{clock.max_bytes / 2**20:,.0f} MiB")  # type: ignore[operator]


def finish_peak(keys_bytes: int, g_bytes: int, n: int, words: int, gb: int) -> int:
    """Bytes the sort and the file take at their peak, the hash slots already freed: the table's
    keys and g, the order (8 a state; ``lexsort`` may copy the key columns too) and the narrowed
    g; then the table's keys, the order, the sorted g and the sorted keys; then, in ``file_parts``,
    the sorted keys (their own section), g, and the compressed copies (at most as large)."""
    first = keys_bytes + g_bytes + n * (8 + gb + (8 * words if words > 1 else 0))
    second = keys_bytes + n * (8 + 2 * gb + 8 * words)
    third = n * (16 * words + 2 * gb)
    return max(first, second, third)


def file_parts(header: dict[str, Any], keys: np.ndarray, gs: np.ndarray) -> list[bytes]:
    """``verify.certificate.encode``'s file from arrays, in parts to write one after the other:
    the same bytes without a Python int a word (which cost about 40 bytes a state at the end of
    the pass, and ran 24 GB out of memory on a 310 M-state Microban certificate) and without one
    copy of the whole file.  One-word keys are turned into their differences in place: ``keys``
    is spent."""
    n = keys.shape[0]
    if keys.shape[1] == 1 and n:   # the first key, then the differences, from the end backwards
        col = keys[:, 0]
        for hi in range(n, 1, -CHUNK):
            lo = max(hi - CHUNK, 1)
            col[lo:hi] -= col[lo - 1: hi - 1].copy()
    words = np.ascontiguousarray(keys, dtype="<u8")
    gb = fmt.g_bytes(int(gs.max()) if n else 0)
    g_le = np.ascontiguousarray(gs, dtype=f"<u{gb}")
    section = memoryview(words).cast("B") if words.size else b""
    return fmt.encode_parts(header, n, section, gb, memoryview(g_le).cast("B") if n else b"")


def write_certificate(loaded: Any, result: Result, path: str, kernel: str = "numpy",
                      model: str | None = None, limits: Limits | None = None,
                      by: str = "g") -> dict[str, Any]:
    """Write the certificate of ``result`` (an optimum with its verified plan, or unsolvability).

    ``loaded``: ``api.Loaded``; ``model``: the model name or path as the user gave it (for the
    header; defaults to the model's NAME); ``limits``: those of the run, kept by the pass that
    collects the states (``CertificateLimit`` when one is reached; no file is written then);
    ``by``: "g" (every state cheaper than the optimum) or "f" (g + h below it, h the model's
    admissible heuristic: an optimum only).  Returns what was written (states, bytes, seconds)."""
    task = loaded.task
    check_bound(task, by)
    if by == "f" and result.status == "unsolvable":
        raise NoCertificate("--certificate-bound f proves optima only; unsolvability needs g")
    if result.status == "optimal" and result.plan is not None and result.stats.get("verified"):
        kind, bound = "optimum", int(result.cost)  # type: ignore[arg-type]
    elif result.status == "unsolvable":
        kind, bound = "unsolvable", None
    else:
        raise PuzzleError(f"no certificate: engine {result.engine} ended with status {result.status}, "
                          "not a verified optimum or unsolvability", code=EXIT_BAD_OPTION)
    by_h = by == "f"
    t0 = time.perf_counter()
    k = loaded.kernel(kernel)
    layout = fmt.var_layout(task)
    kl = k.layout
    mine = [(int(w), int(s), int(m).bit_length()) for w, s, m in zip(kl.word, kl.shift, kl.mask)]
    if mine != layout:   # both follow one documented rule; a difference is a bug, not a user error
        raise AssertionError("kernel key layout differs from the certificate layout")
    keys, gs = collect(k, bound, None if limits is None else Clock(limits), by_h=by_h)
    header = {
        "format": fmt.FORMAT, "version": 2 if by_h else 1, "kind": kind,
        **({"bound": "f"} if by_h else {}),
        "model": model or getattr(loaded.model, "NAME", task.name), "instance": loaded.instance,
        "options": {key: (v if isinstance(v, (int, float, bool)) else str(v))
                    for key, v in loaded.options.items()},
        "task": task.name, "fingerprint": fmt.fingerprint(task),
        "cost": bound,
        "plan": list(result.plan) if kind == "optimum" else [],
        "plan_labels": [task.actions[a].label for a in result.plan] if kind == "optimum" else [],
        "variables": [[v.name, v.lo, v.hi] for v in task.variables],
        "groups": [[list(o) for o in grp] for grp in task.groups],
        "layout": {"words": fmt.n_words(layout), "vars": [list(x) for x in layout]},
        "engine": result.engine, "written_by": f"puzzleplan {__version__}",
    }
    n = int(keys.shape[0])
    parts = file_parts(header, keys, gs)
    del keys, gs
    try:
        with open(path, "wb") as f:
            f.writelines(parts)
    except OSError as e:
        raise PuzzleError(f"cannot write certificate: {e.strerror}", path, code=EXIT_OUTPUT) from None
    return {"path": path, "kind": kind, "bound": by, "cost": bound, "states": n,
            "bytes": sum(len(p) for p in parts),
            "write_s": round(time.perf_counter() - t0, 3)}
