"""``puzzleplan bench compare A.json B.json``: how the search times moved between two bench runs.

Runs are paired by what identifies them (suite, instance, options, engine,
kernel; for speed suites section, metric, phase, solver); repetitions collapse
to their median time.  Per engine the summary is the **geometric mean of the
time ratios B/A** -- the mean that treats "twice as fast" and "twice as slow"
symmetrically, the usual way to summarise benchmark speed-ups (Fleming &
Wallace, "How not to lie with statistics", CACM 1986).  Times under
``FLOOR`` seconds are raised to it first, so timer noise on runs of a few
microseconds cannot produce huge ratios.  Only pairs where both runs finished
(not ``limit``/``error``) enter the ratios; status and cost changes are listed
separately, since a run that now hits its limit has no meaningful time.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from typing import Any

from ..lang.errors import EXIT_BAD_INPUT, PuzzleError

FLOOR = 1e-3  # seconds
# "set" and "seed": runs of one instance in two sets (GA presets), or under two seeds, are different runs
ID_FIELDS = ("suite", "set", "instance", "option_args", "section", "metric", "phase", "engine", "solver",
             "kernel", "seed")
UNFINISHED = ("limit", "error", "unknown")


def load_records(path: str) -> list[dict[str, Any]]:
    """The ``records`` of a bench JSON file; a one-line error (exit 30) for anything else."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise PuzzleError(f"cannot read bench results: {e.strerror}", path, code=EXIT_BAD_INPUT) from None
    except ValueError as e:
        raise PuzzleError(f"not JSON: {e}", path, code=EXIT_BAD_INPUT) from None
    recs = doc.get("records") if isinstance(doc, dict) else None
    if not isinstance(recs, list) or not all(isinstance(r, dict) for r in recs):
        raise PuzzleError("not a `puzzleplan bench` result (no records list)", path, code=EXIT_BAD_INPUT)
    return recs


def _key(r: dict[str, Any]) -> tuple:
    return tuple((k, json.dumps(r[k], sort_keys=True)) for k in ID_FIELDS if k in r)


def _engine(r: dict[str, Any]) -> str:
    return str(r.get("engine") or r.get("solver") or "?")


def _label(key: tuple) -> str:
    d = {k: json.loads(v) for k, v in key}
    parts = [str(d[k]) for k in ("instance", "section", "metric", "phase") if d.get(k) not in (None, "")]
    if d.get("option_args"):
        parts.append(" ".join(d["option_args"]))
    parts.append(str(d.get("engine") or d.get("solver") or "?"))
    if d.get("seed") is not None:
        parts.append(f"seed {d['seed']}")
    return " ".join(parts)


