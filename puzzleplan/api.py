"""The library entry points the CLI, the bench and users' scripts share.

``load_model`` finds a bundled model by name or a model file by path;
``load_task`` parses an instance (``FILE`` or ``FILE#ID``), applies
``-O`` options and grounds the task; ``solve`` runs one engine and replays
its plan in the independent reference checker before anything is reported.
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from .encodings.kernel import BACKENDS, Kernel, make_kernel
from .ir.csp import CspTask, ground_csp
from .ir.task import Task, ground
from .lang.csp import CspModel
from .lang.errors import EXIT_UNKNOWN_ENGINE, ModelError, OptionError, PuzzleError
from .lang.model import Model, Option
from .lang.records import Record, select_record
from .solvers import CSP_ONLY, ENGINES, TASK_ONLY, Limits, Result, uses_macro
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
        if not p.is_file():
            raise ModelError("no such model file", name_or_path)
        path = p
    else:
        d = _models_dir()
        path = d / f"{name_or_path}.py" if d else Path(name_or_path)
        if not path.is_file() or name_or_path.startswith("_"):
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


def load_task(model: str | ModuleType, instance: str, options: list[str] | None = None) -> Loaded:
    mod = load_model(model) if isinstance(model, str) else model
    opts = parse_options(mod, options or [])
    path, rid = split_instance(instance)
    rec = (_line_record(path, rid) if getattr(mod, "ONE_PER_LINE", False)
           else select_record(path, rid, comment_marker(mod)))
    data = _call_model(mod, f"parse {path}", mod.parse, rec)
    built = _call_model(mod, "build this instance", mod.build, data, **opts)
    if isinstance(built, CspModel):  # a constraint model (lang/csp.py)
        return Loaded(mod, rec, data, opts, ground_csp(built), instance)  # type: ignore[arg-type]
    if not isinstance(built, Model):
        raise ModelError(f"build() returned {type(built).__name__}, not a Model",
                         getattr(mod, "__file__", None))
    task = ground(built)
    return Loaded(mod, rec, data, opts, task, instance)


def _line_record(path: str, rid: str | None) -> Record:
    """For models declaring ``ONE_PER_LINE``: every non-comment line is a record; ``FILE#k`` = line k."""
    from .lang.errors import InstanceError
    from .lang.records import read_records

    lines = [ln for r in read_records(path) for ln in r.lines]
    if rid is None:
        k = 1
    elif rid.isdigit() and 1 <= int(rid) <= len(lines):
        k = int(rid)
    else:
        raise InstanceError(f"no record {rid!r}: this file holds {len(lines)}, one per line "
                            f"(#1..#{len(lines)})",
                            path)
    return Record(path, [lines[k - 1]], id=str(k))


