"""Interchangeable objects in the symbolic encodings: which groups are sorted, and back to real plans.

The explicit engines store canonical states (every interchangeable group's objects sorted,
:mod:`puzzleplan.encodings.packing`); the SAT and CP-SAT encoders keep their time-indexed
states canonical the same way, but only for groups of *single-variable* objects, where
"sorted" is an order on one integer per object.  A plan read off such a formula moves the
canonical objects, so it is replayed here (:func:`concretise`) into actions of the
instance's own objects.  Shared by both encoders and the invariant synthesis, so the three
agree on which groups are sorted and on the permuted start states.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ir.task import Task
from ..lang.errors import ModelError
from ..lang.ops import evaluate


class SymbolicPlanError(ModelError):
    """A plan read off a canonical (sorted) formula does not replay: an encoder bug."""


def symmetry_groups(task: Task) -> list[list[int]]:
    """The task's groups of interchangeable single-variable objects (as variable lists).

    Groups of multi-variable objects are not sorted by the encoders (they stay labelled).
    """
    return [[obj[0] for obj in g] for g in task.groups if len(g) > 1 and all(len(o) == 1 for o in g)]


def canonical(groups: list[list[int]], state: Sequence[int]) -> list[int]:
    """``state`` with each group's values sorted into its variables' order."""
    out = list(state)
    for g in groups:
        for v, val in zip(g, sorted(state[v] for v in g)):
            out[v] = val
    return out


def start_sets(task: Task, groups: list[list[int]]) -> list[list[int]]:
    """Initial values per variable; a grouped variable may hold any of its group's initial values.

    The start of a reachability analysis from *every* permutation of the initial state, whose
    results then also hold in the canonical states of a symmetry-reduced encoding.
    """
    sets = [[v] for v in task.init]
    for g in groups:
        vals = sorted({task.init[v] for v in g})
        for v in g:
            sets[v] = vals
    return sets


def successor(task: Task, k: int, state: Sequence[int]) -> list[int] | None:
    """State after ground action ``k`` (None if not applicable or a value leaves its domain)."""
    memo: dict[int, int] = {}
    a = task.actions[k]
    if not evaluate(a.guard, state, memo):
        return None
    new = list(state)
    for eff in a.effects:
        if eff.cond is None or evaluate(eff.cond, state, memo):
            new[eff.var] = evaluate(eff.value, state, memo)
    if any(not info.lo <= x <= info.hi for x, info in zip(new, task.variables)):
        return None
    return new


def concretise(task: Task, groups: list[list[int]], plan: list[int]) -> list[int]:
    """A plan found on canonical states -> ground actions replayable from the real initial state.

    At each step pick an action (the same one if it fits) whose successor of the real
    state has the canonical form the symbolic plan reached, at the same cost.
    """
    if not groups:
        return list(plan)
    real = list(task.init)
    canon = canonical(groups, real)
    out = []
    for step, a in enumerate(plan, start=1):
        nxt = successor(task, a, canon)
        if nxt is None:
            raise SymbolicPlanError(f"step {step}: the symbolic plan's action is not applicable "
                                    "(encoder bug)")
        want = canonical(groups, nxt)
        cost = task.actions[a].cost
        for b in [a, *range(len(task.actions))]:
            if task.actions[b].cost != cost:
                continue
            succ = successor(task, b, real)
            if succ is not None and canonical(groups, succ) == want:
                break
        else:
            raise ModelError(f"step {step}: no action reproduces the symbolic plan's transition; the "
                             "model's interchangeable() declaration does not describe a true symmetry")
        out.append(b)
        real, canon = succ, want
    return out


__all__ = ["SymbolicPlanError", "canonical", "concretise", "start_sets", "successor", "symmetry_groups"]
