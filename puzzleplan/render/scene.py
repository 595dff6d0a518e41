"""A state as a list of drawn items: the one intermediate every output format reads.

The model's ``Look`` (``puzzleplan.lang.look``) is evaluated on a state with
the plain-Python reference interpreter -- no kernels, no model code -- so a
picture shows exactly what the checker believes the state is.  Text, SVG and
PNG are then three printers of the same ``Scene``; they cannot disagree about
what is on the board.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..lang.errors import EXIT_BAD_OPTION, PuzzleError
from ..lang.look import CellLayer, Look, Tile
from ..verify.reference import apply, evaluate


@dataclass(frozen=True)
class Item:
    """One drawn thing: ``kind`` ``cell`` or ``sprite``, its top-left cell, its size and its tile."""

    kind: str
    r: int
    c: int
    h: int
    w: int
    tile: Tile


@dataclass
class Scene:
    rows: int
    cols: int
    background: Tile
    items: list[Item] = field(default_factory=list)
    caption: str = ""
    rules: list[tuple[int, int, int, int]] = field(default_factory=list)  # heavy lines (r0, c0, r1, c1)


def look_of(task: Any) -> Look:
    """The task's look, or a one-line error (exit 31) for a model that declares none."""
    lk = getattr(task, "info", {}).get("look")
    if not isinstance(lk, Look):
        raise PuzzleError(f"model {task.name!r} declares no look (m.look(...)); "
                          "only its text display is available", code=EXIT_BAD_OPTION)
    return lk


def has_look(task: Any) -> bool:
    return isinstance(getattr(task, "info", {}).get("look"), Look)


def scene(task: Any, state: Sequence[int], caption: str = "") -> Scene:
    """Evaluate the look's layers on ``state`` (values in variable order)."""
    lk = look_of(task)
    memo: dict[int, int] = {}
    out = Scene(lk.rows, lk.cols, lk.background, caption=caption, rules=_rules(lk))
    for layer in lk.layers:
        if isinstance(layer, CellLayer):
            for cell, e in zip(layer.at, layer.values):
                tile = layer.tiles.get(evaluate(e, state, memo))
                if tile is not None:
                    r, c = divmod(cell, lk.cols)
                    out.items.append(Item("cell", r, c, 1, 1, tile))
        else:
            x = evaluate(layer.at, state, memo)
            if x < 0:
                continue
            r, c = divmod(x, lk.cols)
            h, w = layer.size
            if r + h <= lk.rows and c + w <= lk.cols:
                out.items.append(Item("sprite", r, c, h, w, layer.tile))
    return out


def _rules(lk: Look) -> list[tuple[int, int, int, int]]:
    """Heavy block lines (in cell coordinates) over the rest of the board from ``blocks_at``."""
    if lk.blocks is None:
        return []
    (bh, bw), (r0, c0) = lk.blocks, lk.blocks_at
    r1 = r0 + (lk.rows - r0) // bh * bh        # the ruled area ends with its last whole block
    c1 = c0 + (lk.cols - c0) // bw * bw
    out = [(r, c0, r, c1) for r in range(r0, r1 + 1, bh)]
    out += [(r0, c, r1, c) for c in range(c0, c1 + 1, bw)]
    return out


def replay(task: Any, plan: Sequence[int], per: str = "move") -> list[tuple[list[int], str]]:
    """(state, caption) frames of a plan: the start, then one per move or per step.

    ``per="step"``: a frame after every ground action.  ``per="move"``: a frame
    after every *move*, a step that costs something together with the free
    (zero-cost) steps that follow it -- the model's own cost semantics, so a
    Hua Rong Dao move of one block along several cells is one frame.  With
    unit costs both are the same.  The last frame is the plan's final state.
    """
    if per not in ("move", "step"):
        raise PuzzleError(f"frames per {per!r}: choose move or step", code=EXIT_BAD_OPTION)
    state = list(task.init)
    frames = [(state, "start")]
    total = 0
    labels: list[str] = []
    n_moves = 0
    for i, k in enumerate(plan):
        a = task.actions[k]
        total += a.cost
        state = apply(task, a, state)
        labels.append(a.label)
        last = i == len(plan) - 1
        if per == "step" or last or task.actions[plan[i + 1]].cost > 0:
            n_moves += 1
            what = labels[0] if len(labels) == 1 else f"{labels[0]} .. {labels[-1]} ({len(labels)} steps)"
            frames.append((state, f"{per} {n_moves}: {what}, cost {total}"))
            labels = []
    return frames
