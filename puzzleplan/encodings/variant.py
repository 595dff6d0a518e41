"""Checking a declared variant, and the plan-length bound it gives.

A model may declare a ranking function ``V`` with a floor ``lo``
(:func:`puzzleplan.lang.variant.variant`): every action lowers ``V`` by at
least one, and ``V >= lo`` in every state.  If that holds, the states along
any run strictly decrease in ``V``, so every plan from the initial state has
at most ``V(init) - lo`` steps -- a *completeness threshold* for bounded
model checking (Biere et al., "Bounded model checking", Advances in
Computers 58, 2003; Kroening & Strichman, VMCAI 2003): refuting every horizon
up to it proves the task unsolvable.

Engines never trust the declaration.  :func:`check_variant` verifies it with
two SAT queries on the one-step encoding of :class:`.sat.CnfPlan` from a
*free* state (every state whose values lie in the relaxed reachability
fixpoint and that satisfies the 2-literal invariants -- a superset of the
reachable states, as :mod:`.runbound` uses):

1. some action applies and ``V(after) >= V(before)``: must be unsatisfiable
   (a model is a counterexample: the action is named in the result);
2. ``V < lo`` in the free state: must be unsatisfiable.

Both over a superset of the reachable states, so "unsatisfiable" is a proof
for the reachable ones.  A satisfiable answer may be spurious (an
unreachable state), but then the variant is simply not used: the check errs
only towards "not verified", never towards an unsound horizon.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from pysat.solvers import Solver

from ..ir.task import Task
from ..lang.expr import Add, Expr, bounds, variables_of
from ..lang.ops import evaluate
from ..lang.variant import variant_of
from .invariants import relaxed_fixpoint
from .runbound import solve_until
from .sat import TOP, CnfPlan
from .unrolled import Invariants


@dataclass(frozen=True)
class VariantCheck:
    """The outcome of :func:`check_variant`.

    ``ok``: True verified, False refuted (``detail`` says how), None not decided in time.
    ``threshold``: ``V(init) - lo``, the most steps any plan can have (meaningful when ``ok``).
    """

    ok: bool | None
    threshold: int
    v_init: int
    lo: int
    seconds: float
    detail: str = ""

    def describe(self) -> str:
        """One phrase for a result's proof or message."""
        if self.ok:
            return (f"every plan has at most {self.threshold} steps: the model's variant (V(init) = "
                    f"{self.v_init}, V >= {self.lo}) drops on every action (verified by SAT on one step "
                    "from any state of the relaxed reachability fixpoint and the invariants)")
        if self.ok is None:
            return f"the model's variant was not verified ({self.detail or 'out of time'}): not used"
        return f"the model's variant is refuted ({self.detail}): not used"


def linear_terms(e: Expr) -> tuple[list[tuple[int, Expr]], int]:
    """``e`` as ``sum(c_i * term_i) + k`` over its additive structure (``add``, ``sub``, ``mul`` by a
    constant); any other node is one term.  Why: an action changes only the terms that read a
    variable it writes, so the check of that action needs only their (small) sum."""
    terms: dict[int, list] = {}
    const_part = 0

    def visit(n: Expr, c: int) -> None:
        nonlocal const_part
        if c == 0:
            return
        if n.op == "const":
            const_part += c * int(n.val)  # type: ignore[arg-type]
        elif n.op == "add":
            for a in n.args:
                visit(a, c)
        elif n.op == "sub":
            visit(n.args[0], c)
            visit(n.args[1], -c)
        elif n.op == "mul" and (n.args[0].op == "const" or n.args[1].op == "const"):
            k, rest = (n.args[0], n.args[1]) if n.args[0].op == "const" else (n.args[1], n.args[0])
            visit(rest, c * int(k.val))  # type: ignore[arg-type]
        else:
            got = terms.setdefault(id(n), [0, n])
            got[0] += c

    visit(e, 1)
    return [(c, n) for c, n in terms.values() if c], const_part


def check_variant(task: Task, invariants: Invariants | None = None, deadline: float | None = None,
                  solver: str = "cadical195") -> VariantCheck | None:
    """Verify the task's declared variant (module docstring); None when the task declares none.

    Per ground action, only the terms of ``V`` that read a variable the action writes can
    change: the query compares their sum before and after (one assumption set per action on
    one incremental solver), which keeps it small -- comparing the whole ``V`` twice is a
    counting argument CDCL finds hard (27 s against well under 1 s on a 6x6 garden).
    """
    spec = variant_of(task.info)
    if spec is None:
        return None
    t0 = time.perf_counter()
    v_init = evaluate(spec.expr, task.init, {})
    threshold = v_init - spec.lo

    def done(ok: bool | None, detail: str = "") -> VariantCheck:
        return VariantCheck(ok, threshold, v_init, spec.lo, time.perf_counter() - t0, detail)

    if threshold < 0:
        return done(False, f"V(init) = {v_init} is below the declared floor {spec.lo}")
    start = relaxed_fixpoint(task, symmetric=True)
    enc = CnfPlan(task, start=start, invariants=invariants, symmetry=False)
    enc.extend()
    terms, _ = linear_terms(spec.expr)
    reads = [variables_of(n) for _, n in terms]
    group_lit: dict[frozenset[int], int] = {}
    with Solver(name=solver, bootstrap_with=enc.drain()) as sat:
        for k, act in sorted(enc.acts[0].items()):
            written = enc.written(k)
            changing = frozenset(i for i, vs in enumerate(reads) if vs & written)
            rises = group_lit.get(changing)
            if rises is None:
                part = Add(*[c * terms[i][1] for i, (c, _) in enumerate(terms) if i in changing])
                before, after = enc.integer(part, 0), enc.integer(part, 1)
                # "part(after) >= part(before)": for each value a before, the value after is >= a
                rises = group_lit[changing] = enc.pool.id(("variant", "rises", changing))
                for a in before.values:
                    enc.add([-rises, -before.lit(a), *[after.lit(b) for b in after.values if b >= a]])
                sat.append_formula(enc.drain())
            r = _solve(sat, [act, rises], deadline)
            if r is None:
                return done(None, "out of time")
            if r:
                model = {lit for lit in (sat.get_model() or []) if lit > 0}
                state = [next((w for w, lit in d.items() if lit == TOP or lit in model), d and min(d))
                         for d in enc.x[0]]
                vb = evaluate(spec.expr, state, {})
                return done(False, f"action {task.actions[k].label!r} does not lower it, e.g. from a "
                                   f"state with V = {vb}")
        # the floor: interval bounds over the fixpoint's value ranges first, SAT if they do not do
        lo_b, _ = bounds(spec.expr, [(min(d), max(d)) for d in start])
        if lo_b < spec.lo:
            low_expr = spec.expr < spec.lo
            low = enc.boolean(low_expr, 0)
            sat.append_formula(enc.drain())
            r = _solve(sat, [low], deadline)
            if r is None:
                return done(None, "out of time")
            if r:
                return done(False, f"a state with V < {spec.lo} is not excluded")
    return done(True)


def _solve(sat: Solver, assumptions: list[int], deadline: float | None) -> bool | None:
    """runbound.solve_until, with the encoder's constant literals (TOP, -TOP) resolved first."""
    assumptions = [a for a in assumptions if a != TOP]
    if -TOP in assumptions:
        return False
    return solve_until(sat, assumptions, deadline)


__all__ = ["VariantCheck", "check_variant", "linear_terms"]
