"""Pairs of ground actions whose second undoes the first: a shortest plan never takes both in a row.

Why: a bounded-horizon proof ("no plan of ``T`` steps") refutes every path of ``T`` steps,
and most of them wander: a tile slides out and back, a piece steps left and right, the
player walks back and forth.  If action ``j`` fired right after action ``i`` always
restores the state ``i`` started from, a plan that contains ``i; j`` is not the shortest of
the cheapest plans: dropping the two steps leaves a plan from the same state through the
same later states, two steps shorter and no dearer (every later action starts from the
same state, so a state-dependent cost is unchanged, and costs are never negative).  So the
unrolled encodings may forbid ``i`` at ``t`` with ``j`` at ``t + 1`` without losing the
cheapest-then-shortest plan, which is loop-free and therefore also keeps every other
pruning the engines rely on (the zero-cost run bound, the free-run windows).  What it saves is
measured in docs/architecture.md (undo pairs).

The test is semantic, not syntactic, and conservative:

* candidates: ``i`` and ``j`` write the same variables (a state restored by ``j`` must be
  rewritten by it), and ``j``'s single-variable guard conjuncts (``player == c``) can hold
  on the values ``i`` leaves behind;
* check: every assignment of the variables the two actions' effects read and write, drawn
  from the relaxed reachable value sets (a superset of the reachable states' values) and
  restricted by ``i``'s single-variable guard conjuncts, is restored by ``i`` then ``j``
  wherever ``j``'s single-variable conjuncts let it fire.  Other guard conjuncts are taken
  as possibly true, which only makes the check stricter.  Pairs whose enumeration exceeds
  ``cap`` assignments are left out;
* symmetry: an action that writes a variable of a sorted group of interchangeable objects
  is left out, because the encodings re-sort after each step and ``j`` then names another
  object than the one ``i`` moved; an action that writes no grouped variable keeps a
  canonical state canonical, so there the encoded and the concrete step agree.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from ..ir.task import GroundAction, Task
from ..lang.expr import Expr, variables_of
from ..lang.ops import evaluate
from .unrolled import conjuncts

Pair = tuple[int, int]


def undo_pairs(task: Task, sets: Sequence[Sequence[int]], groups: Sequence[Sequence[int]] = (),
               cap: int = 4096) -> list[Pair]:
    """Ordered pairs ``(i, j)``: ``j`` right after ``i`` restores the state (see the module doc)."""
    grouped = {v for g in groups for v in g if len(g) > 1}
    sets = [tuple(sorted(s)) for s in sets]
    base = list(task.init)
    info = []
    for a in task.actions:
        written = frozenset(e.var for e in a.effects)
        if not written or written & grouped:
            info.append(None)
            continue
        pre = _single_var_guards(a, sets, base)
        info.append((written, pre, _reads(a) | written))
    by_writes: dict[frozenset[int], list[int]] = {}
    for k, got in enumerate(info):
        if got is not None:
            by_writes.setdefault(got[0], []).append(k)
    pairs: list[Pair] = []
    for ks in by_writes.values():
        post = {i: _post_values(task.actions[i], info[i][1], sets, base, cap) for i in ks}  # type: ignore[index]
        for i in ks:
            for j in ks:
                pre_j = info[j][1]  # type: ignore[index]
                if any(v in pre_j and not (post[i].get(v, pre_j[v]) & pre_j[v]) for v in info[i][0]):  # type: ignore[index]
                    continue
                if _restores(task.actions[i], task.actions[j], info[i], info[j], sets, base, cap):
                    pairs.append((i, j))
    return pairs


def _reads(a: GroundAction) -> set[int]:
    out: set[int] = set()
    for e in a.effects:
        out |= variables_of(e.value)
        if e.cond is not None:
            out |= variables_of(e.cond)
    return out


def _single_var_guards(a: GroundAction, sets: Sequence[tuple[int, ...]],
                       base: list[int]) -> dict[int, frozenset[int]]:
    """Per variable, the values its single-variable guard conjuncts allow (others: absent)."""
    out: dict[int, frozenset[int]] = {}
    for c in conjuncts(a.guard):
        vs = variables_of(c)
        if len(vs) != 1:
            continue
        (v,) = vs
        ok = frozenset(x for x in out.get(v, sets[v]) if _holds(c, base, {v: x}))
        out[v] = ok
    return out


def _holds(e: Expr, base: list[int], assign: dict[int, int]) -> bool:
    state = list(base)
    for v, x in assign.items():
        state[v] = x
    return bool(evaluate(e, state, {}))


def _domain(vs: list[int], pre: dict[int, frozenset[int]],
            sets: Sequence[tuple[int, ...]]) -> list[Sequence[int]]:
    return [sorted(pre[v]) if v in pre else sets[v] for v in vs]


def _post_values(a: GroundAction, pre: dict[int, frozenset[int]], sets: Sequence[tuple[int, ...]],
                 base: list[int], cap: int) -> dict[int, frozenset[int]]:
    """Per written variable, the values ``a`` can leave there (absent: not enumerated, any)."""
    vs = sorted(_reads(a) | {e.var for e in a.effects})
    dom = _domain(vs, pre, sets)
    if math.prod(len(d) for d in dom) > cap:
        return {}
    out: dict[int, set[int]] = {e.var: set() for e in a.effects}
    for combo in itertools.product(*dom):
        after = _apply(a, base, dict(zip(vs, combo)))
        for v in out:
            out[v].add(after[v])
    return {v: frozenset(s) for v, s in out.items()}


def _apply(a: GroundAction, base: list[int], assign: dict[int, int]) -> list[int]:
    """``a``'s effects (not its guard) on ``base`` with ``assign``: effects in order, later writes win."""
    state = list(base)
    for v, x in assign.items():
        state[v] = x
    memo: dict[int, int] = {}
    new = list(state)
    for e in a.effects:
        if e.cond is None or evaluate(e.cond, state, memo):
            new[e.var] = evaluate(e.value, state, memo)
    return new


def _restores(a: GroundAction, b: GroundAction, ia: tuple, ib: tuple, sets: Sequence[tuple[int, ...]],
              base: list[int], cap: int) -> bool:
    written, pre_a, touched_a = ia
    _, pre_b, touched_b = ib
    vs = sorted(touched_a | touched_b)
    dom = _domain(vs, pre_a, sets)
    if math.prod(len(d) for d in dom) > cap:
        return False
    fired = False
    for combo in itertools.product(*dom):
        assign = dict(zip(vs, combo))
        mid = _apply(a, base, assign)
        if any(mid[v] not in pre_b[v] for v in pre_b if v in touched_b or v in written):
            continue        # b's own single-variable guards rule it out after a
        end = _apply(b, mid, {})
        if any(end[v] != assign[v] for v in vs):
            return False
        fired = True
    return fired


__all__ = ["undo_pairs"]
