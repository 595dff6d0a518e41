"""The one place engines and their options are declared.

Why a registry: the CLI's ``--engine`` help, ``puzzleplan models``, option
parsing and range checks, ``verify``'s choice of engines and its grouping by
paradigm all need the same facts about an engine.  Each fact is written once
here, as data; nothing else lists engines.  The engine functions are named by
``module:function`` and imported only when run, so listing engines (``--help``,
``models``) loads neither numba, OR-Tools nor python-sat.

Adding an engine: write its module in ``solvers/`` and add one ``Engine``
record below.  ``tests/test_registry.py`` checks every record's options against
its function's signature, so the two cannot drift apart.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..lang.errors import EXIT_UNKNOWN_ENGINE, OptionError, PuzzleError

# model kinds
TRANSITION = "transition"
CONSTRAINT = "constraint"

# paradigms: two engines of one paradigm share their machinery, so their agreement is not independent
EXPLICIT = "explicit-state"      # search over the kernels (bfs, ucs, astar, idastar)
SYMBOLIC = "symbolic"            # the unrolled task on a SAT or CP solver
EXTERNAL = "external"            # a planner outside puzzleplan on the PDDL export
CONSTRAINT_SEARCH = "constraint search"   # backtracking with propagation over constraint models
HEURISTIC = "heuristic"          # no proofs at all (genetic algorithms)

# the largest integer any engine option accepts: options are counts, horizons, seeds and sizes, and
# a larger value only ever means "allocate more than this machine has"
INT_CAP = 2**31 - 1


@dataclass(frozen=True)
class Opt:
    """One typed engine option: ``-E name=value`` is converted and range-checked from this record."""

    name: str
    type: type
    default: Any
    help: str
    lo: float | None = None
    hi: float | None = None
    choices: tuple[str, ...] | None = None

    def convert(self, engine: str, text: str) -> Any:
        """The value of ``-E name=text``; a one-line ``OptionError`` (exit 31) names the allowed range."""
        bad = OptionError(f"engine {engine}: option {self.name}={_short(text)} is not {self.describe()}")
        t = text.strip()
        if self.type is bool:
            low = t.lower()
            if low not in ("true", "false", "1", "0", "yes", "no", "on", "off"):
                raise bad
            return low in ("true", "1", "yes", "on")
        if self.type is str:
            if self.choices is not None and t not in self.choices:
                raise bad
            if any(ord(c) < 32 for c in t):
                raise bad
            return t
        try:
            value: Any = int(t, 10) if self.type is int else float(t)
        except ValueError:
            raise bad from None
        if self.type is float and not math.isfinite(value):
            raise bad
        if self.lo is not None and value < self.lo:
            raise bad
        hi = self.hi if self.hi is not None else (INT_CAP if self.type is int else None)
        if hi is not None and value > hi:
            raise bad
        return value

    def describe(self) -> str:
        """The allowed values in words, for errors and help."""
        if self.type is bool:
            return "a boolean (true/false)"
        if self.type is str:
            return "one of " + ", ".join(self.choices) if self.choices else "a string"
        kind = "an integer" if self.type is int else "a number"
        hi = self.hi if self.hi is not None else (INT_CAP if self.type is int else None)
        lo_s = None if self.lo is None else _num(self.lo)
        hi_s = None if hi is None else _num(hi)
        if lo_s is not None and hi_s is not None:
            return f"{kind} in {lo_s}..{hi_s}"
        if lo_s is not None:
            return f"{kind} >= {lo_s}"
        return f"{kind} <= {hi_s}" if hi_s is not None else kind


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _short(text: str, n: int = 40) -> str:
    r = repr(text)
    return r if len(r) <= n else r[: n - 4] + "...'"


@dataclass(frozen=True)
class Mode:
    """How an engine runs on one kind of model: its entry point, options and what it proves."""

    entry: str                       # "module:function" under puzzleplan.solvers (":function": the package)
    paradigm: str
    options: tuple[Opt, ...] = ()
    # cost kinds (``Task.cost_kind``: unit, 01, general) on which the engine proves optima; empty = none
    exact_for: frozenset[str] = frozenset()
    # what the kernel argument must be: "compiled" (needs --kernel numba), "task" (reads kernel.task only),
    # "macro" (searches the walk-closed form when the model declares walks), "any"
    kernel: str = "any"
    # hidden keyword arguments the caller may pass that are not user options
    internal: tuple[str, ...] = ()
    # only worth running by default in verify when the model declares an admissible heuristic
    wants_heuristic: bool = False
    optional_extra: str | None = None   # pip extra that provides it (fd)
    # run by verify when no engines are named; False for an engine that repeats another's algorithm
    # on the same kernels (dbfs is bfs partitioned: its agreement with bfs proves nothing new)
    verify_default: bool = True
    # options under which the engine compiles more than its plain run does: the name of that
    # variant (its own warm marker, so a run with a time limit compiles it in a stoppable child)
    warm_variant: Callable[[dict[str, Any]], str] | None = None

    def function(self) -> Callable[..., Any]:
        module, _, name = self.entry.partition(":")
        mod = importlib.import_module(f"{__package__}.{module}" if module else str(__package__))
        return getattr(mod, name)

    def option(self, name: str) -> Opt | None:
        return next((o for o in self.options if o.name == name), None)


@dataclass(frozen=True)
class Engine:
    name: str
    description: str
    transition: Mode | None = None
    constraint: Mode | None = None
    aliases: tuple[str, ...] = field(default=())

    def mode(self, kind: str) -> Mode | None:
        return self.transition if kind == TRANSITION else self.constraint

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(k for k, m in ((TRANSITION, self.transition), (CONSTRAINT, self.constraint)) if m)


_UNIT_01 = frozenset({"unit", "01"})
_ANY_COST = frozenset({"unit", "01", "general"})

_SEED = Opt("seed", int, 0, "random seed (also set by --seed)", lo=0)
_SOLVER = Opt("solver", str, "cadical195", "pysat solver name; one without assumptions or a conflict-"
              "limited solve in this pysat build is refused (solvers/satsolver.py)")
_HORIZON = Opt("horizon", int, None, "largest plan length tried; stop there with 'limit' (default: no cap "
               "but the horizon argument)", lo=1, hi=100_000)
_RUN_BOUND = Opt("run_bound_s", float, None, "seconds for the zero-cost run bound (default 15 s or a "
                 "quarter of the time left)", lo=0)
_SYMMETRY = Opt("symmetry", bool, True, "break symmetry between interchangeable objects")
_INVARIANTS = Opt("invariants", bool, True, "add synthesised mutex invariants")
_UNDO = Opt("undo", bool, True, "forbid an action right after one it undoes (a shortest plan never does)")
_MACRO = (Opt("macro", bool, True, "search the walk-closed (macro) form when the model declares walks"),
          Opt("min_batch", int, 0, "least states expanded per batch (0: the engine's default)", lo=0),
          Opt("width", int, None, "most states taken from one (f, g) bucket per batch, newest first "
              "(default 16384; 0: the whole bucket)", lo=0))
_FROZEN = Opt("frozen", bool, True, "with Model.corrals: count objects frozen on targets as walls in the "
              "bound, and a state with one frozen off its target as dead (solvers/frozen.py)")
_PAIRS = Opt("pairs", bool, True, "with Model.corrals: a state with two objects that could not both reach "
             "targets even alone on the board is dead, and pairs' extra pushes add to the bound "
             "(solvers/pairs.py)")
_TIEBREAK = Opt("tiebreak", bool, True, "with Model.corrals: among open states of equal f and g, take those "
                "with the most objects frozen on targets, then on targets, first (the order inside an f "
                "layer; optimality unchanged)")
_WEIGHT = Opt("weight", float, 1.0, "weighted A*: order by g + weight * h (1: plain A*). Above 1 a plan "
              "comes sooner and is 'solved', not 'optimal': its cost is at most weight times the optimum "
              "(admissible heuristic), so cost / weight, rounded up, is its lower bound", lo=1, hi=100)
_FRONTIER = Opt("frontier", int, None, "unit costs, refuting below the hint's plan: breadth-first layers up "
                "to this depth enumerated by the solver first, the one formula starting from the last "
                "(default: from 31 steps to refute, half of them; 0: off)", lo=0, hi=100_000)
_GA_PRESET = Opt("preset", str, "improved", "published configuration (paper) or ours (improved)",
                 choices=("paper", "improved"))

# the constraint-model GA (solvers/ga.py): the paper's preset and our memetic one ('improved')
_GA_CSP = (
    _GA_PRESET, _SEED,
    Opt("population", int, 0, "genomes per generation (0: the preset's)", lo=0, hi=10_000_000),
    Opt("generations", int, 0, "generations (0: the preset's)", lo=0),
    Opt("evaluations", int, 0, "evaluation budget (0: the preset's)", lo=0),
    Opt("tournament", int, 0, "tournament size, paper preset (0: the preset's)", lo=0, hi=1_000_000),
    Opt("crossover", float, -1.0, "crossover rate (negative: the preset's)", lo=-1, hi=1),
    Opt("mutation", float, -1.0, "mutation rate (negative: the preset's)", lo=-1, hi=1),
    Opt("no_crossover", str, "random", "paper preset: children without crossover (random, copies)",
        choices=("random", "copy")),
    Opt("moves", int, 8, "candidate swaps tried per individual and step (improved)", lo=0, hi=1_000_000),
    Opt("noise", float, 0.25, "chance of taking the best swap even when worse (improved)", lo=0, hi=1),
    Opt("patience", int, 300, "steps without improvement before an individual is re-drawn", lo=0),
    Opt("cross_every", int, 10, "steps between crossovers and repairs (improved)", lo=1),
    Opt("propagate", bool, True, "run the propagators once first and fix what they fix (improved)"),
    Opt("repair", int, 200, "decisions per large-neighbourhood repair, 0 = off (improved)", lo=0),
    Opt("free_groups", int, 2, "permutation scopes freed per repair (improved)", lo=0),
    Opt("restart", int, 150, "steps without a better best before the whole population restarts", lo=0),
    Opt("graded", bool, True, "search counts a records constraint off by d as d (improved)"),
    Opt("history", bool, False, "record the best fitness per generation"),
)

def _dbfs_variant(options: dict[str, Any]) -> str:
    """dbfs's thread executor on bfs layers compiles a parallel layer one worker never calls."""
    threads = int(options.get("workers") or 1) > 1 \
        and options.get("executor", "auto") in ("auto", "threads") and not options.get("ray_address") \
        and options.get("order", "bfs") == "bfs" and options.get("bound") is None
    return "threads" if threads else ""