def _call_model(mod: ModuleType, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a model-file function; anything it raises that is not a PuzzleError is a model bug (32)."""
    try:
        return fn(*args, **kwargs)
    except PuzzleError:
        raise
    except Exception as e:
        f = getattr(mod, "__file__", None) or "model"
        raise ModelError(f"model failed to {what}: {type(e).__name__}: {e}", f,
                         _line_in(e, Path(f))) from None


def check_engine(name: str) -> None:
    if name not in ENGINES:
        raise PuzzleError(f"unknown engine {name!r} (choose from {', '.join(ENGINES)})",
                          code=EXIT_UNKNOWN_ENGINE)


def engine_options(engine: str, pairs: list[str], task: Any = None,
                   model: ModuleType | None = None) -> dict[str, Any]:
    """``-E key=value`` pairs checked against the engine function's keyword parameters.

    ``task``: a constraint task selects the constraint-model engine of that name. ``model``: the pairs came
    from ``-O``, so an unknown key is named as unknown to both the model and the engine.
    """
    import inspect

    fn = _csp_engine(engine) if isinstance(task, CspTask) else ENGINES[engine]
    params = {n: p for n, p in inspect.signature(fn).parameters.items()
              if n not in ("kernel", "limits", "task", "macro_backend")
              and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise OptionError(f"engine option {pair!r} must look like key=value")
        key, text = (x.strip() for x in pair.split("=", 1))
        if key not in params or key == "enumerate_all":
            known = ", ".join(n for n in params if n != "enumerate_all") or "none"
            if model is not None:
                mk = ", ".join(o.name for o in model_options(model)) or "none"
                name = getattr(model, "NAME", "?")
                raise OptionError(f"unknown option {key!r}: not an option of model {name} "
                                  f"(known: {mk}) nor of engine {engine} (known: {known})")
            raise OptionError(f"engine {engine} has no option {key!r} (known: {known})")
        default = params[key].default
        try:
            if isinstance(default, bool):
                if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError
                out[key] = text.lower() in ("true", "1", "yes")
            elif isinstance(default, int):
                out[key] = int(text)
            elif isinstance(default, float):
                out[key] = float(text)
            else:
                out[key] = text
        except ValueError:
            raise OptionError(f"engine option {key}: {text!r} is not a valid "
                              f"{type(default).__name__}") from None
    return out


def solve(loaded: Loaded, engine: str = "bfs", limits: Limits | None = None, kernel: str = "numba",
          **engine_options: Any) -> Result:
    """Run one engine; its plan is replayed by the reference checker before we return it."""
    check_engine(engine)
    if isinstance(loaded.task, CspTask):
        return solve_csp(loaded, engine, limits, **engine_options)
    if engine in CSP_ONLY:
        raise OptionError(f"engine {engine} works on constraint models only; "
                          f"{getattr(loaded.model, 'NAME', loaded.task.name)} is a transition model")
    if uses_macro(engine, loaded.task, engine_options):
        k = loaded.kernel("numpy")
        engine_options = {**engine_options, "macro_backend": kernel}
    else:
        k = loaded.kernel("numpy" if engine in TASK_ONLY else kernel)
    result = ENGINES[engine](k, limits or Limits(), **engine_options)
    result.stats["kernel"] = result.stats.get("macro", {}).get("kernel", k.backend)
    if loaded.kernel_note:
        result.stats["kernel_note"] = loaded.kernel_note
    if result.plan is not None:
        chk = check_plan(loaded.task, result.plan)
        result.stats["verified"] = chk.ok
        if not chk.ok or chk.cost != result.cost:
            result.message = (f"plan rejected by the reference checker: {chk.message or 'cost differs'} "
                              f"(engine said {result.cost}, checker {chk.cost})")
            result.stats["verified"] = False
    return result


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


def _csp_engine(engine: str) -> Any:
    from .solvers.csp import engines

    table = engines()
    if engine not in table:
        raise OptionError(f"engine {engine} does not solve constraint models (use one of {', '.join(table)})")
    return table[engine]


def is_constraint_task(task: Any) -> bool:
    return isinstance(task, CspTask)


def with_seed(engine: str, task: Any, options: dict[str, Any], seed: int) -> dict[str, Any]:
    """``options`` plus ``seed`` where the engine takes one (ga, cpsat, ...) and the options do not set it.

    One rule for the command line's ``--seed`` and for bench suites' ``seeds``, for both kinds of model.
    """
    import inspect

    fn = _csp_engine(engine) if isinstance(task, CspTask) else ENGINES[engine]
    out = dict(options)
    if "seed" in inspect.signature(fn).parameters and "seed" not in out:
        out["seed"] = seed
    return out


def constraint_engine_defaults(engine: str, options: dict[str, Any], seed: int = 0,
                               count: int = 1) -> dict[str, Any]:
    """Fill ``seed`` and ``count`` from the command line where the engine takes them and -E did not."""
    import inspect

    params = inspect.signature(_csp_engine(engine)).parameters
    out = dict(options)
    if count != 1:
        if "count" not in params:
            raise OptionError(f"engine {engine} cannot count solutions")
        out["count"] = count
    return out


def solve_csp(loaded: Loaded, engine: str, limits: Limits | None = None, **options: Any) -> Result:
    """A constraint model on one engine; the assignment is re-checked by the plain-Python checker."""
    from .verify.csp import check_assignment

    task: CspTask = loaded.task  # type: ignore[assignment]
    result = _csp_engine(engine)(task, limits or Limits(), **options)
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
