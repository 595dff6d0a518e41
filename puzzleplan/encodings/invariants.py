"""Facts about every reachable state, for the symbolic engines: value-set fixpoints and mutex pairs.

* :func:`relaxed_fixpoint`: each variable's values in the fixpoint of the relaxed value-set
  reachability of :class:`puzzleplan.encodings.unrolled.Unrolled` (the state bound of the
  horizon search, the start of the one-step encodings of :mod:`.runbound`, :mod:`.variant`
  and :mod:`.pdr`);
* :func:`mutex_invariants`: 2-literal invariants of the reachable states by Rintanen's
  fixpoint, posted at every step by both encoders;
* :func:`exactly_one_values`: values that exactly one variable of a group holds in every
  reachable state (the tiles of a sliding puzzle), carried with the pairs.
"""

from __future__ import annotations

import itertools
import math
import time
from collections import Counter

from ..ir.task import Task
from ..lang.expr import variables_of
from .sat import TOP, CnfPlan
from .symmetry import start_sets, successor, symmetry_groups
from .unrolled import Invariants, Unrolled


def relaxed_fixpoint(task: Task, symmetric: bool = True, max_steps: int = 10_000) -> list[list[int]]:
    """Each variable's values in the fixpoint of the relaxed value-set reachability.

    ``symmetric``: from every permutation of the initial state within the task's groups
    (objects unsorted); otherwise from the canonical initial state with the groups sorted,
    as the symmetry-reduced encodings unroll it.
    """
    groups = symmetry_groups(task)
    if symmetric and groups:
        layer = Unrolled(task, start=start_sets(task, groups), limit=200_000)
    else:
        layer = Unrolled(task, groups, limit=200_000)
    return [sorted(d) for d in layer.fixpoint(max_steps)]


def mutex_invariants(task: Task, solver: str = "glucose4", max_candidates: int = 400_000,
                     deadline: float | None = None, symmetric: bool = True) -> Invariants | None:
    """2-literal invariants "not (v == a and w == b)" of the reachable states, by fixpoint.

    Rintanen's iterative algorithm ("An iterative algorithm for synthesizing invariants",
    AAAI 2000; "Regression for classical and nondeterministic planning", ECAI 2008):
    start from every pair of values not both true initially, and drop a candidate when a
    one-step transition from a state satisfying all remaining candidates might make it
    false; stop when nothing is dropped.  The test is unit propagation on the one-step
    CNF (assume action ``k`` and ``v == a`` after it; the candidates with ``v == a`` that
    survive are the ``w == b`` propagated false), i.e. incomplete in the safe direction:
    a candidate is kept only when propagation proves it preserved, so what remains is
    inductive, hence true in every reachable state.  ``None`` when the candidate set is
    too large or the deadline passes (no invariants are then used).

    ``symmetric``: invariants of the states reachable from *any* permutation of the initial
    state within the task's groups, so that they also hold in the canonical (sorted)
    states of a symmetry-reduced encoding.
    """
    from pysat.solvers import Solver

    groups = symmetry_groups(task) if symmetric else []
    sets = relaxed_fixpoint(task, symmetric)
    live = [v for v, d in enumerate(sets) if len(d) > 1]
    if sum(len(sets[v]) * len(sets[w]) for i, v in enumerate(live) for w in live[i + 1:]) > max_candidates:
        return None
    # which value pairs hold in the initial state (or in a permutation of it)
    group_of = {v: gi for gi, g in enumerate(groups) for v in g}
    start = start_sets(task, groups)
    counts = [[task.init[v] for v in g] for g in groups]

    def initially(v: int, a: int, w: int, b: int) -> bool:
        if a not in start[v] or b not in start[w]:
            return False
        gv, gw = group_of.get(v), group_of.get(w)
        return gv is None or gv != gw or a != b or counts[gv].count(a) >= 2

    cand: set[tuple[int, int, int, int]] = set()
    for i, v in enumerate(live):
        for w in live[i + 1:]:
            for a in sets[v]:
                for b in sets[w]:
                    if not initially(v, a, w, b):
                        cand.add((v, a, w, b))
    one = CnfPlan(task, start=sets, full_frame=True)
    one.extend()
    base = one.drain()
    after = {lit: (v, w) for v, d in enumerate(one.x[1]) for w, lit in d.items() if lit != TOP}
    # per action: (action literal, [(v, a, literal of v == a after the step)])
    probes = [(lit, [(v, a, xa) for v in sorted(one.written(k))
                     for a, xa in one.x[1][v].items() if xa != TOP])
              for k, lit in one.acts[0].items()]
    rounds = 0
    while True:
        rounds += 1
        x0 = one.x[0]
        clauses = base + [[-x0[v][a], -x0[w][b]] for v, a, w, b in cand]
        by_lit: dict[tuple[int, int], list[tuple[int, int, int, int]]] = {}
        for key in cand:
            by_lit.setdefault((key[0], key[1]), []).append(key)
            by_lit.setdefault((key[2], key[3]), []).append(key)
        dropped: set[tuple[int, int, int, int]] = set()
        with Solver(name=solver, bootstrap_with=clauses) as sol:
            for act, tests in probes:
                if deadline is not None and time.perf_counter() > deadline:
                    return None
                touched: set[tuple[int, int, int, int]] = set()
                safe: set[tuple[int, int, int, int]] = set()
                for v, a, xa in tests:
                    keys = by_lit.get((v, a), ())
                    if not keys:
                        continue
                    ok, implied = sol.propagate(assumptions=[act, xa])
                    if not ok:  # this action never leads to v == a
                        safe.update(keys)
                        continue
                    false_after = {after[-lit] for lit in implied if lit < 0 and -lit in after}
                    for key in keys:
                        other = (key[2], key[3]) if (key[0], key[1]) == (v, a) else (key[0], key[1])
                        touched.add(key)
                        if other in false_after:
                            safe.add(key)
                dropped |= touched - safe
        if not dropped:
            break
        cand -= dropped
    out = Invariants()
    for v, a, w, b in cand:
        out.setdefault((v, w), set()).add((a, b))
    out.exactly_one = exactly_one_values(task, sets, groups, deadline=deadline)
    return out


