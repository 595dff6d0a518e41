"""Plain-Python reference semantics of the IR: the judge, not the workhorse.

Deliberately independent of ``puzzleplan.encodings``: no numpy, no compiled
code, one state at a time, a direct recursive reading of each node (the
language's plain interpreter, :func:`puzzleplan.lang.ops.evaluate`).  Every
plan an engine returns is replayed here before it is reported, and the fast
kernels are tested against it on random states.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..ir.task import GroundAction, Task
from ..lang.ops import evaluate


class DomainViolation(Exception):
    """An action produced a value outside a variable's domain (a model bug)."""


def applicable(action: GroundAction, state: Sequence[int], memo: dict[int, int] | None = None) -> bool:
    return bool(evaluate(action.guard, state, memo if memo is not None else {}))


def apply(task: Task, action: GroundAction, state: Sequence[int]) -> list[int]:
    """Successor of ``state`` (assumed applicable): effects in order, later writes win."""
    memo: dict[int, int] = {}
    new = list(state)
    for eff in action.effects:
        if eff.cond is None or evaluate(eff.cond, state, memo):
            new[eff.var] = evaluate(eff.value, state, memo)
    for v, info in zip(new, task.variables):
        if not info.lo <= v <= info.hi:
            raise DomainViolation(
                f"action {action.label} sets {info.name} to {v}, outside {info.lo}..{info.hi}"
            )
    return new


def successors(task: Task, state: Sequence[int]) -> list[tuple[int, list[int], int]]:
    """(action index, successor, cost) for every applicable ground action."""
    memo: dict[int, int] = {}
    out = []
    for k, a in enumerate(task.actions):
        if evaluate(a.guard, state, memo):
            out.append((k, apply(task, a, state), a.cost))
    return out


def is_goal(task: Task, state: Sequence[int]) -> bool:
    return bool(evaluate(task.goal, state))


def heuristic(task: Task, state: Sequence[int]) -> int:
    return 0 if task.heuristic is None else evaluate(task.heuristic, state)


def canonical(task: Task, state: Sequence[int]) -> tuple[int, ...]:
    """The state with every interchangeable group's objects sorted by their value tuples."""
    s = list(state)
    for group in task.groups:
        vals = sorted(tuple(state[i] for i in obj) for obj in group)
        for obj, v in zip(group, vals):
            for i, x in zip(obj, v):
                s[i] = x
    return tuple(s)


@dataclass
class PlanCheck:
    ok: bool
    cost: int
    message: str = ""
    final: tuple[int, ...] = ()


def check_plan(task: Task, plan: Sequence[int], start: Sequence[int] | None = None) -> PlanCheck:
    """Replay ground-action indices from the initial state; the goal must hold at the end."""
    state = list(task.init if start is None else start)
    cost = 0
    for step, k in enumerate(plan, start=1):
        if not 0 <= k < len(task.actions):
            return PlanCheck(False, cost, f"step {step}: no action {k}")
        a = task.actions[k]
        if not applicable(a, state):
            return PlanCheck(False, cost, f"step {step}: {a.label} is not applicable", tuple(state))
        try:
            state = apply(task, a, state)
        except DomainViolation as e:
            return PlanCheck(False, cost, f"step {step}: {e}", tuple(state))
        cost += a.cost
    if not is_goal(task, state):
        return PlanCheck(False, cost, "the plan does not reach the goal", tuple(state))
    return PlanCheck(True, cost, "", tuple(state))