def _collapse(records: Sequence[dict[str, Any]]) -> dict[tuple, dict[str, Any]]:
    """One entry per run identity: median time, the statuses and costs seen."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault(_key(r), []).append(r)
    out = {}
    for k, rs in groups.items():
        times = [r["time_s"] for r in rs if isinstance(r.get("time_s"), (int, float))]
        statuses = sorted({str(r.get("status", "solved")) for r in rs})
        out[k] = {"engine": _engine(rs[0]), "time_s": statistics.median(times) if times else None,
                  "status": "/".join(statuses), "cost": rs[0].get("cost"),
                  "finished": not any(s in UNFINISHED for s in statuses)}
    return out


def compare(a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]], top: int = 10) -> dict[str, Any]:
    """Per-engine geometric-mean ratios, the ``top`` largest changes, status/cost changes, unpaired runs."""
    A, B = _collapse(a), _collapse(b)
    pairs = []
    changes = []
    for k in A.keys() & B.keys():
        x, y = A[k], B[k]
        if x["status"] != y["status"] or x["cost"] != y["cost"]:
            changes.append({"run": _label(k), "a": f"{x['status']} {x['cost']}",
                            "b": f"{y['status']} {y['cost']}"})
        if x["finished"] and y["finished"] and x["time_s"] is not None and y["time_s"] is not None:
            ta, tb = max(x["time_s"], FLOOR), max(y["time_s"], FLOOR)
            pairs.append({"run": _label(k), "engine": x["engine"], "a_s": x["time_s"], "b_s": y["time_s"],
                          "ratio": tb / ta})
    engines: dict[str, dict[str, Any]] = {}
    for e in sorted({p["engine"] for p in pairs}):
        rs = [p["ratio"] for p in pairs if p["engine"] == e]
        engines[e] = {"pairs": len(rs), "geomean_ratio": math.exp(sum(math.log(r) for r in rs) / len(rs)),
                      "min_ratio": min(rs), "max_ratio": max(rs)}
    everything = [p["ratio"] for p in pairs]
    largest = sorted(pairs, key=lambda p: -abs(math.log(p["ratio"])))[:top]
    return {
        "engines": engines,
        "overall": {"pairs": len(pairs),
                    "geomean_ratio": math.exp(sum(map(math.log, everything)) / len(everything))
                    if everything else None},
        "largest": largest,
        "status_changes": sorted(changes, key=lambda c: c["run"]),
        "only_a": sorted(_label(k) for k in A.keys() - B.keys()),
        "only_b": sorted(_label(k) for k in B.keys() - A.keys()),
    }


def _ratio(r: float | None) -> str:
    if r is None:
        return "-"
    return f"{r:.3f}x" + (f" ({1 / r:.2f}x faster)" if r < 1 else f" ({r:.2f}x slower)" if r > 1 else "")


def render(cmp: dict[str, Any], a_name: str = "A", b_name: str = "B") -> str:
    """A plain-text report: ratio = time in B / time in A (below 1: B is faster)."""
    lines = [f"time ratio = {b_name} / {a_name}, geometric mean over runs finished in both "
             f"(times under {FLOOR * 1000:g} ms counted as {FLOOR * 1000:g} ms)", ""]
    w = max([len(e) for e in cmp["engines"]] + [7])
    lines.append(f"{'engine'.ljust(w)}  pairs  geomean ratio              min      max")
    for e, s in cmp["engines"].items():
        lines.append(f"{e.ljust(w)}  {s['pairs']:5d}  {_ratio(s['geomean_ratio']).ljust(25)}  "
                     f"{s['min_ratio']:.3f}  {s['max_ratio']:.3f}")
    o = cmp["overall"]
    lines.append(f"{'all'.ljust(w)}  {o['pairs']:5d}  {_ratio(o['geomean_ratio'])}")
    if cmp["largest"]:
        lines += ["", "largest changes:"]
        for p in cmp["largest"]:
            lines.append(f"  {p['run']}: {p['a_s']:.4f} s -> {p['b_s']:.4f} s  {_ratio(p['ratio'])}")
    if cmp["status_changes"]:
        lines += ["", "status or cost changed:"]
        lines += [f"  {c['run']}: {c['a']} -> {c['b']}" for c in cmp["status_changes"]]
    for side, name in (("only_a", a_name), ("only_b", b_name)):
        if cmp[side]:
            lines.append(f"\n{len(cmp[side])} runs only in {name}: " + ", ".join(cmp[side][:5])
                         + (" ..." if len(cmp[side]) > 5 else ""))
    return "\n".join(lines)


def main(files: Sequence[str], as_json: bool = False, top: int = 10) -> int:
    """``bench compare A.json B.json``; exit 31 unless exactly two files are given."""
    from ..lang.errors import EXIT_BAD_OPTION

    if len(files) != 2:
        raise PuzzleError("bench compare needs two result files: A.json B.json", code=EXIT_BAD_OPTION)
    cmp = compare(load_records(files[0]), load_records(files[1]), top)
    print(json.dumps(cmp) if as_json else render(cmp, files[0], files[1]))
    return 0
