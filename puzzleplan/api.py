"""The library entry points the CLI, the bench and users' scripts share.

``load_model`` finds a bundled model by name or a model file by path;
``load_task`` parses an instance (``FILE`` or ``FILE#ID``), applies
``-O`` options and grounds the task; ``solve`` runs one engine and replays
its plan in the independent reference checker before anything is reported.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from .encodings.kernel import BACKENDS, Kernel, make_kernel
from .ir.csp import CspTask, ground_csp
from .ir.task import Task, ground
from .lang.csp import CspModel
from .lang.errors import ModelError, OptionError, PuzzleError
from .lang.model import Model, Option
from .lang.records import Record, select_record
from .solvers import Limits, Result, registry, uses_macro
from .solvers.result import STOP, Clock, Interrupted
from .verify.reference import check_plan

EXIT_OK = 0
EXIT_UNSOLVABLE = 10
EXIT_LIMIT = 12
EXIT_DISAGREE = 20
EXIT_PLAN_REJECTED = 21

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"


def bundled_models() -> list[str]:
    d = _models_dir()
    if d is None:
        return []
    return sorted(p.stem for p in d.glob("*.py") if not p.stem.startswith("_"))


def _models_dir() -> Path | None:
    if MODELS_DIR.is_dir():
        return MODELS_DIR
    spec = importlib.util.find_spec("puzzleplan.models")
    if spec and spec.submodule_search_locations:
        return Path(list(spec.submodule_search_locations)[0])
    return None


def load_model(name_or_path: str) -> ModuleType:
    """A bundled model (``klotski``) or a model file (``path/to/model.py``)."""
    p = Path(name_or_path)
    if p.suffix == ".py" or "/" in name_or_path:
        if not _is_file(p):
            raise ModelError("no such model file", name_or_path)
        path = p
    else:
        d = _models_dir()
        path = d / f"{name_or_path}.py" if d else Path(name_or_path)
        if not _is_file(path) or name_or_path.startswith("_"):
            known = ", ".join(bundled_models()) or "none found"
            raise ModelError(f"unknown model {name_or_path!r} (bundled: {known}; "
                             "or give a path to a .py file)")
    mod_name = f"puzzleplan_model_{path.stem}_{abs(hash(str(path.resolve())))}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise ModelError("cannot load model file", str(path))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = mod
    try:
        spec.loader.exec_module(mod)
        for attr in ("parse", "build"):
            if not callable(getattr(mod, attr, None)):
                raise ModelError(f"model file defines no {attr}() function", str(path))
    except PuzzleError:
        sys.modules.pop(mod_name, None)
        raise
    except SyntaxError as e:
        sys.modules.pop(mod_name, None)
        raise ModelError(f"syntax error in model file: {e.msg}", str(path), e.lineno) from None
    except Exception as e:  # a broken model file is the user's input: report it, one line
        sys.modules.pop(mod_name, None)
        raise ModelError(f"model file failed to load: {type(e).__name__}: {e}", str(path),
                         _line_in(e, path)) from None
    return mod


def _is_file(p: Path) -> bool:
    """``Path.is_file`` that answers False, not OSError, for a name the file system cannot hold."""
    try:
        return p.is_file()
    except (OSError, ValueError):
        return False


def _line_in(exc: BaseException, path: Path) -> int | None:
    line = None
    for fr in traceback.extract_tb(exc.__traceback__):
        if Path(fr.filename).resolve() == path.resolve():
            line = fr.lineno
    return line


def model_options(mod: ModuleType) -> list[Option]:
    return list(getattr(mod, "OPTIONS", []))


def parse_options(mod: ModuleType, pairs: list[str]) -> dict[str, Any]:
    """``["metric=steps"]`` -> ``{"metric": "steps"}``, every option checked against the model's list."""
    opts = {o.name: o for o in model_options(mod)}
    values = {name: o.default for name, o in opts.items()}
    for pair in pairs:
        if "=" not in pair:
            raise OptionError(f"option {pair!r} must look like key=value")
        key, text = pair.split("=", 1)
        key = key.strip()
        if key not in opts:
            known = ", ".join(opts) or "none"
            name = getattr(mod, "NAME", "?")
            raise OptionError(f"unknown option {key!r} for model {name} (known: {known})")
        values[key] = opts[key].convert(text.strip())
    return values


