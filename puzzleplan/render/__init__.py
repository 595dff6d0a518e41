"""Pictures of states and plans, from the model's one ``Look`` declaration.

Layer: above ``lang``, ``ir`` and ``verify`` (it evaluates looks with the
reference interpreter and replays plans with the checker's semantics), below
``api`` and ``cli``; it never imports encodings or engines.  Nothing here is
puzzle-specific: a model says what its cells and objects look like
(``puzzleplan.lang.look``), this package draws any such declaration.

Formats: ``text`` (Unicode), ``svg`` (written as text), ``png`` and ``gif``
(Pillow, the optional ``render`` extra).  A replay is one frame per move or
per step (``scene.replay``); as SVG or PNG it is a strip of boards, as GIF an
animation.  ``Board`` and ``Replay`` display themselves in Jupyter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..lang.errors import EXIT_BAD_OPTION, EXIT_OUTPUT, PuzzleError
from .scene import Item, Scene, has_look, look_of, replay, scene
from .svg import to_svg
from .text import to_text

FORMATS = ("text", "svg", "png", "gif")


def write(scenes: Sequence[Scene], fmt: str, path: str | None) -> str | None:
    """Write ``scenes`` (one board, or replay frames) as ``fmt`` to ``path``; return text when no path.

    Errors are one line: a raster format without ``-o`` (31), an unwritable file (35).
    """
    if fmt not in FORMATS:
        raise PuzzleError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})", code=EXIT_BAD_OPTION)
    if fmt in ("png", "gif") and not path:
        raise PuzzleError(f"--format {fmt} writes a binary file: give -o FILE", code=EXIT_BAD_OPTION)
    if fmt == "gif" and len(scenes) < 2:
        raise PuzzleError("--format gif animates a plan: add --plan", code=EXIT_BAD_OPTION)
    if fmt == "text":
        out = "\n\n".join(to_text(s) for s in scenes) + "\n"
    elif fmt == "svg":
        out = to_svg(scenes[0] if len(scenes) == 1 else scenes)
    else:
        out = None
    if path is None:
        return out
    try:
        if out is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(out)
        else:
            from . import raster

            if fmt == "png":
                raster.save_png(scenes[0] if len(scenes) == 1 else scenes, path)
            else:
                raster.save_gif(scenes, path)
    except OSError as e:
        raise PuzzleError(f"cannot write output: {e.strerror}", path, code=EXIT_OUTPUT) from None
    return None


class Board:
    """One state of a task, displayed as SVG by Jupyter (and as text by ``str``)."""

    def __init__(self, task: Any, state: Sequence[int] | None = None, caption: str = ""):
        self.task = task
        if state is None:   # the start; for a constraint model, the givens (free cells as 0: not drawn)
            state = task.init if hasattr(task, "init") else \
                [v.lo if v.lo == v.hi else 0 for v in task.variables]
        self.state = list(state)
        self.scene = scene(task, self.state, caption)

    def __str__(self) -> str:
        return to_text(self.scene)

    def _repr_svg_(self) -> str:
        return to_svg(self.scene)


class Replay:
    """A plan's frames (``per`` move or step), displayed by Jupyter as a strip of SVG boards."""

    def __init__(self, task: Any, plan: Sequence[int], per: str = "move"):
        self.task = task
        self.frames = [scene(task, s, cap) for s, cap in replay(task, plan, per)]

    def __len__(self) -> int:
        return len(self.frames)

    def __str__(self) -> str:
        return "\n\n".join(to_text(s) for s in self.frames)

    def _repr_html_(self) -> str:
        return f"<div>{to_svg(self.frames)}</div>"


__all__ = ["FORMATS", "Board", "Item", "Replay", "Scene", "has_look", "look_of", "replay", "scene",
           "to_svg", "to_text", "write"]
