"""What both symbolic engines (``sat``, ``cpsat``) share around their encodings: options, bounds, proofs.

A symbolic engine refutes horizons; what turns refutations into claims is the same for
both: the invariants posted from a horizon on (:class:`LazyInvariants`), the longest
loop-free zero-cost run (:func:`run_bound`, for the horizon that covers every cheaper
plan), the model's declared variant (:class:`Variant`, a plan-length bound once
verified) and the value-set state bound (:func:`state_bound`: a loop-free plan is
shorter).  The engine options they parse the same way live here too.
"""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Callable
from typing import Any

from ..encodings.frontier import Layers
from ..encodings.invariants import mutex_invariants, relaxed_fixpoint
from ..encodings.reversals import undo_pairs
from ..encodings.runbound import RunBound, zero_cost_run_bound
from ..encodings.symmetry import symmetry_groups
from ..encodings.unrolled import Invariants, ValueSetError
from ..encodings.variant import VariantCheck, check_variant
from ..lang.errors import OptionError
from ..lang.ops import evaluate
from ..lang.variant import variant_of
from .result import STOP, Clock, Limits


def opt_int(name: str, value: Any, minimum: int = 0) -> int | None:
    """An integer engine option (``-E`` gives strings); None stays None."""
    if value is None:
        return None
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise OptionError(f"engine option {name}: {value!r} is not an integer") from None
    if n < minimum:
        raise OptionError(f"engine option {name} must be >= {minimum}")
    return n


def opt_bool(name: str, value: Any) -> bool | None:
    """A boolean engine option (``-E`` gives strings); None stays None ("automatic")."""
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    if text in ("auto", "none"):
        return None
    raise OptionError(f"engine option {name}: {value!r} is not true/false")


# invariants already synthesised in this process, per task object: `verify` runs sat and cpsat on
# one task, and the synthesis (a deterministic fixpoint) is the same for both.  Only complete
# results are kept (None may mean a deadline); an entry goes when its task is collected.
_SYNTHESISED: dict[tuple[int, bool], tuple[weakref.ref, Invariants]] = {}


def _synthesised(task: Any, symmetric: bool) -> Invariants | None:
    got = _SYNTHESISED.get((id(task), symmetric))
    if got is None:
        return None
    if got[0]() is not task:     # another object at a recycled address
        del _SYNTHESISED[id(task), symmetric]
        return None
    return got[1]


class LazyInvariants:
    """Invariant synthesis (:func:`mutex_invariants`) deferred until a horizon of ``EAGER_FROM``.

    The synthesis costs up to seconds on crowded piece puzzles while short horizons are
    decided in milliseconds without it; invariants only pay off on the long, hard horizons.
    """

    EAGER_FROM = 10

    def __init__(self, task: Any, clock: Clock, enabled: bool, symmetric: bool):
        self.task, self.clock, self.enabled, self.symmetric = task, clock, enabled, symmetric
        self.done = False
        self.value: Invariants | None = None
        self.seconds = 0.0

    def get(self) -> Invariants | None:
        if self.enabled and not self.done:
            t0 = time.perf_counter()
            self.value = _synthesised(self.task, self.symmetric)
            if self.value is None:
                with STOP.held():   # pysat inside: a signal waits for the engine's next poll
                    self.value = mutex_invariants(self.task, deadline=self.clock.deadline,
                                                  symmetric=self.symmetric)
                if self.value is not None:
                    key = (id(self.task), self.symmetric)
                    gone = weakref.ref(self.task, lambda _, key=key: _SYNTHESISED.pop(key, None))
                    _SYNTHESISED[key] = (gone, self.value)
            self.seconds = time.perf_counter() - t0
        self.done = True
        return self.value

    def stats(self) -> dict[str, Any]:
        return {"invariant_pairs": sum(len(p) for p in self.value.values()) if self.value else 0,
                "invariants_s": round(self.seconds, 3)}


def run_bound(task: Any, inv: LazyInvariants, clock: Clock, seconds: float | None) -> RunBound:
    """The zero-cost run bound within ``seconds`` (default: 15 s or a quarter of the time left)."""
    if seconds is None:
        seconds = 15.0
        if clock.deadline is not None:
            seconds = min(seconds, max(clock.deadline - time.perf_counter(), 0.0) / 4)
    if seconds <= 0:
        return RunBound(None, 0.0, sum(1 for a in task.actions if a.cost == 0))
    known = inv.get()
    with STOP.held():
        return zero_cost_run_bound(task, known, deadline=time.perf_counter() + seconds)