def comment_marker(mod: ModuleType) -> str:
    """What starts a comment line in the model's instance files: ``COMMENT`` in the model, else ``#``."""
    return str(getattr(mod, "COMMENT", "#"))


def split_model_engine_options(model: str, pairs: list[str]) -> tuple[list[str], list[str]]:
    """``-O`` pairs the model does not declare go to the engine, so ``-O preset=paper`` works as the papers'
    readers expect; a key neither knows is then reported by :func:`engine_options` with both lists."""
    keys = {o.name for o in model_options(load_model(model))}
    mine = [p for p in pairs if "=" not in p or p.split("=", 1)[0].strip() in keys]
    return mine, [p for p in pairs if p not in mine]


def split_instance(arg: str) -> tuple[str, str | None]:
    if "#" in arg:
        path, rid = arg.rsplit("#", 1)
        return path, rid or None
    return arg, None


@dataclass
class Loaded:
    model: ModuleType
    record: Record
    data: Any
    options: dict[str, Any]
    task: Task
    instance: str
    kernels: dict[str, Kernel] = field(default_factory=dict)
    kernel_note: str = ""

    def kernel(self, backend: str = "numba") -> Kernel:
        """The successor kernel; a compiled kernel that numba cannot build falls back to numpy.

        Very large generated kernels (thousands of lines for a big board) can exhaust
        numba's recursion or memory; the numpy kernel has the same semantics (the
        differential tests hold them equal), so the search goes on, slower, with a note.
        """
        if backend not in BACKENDS:
            raise OptionError(f"unknown kernel {backend!r} (choose from {', '.join(BACKENDS)})")
        if backend not in self.kernels:
            k = make_kernel(self.task, backend, fallback=True)
            if k.backend != backend:
                self.kernel_note = ("numba could not compile this task's kernel; used the numpy kernel")
                self.kernels.setdefault(k.backend, k)
            self.kernels[backend] = k
        return self.kernels[backend]

    def labels(self, result: Result) -> list[str] | None:
        """``result``'s plan as action labels (``Result.plan`` holds action numbers, which mean
        something only against this task); None when the engine returned no plan."""
        return None if result.plan is None else plan_labels(self.task, result.plan)

    def moves(self, result: Result) -> list[str] | None:
        """``result``'s plan as counted moves: zero-cost steps folded into the step before them
        (:func:`plan_moves`, what ``solve`` prints); None when the engine returned no plan."""
        return None if result.plan is None else plan_moves(self.task, result.plan)


def load_task(model: str | ModuleType, instance: str, options: list[str] | None = None) -> Loaded:
    mod = load_model(model) if isinstance(model, str) else model
    opts = parse_options(mod, options or [])
    path, rid = split_instance(instance)
    rec = (_line_record(path, rid) if getattr(mod, "ONE_PER_LINE", False)
           else select_record(path, rid, comment_marker(mod)))
    data = _call_model(mod, f"parse {path}", mod.parse, rec)
    built = _call_model(mod, "build this instance", mod.build, data, **opts)
    if isinstance(built, CspModel):  # a constraint model (lang/csp.py)
        task_: Any = _call_model(mod, "ground the constraint model", ground_csp, built)
        return Loaded(mod, rec, data, opts, task_, instance)
    if not isinstance(built, Model):
        code = getattr(mod.build, "__code__", None)
        raise ModelError(f"build() returned {type(built).__name__}, not a Model",
                         getattr(mod, "__file__", None), code.co_firstlineno if code else None)
    # grounding runs the model's action schemas: their errors are the model file's, with its line
    task = _call_model(mod, "ground the model", ground, built)
    if task.patterns:   # pattern databases (Model.pattern): built or loaded now, maxed into the heuristic
        from .solvers import pdb

        task = _call_model(mod, "build its pattern databases", pdb.attach, task)
    return Loaded(mod, rec, data, opts, task, instance)


