"""Command line: ``puzzleplan solve|verify|show|dump|compile|models|generate|bench``.

Exit codes (docs/cli.md): 0 solved; 10 proven unsolvable; 12 limit or
unknown; 20 engines disagree; 21 a plan failed the reference checker;
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
from .lang.errors import EXIT_BAD_OPTION, EXIT_BAD_PLAN, PuzzleError
from .solvers import DESCRIPTIONS, ENGINES, Limits
from .solvers.result import positive


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line and exit code 31."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"puzzleplan: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_OPTION)


_positive_float = positive(float)
_positive_int = positive(int)


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
    s.add_argument("--engine", "-e", default="bfs", help=f"one of {', '.join(ENGINES)} (default bfs)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--time-limit", type=_positive_float, metavar="S", help="search time limit in seconds")
    s.add_argument("--max-states", type=_positive_int, metavar="N", help="stop after N stored states")
    s.add_argument("--max-memory", type=_positive_float, metavar="MB",
                   help="stop when the search's own data (visited set, parents, open list) passes MB "
                        "MiB (bfs: before a growth that would pass it)")
    s.add_argument("--seed", type=int, default=0, help="random seed (for randomised engines: ga, cpsat)")
    s.add_argument("--count", type=_positive_int, default=1, metavar="N",
                   help="constraint models: look for up to N solutions (2 = uniqueness check)")
    s.add_argument("--kernel", default="numba", choices=("numba", "numpy"),
                   help="successor kernel: compiled (default) or plain numpy")
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

    v = sub.add_parser("verify", help="run several engines, replay every plan, compare optima")
    common(v)
    v.add_argument("--engines", default="bfs,astar", help="comma-separated engines (default bfs,astar)")
    v.add_argument("--json", action="store_true", help="print one JSON object")
    v.add_argument("--time-limit", type=_positive_float, metavar="S", help="time limit per engine")
    v.add_argument("--max-states", type=_positive_int, metavar="N", help="state limit per engine")
    v.add_argument("--kernel", default="numba", choices=("numba", "numpy"))

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

    d = sub.add_parser("dump", help="print the grounded task (variables, actions, goal)")
    common(d)
    d.add_argument("--json", action="store_true")

    sub.add_parser("models", help="list bundled models, their options, and the engines")

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
    g.add_argument("--size", required=True, metavar="WxH", help="board width x height, e.g. 6x5")
    g.add_argument("--min-moves", type=int, default=1, metavar="K", help="least proven optimum to keep")
    g.add_argument("--max-moves", type=int, default=None, metavar="K", help="largest proven optimum to keep")
    g.add_argument("--seed", type=int, default=0)
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return _dispatch(args)
    except PuzzleError as e:
        print(f"puzzleplan: error: {e}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print("puzzleplan: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and closed: not an error of ours
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _dispatch(args: argparse.Namespace) -> int:
    from . import api

    if args.command == "models":
        return _models()
    if args.command == "generate":
        return _generate(args)
    if args.command == "bench":
        from .bench.cli import run_bench

        return run_bench(args)
    if args.command == "solve":
        api.check_engine(args.engine)
        if args.enumerate and args.engine != "bfs":
            raise PuzzleError("--enumerate works with --engine bfs only", code=EXIT_BAD_OPTION)
    if args.command == "verify":
        from . import crosscheck

        engines = crosscheck.parse_engines(args.engines)
        loaded = api.load_task(args.model, args.instance, args.options)
        verdict = crosscheck.run(loaded, engines, Limits(args.time_limit, args.max_states), args.kernel)
        if args.json:
            print(json.dumps(verdict.to_json(loaded), ensure_ascii=False))
        else:
            print(crosscheck.table(verdict))
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
    extra: dict[str, Any] = {"enumerate_all": True} if args.enumerate else {}
    extra.update(api.engine_options(args.engine, to_engine, loaded.task, model=loaded.model))
    extra.update(api.engine_options(args.engine, args.engine_options, loaded.task))
    if api.is_constraint_task(loaded.task):
        extra = api.constraint_engine_defaults(args.engine, extra, count=args.count)
    elif args.count != 1:
        raise PuzzleError("--count works with constraint models only", code=EXIT_BAD_OPTION)
    extra = api.with_seed(args.engine, loaded.task, extra, args.seed)
    from .progress import for_cli

    listener = for_cli(args.engine, args.quiet, args.log_progress, args.progress_every)
    limits = Limits(args.time_limit, args.max_states, progress=listener, max_mb=args.max_memory)
    if listener is None:
        result = api.solve(loaded, args.engine, limits, args.kernel, **extra)
    else:
        with listener:
            result = api.solve(loaded, args.engine, limits, args.kernel, **extra)
    if args.json:
        print(json.dumps(api.result_json(loaded, result), ensure_ascii=False))
    else:
        _print_result(loaded, result)
    if args.layers or args.layers_plot:
        _layers(loaded, result, args)
    return api.exit_code(result)


def _layers(loaded: Any, result: Any, args: argparse.Namespace) -> None:
    """``solve --layers/--layers-plot``: the per-layer sizes an engine recorded (Table I of the HRD paper)."""
    from .bench import plot

    st = result.stats
    if isinstance(st.get("layers"), list):
        sizes, xlabel = [int(x) for x in st["layers"]], "layer (cost)"
    elif isinstance(st.get("f_layers"), dict):
        fs = sorted(st["f_layers"])
        sizes = [int(st["f_layers"][f]) for f in fs]
        xlabel = f"f-layer (f = {fs[0]}..{fs[-1]})" if fs else "f"
    else:
        raise PuzzleError(f"engine {result.engine} records no layer sizes (bfs, ucs and astar do)",
                          code=EXIT_BAD_OPTION)
    if args.layers and not args.json:
        print("\n" + plot.render_layer_table(sizes))
    if args.layers_plot:
        plot.plot_layers(sizes, args.layers_plot, title=f"{loaded.instance} ({result.engine})", xlabel=xlabel)


def _generate(args: argparse.Namespace) -> int:
    from .generate import generate, parse_params, parse_size

    width, height = parse_size(args.size)
    text, _ = generate(args.model, width, height, args.min_moves, args.max_moves, seed=args.seed,
                       tries=args.tries, engine=args.engine, options=args.options,
                       params=parse_params(args.params), time_limit=args.time_limit)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
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
    if "evaluations" in st and not st.get("expanded"):   # a GA: work is counted in evaluated genomes
        work = f"{st['evaluations']:,} evaluations, {st.get('generations', 0):,} generations, "
    else:
        work = f"{st.get('expanded', 0):,} expanded, {st.get('generated', 0):,} generated, "
    line = (f"  engine {result.engine} ({st.get('kernel')}): {st.get('time_s', 0):.3f} s search, "
            f"{work}peak {st.get('peak_mb', 0):.1f} MB")
    print(line)
    if st.get("kernel_note"):
        print(f"  note: {st['kernel_note']}")
    if "reachable" in st:
        print(f"  reachable states: {st['reachable']:,} ({st['configurations']:,} configurations)")
    if result.plan is not None:
        verdict = "verified by the reference checker" if st.get("verified") else "REJECTED by the checker"
        print(f"  plan ({verdict}): " + ", ".join(api.plan_moves(loaded.task, result.plan)))
    if result.message:
        print(f"  note: {result.message}")


def _print_csp_result(loaded: Any, result: Any) -> None:
    from . import api

    st = result.stats
    head = f"{loaded.instance}: {result.status}"
    verdict = api.result_json(loaded, result)["unique"]
    if verdict is not None:
        head += f" ({verdict})"
    print(head)
    keys = ("nodes", "conflicts", "evaluations", "generations")
    extra = "".join(f", {k} {st[k]:,}" for k in keys if k in st)
    print(f"  engine {result.engine}: {st.get('time_s', 0):.3f} s{extra}")
    if result.assignment is not None:
        ok = "verified by the checker" if st.get("verified") else "REJECTED by the checker"
        print(f"  solution ({ok}):")
        render = loaded.task.renderer or (lambda vals: " ".join(map(str, vals)))
        print("\n".join("    " + ln for ln in render(result.assignment).splitlines()))
    if result.message:
        print(f"  note: {result.message}")


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
    """Plan labels from a `solve --json` file or a text file, matched against applicable actions."""
    from .verify.reference import applicable, apply

    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        raise PuzzleError(f"cannot read plan: {e.strerror}", path, code=code) from None
    labels: list[tuple[int, str]]
    if text.lstrip().startswith("{"):
        try:
            labels = [(1, x) for x in json.loads(text)["plan"]]
        except (ValueError, KeyError, TypeError):
            raise PuzzleError("not a `puzzleplan solve --json` output with a plan", path, 1,
                              code=code) from None
    else:
        labels = [(i, ln.strip()) for i, ln in enumerate(text.splitlines(), 1) if ln.strip()]
    state = list(task.init)
    plan = []
    for line, label in labels:
        ks = [k for k, a in enumerate(task.actions) if a.label == label and applicable(a, state)]
        if not ks:
            raise PuzzleError(f"action {label!r} is unknown or not applicable here", path, line, code=code)
        plan.append(ks[0])
        state = apply(task, task.actions[ks[0]], state)
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
    print("\nengines:")
    for name, desc in DESCRIPTIONS.items():
        print(f"  {name}: {desc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
