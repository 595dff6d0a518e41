"""``kind = "speed"`` suites: puzzleplan's engines against plain-Python baselines, in one process.

``[[speed]]`` sections time, for each metric of one instance, in this order:
a hand-written BFS for the puzzle (a file beside the suite, named by
``hand_written``: bench/hrd_baseline.py for Hua Rong Dao; see baselines.py), the
generic BFS over the reference interpreter (``baselines.reference_bfs``) and the
``bfs`` engine with each kernel.  Every timing is the best of ``repetitions`` runs after
``warmup`` runs (so numba compilation and first-touch costs are excluded; the
engine's ``time_s`` already excludes start-up).  Peak memory, never from a
timed run: the hand-written baseline and the engine get one extra run under
``tracemalloc`` (numpy buffers are traced, allocations inside compiled code
are not; tracing the reference interpreter slows it >20x, so that is off
unless ``reference_tracemalloc``); every solver gets one extra run in a fresh
interpreter whose peak RSS growth is reported (``rss_memory``, see
memprobe.py); the engine also reports its own accounting (``peak_mb``: state
table, parents, frontier).  ``expect`` figures are checked: a disagreement makes the suite
exit 20.

``[[enumerate]]`` sections time ``bfs`` with ``enumerate_all`` (every reachable
state), plus optional solve runs, against a figure quoted for another planner.
"""

from __future__ import annotations

import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import api
from ..lang.errors import PuzzleError
from ..solvers import Limits, Result
from .baselines import BaselineRun, load_hand_written, reference_bfs
from .memprobe import probe
from .suite import Suite, SuiteError
from .table import table

Progress = Callable[[str], None]

SPEED_KEYS = {"label", "model", "instance", "option", "metrics", "baselines", "hand_written", "kernels",
              "repetitions",
              "warmup", "reference_repetitions", "reference_tracemalloc", "rss_memory", "expect", "enumerate",
              "time_limit"}
ENUM_KEYS = {"label", "model", "instance", "options", "kernels", "repetitions", "warmup", "expect_reachable",
             "expect_cost", "compare", "solve", "time_limit"}


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class _Checks:
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def add(self, what: str, expected: Any, got: Any) -> bool:
        ok = expected == got
        self.items.append({"what": what, "expected": expected, "got": got, "ok": ok})
        return ok

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [c for c in self.items if not c["ok"]]


def _traced(fn: Callable[[], Any]) -> tuple[Any, float]:
    """Run ``fn`` under tracemalloc; return its value and the peak traced memory in MB."""
    was = tracemalloc.is_tracing()
    if not was:
        tracemalloc.start()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    value = fn()
    peak = tracemalloc.get_traced_memory()[1]
    if not was:
        tracemalloc.stop()
    return value, round((peak - before) / 2**20, 2)


def _spec(base: Path, instance: str) -> str:
    path, _, rid = instance.partition("#")
    p = Path(path)
    p = p if p.is_absolute() else base / p
    return f"{p}#{rid}" if rid else str(p)


def _best(times: list[float]) -> dict[str, float]:
    return {"best_s": round(min(times), 6), "median_s": round(statistics.median(times), 6),
            "runs": len(times)}


def run_speed(suite: Suite, *, quick: bool = False, time_limit: float | None = None,
              progress: Progress | None = _stderr) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict]]:
    data = suite.data
    defaults = {k: data[k] for k in ("repetitions", "warmup", "time_limit") if k in data}
    records: list[dict[str, Any]] = []
    report: dict[str, Any] = {"speed": [], "enumerate": []}
    checks = _Checks()
    say = progress or (lambda _m: None)
    for i, raw in enumerate(data.get("speed", [])):
        bad = set(raw) - SPEED_KEYS
        if bad:
            raise SuiteError(f"[[speed]] {i + 1}: unknown keys {', '.join(sorted(bad))}", str(suite.path))
        q = {k: v for k, v in (suite.quick if quick else {}).items() if k in SPEED_KEYS}
        sec = {**defaults, **raw, **q}
        if time_limit is not None:
            sec["time_limit"] = time_limit
        report["speed"].append(_speed_section(suite, sec, records, checks, say))
    for i, raw in enumerate(data.get("enumerate", [])):
        bad = set(raw) - ENUM_KEYS
        if bad:
            raise SuiteError(f"[[enumerate]] {i + 1}: unknown keys {', '.join(sorted(bad))}", str(suite.path))
        q = {k: v for k, v in (suite.quick if quick else {}).items() if k in ENUM_KEYS}
        sec = {**defaults, **raw, **q}
        if time_limit is not None:
            sec["time_limit"] = time_limit
        report["enumerate"].append(_enum_section(suite, sec, records, checks, say))
    return records, report, checks.items


