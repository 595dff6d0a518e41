"""From a chain of canonical states back to a plan the user can replay.

Engines store canonical states (interchangeable objects sorted), so the
actions on the parent chain name objects by their *sorted* slot, not by
their identity in the instance.  ``concretise`` replays from the real
initial state and, at each step, picks the action whose result has the
recorded canonical form at the recorded cost: the plan then names the
pieces as the instance file does.  If no action matches, the model's
interchangeability declaration is unsound, and we say so.
"""

from __future__ import annotations

import numpy as np

from ..encodings.kernel import Kernel
from ..lang.errors import ModelError


def chain(parent: np.ndarray, action: np.ndarray, goal_id: int) -> tuple[list[int], list[int]]:
    """(state ids root..goal, action ids along the way)."""
    ids = [goal_id]
    acts: list[int] = []
    while parent[ids[-1]] >= 0:
        acts.append(int(action[ids[-1]]))
        ids.append(int(parent[ids[-1]]))
    ids.reverse()
    acts.reverse()
    return ids, acts


def concretise(kernel: Kernel, keys: np.ndarray, actions: list[int]) -> list[int]:
    """Ground actions from the true initial state through the canonical ``keys`` (one row per state)."""
    if not kernel.task.groups:
        return list(actions)
    state = kernel.init_state()
    plan: list[int] = []
    for step, a in enumerate(actions):
        want = keys[step + 1]
        succ, _, act = kernel.expand(state)
        K = kernel.canon_pack(succ)
        match = np.flatnonzero((K == want).all(axis=1) & (kernel.costs[act] == kernel.costs[a]))
        if match.size == 0:
            raise ModelError(
                f"step {step + 1}: no action reproduces the searched transition; the model's "
                "interchangeable() declaration does not describe a true symmetry"
            )
        pick = match[0]
        same = match[act[match] == a]
        if same.size:
            pick = same[0]
        plan.append(int(act[pick]))
        state = succ[pick: pick + 1]
    return plan
