"""The visited set's cost per key: lookups and inserts in ``StateTable`` at several table sizes.

Usage:
    python bench/hashset_speed.py [--sizes 500,50000,500000,4000000] [--repeat 5]
                                  [-o results/hashset-speed.json]

Why a script: every explicit engine stores its states through encodings/hashset.py, and the
cost of one probe decides how fast a search is once the kernel is fast (docs/architecture.md,
"The hash set's helpers inlined").  Per size: a table of that many random one-word keys, then
200,000 lookups of stored keys (best of ``--repeat``) and the insertion of as many candidates,
half stored already and half new (best of ``--repeat``, each into a fresh copy of the table), in
ns per key, with the load average before and after.  To compare two versions, run the script
from a worktree of each, one after the other (``PYTHONPATH=WORKTREE python bench/...``): the
figures are absolute, so only runs on the same machine at the same load compare.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from puzzleplan.bench.scripting import parser, uptime, write_json
from puzzleplan.solvers.visited import StateTable

QUERIES = 200_000


def measure(size: int, repeat: int, rng: np.random.Generator) -> dict[str, float]:
    keys = rng.integers(0, 1 << 60, size=(size, 1), dtype=np.uint64)
    table = StateTable(1, size)
    table.insert(keys)
    queries = keys[rng.integers(0, size, QUERIES)]
    table.lookup(queries[:10])                       # compiled or loaded before timing
    lookup = min(_timed(lambda: table.lookup(queries)) for _ in range(repeat))
    half = keys[: size // 2]
    fresh = rng.integers(0, 1 << 60, size=(QUERIES // 2, 1), dtype=np.uint64)
    cands = np.concatenate([half[rng.integers(0, half.shape[0], QUERIES - fresh.shape[0])], fresh])
    inserts = []
    for _ in range(repeat):
        t = StateTable(1, size + QUERIES)
        t.insert(half)
        inserts.append(_timed(lambda t=t: t.insert(cands)))
    return {"table_keys": size, "lookup_ns": round(lookup / QUERIES * 1e9, 2),
            "insert_ns": round(min(inserts) / QUERIES * 1e9, 2)}


def _timed(f: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__, "results/hashset-speed.json")
    ap.add_argument("--sizes", default="500,50000,500000,4000000")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(2026)
    doc: dict = {"load_before": uptime(), "queries": QUERIES, "rows": []}
    for size in (int(x) for x in args.sizes.split(",")):
        row = measure(size, args.repeat, rng)
        doc["rows"].append(row)
        print(f"{size:>10,d} keys: lookup {row['lookup_ns']:7.1f} ns, insert {row['insert_ns']:7.1f} ns",
              file=sys.stderr)
    doc["load_after"] = uptime()
    write_json(args.out, doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