class Variant:
    """The model's declared variant (:mod:`puzzleplan.lang.variant`), checked on first use.

    ``threshold`` (``V(init) - lo``) costs one evaluation and is known at once; the check
    (:func:`puzzleplan.encodings.variant.check_variant`) runs only when an engine is about to
    rely on it, i.e. when its horizon reaches the threshold without a plan: a solvable task's
    plans all fit under a valid threshold, so its runs never pay for the check.  The check
    first runs without invariants (cheap) and, if that fails, once more with them.
    """

    def __init__(self, task: Any, inv: LazyInvariants, clock: Clock):
        spec = variant_of(task.info)
        self.task, self.inv, self.clock = task, inv, clock
        self.threshold: int | None = None if spec is None else evaluate(spec.expr, task.init, {}) - spec.lo
        self.result: VariantCheck | None = None

    def verified(self) -> bool:
        """True when the declared variant holds (checked once); False when refuted or undecided."""
        if self.threshold is None:
            return False
        if self.result is None:
            known = self.inv.value if self.inv.done else None
            with STOP.held():
                self.result = check_variant(self.task, known, deadline=self.clock.deadline)
            if self.result is not None and self.result.ok is False and self.inv.enabled and not self.inv.done:
                more = self.inv.get()
                with STOP.held():
                    self.result = check_variant(self.task, more, deadline=self.clock.deadline)
        return bool(self.result is not None and self.result.ok)

    def note(self) -> str:
        """Why the variant gave no proof, for a result's message ('' when nothing to say)."""
        if self.threshold is None:
            return ""
        if self.result is None:
            return (f"; the model's variant bounds plans to {self.threshold} steps (a proof once every "
                    "horizon up to that is refuted and the variant is verified)")
        return "; " + self.result.describe()

    def stats(self) -> dict[str, Any]:
        if self.threshold is None:
            return {}
        out: dict[str, Any] = {"variant_threshold": self.threshold}
        if self.result is not None:
            out.update(variant_ok=self.result.ok, variant_check_s=round(self.result.seconds, 3))
        return out


def opt_seconds(name: str, value: Any) -> float | None:
    """A non-negative number of seconds (``-E`` gives strings); None stays None."""
    if value is None:
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise OptionError(f"engine option {name}: {value!r} is not a number of seconds") from None
    if not x >= 0:
        raise OptionError(f"engine option {name} must be >= 0")
    return x


def undo_pairs_for(task: Any, enabled: bool, symmetry: bool, extra: dict[str, Any]) -> list[tuple[int, int]]:
    """The action pairs both encoders forbid in a row (:mod:`puzzleplan.encodings.reversals`).

    Value sets: the relaxed fixpoint from every permutation of the initial state (a superset
    of what either encoding reaches); the groups the encoding sorts, for its re-sorting.
    ``extra``: the engine's stats, which get the number of pairs and the seconds it took.
    """
    if not enabled:
        return []
    t0 = time.perf_counter()
    groups = symmetry_groups(task) if symmetry else []
    try:
        sets = relaxed_fixpoint(task, symmetric=True)
    except ValueSetError:     # value sets too large to enumerate: no pairs (the encoder may still cope)
        sets = None
    pairs = [] if sets is None else undo_pairs(task, sets, groups)
    extra["undo_pairs"] = len(pairs)
    extra["undo_s"] = round(time.perf_counter() - t0, 3)
    return pairs


def state_bound(task: Any, symmetric: bool) -> int:
    """States in the relaxed reachability fixpoint's value sets: a loop-free plan has fewer steps."""
    return math.prod(len(vals) for vals in relaxed_fixpoint(task, symmetric=symmetric))


# unit costs: the symbolic engines ask bfs for a plan (explicit_plan) once they have run this long
# without one; before that their own schedule is cheaper (docs/architecture.md, "The bfs hint")
HINT_AFTER_S = 3.0
# unit costs: a bfs plan asked for at once, with at most this many seconds (0: not asked); CP-SAT's
# schedule builds a fresh model per horizon, and sat's refutation below a plan beats its chain, both
# dearer than a small bfs (docs/architecture.md, "The quick hint", "sat's quick hint")
QUICK_HINT_S = 0.25
# the frontier (encodings/frontier.py, cpfrontier.py): only for refutations of at least this many
# steps.  Shorter ones are answered within about a second as one formula, where cpsat's layers (a
# model each) would cost more than they save (30 steps to refute: 0.73-0.81 s without, 1.10 s
# with; docs/architecture.md, "The frontier").  By default up to half of the steps,
# the layers stopping before one of more than FRONTIER_AUTO_LAYER states; FRONTIER_MAX_LAYER with
# an explicit frontier=K
FRONTIER_FROM = 31
FRONTIER_AUTO_LAYER = 256
FRONTIER_MAX_LAYER = 5000