ENGINES: tuple[Engine, ...] = (
    Engine("bfs", "layer-batched breadth-first search; 0-1 BFS when actions cost 0 (exact for unit and "
                  "0/1 costs)",
           transition=Mode("bfs:solve", EXPLICIT, exact_for=_UNIT_01, internal=("enumerate_all",))),
    Engine("dbfs", "bfs partitioned by key hash over worker shards (in-process or Ray actors), spilling "
                   "visited states to sorted runs on disk, checkpointed per layer (docs/distributed.md)",
           transition=Mode("distributed:solve", EXPLICIT, (
               Opt("workers", int, 1, "shards, one per worker (also set by --workers)", lo=1, hi=4096),
               Opt("executor", str, "auto", "where shards run: local (this process, one after the other), "
                   "threads (this process, one thread each), ray (one actor each), auto (ray with a Ray "
                   "address, else threads when workers > 1)", choices=("auto", "local", "threads", "ray")),
               Opt("ray_address", str, "", "Ray cluster to join (also set by --ray-address; empty: a "
                   "local Ray)"),
               Opt("spill_dir", str, "", "spill visited states to sorted runs here (also set by "
                   "--spill-dir)"),
               Opt("spill_mb", float, 0.0, "RAM per worker for visited states before spilling (0: a third of "
                   "--max-memory per worker, else 1024)", lo=0),
               Opt("checkpoint", str, "", "write a checkpoint here at every layer (also set by "
                   "--checkpoint)"),
               Opt("resume", bool, False, "continue the checkpoint in the checkpoint directory (also "
                   "set by --resume)"),
               Opt("order", str, "bfs", "layers by steps (bfs: unit and 0/1 costs), by cost (ucs: any "
                   "non-negative integer costs) or by f = g + h (astar: the model's heuristic, which must "
                   "be consistent on every expanded edge; checked)", choices=("bfs", "ucs", "astar")),
               Opt("bound", int, None, "drop states whose g + h exceeds this cost (the heuristic need only "
                   "be admissible; bfs then takes cost layers): running out of layers proves that no plan "
                   "costs at most the bound", lo=0),
           ), exact_for=_UNIT_01, internal=("enumerate_all", "task_source", "fault"), verify_default=False,
               warm_variant=_dbfs_variant)),
    Engine("ucs", "uniform-cost search with Dial buckets (exact for any non-negative integer costs)",
           transition=Mode(":_ucs", EXPLICIT, _MACRO, exact_for=_ANY_COST, kernel="macro",
                           internal=("macro_backend",))),
    Engine("astar", "A* batched by f-buckets with the model's heuristic (blind if none), re-opening",
           transition=Mode(":_astar", EXPLICIT, (*_MACRO, _FROZEN, _PAIRS, _TIEBREAK, _WEIGHT),
                           exact_for=_ANY_COST, kernel="macro", internal=("macro_backend",),
                           wants_heuristic=True)),
    Engine("idastar", "IDA* in compiled code, linear memory (deep searches with a good heuristic)",
           transition=Mode("idastar:solve", EXPLICIT,
                           (Opt("max_depth", int, 10_000, "deepest f-bound tried", lo=1, hi=1_000_000),),
                           exact_for=_ANY_COST, kernel="compiled", wants_heuristic=True)),
    Engine("sat", "bounded-horizon planning as SAT on one incremental pysat solver (CaDiCaL); cost via "
                  "totalizer; constraint models: one solver, blocking clauses to count",
           transition=Mode("sat:solve", SYMBOLIC, (
               _SOLVER,
               _HORIZON,
               Opt("heuristic", bool, False, "post the model's admissible heuristic as a bound"),
               _INVARIANTS, _SYMMETRY,
               Opt("max_pairs", int, 200_000, "refuse encodings needing more mutex pairs", lo=1),
               _RUN_BOUND,
               Opt("incremental", bool, True, "grow one solver (false: a new solver per horizon)"),
               _UNDO,
               Opt("hint", bool, None, "take the plan that bfs finds within a tenth of the time (at most "
                   "10 s) as the upper bound to refute: unit costs within 0.25 s at once, else after 3 s "
                   "of the horizon chain; 0/1 costs at once (default: on for unit and 0/1 costs)"),
               _FRONTIER,
           ), exact_for=_ANY_COST, kernel="task"),
           constraint=Mode("csp:solve_sat", SYMBOLIC, (
               Opt("count", int, 1, "solutions to look for (also set by --count)", lo=1),
               _SOLVER,
           ))),
    Engine("cpsat", "the unrolled planning model on OR-Tools CP-SAT, horizon grown until feasible, cost "
                    "minimised; constraint models: CP-SAT, each solution forbidden to count",
           transition=Mode("cpsat:solve", SYMBOLIC, (
               _HORIZON,
               Opt("workers", int, 1, "CP-SAT search workers (1 = deterministic)", lo=1, hi=256),
               _SEED,
               Opt("heuristic", bool, None, "post the model's admissible heuristic as a bound (default: "
                   "unless some action costs 0, where the cuts were measured slower)"),
               _INVARIANTS, _SYMMETRY, _RUN_BOUND, _UNDO,
               Opt("linearization", int, 0, "CP-SAT linearization_level (0: no LP relaxation, measured "
                   "faster on the unrolled models; 2: the most LP)", lo=0, hi=2),
               Opt("encoding", str, "auto", "int: integer state variables (heuristic cuts); clauses: the sat "
                   "engine's clauses, cost counted by a totalizer; auto: clauses for the proof models "
                   "of 0/1 costs when no cuts are posted, else int",
                   choices=("auto", "int", "clauses")),
               Opt("hint", bool, None, "take the plan that bfs finds within a tenth of the time (at most "
                   "10 s) as the upper bound to refute: unit costs within 0.25 s at once, else after 3 s "
                   "of the horizon schedule; 0/1 costs at once (default: on for unit and 0/1 costs)"),
               _FRONTIER,
           ), exact_for=_ANY_COST, kernel="task"),
           constraint=Mode("csp:solve_cpsat", SYMBOLIC, (
               Opt("count", int, 1, "solutions to look for (also set by --count)", lo=1),
               Opt("workers", int, 1, "CP-SAT search workers (1 = deterministic)", lo=1, hi=256),
               _SEED,
           ))),
    Engine("pdr", "proves unsolvability only: IC3/PDR on the one-step SAT encoding, an inductive "
                  "invariant that excludes the goal; never a plan",
           transition=Mode("pdr:solve", SYMBOLIC, (
               _SOLVER,
               Opt("backward", bool, True, "PDR on the reversed system (false: forward)"),
           ), kernel="task")),
    Engine("fd", "Fast Downward (external planner, extra puzzleplan[fd]) on the PDDL export: A* with "
                 "LM-cut, or blind where the PDDL needs derived predicates",
           transition=Mode("fd:solve", EXTERNAL, (
               Opt("search", str, "auto", "auto, lmcut, blind, or any Fast Downward search string"),
               Opt("max_split", int, 256, "largest number of PDDL actions one conditional action may "
                   "split into", lo=1, hi=1_000_000),
               Opt("invariant_s", int, 2, "seconds for Fast Downward's invariant synthesis", lo=0,
                   hi=86_400),
               Opt("keep", str, "", "directory to keep the PDDL and FD's output in"),
               Opt("symmetric", bool, True, "export interchangeable objects anonymously (docs/pddl.md)"),
           ), exact_for=_ANY_COST, kernel="task", optional_extra="fd")),
    Engine("backtrack", "constraint models: depth-first search with propagation by the model's constraints",
           constraint=Mode("backtrack:solve", CONSTRAINT_SEARCH, (
               Opt("count", int, 1, "solutions to look for (also set by --count)", lo=1),
           ))),
    Engine("ga", "genetic algorithm over whole populations: assignments (constraint models) or move "
                 "scripts (transition models declaring script()); -E preset=paper: the published one",
           transition=Mode("scriptga:solve", HEURISTIC, (
               _GA_PRESET, _SEED,
               Opt("population", int, 0, "genomes per generation (0: the preset's)", lo=0, hi=10_000_000),
               Opt("generations", int, 0, "generations (0: the preset's)", lo=0),
               Opt("clauses", int, 0, "clauses per script (0: the preset's)", lo=0, hi=100_000),
               Opt("mutation", float, -1.0, "mutation rate (negative: the preset's)", lo=-1, hi=1),
               Opt("keep", float, -1.0, "share of parents kept (negative: the preset's)", lo=-1, hi=1),
               Opt("target", int, -1, "stop at a plan of cost <= target (negative: never)", lo=-1),
           ), kernel="any"),
           constraint=Mode("ga:solve", HEURISTIC, _GA_CSP)),
)