def exactly_one_values(task: Task, sets: list[list[int]], groups: list[list[int]],
                       max_cases: int = 20_000, deadline: float | None = None
                       ) -> tuple[tuple[tuple[int, ...], int], ...]:
    """``(variables, a)``: exactly one of the variables holds ``a`` in every reachable state.

    Why: the pairs say "at most one" (tile ``a`` is on one cell at most), never "at least
    one"; with both, unit propagation places a tile that every other cell excludes, the
    other half of the two views of a permutation (measured in docs/architecture.md).

    How, soundly and for any model: variables are grouped when an action writes one of them
    with a value read from another of the same domain (values flow between them).  In a
    group, each value held by exactly one variable initially is kept when every action that
    writes into the group leaves that value's count over the group unchanged, checked on
    every assignment of the variables the action reads, drawn from the relaxed value sets
    ``sets`` (a superset of the reachable values).  An action with more than ``max_cases``
    such assignments drops its group (no claim rather than a guess).  Sorting interchangeable
    objects (``groups``, the encoders' canonical states) permutes values within a sort group,
    so a group must hold all of a sort group's variables or none.
    """
    n = task.n_vars
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    dom = task.var_bounds
    for act in task.actions:
        for eff in act.effects:
            for r in variables_of(eff.value):
                if dom[r] == dom[eff.var]:
                    parent[find(r)] = find(eff.var)
    members: dict[int, list[int]] = {}
    for v in range(n):
        members.setdefault(find(v), []).append(v)
    init = task.init
    found: list[tuple[tuple[int, ...], int]] = []
    for group in (g for g in members.values() if len(g) > 1):
        gset = set(group)
        if any(gset & set(sg) and not set(sg) <= gset for sg in groups):
            continue
        counts = Counter(init[v] for v in group)
        alive = {a for a, c in counts.items() if c == 1}
        for k, act in enumerate(task.actions):
            if not alive:
                break
            written = [e.var for e in act.effects if e.var in gset]
            if not written:
                continue
            reads = set(variables_of(act.guard)) | set(written)
            for e in act.effects:
                reads |= variables_of(e.value) | (variables_of(e.cond) if e.cond is not None else set())
            order = sorted(reads)
            if math.prod(len(sets[r]) for r in order) > max_cases or (
                    deadline is not None and time.perf_counter() > deadline):
                alive = set()
                break
            state = list(init)
            for combo in itertools.product(*(sets[r] for r in order)):
                for r, x in zip(order, combo):
                    state[r] = x
                new = successor(task, k, state)
                if new is None:
                    continue
                before = Counter(state[v] for v in written)
                after = Counter(new[v] for v in written)
                alive = {a for a in alive if before[a] == after[a]}
                if not alive:
                    break
        found += [(tuple(group), a) for a in sorted(alive)]
    return tuple(found)


__all__ = ["Invariants", "exactly_one_values", "mutex_invariants", "relaxed_fixpoint"]
