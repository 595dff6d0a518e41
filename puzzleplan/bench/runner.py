"""Run a ``solve`` suite: every (instance, option set, engine, repetition) -> one JSON record."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from .. import api
from ..lang.errors import PuzzleError
from ..solvers import Limits, Result, registry, uses_macro
from ..verify import reference
from .suite import Instance, RunSet, Suite, interpret_expected
from .table import table

Progress = Callable[[str], None]
Unit = tuple[RunSet, Instance, list[str], list[str]]

EXIT_OK = 0
EXIT_UNDECIDED = 12
EXIT_MISMATCH = 20


def stderr_progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def judge(expected: Any, result: Result | None) -> tuple[bool | None, str]:
    """Does a result agree with the expected figure?  None = nothing to decide (or undecided)."""
    if result is None:
        return None, "error"
    if result.plan is not None and not result.stats.get("verified", False):
        return False, "plan rejected by the reference checker"
    if expected is None:
        return None, ""
    st = result.status
    if st in ("limit", "unknown"):
        return None, f"undecided ({st})"
    if expected == "unsolvable":
        if st == "unsolvable":
            return True, ""
        return False, f"expected unsolvable, engine found cost {result.cost}"
    if st == "unsolvable":
        return False, f"expected {expected}, engine says unsolvable"
    if result.cost == expected:
        return True, ""
    if result.optimal:
        return False, f"optimum {result.cost} differs from the expected {expected}"
    if result.cost is not None and result.cost < expected:
        return False, f"cost {result.cost} is below the expected optimum {expected}"
    return None, f"solved with cost {result.cost} (engine claims no optimality)"


def run_suite(suite: Suite, *, time_limit: float | None = None, engines: list[str] | None = None,
              select: str | None = None, progress: Progress | None = stderr_progress,
              jobs: int = 1, max_states: int | None = None, max_memory_mb: float | None = None,
              model_options: list[str] | None = None, engine_options: dict[str, dict[str, Any]] | None = None,
              checkpoint: Callable[[list[dict[str, Any]]], None] | None = None) -> list[dict[str, Any]]:
    """Every unit (set, instance, option set) in order; with ``jobs`` > 1 units run in that many
    processes (records keep the suite's order; times then share the machine, say so when reporting).

    ``select``: instances whose id or spec contains the text (a comma: any of several texts).
    ``max_states``, ``max_memory_mb``, ``model_options`` (``-O`` pairs added to every option set) and
    ``engine_options`` (per engine, over the suite's) override the suite; ``checkpoint`` gets the
    records so far after every unit, so a long run can be saved as it goes."""
    units: list[Unit] = []
    for rs in suite.sets:
        if max_states is not None:
            rs.max_states = max_states
        if max_memory_mb is not None:
            rs.max_memory_mb = max_memory_mb
        for name, kw in (engine_options or {}).items():
            rs.engine_options[name] = {**rs.engine_options.get(name, {}), **kw}
        eng = engines or rs.engines
        for name in eng:
            api.check_engine(name)
        units += [(rs, inst, [*opts, *inst.options, *(model_options or [])], eng)
                  for inst in rs.instances if _selected(inst, select) for opts in rs.options]
    total = sum(len(eng) * rs.reps for rs, _, _, eng in units)
    counter = [0]
    records: list[dict[str, Any]] = []

    def done(recs: list[dict[str, Any]], report: bool) -> None:
        records.extend(recs)
        for r in recs:
            if report:
                counter[0] += 1
                if progress:
                    progress(f"[{counter[0]}/{total}] {_line(r)}")
        if checkpoint:
            checkpoint(records)

    if jobs <= 1 or len(units) <= 1 or any(rs.give_up for rs in suite.sets):
        misses: dict[tuple[str, str], int] = {}     # (set, engine) -> runs in a row not proven
        for rs, inst, opts, eng in units:
            if rs.give_up:
                eng = [e for e in eng if misses.get((rs.label, e), 0) < rs.give_up]
                if not eng:
                    continue
            if rs.isolate:
                recs = _isolated(suite, rs, inst, opts, eng, time_limit, total)
            else:
                recs = _run_instance(suite, rs, inst, opts, eng, time_limit, progress, counter, total)
            for e in eng:   # a success proves the expected answer; a plan of that cost alone does not
                ok = all(r["match"] is True and r["status"] in ("optimal", "unsolvable")
                         for r in recs if r["engine"] == e)
                misses[(rs.label, e)] = 0 if ok else misses.get((rs.label, e), 0) + 1
            done(recs, rs.isolate)
        return records
    from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor

    with ProcessPoolExecutor(max_workers=jobs) as pool, ThreadPoolExecutor(max_workers=jobs) as threads:
        futures: list[Future[list[dict[str, Any]]]] = [
            threads.submit(_isolated, suite, rs, inst, opts, eng, time_limit, total) if rs.isolate
            else pool.submit(_run_instance, suite, rs, inst, opts, eng, time_limit, None, [0], total)
            for rs, inst, opts, eng in units]
        for fut in futures:
            done(fut.result(), True)
    return records


def _isolated(suite: Suite, rs: RunSet, inst: Instance, opts: list[str], engines: list[str],
              time_limit: float | None, total: int) -> list[dict[str, Any]]:
    """One unit in a fresh interpreter (``isolate = true``): its ``rss_peak_mb`` is its own, and a
    process killed for memory ends this unit's records only (status "error")."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        try:
            return pool.submit(_own_process_unit, suite, rs, inst, opts, engines, time_limit, total).result()
        except BrokenProcessPool:
            return _error_records(suite, rs, inst, opts, engines, "the process died (killed for memory?)")


def _own_process_unit(suite: Suite, rs: RunSet, inst: Instance, opts: list[str], engines: list[str],
                      time_limit: float | None, total: int) -> list[dict[str, Any]]:
    """The child's side of ``_isolated``.  ``ru_maxrss`` survives ``exec`` on Linux (a child of a
    large parent starts at the parent's peak), so the peak is read from this process's own memory
    map (``VmHWM``) where there is one."""
    from .memprobe import status_mb

    recs = _run_instance(suite, rs, inst, opts, engines, time_limit, None, [0], total)
    peak = status_mb("VmHWM")
    for r in recs:
        if peak is not None and "rss_peak_mb" in r:
            r["rss_peak_mb"] = round(peak, 1)
    return recs


def _base(suite: Suite, rs: RunSet, inst: Instance, opts: list[str]) -> dict[str, Any]:
    base: dict[str, Any] = {
        "suite": suite.name, "set": rs.label, "model": rs.model, "instance": f"{inst.file}#{inst.id}",
        "id": inst.id, "file": inst.file, "option_args": list(opts), "expected_raw": inst.expected_raw,
    }
    if inst.ref:
        base["ref"] = dict(inst.ref)
    return base


def _error_records(suite: Suite, rs: RunSet, inst: Instance, opts: list[str], engines: list[str],
                   message: str) -> list[dict[str, Any]]:
    return [{**_base(suite, rs, inst, opts), "engine": engine, "kernel": rs.kernel, "repetition": rep,
             "status": "error", "cost": None, "optimal": False, "expected": None, "match": None,
             "note": "error", "message": message}
            for engine in engines for rep in range(rs.reps)]


def _no_kernel(engine: str, task: Any, options: dict[str, Any]) -> bool:
    """Whether the engine builds no full kernel of its own: macro walking, or the task alone."""
    mode = registry.get(engine).mode(registry.TRANSITION)
    return uses_macro(engine, task, options) or (mode is not None and mode.kernel == "task")


def stopped_by(status: str, stats: dict[str, Any], limits: Limits) -> str | None:
    """Which limit ended a run with status "limit" (engines report only that one did): the state
    count at its cap, else the search time at its limit, else the memory budget."""
    if status != "limit":
        return None
    if limits.max_states and (stats.get("states") or 0) >= limits.max_states:
        return "states"
    if limits.time_s and (stats.get("time_s") or 0) >= limits.time_s - 1:
        return "time"
    return "memory" if limits.max_mb else None


def layer_figures(layers: list[int] | None) -> dict[str, Any]:
    """bfs layers: the deepest one's size and the growth per layer over the last ten (geometric
    mean), which says how far a search that stopped was from fitting."""
    if not layers:
        return {}
    out: dict[str, Any] = {"last_layer": layers[-1]}
    if len(layers) > 11 and layers[-11]:
        out["layer_growth"] = round((layers[-1] / layers[-11]) ** 0.1, 4)
    return out


def _line(rec: dict[str, Any]) -> str:
    exp = rec.get("expected")
    cost = rec["cost"] if rec["cost"] is not None else ""
    tm = f"{rec['time_s']:.3f}s" if rec.get("time_s") is not None else ""
    seed = f" seed {rec['seed']}" if rec.get("seed") is not None else ""
    why = rec.get("note") or ""
    return (f"{rec['id']} {rec['engine']}{seed} {' '.join(rec['option_args'])}: {rec['status']} {cost} "
            f"(expected {exp if exp is not None else '-'}) {_verdict(rec['match'])} {tm}"
            + (f" [{why}]" if why and rec["match"] is not True else ""))


def _engine_kwargs(rs: RunSet, engine: str, task: Any, seed: int | None,
                   expected: Any = None) -> dict[str, Any]:
    """The suite's engine options, plus the run's seed where the engine takes one.

    The value ``"@expected"`` stands for the instance's expected optimum (``target`` of the GA:
    a run stops when it reaches the optimum, as the ZPG paper's Table II counts evaluations);
    without an integer optimum the option is left at the engine's default."""
    kw: dict[str, Any] = {}
    for k, v in rs.engine_options.get(engine, {}).items():
        if v != "@expected":
            kw[k] = v
        elif isinstance(expected, int):
            kw[k] = expected
    return kw if seed is None else api.with_seed(engine, task, kw, seed)


def _selected(inst: Instance, select: str | None) -> bool:
    """``-k``: the id or spec contains one of the comma-separated texts; ``TEXT$``: the id ends with
    it (``level=1$`` is level 1 only, not 10-19)."""
    if select is None:
        return True
    for s in select.split(","):
        if s.endswith("$") and len(s) > 1 and inst.id.endswith(s[:-1]):
            return True
        if s and not s.endswith("$") and (s in inst.id or s in inst.spec):
            return True
    return False


def _run_instance(suite: Suite, rs: RunSet, inst: Instance, opts: list[str], engines: list[str],
                  time_limit: float | None, progress: Progress | None, counter: list[int],
                  total: int) -> list[dict[str, Any]]:
    base = _base(suite, rs, inst, opts)
    out: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    try:
        loaded = api.load_task(rs.model, inst.spec, opts)
        constraint = api.is_constraint_task(loaded.task)
        prepare_s = time.perf_counter() - t0
        # a constraint model has no start state; its "cost" is 0 for a solution (expected 0 = solvable)
        start_is_goal = None if constraint else reference.is_goal(loaded.task, loaded.task.init)
        expected, note = interpret_expected(inst.expected_raw, start_is_goal, rs.zero_means_unsolvable)
        t1 = time.perf_counter()
        # macro-walking engines compile their own sub-kernels (api.solve), and engines that read the
        # task alone (fd, pdr) none: for them the full kernel would be built (minutes) and unused
        if not constraint and not all(_no_kernel(e, loaded.task, rs.engine_options.get(e, {}))
                                      for e in engines):
            loaded.kernel(rs.kernel)
        kernel_s = time.perf_counter() - t1
    except PuzzleError as e:
        for engine in engines:
            for rep in range(rs.reps):
                counter[0] += 1
                rec = {**base, "engine": engine, "kernel": rs.kernel, "repetition": rep, "status": "error",
                       "cost": None, "optimal": False, "expected": None, "match": None, "note": "error",
                       "message": str(e)}
                out.append(rec)
                if progress:
                    progress(f"[{counter[0]}/{total}] {inst.id} {engine}: ERROR {e}")
        return out
    base.update(options=dict(loaded.options), expected=expected, expected_note=note,
                start_is_goal=start_is_goal, prepare_s=round(prepare_s, 4), kernel_s=round(kernel_s, 4))
    limit = time_limit if time_limit is not None else rs.time_limit
    limits = Limits(limit, rs.max_states, max_mb=rs.max_memory_mb)
    for engine in engines:
        t_w = time.perf_counter()
        for _ in range(rs.warmup):
            try:
                api.solve(loaded, engine, limits, rs.kernel,
                          **_engine_kwargs(rs, engine, loaded.task, rs.seed_of(0), expected))
            except PuzzleError:
                break
        warmup_s = time.perf_counter() - t_w
        for rep in range(rs.reps):
            counter[0] += 1
            seed = rs.seed_of(rep)
            t2 = time.perf_counter()
            result: Result | None
            try:
                result = api.solve(loaded, engine, limits, rs.kernel,
                                   **_engine_kwargs(rs, engine, loaded.task, seed, expected))
                message = result.message
            except PuzzleError as e:
                result, message = None, str(e)
            wall = time.perf_counter() - t2
            match, why = judge(expected, result)
            st = result.stats if result else {}
            rec = {
                **base, "engine": engine, "kernel": st.get("kernel", rs.kernel), "repetition": rep,
                "status": result.status if result else "error",
                "cost": result.cost if result else None,
                "optimal": bool(result and result.optimal),
                "match": match, "note": why,
                "time_s": st.get("time_s"), "expanded": st.get("expanded"), "generated": st.get("generated"),
                "states": st.get("states"), "peak_mb": st.get("peak_mb"),
                "rss_peak_mb": st.get("rss_peak_mb"),
                "verified": st.get("verified"),
                "plan_steps": len(result.plan) if result and result.plan is not None else None,
                "solve_wall_s": round(wall, 4), "warmup_s": round(warmup_s, 4) if rep == 0 else 0.0,
                "time_limit_s": limit, "max_states": rs.max_states, "max_memory_mb": rs.max_memory_mb,
                "stopped_by": stopped_by(result.status, st, limits) if result else None,
                "proof": result.proof if result else "", "message": message,
                "seed": seed,
            }
            # engine-specific figures the plots and tables use, where the engine reports them
            for key in ("evaluations", "generations", "best_fitness", "history", "layers", "preset",
                        "evaluations_to_best", "best_cost_by_generation", "lower_bound", "conflicts",
                        "solver_calls"):
                if key in st:
                    rec[key] = st[key]
            rec.update(layer_figures(st.get("layers")))
            if result is not None and hasattr(result, "solutions") and result.solutions is not None:
                rec["solutions"] = result.solutions
            if rs.keep_plan and result is not None and result.plan is not None:
                rec["plan"] = api.plan_labels(loaded.task, result.plan)
            out.append(rec)
            if progress:
                progress(f"[{counter[0]}/{total}] {_line(rec)}")
    return out


# ------------------------------------------------------------------------------------------
# summaries


def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(records)
    matched = [r for r in records if r["match"] is True]
    mismatched = [r for r in records if r["match"] is False]
    undecided = [r for r in records if r["match"] is None and r.get("expected") is not None]
    errors = [r for r in records if r["status"] == "error"]
    no_expect = [r for r in records if r.get("expected") is None and r["status"] != "error"]
    statuses: dict[str, int] = {}
    for r in records:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    return {
        "runs": n,
        "instances": len({(r["instance"], tuple(r["option_args"])) for r in records}),
        "matched": len(matched),
        "mismatched": len(mismatched),
        "undecided": len(undecided),
        "errors": len(errors),
        "without_expected": len(no_expect),
        "statuses": statuses,
        "mismatch_ids": sorted({r["instance"] for r in mismatched}),
        "undecided_ids": sorted({r["instance"] for r in undecided}),
        "error_ids": sorted({r["instance"] for r in errors}),
        "search_time_s": round(sum(r.get("time_s") or 0 for r in records), 3),
        "prepare_time_s": round(sum(r.get("prepare_s") or 0 for r in _first_rep(records)), 3),
        "kernel_time_s": round(sum(r.get("kernel_s") or 0 for r in _first_rep(records)), 3),
        "warmup_time_s": round(sum(r.get("warmup_s") or 0 for r in records), 3),
        "notes": sorted({f"{r['instance']}: {r['expected_note']}" for r in records
                         if r.get("expected_note")}),
    }


def _first_rep(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[tuple[str, tuple[str, ...]]] = set()
    out = []
    for r in records:
        k = (r["instance"], tuple(r["option_args"]))
        if k not in seen:
            seen.add(k)
            out.append(r)
    return out


def exit_status(summary: dict[str, Any]) -> int:
    if summary["mismatched"]:
        return EXIT_MISMATCH
    if summary["undecided"] or summary["errors"]:
        return EXIT_UNDECIDED
    return EXIT_OK


def render(records: list[dict[str, Any]], summary: dict[str, Any], verbose: bool = False) -> str:
    parts = []
    if verbose or len(records) <= 40:
        rows = [[r["instance"], r["engine"], " ".join(r["option_args"]), r["repetition"], r["status"],
                 r["cost"], r.get("expected"), _verdict(r["match"]), r.get("time_s"), r.get("expanded"),
                 r.get("peak_mb")]
                for r in records]
        parts.append(table(["instance", "engine", "options", "rep", "status", "cost", "expected", "match",
                            "time_s", "expanded", "peak_mb"], rows))
    groups: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault((r["set"], r["file"], r["engine"], " ".join(r["option_args"])), []).append(r)
    rows = []
    for (label, f, engine, opts), rs in groups.items():
        times = [r["time_s"] for r in rs if r.get("time_s") is not None]
        rows.append([label, f, engine, opts, len(rs), sum(r["match"] is True for r in rs),
                     sum(r["match"] is False for r in rs),
                     sum(r["match"] is None for r in rs), round(sum(times), 3) if times else None,
                     round(max(times), 3) if times else None,
                     round(sum(r.get("prepare_s") or 0 for r in _first_rep(rs)), 2)])
    parts.append(table(["set", "file", "engine", "options", "runs", "matched", "mismatched", "undecided",
                        "search_s", "max_s", "prepare_s"], rows, title="by set, file, engine and options"))
    s = summary
    lines = [f"runs: {s['runs']} ({s['instances']} instance/option pairs); matched {s['matched']}, "
             f"mismatched {s['mismatched']}, undecided {s['undecided']}, errors {s['errors']}, "
             f"no expected value {s['without_expected']}",
             "statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(s["statuses"].items())),
             f"search time {s['search_time_s']:.2f} s; load+ground {s['prepare_time_s']:.2f} s; "
             f"kernel build/compile {s['kernel_time_s']:.2f} s; "
             f"untimed warm-up runs {s['warmup_time_s']:.2f} s"]
    if s["mismatch_ids"]:
        lines.append("MISMATCH: " + ", ".join(s["mismatch_ids"]))
        for r in records:
            if r["match"] is False:
                lines.append(f"  {r['instance']} {r['engine']} {' '.join(r['option_args'])}: {r['note']}")
    if s["undecided_ids"]:
        lines.append("undecided: " + ", ".join(s["undecided_ids"]))
    if s["error_ids"]:
        lines.append("errors: " + ", ".join(s["error_ids"]))
        for r in records:
            if r["status"] == "error":
                lines.append(f"  {r['instance']}: {r.get('message')}")
    for note in s["notes"]:
        lines.append("note: " + note)
    parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _verdict(m: bool | None) -> str:
    return {True: "ok", False: "MISMATCH", None: "-"}[m]