_BY_NAME = {e.name: e for e in ENGINES}
NAMES: tuple[str, ...] = tuple(_BY_NAME)


def get(name: str) -> Engine:
    """The engine called ``name``; an unknown name is a one-line error with exit code 33."""
    e = _BY_NAME.get(name)
    if e is None:
        raise PuzzleError(f"unknown engine {_short(name)} (choose from {', '.join(NAMES)})",
                          code=EXIT_UNKNOWN_ENGINE)
    return e


def mode_for(name: str, kind: str, model_name: str = "") -> Mode:
    """The engine's mode for a model kind, or a one-line error saying which kinds it works on."""
    e = get(name)
    m = e.mode(kind)
    if m is None:
        other = e.kinds[0] if e.kinds else "no"
        what = f"{model_name} is a {kind} model" if model_name else f"this is a {kind} model"
        raise OptionError(f"engine {name} works on {other} models only; {what}")
    return m


def parse_options(name: str, kind: str, pairs: list[str]) -> dict[str, Any]:
    """``-E key=value`` pairs converted and range-checked against the engine's record."""
    m = mode_for(name, kind)
    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise OptionError(f"engine option {_short(pair)} must look like key=value")
        key, text = pair.split("=", 1)
        key = key.strip()
        opt = m.option(key)
        if opt is None:
            known = ", ".join(o.name for o in m.options) or "none"
            raise OptionError(f"engine {name} has no option {_short(key)} (known: {known})")
        out[key] = opt.convert(name, text)
    return out


def defaults_for_verify(kind: str, cost_kind: str | None, has_heuristic: bool,
                        installed: Callable[[str], bool] | None = None) -> list[str]:
    """Every exact engine that applies to a model: its kind, its cost kind and whether it declares an
    admissible heuristic (IDA* and A* without one would only repeat uniform-cost search, slower)."""
    out = []
    for e in ENGINES:
        m = e.mode(kind)
        if m is None or m.paradigm == HEURISTIC or not m.verify_default:
            continue
        if kind == TRANSITION:
            if cost_kind not in m.exact_for:
                continue
            if m.wants_heuristic and not has_heuristic:
                continue
        if m.optional_extra and installed is not None and not installed(m.optional_extra):
            continue
        out.append(e.name)
    return out


__all__ = ["CONSTRAINT", "CONSTRAINT_SEARCH", "ENGINES", "EXPLICIT", "EXTERNAL", "HEURISTIC", "NAMES",
           "SYMBOLIC", "TRANSITION", "Engine", "Mode", "Opt", "defaults_for_verify", "get", "mode_for",
           "parse_options"]
