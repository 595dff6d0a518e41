"""Command line: ``puzzleplan solve|verify|show|dump|compile|models|generate|bench|check-certificate``.

Exit codes (docs/cli.md): 0 solved; 10 proven unsolvable; 12 limit or
unknown; 20 engines disagree; 21 a plan failed the reference checker; 22 a certificate rejected;
30 malformed instance; 31 bad option or argument; 32 bad model; 33 unknown
engine; 34 bad plan file; 35 output file not writable.  Errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from . import __version__
from .lang.errors import EXIT_BAD_OPTION, EXIT_BAD_PLAN, EXIT_OUTPUT, PuzzleError
from .solvers import Limits, registry
from .solvers.result import positive


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line and exit code 31."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(_error_line(message), file=sys.stderr)
        raise SystemExit(EXIT_BAD_OPTION)

    def _print_message(self, message: str, file: Any = None) -> None:
        # argparse swallows OSError here, so `--help > /dev/full` said nothing and exited 0
        if message:
            (file or sys.stderr).write(message)

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        # `--time-limit=--`: argparse drops the "--" and returns an empty list, unconverted, as the value
        if action.option_strings and action.nargs is None and arg_strings == ["--"]:
            self.error(f"argument {'/'.join(action.option_strings)}: expected a value, got '--'")
        return super()._get_values(action, arg_strings)


_positive_float = positive(float)
_positive_int = positive(int)
MAX_SEED = 2**31 - 1   # numpy's RandomState refuses negative seeds, CP-SAT's seed is an int32


def _seed(text: str) -> int:
    """``--seed``: an integer every randomised engine accepts, checked before anything runs."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a valid int") from None
    if not 0 <= v <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} must be between 0 and {MAX_SEED}")
    return v


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="puzzleplan", description="One puzzle model, many engines.")
    p.add_argument("--version", action="version", version=f"puzzleplan {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("model", help="bundled model name (klotski, sliding, ...) or path to a .py model")
        sp.add_argument("instance", help="instance file, or FILE#ID for one record of a multi-record file")
        sp.add_argument("-O", dest="options", action="append", default=[], metavar="KEY=VALUE",
                        help="model option (repeatable); see `puzzleplan models`")

    s = sub.add_parser("solve", help="solve one instance with one engine")
    common(s)
    s.add_argument("--engine", "-e", default="bfs",
                   help=f"one of {', '.join(registry.NAMES)} (default bfs); `puzzleplan models` lists them")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--time-limit", type=_positive_float, metavar="S", help="search time limit in seconds")
    s.add_argument("--max-states", type=_positive_int, metavar="N", help="stop after N stored states")
    s.add_argument("--max-memory", type=_positive_float, metavar="MB",
                   help="stop (status limit, with the bound so far) before the process's resident memory "
                        "passes MB MiB (at most +10 %%; docs/limits.md)")
    s.add_argument("--seed", type=_seed, default=0,
                   help=f"random seed, 0..{MAX_SEED} (for randomised engines: ga, cpsat)")
    s.add_argument("--count", type=_positive_int, default=1, metavar="N",
                   help="constraint models: look for up to N solutions (2 = uniqueness check)")
    s.add_argument("--kernel", default="auto", choices=("auto", "numba", "numpy", "interpreted"),
                   help="successor kernel: auto (default: the compiled kernel when it is cached, else the "
                        "interpreted one, which needs no per-task compile), numba (compiled per task), "
                        "interpreted, or plain numpy")
    s.add_argument("--enumerate", action="store_true",
                   help="bfs only: explore every reachable state and report how many")
    s.add_argument("-E", dest="engine_options", action="append", default=[], metavar="KEY=VALUE",
                   help="engine option (repeatable), e.g. -E horizon=40 for sat/cpsat")
    s.add_argument("--layers", action="store_true",
                   help="also print states per layer (bfs: closed/open after each layer; best-first: per f)")
    s.add_argument("--layers-plot", metavar="FILE", help="draw the layer sizes to FILE (.png/.svg/.pdf; "
                                                         "needs matplotlib, the plot extra)")
    s.add_argument("--quiet", "-q", action="store_true", help="no live progress line on stderr")
    s.add_argument("--log-progress", action="store_true",
                   help="progress as JSON lines on stderr ({\"event\": \"progress\", ...}), for scripts")
    s.add_argument("--progress-every", type=_positive_float, default=None, metavar="S",
                   help="seconds between progress updates (default 0.25 live, 1 for --log-progress)")
    s.add_argument("--certificate", metavar="FILE",
                   help="write a certificate of the optimum or of unsolvability to FILE, for "
                        "`puzzleplan check-certificate` (docs/certificates.md)")
    s.add_argument("--certificate-bound", choices=("g", "f"), default="g",
                   help="the certificate's states: g (default) every state cheaper than the optimum; "
                        "f only those with g + h below it (far fewer; the claim then trusts the model's "
                        "admissible heuristic too)")
    s.add_argument("--workers", type=_positive_int, metavar="N",
                   help="bfs, ucs or astar partitioned over N workers (engine dbfs with bfs, cost or "
                        "f layers; N > 1 runs a thread per worker, or Ray actors with -E executor=ray or "
                        "--ray-address; docs/distributed.md)")
    s.add_argument("--ray-address", metavar="ADDR", help="run dbfs's workers on the Ray cluster at ADDR")
    s.add_argument("--spill-dir", metavar="DIR",
                   help="bfs, ucs, astar (dbfs): spill visited states to sorted runs in DIR when RAM "
                        "is spent")
    s.add_argument("--checkpoint", metavar="DIR", help="bfs (dbfs): write a checkpoint to DIR at every layer")
    s.add_argument("--resume", action="store_true", help="continue the checkpoint in --checkpoint DIR")

    v = sub.add_parser("verify", help="run several engines, replay every plan, say which independent "
                                      "paradigms proved the answer (confirmed / unconfirmed / disagree)")
    common(v)
    v.add_argument("--engines", default=None,
                   help="comma-separated engines (default: every exact engine that applies to the model)")
    v.add_argument("--json", action="store_true", help="print one JSON object")
    v.add_argument("--time-limit", type=_positive_float, metavar="S",
                   help="time limit per engine (default 20 s)")
    v.add_argument("--max-states", type=_positive_int, metavar="N", help="state limit per engine")
    v.add_argument("--max-memory", type=_positive_float, metavar="MB",
                   help="resident-memory limit per engine run, as for solve (MiB)")
    v.add_argument("--count", type=_positive_int, default=1, metavar="N",
                   help="constraint models: look for up to N solutions per engine (2 = compare uniqueness)")
    v.add_argument("--jobs", "-j", type=_positive_int, default=1, metavar="N",
                   help="run up to N engines at once, in separate processes")
    v.add_argument("--certificate", metavar="DIR",
                   help="write a certificate of the proven answer into DIR and check it with the "
                        "reference semantics (docs/certificates.md)")
    v.add_argument("--certificate-bound", choices=("g", "f"), default="g",
                   help="as for solve: g (default) or f (g + h below the optimum; trusts the model's "
                        "admissible heuristic)")
    v.add_argument("--kernel", default="auto", choices=("auto", "numba", "numpy", "interpreted"),
                   help="successor kernel, as for solve (default auto)")

    sh = sub.add_parser("show", help="draw the board; with --plan, solve and replay the plan step by step")
    common(sh)
    sh.add_argument("--plan", nargs="?", const="", default=None, metavar="FILE",
                    help="replay a plan: from FILE (JSON from `solve --json`, or one action label per "
                         "line), or, with no FILE, the plan of --engine")
    sh.add_argument("--engine", "-e", default="bfs")
    sh.add_argument("--time-limit", type=_positive_float, metavar="S")
    sh.add_argument("--format", "-f", default=None, choices=("text", "svg", "png", "gif"),
                    help="draw with the model's look: text (Unicode), svg, png (a frame strip with --plan), "
                         "gif (an animated replay; needs --plan). Default: the model's text display")
    sh.add_argument("-o", "--output", metavar="FILE", help="write the picture here (required for png, gif)")
    sh.add_argument("--animate", type=_positive_float, metavar="S",
                    help="text replay on a terminal: redraw each frame in place, S seconds apart "
                         "(not a terminal: frames are printed one after another)")
    sh.add_argument("--frames", default="move", choices=("move", "step"),
                    help="replay frames: one per move (a costing step and the free steps after it; "
                         "default) or one per step")

    cc = sub.add_parser("check-certificate", help="check a certificate of `solve --certificate` with the "
                                                  "plain-Python reference semantics only")
    common(cc)
    cc.add_argument("certificate", metavar="FILE", help="the certificate file")
    cc.add_argument("--reference", action="store_true",
                    help="expand every state with the reference interpreter (slow); default: its "
                         "straight-line transcription, cross-checked on every 64th state (on 16,384 "
                         "spread over S above 1,048,576 states)")
    cc.add_argument("--json", action="store_true", help="print one JSON object")
    cc.add_argument("--time-limit", type=_positive_float, metavar="S",
                    help="stop the check undecided (exit 12) after S seconds")
    cc.add_argument("--max-memory", type=_positive_float, metavar="MB",
                    help="stop the check undecided (exit 12) before its resident memory passes MB MiB "
                         "(first estimated from the file's state count)")
    cc.add_argument("--jobs", "-j", type=_positive_int, default=1, metavar="N",
                    help="check slices of the certificate in N forked processes (default 1; where fork "
                         "is missing, 1)")

    d = sub.add_parser("dump", help="print the grounded task (variables, actions, goal)")
    common(d)
    d.add_argument("--json", action="store_true")

    sub.add_parser("models", help="list bundled models, their options, and the engines")

    sv = sub.add_parser("serve", help="keep a warm process that later `puzzleplan` runs are handed to "
                                      "(numba imported and initialised once; docs/cli.md)")
    sv.add_argument("--socket", metavar="PATH", help="listen here (default $PUZZLEPLAN_SERVER, else "
                                                      "server.sock in the cache base directory)")
    sv.add_argument("--idle", type=float, default=30.0, metavar="MIN",
                    help="stop after MIN minutes without a run (0: never; default 30)")
    sv.add_argument("--stop", action="store_true", help="stop the server listening on the socket")

    c = sub.add_parser("compile", help="write the bounded-horizon SAT (DIMACS) or CP-SAT model to a file, "
                                       "or the task as PDDL (domain + problem) to a directory")
    common(c)
    c.add_argument("--to", required=True, metavar="FORMAT",
                   help="cnf (DIMACS), cpsat (CpModelProto) or pddl (domain.pddl + problem.pddl in -o DIR)")
    c.add_argument("--horizon", "-T", type=int, default=None, metavar="T",
                   help="plan length bound (>= 1; cnf and cpsat only, required there)")
    c.add_argument("--max-cost", type=int, default=None, metavar="C", help="also bound the plan cost")
    c.add_argument("--no-invariants", action="store_true", help="leave out the synthesised invariants")
    c.add_argument("-o", "--output", required=True, metavar="FILE", help="file to write (pddl: a directory)")

    g = sub.add_parser("generate", help="random instances whose proven optimum lies in a range")
    g.add_argument("model", help="a model that defines generate(rng, width, height, ...)")
    g.add_argument("--size", required=True, metavar="WxH",
                   help="board width x height, e.g. 6x5; each side 1..64")
    g.add_argument("--min-moves", type=int, default=1, metavar="K", help="least proven optimum to keep")
    g.add_argument("--max-moves", type=int, default=None, metavar="K", help="largest proven optimum to keep")
    g.add_argument("--seed", type=_seed, default=0, help=f"random seed, 0..{MAX_SEED}")
    g.add_argument("--tries", type=_positive_int, default=200, help="boards to draw before giving up")
    g.add_argument("--engine", "-e", default="bfs", help="exact engine that proves the optimum")
    g.add_argument("--time-limit", type=_positive_float, default=60.0, metavar="S", help="per board")
    g.add_argument("-O", dest="options", action="append", default=[], metavar="KEY=VALUE")
    g.add_argument("-G", dest="params", action="append", default=[], metavar="KEY=VALUE",
                   help="generator parameter (repeatable), e.g. -G rocks=0.2 -G ornaments=1")
    g.add_argument("--out", metavar="FILE", help="write the instance here instead of printing it")

    from .bench.cli import add_bench_parser

    add_bench_parser(sub)
    return p


def main(argv: Sequence[str] | None = None, started: float | None = None) -> int:
    """``started``: the run's start on ``perf_counter``'s clock when it began elsewhere (a run
    served by ``puzzleplan serve`` counts its client's start-up, as a local run counts its own)."""
    from .solvers.result import SIGNAL_EXIT, Interrupted, catch_signals

    started = _run_start(argv) if started is None else started
    parser = build_parser()
    try:
        args = parser.parse_args(argv)   # inside: --help on a full disk is an output error too
        args.started = started
        limit = getattr(args, "time_limit", None) if args.command == "solve" else None
        # SIGINT/SIGTERM end an engine as a limit does (its bound printed, exit 130/143); the
        # time limit of `solve` counts from the start of the run, loading and compiling included
        with catch_signals(None if limit is None else started + limit) as stop:
            try:
                code = _dispatch(args)
            except Interrupted as e:
                code = _interrupted(e.signum, args)
            if stop.signum in SIGNAL_EXIT:
                code = SIGNAL_EXIT[stop.signum]
        sys.stdout.flush()   # a full disk shows here, inside the try, not in the flush at exit
        return code
    except PuzzleError as e:
        print(_error_line(str(e)), file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print("puzzleplan: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and closed: not an error of ours
        _drop_stdout()
        return 0
    except SystemExit as e:  # --help, --version: their text must reach stdout like any other output
        if e.code == 0:
            try:
                sys.stdout.flush()
            except BrokenPipeError:
                _drop_stdout()
            except OSError as err:
                _drop_stdout()
                print(_error_line(f"cannot write standard output: {err.strerror or err}"), file=sys.stderr)
                return EXIT_OUTPUT
        raise
    except OSError as e:  # stdout refuses writes (a full disk, /dev/full, /proc/version)
        _drop_stdout()
        where = f"{str(e.filename)[:200]}: " if e.filename else "cannot write standard output: "
        print(_error_line(f"{where}{e.strerror or e}"), file=sys.stderr)
        return EXIT_OUTPUT


MAX_ERROR_CHARS = 300   # an error is one line a person reads, whatever file, path or text it echoes


def _error_line(message: str) -> str:
    """``puzzleplan: error: MESSAGE`` as one line: control characters (a newline in a path, a NUL
    from a binary file) escaped, and cut to :data:`MAX_ERROR_CHARS` with an ellipsis."""
    text = "puzzleplan: error: " + "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in message)
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 3] + "..."


def _run_start(argv: Sequence[str] | None) -> float:
    """``perf_counter`` time at which this run began: the process's start when ``main`` is the
    program (no ``argv``: interpreter start-up and imports count against ``--time-limit`` too),
    else now (``main([...])`` called from a test or a script)."""
    import time

    from .wire import process_age

    now = time.perf_counter()
    if argv is not None:
        return now
    age = process_age()
    return now - age if age is not None and 0 <= age < 60 else now


def _interrupted(signum: int, args: argparse.Namespace) -> int:
    """A signal or the time limit before any engine ran (loading, grounding, compiling): one line."""
    import signal

    from .api import EXIT_LIMIT
    from .solvers.result import SIGNAL_EXIT

    if signum == signal.SIGALRM:
        what = (f"time limit ({args.time_limit:g} s) reached before the search began (loading, "
                "compiling); no plan costs less than 0")
        if getattr(args, "json", False):
            import time

            elapsed = round(time.perf_counter() - args.started, 3)
            # the --json contract's keys, as a search that stopped before its first expansion reports them
            stats = {"lower_bound": 0, "run_s": elapsed, "time_s": 0.0, "expanded": 0, "generated": 0,
                     "peak_mb": 0.0}
            print(json.dumps({"status": "limit", "optimal": False, "cost": None, "plan": None, "steps": None,
                              "moves": None, "engine": getattr(args, "engine", None), "proof": "",
                              "message": what, "model": args.model, "instance": args.instance,
                              "options": {}, "stats": stats}, ensure_ascii=False))
        print(f"puzzleplan: {what}", file=sys.stderr)
        return EXIT_LIMIT
    where = "before the search began" if args.command in ("solve", "verify") else f"during {args.command}"
    print(f"puzzleplan: interrupted ({signal.Signals(signum).name}) {where}", file=sys.stderr)
    return SIGNAL_EXIT.get(signum, 130)


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush of what is left cannot fail again."""
    import os

    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError):   # not a real file (pytest's capture, a StringIO): nothing to flush
        return
    os.dup2(os.open(os.devnull, os.O_WRONLY), fd)


def _dispatch(args: argparse.Namespace) -> int:
    from . import api

    if args.command == "models":
        return _models()
    if args.command == "serve":     # the entry point (launch.py) runs it: it sits above this module
        raise PuzzleError("serve runs from the `puzzleplan` command (or `python -m puzzleplan.launch serve`)",
                          code=EXIT_BAD_OPTION)
    if args.command == "generate":
        return _generate(args)
    if args.command == "bench":
        from .bench.cli import run_bench

        return run_bench(args)
    if args.command == "check-certificate":
        return _check_certificate(args)
    if args.command == "solve":
        api.check_engine(args.engine)
        _distributed_engine(args)
        mode = registry.get(args.engine).transition
        if args.enumerate and (mode is None or "enumerate_all" not in mode.internal):
            raise PuzzleError("--enumerate works with --engine bfs only", code=EXIT_BAD_OPTION)
    if args.command == "verify":
        from . import crosscheck

        engines = crosscheck.parse_engines(args.engines) if args.engines is not None else None
        loaded = api.load_task(args.model, args.instance, args.options)
        if engines is None:
            engines = crosscheck.default_engines(loaded, args.kernel)
        crosscheck.check_applicable(loaded, engines, args.count, args.kernel)
        default_limit = args.time_limit is None
        limit = crosscheck.DEFAULT_TIME_LIMIT if default_limit else args.time_limit
        limits = Limits(limit, args.max_states, max_rss_mb=args.max_memory)
        if args.certificate is not None and not args.certificate.strip():
            raise PuzzleError("--certificate needs a directory name", code=EXIT_BAD_OPTION)
        if args.certificate is not None and not api.is_constraint_task(loaded.task):
            from .certificate import check_bound

            check_bound(loaded.task, args.certificate_bound)
        verdict = crosscheck.print_stream(loaded, engines, limits, args.kernel, args.count, args.jobs,
                                          args.json, default_limit, certificate_dir=args.certificate,
                                          model=args.model, certificate_bound=args.certificate_bound)
        return crosscheck.exit_code(verdict)
    to_engine: list[str] = []
    if args.command == "solve":
        args.options, to_engine = api.split_model_engine_options(args.model, args.options)
    loaded = api.load_task(args.model, args.instance, args.options)
    if args.command == "compile":
        from .export import compile_task

        size = compile_task(loaded, args.to, args.horizon, args.output, args.max_cost, not args.no_invariants)
        print(f"wrote {args.output}: " + ", ".join(f"{v:,} {k}" for k, v in size.items()))
        return 0
    if args.command == "dump":
        if args.json and api.is_constraint_task(loaded.task):
            raise PuzzleError("dump --json is not available for constraint models yet", code=EXIT_BAD_OPTION)
        print(loaded.task.to_json() if args.json else loaded.task.dump())
        return 0
    if args.command == "show":
        return _show(loaded, args)
    if args.certificate and not api.is_constraint_task(loaded.task):
        from .certificate import check_bound

        check_bound(loaded.task, args.certificate_bound)   # before the search, not after it
    extra: dict[str, Any] = {"enumerate_all": True} if args.enumerate else {}
    extra.update(api.engine_options(args.engine, to_engine, loaded.task, model=loaded.model))
    extra.update(api.engine_options(args.engine, args.engine_options, loaded.task))
    extra.update(api.engine_options(args.engine, _distributed_pairs(args), loaded.task))
    if api.is_constraint_task(loaded.task):
        extra = api.constraint_engine_defaults(args.engine, extra, count=args.count)
    elif args.count != 1:
        raise PuzzleError("--count works with constraint models only", code=EXIT_BAD_OPTION)
    extra = api.with_seed(args.engine, loaded.task, extra, args.seed)
    from .progress import for_cli

    listener = for_cli(args.engine, args.quiet, args.log_progress, args.progress_every)
    limits = Limits(args.time_limit, args.max_states, progress=listener, max_rss_mb=args.max_memory,
                    started=args.started)
    if listener is None:
        result = api.solve(loaded, args.engine, limits, args.kernel, **extra)
    else:
        with listener:
            result = api.solve(loaded, args.engine, limits, args.kernel, **extra)
    cert = _write_certificate(loaded, result, args, limits) if args.certificate else None
    if args.json:
        print(json.dumps({**api.result_json(loaded, result), **({"certificate": cert} if cert else {})},
                         ensure_ascii=False))
    else:
        _print_result(loaded, result)
        if cert:
            by_h = ", bounded by g + h" if cert["bound"] == "f" else ""
            print(f"  certificate: {cert['path']} ({cert['kind']}{by_h}, {cert['states']:,} states, "
                  f"{cert['bytes']:,} bytes, written in {cert['write_s']:.1f} s)")
    if args.layers or args.layers_plot:
        _layers(loaded, result, args)
    return api.exit_code(result)


_DISTRIBUTED_FLAGS = (("workers", "--workers"), ("ray_address", "--ray-address"),
                      ("spill_dir", "--spill-dir"), ("checkpoint", "--checkpoint"), ("resume", "--resume"))


def _distributed_engine(args: argparse.Namespace) -> None:
    """``--workers``, ``--spill-dir`` ... run bfs, ucs or astar as dbfs with bfs, cost or f layers
    (the same optimum, partitioned); other engines refuse them."""
    given = [flag for key, flag in _DISTRIBUTED_FLAGS if getattr(args, key, None) not in (None, False)]
    if not given:
        return
    if args.engine in ("bfs", "ucs", "astar"):
        args.layer_order = args.engine
        args.engine = "dbfs"
    elif args.engine != "dbfs":
        raise PuzzleError(f"{given[0]} works with --engine bfs, ucs, astar or dbfs only",
                          code=EXIT_BAD_OPTION)


def _distributed_pairs(args: argparse.Namespace) -> list[str]:
    """The distributed flags as dbfs's ``-E`` pairs, so the registry checks them like -E."""
    if args.command != "solve":
        return []
    order = getattr(args, "layer_order", "bfs")
    return [f"{key}={getattr(args, key)}" for key, _ in _DISTRIBUTED_FLAGS
            if getattr(args, key, None) not in (None, False)] + ([f"order={order}"] if order != "bfs" else [])


def _write_certificate(loaded: Any, result: Any, args: argparse.Namespace,
                       limits: Limits) -> dict[str, Any] | None:
    """``solve --certificate``: written for a verified optimum or unsolvability, within the run's
    limits; else a note on stderr (the search's result and exit code stand)."""
    from . import api
    from .certificate import NoCertificate, write_certificate

    if api.is_constraint_task(loaded.task):
        raise PuzzleError("--certificate works with transition models only", code=EXIT_BAD_OPTION)
    if not (result.status == "unsolvable" or (result.status == "optimal" and result.stats.get("verified"))):
        print(f"puzzleplan: no certificate written: status {result.status}", file=sys.stderr)
        return None
    kernel = api.concrete_kernel(loaded, result.engine, args.kernel)
    try:
        return write_certificate(loaded, result, args.certificate, kernel, model=args.model, limits=limits,
                                 by=args.certificate_bound)
    except NoCertificate as e:
        print(f"puzzleplan: no certificate written: {e}", file=sys.stderr)
        return None


def _check_certificate(args: argparse.Namespace) -> int:
    """``check-certificate``: exit 0 when valid, 22 when rejected, 30 when the file is no certificate."""
    from . import api
    from .verify import certificate as cert

    loaded = api.load_task(args.model, args.instance, args.options)
    if api.is_constraint_task(loaded.task):
        raise PuzzleError("certificates are for transition models only", code=EXIT_BAD_OPTION)
    limits = None
    if args.time_limit is not None or args.max_memory is not None:
        limits = cert.CheckLimits(args.time_limit, args.max_memory, args.started)   # from the run's start
    try:
        data = cert.read(args.certificate, limits)
        report = cert.check(loaded.task, data, "reference" if args.reference else "fast", limits, args.jobs)
    except (cert.CheckUndecided, cert.CertificateRejected) as e:   # undecided: neither valid nor rejected
        if args.json:
            undecided = isinstance(e, cert.CheckUndecided)
            print(json.dumps({"valid": None if undecided else False, "file": args.certificate,
                              "undecided" if undecided else "reason": e.message}, ensure_ascii=False))
        else:
            print(f"{args.certificate}: {e.message}")
        return e.code
    if args.json:
        print(json.dumps({**report.to_json(), "file": args.certificate}, ensure_ascii=False))
    else:
        claim = f"optimum {report.cost}" if report.kind == "optimum" else "unsolvable"
        trust = (f"; bounded by g + h: {report.excused:,} successors excused by the model's heuristic, "
                 "whose admissibility is trusted") if report.bound == "f" else ""
        print(f"{args.certificate}: certificate valid: {loaded.instance} is {claim} "
              f"({report.states:,} states, {report.transitions:,} transitions checked in "
              f"{report.seconds:.1f} s, {report.mode} successors{trust})")
    return 0


def _layers(loaded: Any, result: Any, args: argparse.Namespace) -> None:
    """``solve --layers/--layers-plot``: the per-layer sizes an engine recorded (Table I of the HRD paper)."""
    from .bench import plot

    st = result.stats
    if isinstance(st.get("layers"), list):
        sizes, xlabel = [int(x) for x in st["layers"]], "layer (cost)"
    elif isinstance(st.get("f_layers") or st.get("weighted_layers"), dict):
        name, what = ("f_layers", "f") if "f_layers" in st else ("weighted_layers", "g + floor(W h)")
        fs = sorted(st[name])
        sizes = [int(st[name][f]) for f in fs]
        xlabel = f"{name[:-1].replace('_', '-')} ({what} = {fs[0]}..{fs[-1]})" if fs else what
    else:
        raise PuzzleError(f"engine {result.engine} records no layer sizes (bfs, ucs and astar do)",
                          code=EXIT_BAD_OPTION)
    if args.layers and not args.json:
        print("\n" + plot.render_layer_table(sizes))
    if args.layers_plot:
        plot.plot_layers(sizes, args.layers_plot, title=f"{loaded.instance} ({result.engine})", xlabel=xlabel)


def _generate(args: argparse.Namespace) -> int:
    from .generate import check_output, generate, parse_params, parse_size, write_output

    width, height = parse_size(args.size)
    if args.out:
        check_output(args.out)
    text, _ = generate(args.model, width, height, args.min_moves, args.max_moves, seed=args.seed,
                       tries=args.tries, engine=args.engine, options=args.options,
                       params=parse_params(args.params), time_limit=args.time_limit)
    if args.out:
        write_output(args.out, text)
    else:
        print(text, end="")
    return 0


def _print_result(loaded: Any, result: Any) -> None:
    from . import api

    if api.is_constraint_task(loaded.task):
        _print_csp_result(loaded, result)
        return

    st = result.stats
    opts = ",".join(f"{k}={v}" for k, v in loaded.options.items())
    head = f"{loaded.instance}" + (f" [{opts}]" if opts else "")
    if result.cost is not None:
        steps = len(result.plan) if result.plan is not None else 0
        extra = f" in {steps} steps" if steps != result.cost else ""
        print(f"{head}: {result.status}, cost {result.cost}{extra}")
    else:
        print(f"{head}: {result.status}")
    print(f"  engine {result.engine}{_kernel_label(result)}: {st.get('time_s', 0):.3f} s search, "
          f"{_work(st)}")
    if result.proof:
        print(f"  proof: {result.proof}")
    if st.get("kernel_note"):
        print(f"  note: {st['kernel_note']}")
    if "reachable" in st:
        print(f"  reachable states: {st['reachable']:,} ({st['configurations']:,} configurations)")
    if result.plan is not None:
        verdict = "verified by the reference checker" if st.get("verified") else "REJECTED by the checker"
        print(f"  plan ({verdict}): " + ", ".join(api.plan_moves(loaded.task, result.plan)))
    if result.message:
        print(f"  note: {result.message}")


def _kernel_label(result: Any) -> str:
    """`` (numba)`` for engines that searched with a successor kernel; nothing for those that read the
    task only (sat, cpsat, fd), which api.solve hands the numpy kernel merely as the task's carrier."""
    try:
        mode = registry.get(result.engine).transition
    except PuzzleError:
        mode = None
    if mode is not None and mode.kernel == "task":
        return ""
    kernel = result.stats.get("kernel")
    return f" ({kernel})" if kernel else ""


# (stats key, words) of the symbolic engines' work, in the order printed: what they searched (the
# horizon), how hard the solver worked, and how large the formula grew
_SYMBOLIC_WORK = (("solver_calls", "solver calls"), ("models", "models solved"), ("conflicts", "conflicts"),
                  ("decisions", "decisions"), ("branches", "branches"), ("variables", "variables"),
                  ("clauses", "clauses"), ("constraints", "constraints"))


def _work(st: dict[str, Any]) -> str:
    """What the engine did, in its own counters: states for searches over the kernel, evaluated
    genomes for a GA, horizon and solver effort for sat/cpsat (which expand no states)."""
    if "evaluations" in st and not st.get("expanded"):   # a GA: work is counted in evaluated genomes
        return (f"{st['evaluations']:,} evaluations, {st.get('generations', 0):,} generations, "
                f"peak {st.get('peak_mb', 0):.1f} MB")
    if "horizon" in st and not st.get("expanded"):        # sat, cpsat: an unrolled formula, no states
        parts = [f"horizon {st['horizon']:,}"]
        parts += [f"{st[k]:,} {words}" for k, words in _SYMBOLIC_WORK if isinstance(st.get(k), int)]
        return ", ".join(parts)
    work = f"{st.get('expanded', 0):,} expanded, {st.get('generated', 0):,} generated, "
    if "iterations" in st:                                 # idastar: the f-bounds tried
        its = st["iterations"]
        work += f"{len(its) if isinstance(its, list) else its:,} iterations, "
    return work + f"peak {st.get('peak_mb', 0):.1f} MB"


def _print_csp_result(loaded: Any, result: Any) -> None:
    from . import api

    st = result.stats
    head = f"{loaded.instance}: {result.status}"
    verdict = api.result_json(loaded, result)["unique"]
    if verdict is not None:
        head += f" ({verdict})"
    print(head)
    keys = ("nodes", "failures", "conflicts", "evaluations", "generations", "variables", "constraints")
    extra = "".join(f", {k} {st[k]:,}" for k in keys if isinstance(st.get(k), int))
    print(f"  engine {result.engine}: {st.get('time_s', 0):.3f} s{extra}")
    if result.proof:
        found = getattr(result, "solutions", None)
        after = (f" once the {found:,} solution{'s' if found != 1 else ''} found "
                 f"{'were' if found != 1 else 'was'} forbidden"
                 if result.assignment is not None and found and result.status != "optimal" else "")
        print(f"  proof: {result.proof}{after}")
    counted = _solution_count(result, int(st.get("count", 1) or 1), verdict)
    if counted:
        print(f"  solutions: {counted}")
    if result.assignment is not None:
        ok = "verified by the checker" if st.get("verified") else "REJECTED by the checker"
        print(f"  solution ({ok}):")
        render = loaded.task.renderer or (lambda vals: " ".join(map(str, vals)))
        print("\n".join("    " + ln for ln in render(result.assignment).splitlines()))
    if result.message:
        print(f"  note: {result.message}")


def _solution_count(result: Any, count: int, verdict: str | None) -> str:
    """``--count N``: how many solutions were found and what that says, or "" when not counting."""
    found = getattr(result, "solutions", None)
    if count < 2 or found is None:
        return ""
    complete = bool(result.stats.get("complete"))
    if found >= count:
        text = f"at least {found:,} (stopped at --count {count:,})"
    elif complete:
        text = f"{found:,} (the search space exhausted)"
    else:
        text = f"{found:,} found before the search stopped (--count {count:,})"
    if verdict == "unique":
        text += ": unique"
    elif verdict == "several":
        text += ": not unique"
    elif verdict is None:
        text += ": uniqueness not decided"
    return text


def _show(loaded: Any, args: argparse.Namespace) -> int:
    from . import api
    from .verify.reference import apply

    task = loaded.task
    if args.animate and args.format is None:
        args.format = "text"
    if args.format is not None or args.output:
        return _show_picture(loaded, args)
    if api.is_constraint_task(task):  # the puzzle as given: fixed cells shown, free cells as 0
        render = task.renderer or (lambda vals: " ".join(map(str, vals)))
        print(render([v.lo if v.lo == v.hi else 0 for v in task.variables]))
        return 0
    render = task.renderer or (lambda vals: " ".join(f"{n}={v}" for n, v in zip(task.names, vals)))
    state = list(task.init)
    print(render(state))
    if args.plan is None:
        return 0
    if args.plan == "":
        api.check_engine(args.engine)
        result = api.solve(loaded, args.engine, Limits(args.time_limit))
        if result.plan is None:
            print(f"no plan: {result.status}")
            return api.exit_code(result)
        plan = result.plan
    else:
        plan = _read_plan(task, args.plan, EXIT_BAD_PLAN)
    from .verify.reference import is_goal

    total = 0
    for i, k in enumerate(plan, 1):
        a = task.actions[k]
        total += a.cost
        state = apply(task, a, state)
        print(f"\nstep {i}: {a.label}   (cost so far {total})")
        print(render(state))
    if not is_goal(task, state):
        where = args.plan or "plan"
        raise PuzzleError(f"the plan ends after {len(plan)} steps without reaching the goal (cost {total})",
                          where, code=EXIT_BAD_PLAN)
    print(f"\ngoal reached, cost {total}")
    return 0


def _show_plan(loaded: Any, args: argparse.Namespace) -> list[int] | None:
    """The plan ``show --plan`` replays: from a file, or solved now; None when no plan was found."""
    from . import api

    if args.plan == "":
        api.check_engine(args.engine)
        result = api.solve(loaded, args.engine, Limits(args.time_limit))
        if result.plan is None:
            print(f"no plan: {result.status}", file=sys.stderr)
            raise SystemExit(api.exit_code(result))
        return result.plan
    return _read_plan(loaded.task, args.plan, EXIT_BAD_PLAN)


def _animate(frames: list[str], delay: float) -> None:
    """Each frame drawn over the previous one (cursor moved up by the previous frame's height)."""
    import time

    height = 0
    for k, frame in enumerate(frames):
        if height:
            sys.stdout.write(f"\x1b[{height}F\x1b[J")       # up to the previous frame's first line, clear
        sys.stdout.write(frame + "\n")
        sys.stdout.flush()
        height = frame.count("\n") + 1
        if k + 1 < len(frames):
            time.sleep(delay)


def _show_picture(loaded: Any, args: argparse.Namespace) -> int:
    """``show --format``: the model's look drawn as text/SVG/PNG; with --plan, a replay (strip or GIF)."""
    from . import api, render
    from .verify.reference import is_goal

    task = loaded.task
    fmt = args.format or "svg"
    if api.is_constraint_task(task):
        if args.plan is not None:
            raise PuzzleError("--plan replays transition models; a constraint model has no plan",
                              code=EXIT_BAD_OPTION)
        state = [v.lo if v.lo == v.hi else 0 for v in task.variables]
        scenes = [render.scene(task, state)]
    elif args.plan is None:
        scenes = [render.scene(task, task.init)]
    else:
        plan = _show_plan(loaded, args)
        assert plan is not None
        frames = render.replay(task, plan, args.frames)
        if not is_goal(task, frames[-1][0]):
            raise PuzzleError(f"the plan ends after {len(plan)} steps without reaching the goal",
                              args.plan or "plan", code=EXIT_BAD_PLAN)
        scenes = [render.scene(task, st, cap) for st, cap in frames]
    if args.animate and fmt == "text" and not args.output and len(scenes) > 1 and sys.stdout.isatty():
        _animate([render.to_text(sc) for sc in scenes], args.animate)
        return 0
    text = render.write(scenes, fmt, args.output)
    if text is not None:
        sys.stdout.write(text)
    else:
        what = f"{len(scenes)} frames ({args.frames}s), last = goal" if len(scenes) > 1 else "1 board"
        print(f"wrote {args.output}: {fmt}, {what}", file=sys.stderr)
    return 0


def _read_plan(task: Any, path: str, code: int) -> list[int]:
    """Plan labels from a `solve --json` file or a text file, matched against applicable actions.

    A JSON plan's ``cost`` (and ``steps``) must be what the replay gives: a file edited by hand or
    taken from another instance would otherwise be replayed and shown as if its numbers held.
    """
    from .verify.reference import applicable, apply

    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise PuzzleError(f"cannot read plan: {e.strerror or e}", path, code=code) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise PuzzleError(f"not a plan: not UTF-8 text (byte {e.start})", path, line, code=code) from None
    labels: list[tuple[int, str]]
    claimed: dict[str, Any] = {}
    if text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError):
            doc = None
        plan_field = doc.get("plan") if isinstance(doc, dict) else None
        if not (isinstance(plan_field, list) and all(isinstance(x, str) for x in plan_field)):
            raise PuzzleError("not a `puzzleplan solve --json` output with a plan", path, 1,
                              code=code) from None
        labels = [(1, x) for x in plan_field]
        claimed = {k: doc[k] for k in ("cost", "steps") if doc.get(k) is not None}
    else:
        labels = [(i, ln.strip()) for i, ln in enumerate(text.splitlines(), 1) if ln.strip()]
    state = list(task.init)
    plan = []
    for line, label in labels:
        ks = [k for k, a in enumerate(task.actions) if a.label == label and applicable(a, state)]
        if not ks:
            shown = repr(label[:60]) + ("..." if len(label) > 60 else "")
            raise PuzzleError(f"action {shown} is unknown or not applicable here", path, line, code=code)
        plan.append(ks[0])
        state = apply(task, task.actions[ks[0]], state)
    replayed = {"cost": sum(task.actions[k].cost for k in plan), "steps": len(plan)}
    for key, value in claimed.items():
        if isinstance(value, bool) or value != replayed[key]:
            raise PuzzleError(f"the file says {key} {str(value)[:40]}, but its plan replays to {key} "
                              f"{replayed[key]}", path, 1, code=code)
    return plan


def _models() -> int:
    from . import api

    for name in api.bundled_models():
        mod = api.load_model(name)
        doc = (mod.__doc__ or "").strip().splitlines()[0] if mod.__doc__ else ""
        print(f"{name}: {doc}")
        for o in api.model_options(mod):
            choices = f" {{{', '.join(map(str, o.choices))}}}" if o.choices else ""
            print(f"  -O {o.name}=...{choices} (default {o.default}): {o.help}")
    print("\nengines (-E KEY=VALUE sets an engine option):")
    for e in registry.ENGINES:
        kinds = " and ".join(e.kinds)
        print(f"  {e.name}: {e.description} [{kinds} models]")
        for kind in e.kinds:
            mode = e.mode(kind)
            assert mode is not None
            label = f" ({kind})" if len(e.kinds) > 1 else ""
            for o in mode.options:
                print(f"    -E {o.name}=...{label} ({o.describe()}; default {o.default}): {o.help}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
