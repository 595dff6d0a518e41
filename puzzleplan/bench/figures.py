"""Every figure a bench result supports, drawn into one directory.

A result file says what it can show: runs with a ``history`` (GA best fitness per
generation) give the fitness-over-generations plot of the GA papers; GA runs on
instances with a known optimum give excess-% bars (GA best and mean against the
optimum, the ZPG paper's Table I as a picture); GA runs on constraint models give
success-% bars (the Skyscraper paper's Table III); bfs runs with ``layers`` give
frontier/closed sizes per layer (the Hua Rong Dao paper's Table I); every run with a
time and a cost is a point of cost against time. Figures whose data is absent are
skipped, so ``bench plot`` works on any suite.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..lang.errors import EXIT_BAD_OPTION, EXIT_OUTPUT, PuzzleError
from .plot import _plt, _save, layer_table, plot_cost_time

MAX_SERIES = 8   # lines per figure; more become unreadable


def _short(r: dict[str, Any]) -> str:
    label = str(r.get("id") or r.get("instance"))
    return label if len(label) <= 28 else label[:27] + "…"


def _groups(records: Sequence[dict[str, Any]], keep: Any) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if keep(r):
            key = f"{r.get('set', '')}: {_short(r)} {' '.join(r.get('option_args') or [])}".strip(": ")
            out.setdefault(key, []).append(r)
    return out


def plot_ga_fitness(records: Sequence[dict[str, Any]], path: str) -> int:
    """Best fitness per generation: the mean over runs (line) and the min-max band, per instance."""
    plt = _plt()
    groups = _groups(records, lambda r: isinstance(r.get("history"), list) and r["history"])
    if not groups:
        return 0
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for label, rs in list(groups.items())[:MAX_SERIES]:
        n = max(len(r["history"]) for r in rs)
        # a run that stopped early (solved) keeps its last value: it is the best it reached
        rows = [r["history"] + [r["history"][-1]] * (n - len(r["history"])) for r in rs]
        cols = list(zip(*rows))
        mean = [statistics.fmean(c) for c in cols]
        line, = ax.plot(range(n), mean, label=f"{label} ({len(rs)} runs)")
        ax.fill_between(range(n), [min(c) for c in cols], [max(c) for c in cols], alpha=0.15,
                        color=line.get_color())
    ax.set_xscale("symlog")
    ax.set_xlabel("generation")
    ax.set_ylabel("best fitness")
    ax.set_title("GA: best fitness per generation (mean over runs, min-max band)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    _save(fig, path)
    return len(groups)


def ga_excess_rows(records: Sequence[dict[str, Any]]) -> list[tuple[str, int, int, float, float, float]]:
    """(instance, optimum, runs, best excess %, mean excess %, % of runs at the optimum) per instance.

    A run without a plan counts as not at the optimum and is left out of the excess means.
    """
    groups = _groups(records, lambda r: r.get("engine") == "ga" and isinstance(r.get("expected"), int)
                     and r["expected"] > 0)
    rows = []
    for label, rs in groups.items():
        opt = rs[0]["expected"]
        costs = [r["cost"] for r in rs if isinstance(r.get("cost"), int)]
        ex = [100.0 * (c - opt) / opt for c in costs]
        rows.append((label, opt, len(rs), min(ex) if ex else float("nan"),
                     statistics.fmean(ex) if ex else float("nan"),
                     100.0 * sum(c == opt for c in costs) / len(rs)))
    return rows


def plot_ga_excess(records: Sequence[dict[str, Any]], path: str) -> int:
    rows = ga_excess_rows(records)
    if not rows:
        return 0
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(rows) + 2), 4.2))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r[3] for r in rows], width=0.4, label="GA best")
    ax.bar([x + 0.2 for x in xs], [r[4] for r in rows], width=0.4, label="GA mean")
    ax.set_xticks(list(xs), [r[0] for r in rows], rotation=60, ha="right", fontsize=7)
    top = max([r[4] for r in rows if r[4] == r[4]] + [r[3] for r in rows if r[3] == r[3]] + [0.0])
    ax.set_ylim(0, max(10.0, 1.2 * top))
    for x, r in zip(xs, rows):   # how many runs reached the optimum, above each pair of bars
        ax.annotate(f"{r[5]:.0f}% opt", (x, max(r[4] if r[4] == r[4] else 0.0, 0.0)), ha="center",
                    va="bottom", fontsize=7, xytext=(0, 3), textcoords="offset points")
    ax.set_ylabel("excess over the optimum (%)")
    ax.set_title("GA cost against the proven optimum")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend()
    _save(fig, path)
    return len(rows)


def plot_ga_success(records: Sequence[dict[str, Any]], path: str) -> int:
    """Success % per instance for GA runs whose instance has an expected verdict (constraint models)."""
    groups = _groups(records, lambda r: r.get("engine") == "ga" and r.get("expected") == 0)
    if not groups:
        return 0
    plt = _plt()
    labels = list(groups)
    pct = [100.0 * sum(r["status"] == "solved" for r in rs) / len(rs) for rs in groups.values()]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(labels) + 2), 4.2))
    ax.bar(range(len(labels)), pct)
    ax.set_xticks(range(len(labels)), labels, rotation=60, ha="right", fontsize=7)
    ax.set_ylim(0, 100)
    ax.set_ylabel("success (% of runs)")
    ax.set_title("GA success per instance")
    ax.grid(True, axis="y", alpha=0.3)
    _save(fig, path)
    return len(labels)


def plot_layers_many(records: Sequence[dict[str, Any]], path: str) -> int:
    """CLOSE and OPEN per layer (log), one colour per instance: the largest searches first."""
    seen: dict[str, dict[str, Any]] = {}
    for r in records:
        if isinstance(r.get("layers"), list) and len(r["layers"]) > 1:
            seen.setdefault(f"{_short(r)} {' '.join(r.get('option_args') or [])}".strip(), r)
    if not seen:
        return 0
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    chosen = sorted(seen.items(), key=lambda kv: -sum(kv[1]["layers"]))[:MAX_SERIES]
    for label, r in chosen:
        rows = layer_table(r["layers"])
        line, = ax.plot([x[0] for x in rows], [x[1] for x in rows], label=f"{label} closed")
        opened = [x for x in rows if x[2] > 0]
        ax.plot([x[0] for x in opened], [x[2] for x in opened], "--", color=line.get_color())
    ax.set_yscale("log")
    ax.set_xlabel("layer (cost); dashed: open (layer n+1)")
    ax.set_ylabel("states")
    ax.set_title("bfs: closed and open states per layer")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    _save(fig, path)
    return len(chosen)


def write_all(records: Sequence[dict[str, Any]], directory: str, fmt: str = "png") -> dict[str, int]:
    """Draw every figure the records support into ``directory``; {file: series drawn}."""
    d = Path(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise PuzzleError(f"cannot create the plot directory: {e.strerror}", directory,
                          code=EXIT_OUTPUT) from None
    if fmt not in ("png", "svg", "pdf"):
        raise PuzzleError(f"plot format must be png, svg or pdf, not {fmt!r}", code=EXIT_BAD_OPTION)
    out: dict[str, int] = {}
    for name, fn in (("ga-fitness", plot_ga_fitness), ("ga-excess", plot_ga_excess),
                     ("ga-success", plot_ga_success), ("layers", plot_layers_many)):
        n = fn(records, str(d / f"{name}.{fmt}"))
        if n:
            out[str(d / f"{name}.{fmt}")] = n
    try:
        out[str(d / f"cost-time.{fmt}")] = plot_cost_time(records, str(d / f"cost-time.{fmt}"),
                                                         title="cost against search time")
    except PuzzleError:
        pass   # no run with both a cost and a time: nothing to draw
    return out