def frontier_depth(H: int, option: int | None) -> tuple[int, int]:
    """(layers to enumerate, the largest layer allowed) before refuting plans of at most ``H`` steps,
    under the engines' option ``frontier`` (None: the default above; 0: off; K: at most K layers)."""
    if option == 0 or H < FRONTIER_FROM:
        return 0, 0
    if option is None:
        return H // 2, FRONTIER_AUTO_LAYER
    return min(H, option), FRONTIER_MAX_LAYER


def layer_report(clock: Clock, lower_bound: int, **figures: Any) -> Callable[[Layers], None] | None:
    """The progress report while the frontier's layers are enumerated (None without a listener):
    ``figures`` (the question's horizon, the plan's cost), the layers' depth and states, and the
    lower bound they prove with the one the engine had (``lower_bound``): every layer handed to
    the report holds no goal, so no plan has fewer steps than there are layers."""
    if clock.progress is None:
        return None

    def tick(layers: Layers) -> None:
        clock.report(**figures, lower_bound=max(lower_bound, len(layers.layers)), frontier_depth=layers.depth,
                     states=layers.states, solver_calls=layers.calls)
    return tick


def hint_after(task: Any, option: bool | None, usable: bool = True) -> float | None:
    """Seconds after which an engine asks for the bfs hint; None: never.

    The option ``hint`` (None: the default, on) applies where bfs gives plans (unit and 0/1
    costs) and the engine can use one (``usable``).  With zero-cost actions at once: the
    first feasible horizon's minimum proves nothing there.  With unit costs after
    :data:`HINT_AFTER_S` (both engines also ask a small bfs of at most :data:`QUICK_HINT_S` at
    once, with which they go straight to the refutation).
    """
    if option is False or not usable or task.cost_kind not in ("unit", "01"):
        return None
    return HINT_AFTER_S if task.cost_kind == "unit" else 0.0


def explicit_plan(kernel: Any, clock: Clock, extra: dict[str, Any],
                  seconds: float | None = None) -> tuple[int, list[int]] | None:
    """An upper bound for a proof: a plan from bfs on the same kernel, within a small budget.

    A symbolic engine spends most of its time finding the first plan (the horizon schedule,
    and with zero-cost actions a minimum that proves nothing) before the one refutation
    that matters: "no plan of cost <= C - 1".  bfs (0-1 BFS with zero-cost actions) gives C
    in a fraction of that time on the tasks it can enumerate (docs/architecture.md, "The
    bfs hint").  Only the plan is used -- it is replayed like any other -- never bfs's
    verdict: the lower bound stays the engine's own UNSAT / INFEASIBLE.  Budget: a tenth of
    the time left (at most 10 s, or ``seconds``) and a million states, not counting the first
    load of bfs's compiled hash table in a new process (``hint_load_s``: about 0.2 s, which
    otherwise took the whole quick hint's budget there); None when no plan came within it.
    """
    from ..encodings.kernel import Kernel, make_kernel
    from .bfs import solve as bfs
    from .visited import load_compiled

    if (loading := load_compiled()) > 0:
        extra["hint_load_s"] = round(loading, 3)

    if not isinstance(kernel, Kernel):   # called with the task alone (the engine needs no kernel)
        kernel = make_kernel(kernel.task, "numpy")
    left = clock.left()
    budget = 10.0 if left is None else min(10.0, 0.1 * left)
    if seconds is not None:
        budget = min(budget, seconds)
    t0 = time.perf_counter()
    rss = None if clock.max_rss is None else clock.max_rss / 2**20
    r = bfs(kernel, Limits(time_s=budget, max_states=1_000_000, max_rss_mb=rss))
    extra["hint_s"] = round(time.perf_counter() - t0, 3)
    if r.plan is None or r.cost is None:
        return None
    extra["hint_cost"] = r.cost
    return r.cost, list(r.plan)


__all__ = ["HINT_AFTER_S", "QUICK_HINT_S", "LazyInvariants", "Variant", "explicit_plan", "hint_after",
           "layer_report", "opt_bool", "opt_int", "opt_seconds", "run_bound", "state_bound", "undo_pairs_for"]