def _line_record(path: str, rid: str | None) -> Record:
    """For models declaring ``ONE_PER_LINE``: every non-comment line is a record; ``FILE#k`` = line k."""
    from .lang.errors import InstanceError, echo
    from .lang.records import is_uint, read_records, to_int

    lines = [ln for r in read_records(path) for ln in r.lines]
    k = 1 if rid is None else to_int(rid, 1, len(lines)) if is_uint(rid) else None
    if k is None:
        raise InstanceError(f"no record {echo(rid or '')}: this file holds {len(lines)}, one per line "
                            f"(#1..#{len(lines)})",
                            path)
    return Record(path, [lines[k - 1]], id=str(k))


def _call_model(mod: ModuleType, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a model-file function; anything it raises that is not a PuzzleError is a model bug (32)."""
    f = getattr(mod, "__file__", None) or "model"
    try:
        return fn(*args, **kwargs)
    except ModelError as e:
        if e.file is None:  # raised by the language on the model's behalf: name the model file's line
            e.file, e.line = f, e.line if e.line is not None else _line_in(e, Path(f))
        raise
    except PuzzleError:
        raise
    except Exception as e:
        raise ModelError(f"model failed to {what}: {type(e).__name__}: {e}", f,
                         _line_in(e, Path(f))) from None


def check_engine(name: str) -> None:
    """An unknown engine name is a one-line error with exit code 33."""
    registry.get(name)


def model_kind(task: Any) -> str:
    return registry.CONSTRAINT if isinstance(task, CspTask) else registry.TRANSITION


def engine_options(engine: str, pairs: list[str], task: Any = None,
                   model: ModuleType | None = None) -> dict[str, Any]:
    """``-E key=value`` pairs converted and range-checked by the engine's registry record.

    ``task``: a constraint task selects the engine's constraint-model mode. ``model``: the pairs came
    from ``-O``, so an unknown key is named as unknown to both the model and the engine.
    """
    kind = model_kind(task)
    mode = registry.mode_for(engine, kind, _model_name(model, task))
    if model is not None:
        for pair in pairs:
            key = pair.split("=", 1)[0].strip()
            if "=" in pair and mode.option(key) is None:
                known = ", ".join(o.name for o in mode.options) or "none"
                mk = ", ".join(o.name for o in model_options(model)) or "none"
                name = getattr(model, "NAME", "?")
                raise OptionError(f"unknown option {key!r}: not an option of model {name} "
                                  f"(known: {mk}) nor of engine {engine} (known: {known})")
    return registry.parse_options(engine, kind, pairs)


def _model_name(model: ModuleType | None, task: Any) -> str:
    if model is not None:
        return str(getattr(model, "NAME", ""))
    return str(getattr(task, "name", "") or "")


# the kernels a caller may ask for: a backend, or "auto" (the compiled kernel when it is cached for
# this task and engine, else the interpreted one; a long search then compiles in the background)
KERNELS = ("auto", *BACKENDS)

# an "auto" search on the interpreted kernel that ran longer than this (seconds) starts a background
# compile of the specialised kernel, so that the next run of the same structure finds it cached
AUTO_COMPILE_AFTER_S = 5.0
# ... and one that is still running this long (seconds) compiles it in a child meanwhile and switches
# to it at its next slice boundary (solvers/upgrade.py); PUZZLEPLAN_UPGRADE_AFTER_S overrides
UPGRADE_AFTER_S = 2.0


def solve(loaded: Loaded, engine: str = "bfs", limits: Limits | None = None, kernel: str = "auto",
          **engine_options: Any) -> Result:
    """Run one engine; its plan is replayed by the reference checker before we return it."""
    if isinstance(loaded.task, CspTask):
        return solve_csp(loaded, engine, limits, **engine_options)
    mode = registry.mode_for(engine, registry.TRANSITION, _model_name(loaded.model, loaded.task))
    if kernel not in KERNELS:
        raise OptionError(f"unknown kernel {kernel!r} (choose from {', '.join(KERNELS)})")
    limits = limits or Limits()
    t0 = time.perf_counter()
    macro = uses_macro(engine, loaded.task, engine_options)
    backend = "numpy" if mode.kernel == "task" else concrete_kernel(loaded, engine, kernel, macro)
    note = ""
    variant = mode.warm_variant(engine_options) if mode.warm_variant is not None else ""
    if backend in ("numba", "interpreted"):
        backend, note = _compile_first(loaded, engine, mode.function(), limits, macro, engine_options,
                                       backend, variant)
    if note and mode.kernel == "compiled":   # idastar has no numpy path: the limit came first
        return _no_kernel(loaded, engine, limits, t0, note)
    with STOP.polled():                      # loading numba's cache: a signal waits for its end
        if macro:
            k = loaded.kernel("numpy")
            engine_options = {**engine_options, "macro_backend": backend}
        else:
            k = loaded.kernel(backend)
    if STOP.signum is not None and STOP.raising:
        raise Interrupted(STOP.signum)
    if "task_source" in mode.internal and "task_source" not in engine_options:   # dbfs's Ray workers
        engine_options = {**engine_options, "task_source": task_source(loaded)}
    compile_s = time.perf_counter() - t0
    upgrade = _plan_upgrade(loaded, engine, mode, k, kernel, macro, limits, engine_options)
    STOP.raising = False                     # from here on the engine polls: it ends with its bound
    try:
        result = mode.function()(k, limits, **engine_options)
    except Exception as e:
        # pysat's C encoders (CardEnc, ITotalizer) catch SIGINT themselves and raise their own error
        if "keyboard interrupt" not in str(e).lower():
            raise
        import signal

        STOP.request(STOP.signum or signal.SIGINT)
        result = Result("limit", engine, stats=Clock(limits).stats(expanded=0, generated=0, lower_bound=0),
                        message="interrupted while encoding; no plan costs less than 0")
    finally:
        if upgrade is not None:   # also when the engine raised: the cached kernel must not keep it
            k.upgrade = None
            upgrade.close()
    if backend in ("numba", "interpreted") and not macro and k.backend == backend:
        _mark_warm(loaded, engine, backend)
        if variant:
            _mark_warm(loaded, f"{engine}+{variant}", backend, variant)
    elif backend in ("numba", "interpreted") and macro and result.stats.get("expanded", 0):
        _mark_warm(loaded, f"{engine}+macro", backend)
    result.stats["kernel"] = result.stats.get("macro", {}).get("kernel", k.backend)
    result.stats["compile_s"] = round(compile_s, 3)
    if limits.started is not None:
        result.stats["load_s"] = round(t0 - limits.started, 3)
        result.stats["run_s"] = round(time.perf_counter() - limits.started, 3)
    if note or loaded.kernel_note:
        result.stats["kernel_note"] = note or loaded.kernel_note
    upgraded = upgrade is not None and upgrade.state != "waiting"   # compiled, or being compiled
    if upgraded:
        result.stats["kernel_upgrade"] = {"state": upgrade.state, **upgrade.stats}
        if upgrade.state == "switched":
            result.stats["kernel"] = "numba"
            at, took = upgrade.stats["switched_at_s"], upgrade.stats["compile_s"]
            result.stats["kernel_note"] = (f"started on the interpreter; switched to the compiled kernel "
                                           f"after {at:.1f} s of search (its compile took {took:.1f} s "
                                           "beside it)")
    long_run = result.stats.get("time_s", 0) > AUTO_COMPILE_AFTER_S
    if kernel == "auto" and backend == "interpreted" and long_run and not upgraded:
        if _compile_in_background(loaded, engine, engine_options):
            result.stats["kernel_note"] = ("the search ran long enough to repay a compile: the specialised "
                                           "kernel is being compiled in the background for the next run")
    if STOP.signum is not None and result.status not in ("optimal", "unsolvable"):
        result.stats["interrupted"] = STOP.name
        if "interrupted" not in result.message:
            result.message = f"interrupted ({STOP.name}); {result.message}".rstrip("; ")
    if result.plan is not None:
        chk = check_plan(loaded.task, result.plan)
        result.stats["verified"] = chk.ok
        if not chk.ok or chk.cost != result.cost:
            result.message = (f"plan rejected by the reference checker: {chk.message or 'cost differs'} "
                              f"(engine said {result.cost}, checker {chk.cost})")
            result.stats["verified"] = False
    return result


def task_source(loaded: Loaded) -> Any:
    """A picklable recipe that rebuilds ``loaded.task`` in another process (a Ray worker of dbfs).

    Why not the task itself: it holds hash-consed expressions and the model's renderer, which do
    not pickle; the model file, the instance (absolute paths) and the options do.
    """
    import functools

    model = getattr(loaded.model, "__file__", None) or getattr(loaded.model, "NAME", "")
    file, sep, rid = loaded.instance.partition("#")
    instance = os.path.abspath(file) + sep + rid if os.path.isfile(file) else loaded.instance
    options = [f"{k}={v}" for k, v in loaded.options.items()]
    return functools.partial(_rebuilt_task, str(model), instance, options)


def _rebuilt_task(model: str, instance: str, options: list[str]) -> Task:
    return load_task(model, instance, options).task  # type: ignore[return-value]


def _plan_upgrade(loaded: Loaded, engine: str, mode: Any, k: Any, kernel: str, macro: bool, limits: Limits,
                  options: dict[str, Any]) -> Any:
    """An ``auto`` search on the interpreter may move to the compiled kernel mid-run (solvers/upgrade.py).

    Only where the compiled kernel is a drop-in replacement (not a macro search, whose sub-kernels
    are built inside the engine), the platform forks, and background compiles are allowed
    (``PUZZLEPLAN_BACKGROUND_COMPILE=0`` turns both off, as the tests do).
    """
    if (kernel != "auto" or macro or k.backend != "interpreted" or not hasattr(os, "fork")
            or os.environ.get("PUZZLEPLAN_BACKGROUND_COMPILE", "1") == "0"
            or mode.kernel not in ("compiled", "any", "macro")):
        return None
    from .solvers.upgrade import Upgrade

    try:
        after = float(os.environ.get("PUZZLEPLAN_UPGRADE_AFTER_S", UPGRADE_AFTER_S))
    except ValueError:
        after = UPGRADE_AFTER_S
    work = _compile_work(loaded, engine, mode.function(), options, False, "numba")
    up = Upgrade(work, lambda: loaded.kernel("numba"), after, limits.progress,
                 detach=limits.max_rss_mb is None, size={"actions": len(loaded.task.actions)})
    k.upgrade = up
    return up


def concrete_kernel(loaded: Loaded, engine: str, kernel: str, macro: bool = False) -> str:
    """The backend ``kernel`` stands for: itself, or for ``auto`` the compiled kernel when numba's cache
    already holds it for this task and engine (or this process built it), else the interpreted one.

    Why not compile at once: a compile costs 15 s to minutes per new model structure, level layout or
    option, while most searches take milliseconds; the interpreter is compiled once per installation.
    A macro search (walks declared) builds its sub-kernels on the way, so it stays interpreted.
    """
    if kernel != "auto":
        return kernel
    if "numba" in loaded.kernels and loaded.kernels["numba"].backend == "numba":
        return "numba"
    if not macro:
        from .encodings import compiled

        try:
            if compiled.is_warm(loaded.task, engine):
                return "numba"
        except PuzzleError:       # no usable cache directory: nothing is cached either
            pass
    return "interpreted"


def _compile_in_background(loaded: Loaded, engine: str, options: dict[str, Any]) -> bool:
    """Start a detached process that compiles this task's kernel for ``engine`` into the cache.

    It runs ``puzzleplan solve ... --kernel numba --max-states 1``: the engine's first expansion
    compiles everything the search calls, and the run marks the kernel warm, so the next ``auto``
    run of this structure uses it.  Off when ``PUZZLEPLAN_BACKGROUND_COMPILE=0`` (the tests).
    """
    import subprocess

    if os.environ.get("PUZZLEPLAN_BACKGROUND_COMPILE", "1") == "0" or options:
        return False
    model = getattr(loaded.model, "__file__", None)
    if not model:
        return False
    argv = [sys.executable, "-m", "puzzleplan.cli", "solve", model, loaded.instance, "-e", engine,
            "--kernel", "numba", "--max-states", "1", "--quiet", "--json"]
    for key, value in loaded.options.items():
        argv += ["-O", f"{key}={value}"]
    try:
        subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return False
    return True


def _compile_first(loaded: Loaded, engine: str, fn: Any, limits: Limits, macro: bool,
                   options: dict[str, Any], backend: str = "numba", variant: str = "") -> tuple[str, str]:
    """Compile the kernel in a child process when the run must stay stoppable while it compiles.

    That is when a time limit is set or the CLI catches signals, the platform forks, and this
    engine has not run on this kernel before (``compiled.is_warm``; for the interpreter, which is
    compiled once per installation and cache, ``interp.warm_marker``).  The child runs the engine
    for one state, which compiles everything the search calls into numba's disk cache; the
    search then loads it from there.  With a time limit, the child gets at most half the time
    that is left, so a search on the numpy kernel still has the other half.  Returns the backend
    to use and, when it is not the one asked for, why.
    """
    from .encodings.kernel import CHILD_NO_NUMBA, CHILD_OVER_MEMORY, compile_in_child
    from .solvers.result import rss_bytes

    if (backend in loaded.kernels and not macro) or not hasattr(os, "fork"):
        return backend, ""
    if limits.time_s is None and not STOP.installed and limits.max_rss_mb is None:
        return backend, ""
    key = f"{engine}+macro" if macro else f"{engine}+{variant}" if variant else engine
    with STOP.polled():
        if _is_warm(loaded, key, backend, macro, variant):
            return backend, ""

    work = _compile_work(loaded, engine, fn, options, macro, backend, variant)
    now = time.perf_counter()
    deadline = limits.deadline(now)
    wait = None if deadline is None else (deadline - now) / 2
    budget = None if limits.max_rss_mb is None else max(int(limits.max_rss_mb * 2**20) - rss_bytes(), 0)
    _kernel_event(limits, "compile_start", actions=len(loaded.task.actions), background=False)
    code = compile_in_child(work, wait, lambda: STOP.signum is not None, budget)
    _kernel_event(limits, "compile_end", compile_s=round(time.perf_counter() - now, 3), code=code)
    if code is None and STOP.signum is not None:
        raise Interrupted(STOP.signum)
    what = "the compiled kernel" if backend == "numba" else "the interpreter (compiled once per installation)"
    if code is None:
        return "numpy", (f"{what} was not ready within half the time limit "
                         f"({wait:.1f} s); used the numpy kernel")
    if code == CHILD_OVER_MEMORY:
        return "numpy", (f"{what} needed more memory to compile than --max-memory leaves "
                         f"({limits.max_rss_mb:g} MiB in all); used the numpy kernel")
    if code == CHILD_NO_NUMBA:
        return "numpy", "numba could not compile this task's kernel; used the numpy kernel"
    return backend, ""


def _compile_work(loaded: Loaded, engine: str, fn: Any, options: dict[str, Any], macro: bool,
                  backend: str, variant: str = "") -> Any:
    """What a compile child runs: the engine for one state, which compiles everything the search
    calls into numba's disk cache, then the warm marker.  Returns the child's exit code."""
    from .encodings.kernel import CHILD_NO_NUMBA, CHILD_OK

    key = f"{engine}+macro" if macro else f"{engine}+{variant}" if variant else engine

    def work() -> int:
        # a macro search builds its sub-kernels (mover, walk graph) on its first expansion
        k = loaded.kernel("numpy" if macro else backend)
        if not macro and k.backend != backend:
            return CHILD_NO_NUMBA
        extra = {"macro_backend": backend} if macro else {}
        try:
            fn(k, Limits(max_states=1), **options, **extra)
        except Exception:    # the engine's own errors are reported by the real run
            pass
        _mark_warm(loaded, key, backend, variant)
        return CHILD_OK

    return work


def _kernel_event(limits: Limits, name: str, **figures: Any) -> None:
    """Tell the progress listener (live line, JSON lines) about a compile: it is no silent wait."""
    if limits.progress is not None:
        elapsed = 0.0 if limits.started is None else time.perf_counter() - limits.started
        limits.progress.update({"event": name, "elapsed_s": round(elapsed, 3), **figures})


def _is_warm(loaded: Loaded, engine: str, backend: str, macro: bool = False, variant: str = "") -> bool:
    """Has ``engine`` run on this kernel before (so numba's disk cache holds what it calls)?

    For a macro search the sub-kernels are other tasks' modules: the marker alone answers.
    """
    from .encodings import compiled

    if backend == "interpreted":
        from .encodings import interp

        return interp.warm_marker(variant).exists()
    if macro:
        return compiled.warm_marker(loaded.task, engine).exists()
    return compiled.is_warm(loaded.task, engine)


def _mark_warm(loaded: Loaded, engine: str, backend: str = "numba", variant: str = "") -> None:
    from .encodings import compiled

    try:
        if backend == "interpreted":
            from .encodings import interp

            interp.warm_marker(variant).touch()
        else:
            compiled.warm_marker(loaded.task, engine).touch()
    except (OSError, PuzzleError):
        pass


def _no_kernel(loaded: Loaded, engine: str, limits: Limits, t0: float, note: str) -> Result:
    """The limit came while the compiled kernel an engine needs was compiling: a limit result,
    with the heuristic's value at the start as the bound when the model declares it admissible."""

    clock = Clock(limits)
    stats = clock.stats(expanded=0, generated=0, compile_s=round(time.perf_counter() - t0, 3),
                        kernel="numpy", kernel_note=note)
    task = loaded.task
    bound = 0
    if task.heuristic is not None and task.heuristic_admissible:
        k = loaded.kernel("numpy")
        bound = int(k.heuristic(k.init_state())[0])
    stats["lower_bound"] = bound
    return Result("limit", engine, stats=stats,
                  message=f"time limit: {note.split(';')[0]}; no plan costs less than {bound} "
                          "(the heuristic at the start)")


def exit_code(result: Result) -> int:
    if result.plan is not None and not result.stats.get("verified", False):
        return EXIT_PLAN_REJECTED
    if getattr(result, "assignment", None) is not None and not result.stats.get("verified", False):
        return EXIT_PLAN_REJECTED
    if result.status in ("optimal", "solved"):
        return EXIT_OK
    if result.status == "unsolvable":
        return EXIT_UNSOLVABLE
    return EXIT_LIMIT


def plan_labels(task: Task, plan: list[int]) -> list[str]:
    """One label per step: a plan is action numbers (``Result.plan``), readable only with its task."""
    return [task.actions[k].label for k in plan]


def plan_moves(task: Task, plan: list[int]) -> list[str]:
    """Labels with zero-cost steps folded into the step before them ("E left" + "E down" -> "E left down").

    With 0/1 cost models (one move = a run of free steps) this prints one item per counted move.
    """
    out: list[str] = []
    for k in plan:
        a = task.actions[k]
        if a.cost == 0 and out:
            prev_words = out[-1].split()
            words = a.label.split()
            shared = 0
            while shared < min(len(prev_words), len(words)) - 1 and prev_words[shared] == words[shared]:
                shared += 1
            out[-1] += " " + " ".join(words[shared:])
        else:
            out.append(a.label)
    return out


def is_constraint_task(task: Any) -> bool:
    return isinstance(task, CspTask)


def with_seed(engine: str, task: Any, options: dict[str, Any], seed: int) -> dict[str, Any]:
    """``options`` plus ``seed`` where the engine takes one (ga, cpsat, ...) and the options do not set it.

    One rule for the command line's ``--seed`` and for bench suites' ``seeds``, for both kinds of model.
    """
    mode = registry.mode_for(engine, model_kind(task))
    out = dict(options)
    if mode.option("seed") is not None and "seed" not in out:
        out["seed"] = seed
    return out


def constraint_engine_defaults(engine: str, options: dict[str, Any], seed: int = 0,
                               count: int = 1) -> dict[str, Any]:
    """Fill ``count`` from the command line where the engine takes it and -E did not."""
    out = dict(options)
    if count != 1:
        if registry.mode_for(engine, registry.CONSTRAINT).option("count") is None:
            raise OptionError(f"engine {engine} cannot count solutions")
        out["count"] = count
    return out


def solve_csp(loaded: Loaded, engine: str, limits: Limits | None = None, **options: Any) -> Result:
    """A constraint model on one engine; the assignment is re-checked by the plain-Python checker."""
    from .verify.csp import check_assignment

    task: CspTask = loaded.task  # type: ignore[assignment]
    mode = registry.mode_for(engine, registry.CONSTRAINT, _model_name(loaded.model, task))
    result = mode.function()(task, limits or Limits(), **options)
    result.stats["kernel"] = "-"
    result.stats["count"] = options.get("count", 1)
    if result.assignment is not None:
        chk = check_assignment(task, result.assignment)
        result.stats["verified"] = chk.ok
        if not chk.ok:
            result.message = f"assignment rejected by the checker: {chk.message}"
    return result


def solution_rows(loaded: Loaded, values: list[int] | None) -> list[list[int]] | None:
    """An assignment as grid rows (top to bottom) when the model declared a grid, else one row."""
    if values is None:
        return None
    shape = getattr(loaded.task, "shape", None)
    if shape is None:
        return [list(values)]
    r, c = shape
    return [list(values[i * c:(i + 1) * c]) for i in range(r)]


def result_json(loaded: Loaded, result: Result) -> dict[str, Any]:
    out: dict[str, Any] = {"status": result.status, "optimal": result.optimal, "cost": result.cost}
    if isinstance(loaded.task, CspTask):
        from .solvers.csp import uniqueness

        out.update(solution=solution_rows(loaded, getattr(result, "assignment", None)),
                   solutions=getattr(result, "solutions", None),
                   unique=uniqueness(result, result.stats.get("count", 1)),  # type: ignore[arg-type]
                   plan=None)
    else:
        plan = result.plan
        out.update(plan=plan_labels(loaded.task, plan) if plan is not None else None,
                   steps=len(plan) if plan is not None else None,
                   moves=plan_moves(loaded.task, plan) if plan is not None else None)
    out.update(engine=result.engine, proof=result.proof, message=result.message,
               model=getattr(loaded.model, "NAME", loaded.task.name), instance=loaded.instance,
               options=dict(loaded.options), stats=result.stats)
    return out


def picture(loaded: Loaded, result: Result | None = None, per: str = "move") -> Any:
    """Something Jupyter displays: the start (no result), a solved assignment, or a plan's replay.

    ``render.Board`` shows itself as SVG, ``render.Replay`` as a strip of SVG frames (one per move,
    or per step with ``per="step"``); both print as Unicode text.  Needs a model with a look.
    """
    from . import render

    if result is None:
        return render.Board(loaded.task)
    assignment = getattr(result, "assignment", None)
    if assignment is not None:
        return render.Board(loaded.task, assignment)
    if result.plan is not None:
        return render.Replay(loaded.task, result.plan, per)
    return render.Board(loaded.task)