# ------------------------------------------------------------------------------------------
# [[speed]]


class _Recorder:
    """Appends one JSON record per timed run, tagged with its section and metric/options."""

    def __init__(self, records: list[dict[str, Any]], **tags: Any):
        self.records = records
        self.tags = tags

    def __call__(self, solver: str, kernel: str | None, phase: str, rep: int, time_s: float, cost: Any,
                 expanded: int, generated: int, **extra: Any) -> None:
        self.records.append({**self.tags, "solver": solver, "kernel": kernel, "phase": phase,
                             "repetition": rep, "time_s": round(time_s, 6), "cost": cost,
                             "expanded": expanded, "generated": generated, **extra})


def _baseline_runs(rec: _Recorder, say: Progress, what: str, name: str, fn: Callable[[], BaselineRun], n: int,
                   warmups: int, memory: bool, phase: str = "solve") -> tuple[BaselineRun, dict[str, Any]]:
    for _ in range(warmups):
        fn()
    times = []
    run: BaselineRun | None = None
    for r in range(n):
        run = fn()
        times.append(run.time_s)
        rec(name, None, phase, r, run.time_s, run.cost, run.expanded, run.generated, visited=run.visited)
        say(f"  {what} {name} {phase} #{r + 1}: {run.time_s:.3f} s, cost {run.cost}, "
            f"{run.expanded:,} expanded")
    assert run is not None
    best = min(times)
    row = {"solver": name, "kernel": None, **_best(times), "cost": run.cost, "expanded": run.expanded,
           "generated": run.generated, "visited": run.visited,
           "states_per_s": round(run.expanded / best) if best > 0 else None}
    if memory:
        _, mb = _traced(fn)
        row["tracemalloc_peak_mb"] = mb
    return run, row


def _speed_section(suite: Suite, sec: dict[str, Any], records: list[dict[str, Any]], checks: _Checks,
                   say: Progress) -> dict[str, Any]:
    label = sec.get("label", sec["instance"])
    out: dict[str, Any] = {"label": label, "instance": sec["instance"], "metrics": {}}
    for metric in sec.get("metrics", ["steps"]):
        out["metrics"][metric] = _speed_metric(suite, sec, label, metric, records, checks, say)
    return out


def _speed_metric(suite: Suite, sec: dict[str, Any], label: str, metric: str, records: list[dict[str, Any]],
                  checks: _Checks, say: Progress) -> dict[str, Any]:
    spec = _spec(suite.path.parent, sec["instance"])
    option = sec.get("option", "metric")
    baselines = sec.get("baselines", ["hand-written", "reference"])
    kernels = sec.get("kernels", ["numba", "numpy"])
    reps = int(sec.get("repetitions", 5))
    warm = int(sec.get("warmup", 1))
    ref_reps = int(sec.get("reference_repetitions", min(reps, 2)))
    ref_mem = bool(sec.get("reference_tracemalloc", False))
    rss = bool(sec.get("rss_memory", True))
    expect = dict(sec.get("expect", {}))
    do_enum = bool(sec.get("enumerate", True)) and "reachable" in expect
    limits = Limits(sec.get("time_limit"))
    loaded = api.load_task(sec["model"], spec, [f"{option}={metric}"])
    want = expect.get(metric)
    rows: dict[str, dict[str, Any]] = {}
    rec = _Recorder(records, section=label, metric=metric)
    what = f"{label} {metric}"
    say(f"{label}: metric {metric}")
    hand = _hand_written_file(suite, sec) if "hand-written" in baselines else None
    if hand is not None:
        mod = load_hand_written(hand)
        board = mod.start_board(loaded)
        run, row = _baseline_runs(rec, say, what, "hand-written", lambda: mod.bfs(board, metric), reps, warm,
                                  True)
        checks.add(f"{what}: hand-written BFS optimum", want, run.cost)
        checks.add(f"{what}: hand-written plan length = cost", run.cost, len(run.plan))
        rows["hand-written"] = row
        if do_enum:
            run, row = _baseline_runs(rec, say, what, "hand-written",
                                      lambda: mod.bfs(board, metric, stop_at_goal=False), reps, 0, False,
                                      phase="enumerate")
            checks.add(f"{what}: hand-written reachable positions", expect["reachable"], run.visited)
            rows["hand-written enumerate"] = row
    if "reference" in baselines:
        task = loaded.task
        run, row = _baseline_runs(rec, say, what, "reference", lambda: reference_bfs(task), ref_reps, 0,
                                  ref_mem)
        checks.add(f"{what}: reference-interpreter BFS optimum", want, run.cost)
        rows["reference"] = row
    for kernel in kernels:
        name = f"bfs/{kernel}"
        res, row = _engine_runs(loaded, kernel, reps, warm, limits, {}, rec, say, f"{what} {name}")
        checks.add(f"{what}: bfs ({kernel}) optimum", want, res.cost)
        checks.add(f"{what}: bfs ({kernel}) plan verified", True, bool(res.stats.get("verified")))
        rows[name] = row
        if do_enum:
            res, row = _engine_runs(loaded, kernel, reps, 0, limits, {"enumerate_all": True}, rec, say,
                                    f"{what} {name} enumerate", memory=False)
            checks.add(f"{what}: bfs ({kernel}) reachable positions", expect["reachable"],
                       res.stats.get("configurations"))
            row["reachable"] = res.stats.get("reachable")
            row["configurations"] = res.stats.get("configurations")
            rows[f"{name} enumerate"] = row
    if rss:
        for name, row in rows.items():
            if "enumerate" in name:
                continue
            say(f"  {what} {name}: peak RSS in a fresh process")
            solver = f"{name}:{hand}" if name == "hand-written" else name
            got = probe(solver, sec["model"], spec, [f"{option}={metric}"])
            row["rss_growth_mb"] = got.get("rss_growth_mb") if got else None
            if got and got.get("cost") is not None:
                checks.add(f"{what}: {name} optimum (memory probe)", want, got["cost"])
    ratios: dict[str, float | None] = {}
    for b in ("hand-written", "reference", "hand-written enumerate"):
        for kernel in kernels:
            eng = f"bfs/{kernel}" + (" enumerate" if b.endswith("enumerate") else "")
            if b in rows and eng in rows and rows[eng]["best_s"] > 0:
                ratios[f"{b.split()[0]} / {eng}"] = round(rows[b]["best_s"] / rows[eng]["best_s"], 2)
    return {"expected": want, "rows": rows, "ratios": ratios}


