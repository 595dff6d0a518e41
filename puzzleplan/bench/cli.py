"""`puzzleplan bench` sub-command (suites of instances x engines -> JSON + a plain-text table).

Exit codes: 0 every decided result matches its expected value (and every
check of a speed suite holds); 20 some result disagrees with its expected
value (or a plan failed the reference checker, or a speed check failed);
12 nothing disagrees but some run hit a limit or failed to load; 31 bad
suite file or argument.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..lang.errors import EXIT_BAD_OPTION, PuzzleError
from ..solvers.result import positive
from . import runner, speed
from .env import environment
from .suite import apply_quick, available, check_tables, load_suite
from .table import render_specs

FORMAT = "puzzleplan-bench/1"


_positive_float = positive(float)


def add_bench_parser(sub: Any) -> None:
    names = ", ".join(available()) or "see bench/"
    b = sub.add_parser("bench", help="run a benchmark suite: JSON records + a table",
                       description=f"Run a benchmark suite (bundled: {names}; or a path to a .toml file).")
    b.add_argument("suite", nargs="?", help="suite name from bench/ (e.g. klotski, hrd-speed, sliding) or a "
                                            ".toml file")
    b.add_argument("files", nargs="*", metavar="FILE",
                   help="with SUITE = compare: two result files A.json B.json (geometric-mean time ratios); "
                        "with SUITE = plot: one result file, drawn as cost against time (-o FIG.png); "
                        "with SUITE = table: result files whose records are rendered as the suite's "
                        "Markdown tables (several files: their records joined)")
    b.add_argument("--json", action="store_true", help="compare: print the comparison as JSON")
    b.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="JSON output file (default results/SUITE-DATE.json)")
    b.add_argument("--time-limit", type=_positive_float, metavar="S",
                   help="search time limit per run in seconds (overrides the suite)")
    b.add_argument("--quick", action="store_true",
                   help="a reduced run: fewer instances and repetitions, as the suite's [quick] table says")
    b.add_argument("--engines", metavar="E1,E2",
                   help="solve suites: run these engines instead of the suite's")
    b.add_argument("-k", dest="select", metavar="TEXT",
                   help="solve suites: only instances whose id (or file) contains TEXT (A,B: any of them)")
    b.add_argument("-O", dest="model_options", action="append", metavar="KEY=VALUE",
                   help="solve suites: a model option added to every option set (repeatable)")
    b.add_argument("-E", dest="engine_options", action="append", metavar="KEY=VALUE",
                   help="solve suites: an engine option for every engine run (repeatable)")
    b.add_argument("--max-states", type=int, metavar="N",
                   help="solve suites: stored-state limit per run (overrides the suite)")
    b.add_argument("--max-memory", type=_positive_float, metavar="MB",
                   help="solve suites: MiB of search data per run, the engine's own accounting "
                        "(overrides the suite's max_memory_mb)")
    b.add_argument("-v", "--verbose", action="store_true", help="print one table row per run")
    b.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    b.add_argument("--list", action="store_true", help="list the suites found in bench/ and exit")
    b.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                   help="solve suites: run instances in N processes (times then share the machine)")
    b.add_argument("--plots", metavar="DIR",
                   help="also draw every figure the results support into DIR (needs matplotlib)")
    b.add_argument("--spec", metavar="SUITE",
                   help="table: take the [[table]] specs from this suite instead of the result file's")


def run_bench(args: argparse.Namespace) -> int:
    if args.list:
        for name in available():
            s = load_suite(name)
            print(f"{name}: {s.description}")
        return 0
    if not args.suite:
        raise PuzzleError("bench needs a SUITE (or --list)", code=EXIT_BAD_OPTION)
    if args.suite == "compare":
        from .compare import main as compare_main

        return compare_main(args.files, as_json=args.json)
    if args.suite == "plot":
        from .plot import main as plot_main

        return plot_main(args.files, args.output)
    if args.suite == "table":
        return table_main(args.files, args.spec)
    if args.files:
        raise PuzzleError(f"unexpected arguments after the suite: {' '.join(args.files)}",
                          code=EXIT_BAD_OPTION)
    suite = load_suite(args.suite)
    from .table import use_rich

    use_rich(sys.stdout.isatty())
    progress = None if args.quiet else runner.stderr_progress
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    doc: dict[str, Any] = {
        "format": FORMAT, "suite": suite.name, "suite_file": str(suite.path), "kind": suite.kind,
        "description": suite.description, "started": started.isoformat(timespec="seconds"),
        "quick": bool(args.quick), "time_limit_override": args.time_limit, "environment": environment(),
        "tables": suite.tables,
    }
    out = Path(args.output) if args.output else Path("results") / (
        f"{suite.name}-{started.strftime('%Y%m%d-%H%M%S')}{'-quick' if args.quick else ''}.json")
    if suite.kind == "speed":
        records, report, checks = speed.run_speed(suite, quick=args.quick, time_limit=args.time_limit,
                                                  progress=progress)
        wall = time.perf_counter() - t0
        doc.update(wall_s=round(wall, 3), records=records, report=report, checks=checks)
        text = speed.render(report, checks)
        code = runner.EXIT_MISMATCH if any(not c["ok"] for c in checks) else runner.EXIT_OK
    else:
        if args.quick:
            apply_quick(suite)
        engines = [e.strip() for e in args.engines.split(",") if e.strip()] if args.engines else None
        eopts = None
        if args.engine_options:
            from .. import api

            names = engines or list(dict.fromkeys(e for rs in suite.sets for e in rs.engines))
            eopts = {e: api.engine_options(e, args.engine_options) for e in names}

        def checkpoint(records: list[dict[str, Any]]) -> None:
            # rewritten after every unit: a run cut off after hours keeps what it measured
            _write(out, {**doc, "partial": True, "records": records})

        records = runner.run_suite(suite, time_limit=args.time_limit, engines=engines, select=args.select,
                                   progress=progress, jobs=max(1, args.jobs), max_states=args.max_states,
                                   max_memory_mb=args.max_memory, model_options=args.model_options,
                                   engine_options=eopts, checkpoint=checkpoint)
        wall = time.perf_counter() - t0
        summary = runner.summarise(records)
        summary["wall_s"] = round(wall, 3)
        doc.update(wall_s=round(wall, 3), summary=summary, records=records)
        text = runner.render(records, summary, verbose=args.verbose)
        code = runner.exit_status(summary)
    _write(out, doc)
    print(f"suite {suite.name} ({suite.path})")
    print(text)
    if suite.tables and suite.kind == "solve":
        print("\n" + render_specs(suite.tables, doc["records"]))
    print(f"\nwall time {wall:.1f} s; results written to {out}")
    if args.plots and suite.kind == "solve":
        from .figures import write_all

        for path, n in write_all(doc["records"], args.plots).items():
            print(f"wrote {path}: {n} series")
    sys.stdout.flush()
    return code


def _write(out: Path, doc: dict[str, Any]) -> None:
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        text_json = json.dumps(doc, ensure_ascii=False, indent=1, default=_jsonable)
        out.write_text(text_json + "\n", encoding="utf-8")
    except OSError as e:
        raise PuzzleError(f"cannot write results: {e.strerror}", str(out), code=EXIT_BAD_OPTION) from None


def table_main(files: list[str], spec: str | None) -> int:
    """``bench table RESULTS.json ... [--spec SUITE]``: the paper-style tables again, from records
    already written (several files -- runs made in several sessions -- are joined in order)."""
    if not files:
        raise PuzzleError("bench table needs one or more result files", code=EXIT_BAD_OPTION)
    records: list[dict[str, Any]] = []
    specs: list[dict[str, Any]] | None = load_suite(spec).tables if spec else None
    for f in files:
        try:
            doc = json.loads(Path(f).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise PuzzleError(f"cannot read a bench result: {e}", f, code=EXIT_BAD_OPTION) from None
        if not isinstance(doc, dict) or not isinstance(doc.get("records"), list):
            raise PuzzleError("not a bench result (no records)", f, code=EXIT_BAD_OPTION)
        records.extend(doc["records"])
        if specs is None:
            specs = check_tables(doc["tables"], f) if doc.get("tables") else None
    if not specs:
        raise PuzzleError("no [[table]] specs: the result's suite declares none (use --spec SUITE)",
                          files[0], code=EXIT_BAD_OPTION)
    print(render_specs(specs, records))
    return 0


def _jsonable(x: Any) -> Any:
    try:
        import numpy as np

        if isinstance(x, np.integer):
            return int(x)
        if isinstance(x, np.floating):
            return float(x)
        if isinstance(x, np.ndarray):
            return x.tolist()
    except ImportError:
        pass
    if isinstance(x, (set, tuple)):
        return list(x)
    return str(x)
