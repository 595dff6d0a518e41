"""Variant declarations: a ranking function that bounds the length of every plan.

Why this exists: a bounded-horizon engine (``sat``, ``cpsat``) refutes plans
of at most ``H`` steps, horizon by horizon; to call a task *unsolvable* it
needs a horizon that every plan fits in (a completeness threshold).  The
generic one, the number of states of a value-set over-approximation, is
astronomically large on most puzzles.  Many puzzles, however, consume
something irreversibly at every step (Zen Puzzle Garden rakes sand, Peg
Solitaire removes pegs, Lights-Out with "press each light once" ...).  The
model can say so:

``variant(m, V, lo=0)``
    ``V`` is an integer expression over the state such that every action
    lowers it by at least one (``V(after) <= V(before) - 1`` whenever the
    action's guard holds) and ``V >= lo`` in every state.  Then every plan
    from the initial state has at most ``V(init) - lo`` steps, so "no plan of
    at most ``V(init) - lo`` steps" proves the task unsolvable.

The declaration is a *claim*, not a trusted fact: engines verify it
(:mod:`puzzleplan.encodings.variant`: one SAT query over one step from any
state of the relaxed reachability fixpoint and the 2-literal invariants)
before using it, and ignore it -- saying so in their result -- when the check
fails or does not finish.  It lands in ``model.info["variant"]``, which
grounding copies to the task unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ModelError
from .expr import INT, Expr, ExprLike, lift
from .model import Model

KEY = "variant"


@dataclass(frozen=True)
class VariantSpec:
    """``expr`` decreases by >= 1 on every action and never goes below ``lo`` (a claim to verify)."""

    expr: Expr
    lo: int = 0


def variant(m: Model, expr: ExprLike, lo: int = 0) -> VariantSpec:
    """Declare a ranking function of the model's states (module docstring); returns the declaration."""
    e = lift(expr)
    if e.kind != INT:
        raise ModelError("variant: the ranking function must be an integer expression")
    if isinstance(lo, bool) or not isinstance(lo, int):
        raise ModelError(f"variant: lo must be an integer, got {lo!r}")
    spec = VariantSpec(e, lo)
    m.info[KEY] = spec
    return spec


def variant_of(info: Mapping[str, Any]) -> VariantSpec | None:
    """The declaration a task carries (``task.info``), or None."""
    s = info.get(KEY)
    return s if isinstance(s, VariantSpec) else None


__all__ = ["VariantSpec", "variant", "variant_of"]