def _hand_written_file(suite: Suite, sec: dict[str, Any]) -> Path:
    """The ``hand_written`` file of a section listing the ``hand-written`` baseline, beside the suite."""
    name = sec.get("hand_written")
    if not name:
        raise SuiteError(f"[[speed]] {sec.get('label', sec['instance'])}: baseline \"hand-written\" needs "
                         "hand_written = FILE (a .py file beside the suite, e.g. hrd_baseline.py)",
                         str(suite.path))
    p = Path(name)
    return p if p.is_absolute() else suite.path.parent / p


def _engine_runs(loaded: api.Loaded, kernel: str, reps: int, warm: int, limits: Limits,
                 engine_opts: dict[str, Any], rec: Callable[..., None], say: Progress, what: str,
                 engine: str = "bfs", memory: bool = True) -> tuple[Result, dict[str, Any]]:
    t0 = time.perf_counter()
    loaded.kernel(kernel)
    build_s = time.perf_counter() - t0
    for _ in range(warm):
        api.solve(loaded, engine, limits, kernel, **engine_opts)
    times = []
    res: Result | None = None
    phase = "enumerate" if engine_opts.get("enumerate_all") else "solve"
    for r in range(reps):
        res = api.solve(loaded, engine, limits, kernel, **engine_opts)
        st = res.stats
        times.append(st["time_s"])
        rec(f"{engine}/{kernel}", kernel, phase, r, st["time_s"], res.cost, st.get("expanded", 0),
            st.get("generated", 0), peak_mb=st.get("peak_mb"), status=res.status, verified=st.get("verified"),
            reachable=st.get("reachable"))
        say(f"  {what} #{r + 1}: {st['time_s']:.4f} s, {res.status} {res.cost}, "
            f"{st.get('expanded', 0):,} expanded")
    assert res is not None
    st = res.stats
    best = min(times)
    row = {"solver": f"{engine}/{kernel}", "kernel": kernel, **_best(times), "cost": res.cost,
           "status": res.status, "expanded": st.get("expanded"), "generated": st.get("generated"),
           "states": st.get("states"),
           "states_per_s": round(st.get("expanded", 0) / best) if best > 0 else None,
           "peak_mb": st.get("peak_mb"), "kernel_build_s": round(build_s, 3)}
    if memory:
        _, mb = _traced(lambda: api.solve(loaded, engine, limits, kernel, **engine_opts))
        row["tracemalloc_peak_mb"] = mb
    return res, row


# ------------------------------------------------------------------------------------------
# [[enumerate]]


def _enum_section(suite: Suite, sec: dict[str, Any], records: list[dict[str, Any]], checks: _Checks,
                  say: Progress) -> dict[str, Any]:
    spec = _spec(suite.path.parent, sec["instance"])
    label = sec.get("label", sec["instance"])
    reps = int(sec.get("repetitions", 5))
    warm = int(sec.get("warmup", 1))
    kernels = sec.get("kernels", ["numba"])
    limits = Limits(sec.get("time_limit"))
    out: dict[str, Any] = {"label": label, "instance": sec["instance"], "rows": {},
                           "compare": sec.get("compare")}

    def rec_for(opts: list[str]) -> _Recorder:
        return _Recorder(records, section=label, options=opts)

    opts = list(sec.get("options", []))
    loaded = api.load_task(sec["model"], spec, opts)
    say(f"{label}")
    for kernel in kernels:
        res, row = _engine_runs(loaded, kernel, reps, warm, limits, {"enumerate_all": True}, rec_for(opts),
                                say, f"{label} bfs/{kernel} enumerate")
        row["reachable"] = res.stats.get("reachable")
        if "expect_reachable" in sec:
            checks.add(f"{label}: reachable states ({kernel})", sec["expect_reachable"],
                       res.stats.get("reachable"))
        if "expect_cost" in sec:
            checks.add(f"{label}: optimum found while enumerating ({kernel})", sec["expect_cost"], res.cost)
        out["rows"][f"bfs/{kernel} enumerate"] = row
    for item in sec.get("solve", []):
        engine = item.get("engine", "bfs")
        o = list(item.get("options", opts))
        ld = loaded if o == opts else api.load_task(sec["model"], spec, o)
        for kernel in item.get("kernels", kernels[:1]):
            try:
                res, row = _engine_runs(ld, kernel, reps, warm, limits, {}, rec_for(o), say,
                                        f"{label} {engine}/{kernel} {' '.join(o)}", engine=engine)
            except PuzzleError as e:
                checks.add(f"{label}: {engine} {' '.join(o)} ran", "ok", str(e))
                continue
            row["options"] = o
            if "expect_cost" in sec:
                checks.add(f"{label}: {engine} ({kernel}) {' '.join(o)} optimum", sec["expect_cost"],
                           res.cost)
            out["rows"][f"{engine}/{kernel} {' '.join(o)}".strip()] = row
    return out


# ------------------------------------------------------------------------------------------
# text


def render(report: dict[str, Any], checks: list[dict[str, Any]]) -> str:
    parts = []
    heads = ["solver", "best_s", "median_s", "cost", "expanded", "generated", "states/s", "peak_MB(engine)",
             "peak_MB(tracemalloc)", "peak_MB(RSS growth)"]
    for sec in report["speed"]:
        for metric, m in sec["metrics"].items():
            rows = [[name, r["best_s"], r["median_s"], r.get("cost"), r.get("expanded"), r.get("generated"),
                     r.get("states_per_s"), r.get("peak_mb"), r.get("tracemalloc_peak_mb"),
                     r.get("rss_growth_mb")]
                    for name, r in m["rows"].items()]
            runs = next(iter(m["rows"].values()))["runs"]
            title = f"{sec['label']} -- metric {metric} (expected {m['expected']}), best of {runs}"
            parts.append(table(heads, rows, title=title))
            if m["ratios"]:
                parts.append("speed ratio (baseline time / puzzleplan time): "
                             + "; ".join(f"{k} = {v:.2f}x" for k, v in m["ratios"].items()))
    for sec in report["enumerate"]:
        rows = [[name, r["best_s"], r["median_s"], r.get("cost"), r.get("expanded"), r.get("generated"),
                 r.get("states_per_s"), r.get("peak_mb"), r.get("tracemalloc_peak_mb"),
                     r.get("rss_growth_mb")]
                for name, r in sec["rows"].items()]
        parts.append(table(heads, rows, title=sec["label"]))
        cmp = sec.get("compare")
        if cmp:
            first = next(iter(sec["rows"].values()))
            ratio = cmp["time_s"] / first["best_s"] if first["best_s"] else float("nan")
            parts.append(f"compare: {cmp.get('label', 'reference')} {cmp['time_s']} s "
                         f"(quoted, not measured here) vs {first['best_s']:.3f} s = {ratio:.1f}x")
    failed = [c for c in checks if not c["ok"]]
    parts.append(f"checks: {len(checks) - len(failed)} of {len(checks)} hold"
                 + "".join(f"\n  FAILED {c['what']}: expected {c['expected']}, got {c['got']}"
                           for c in failed))
    return "\n\n".join(parts)
