"""A scene as Unicode text: one glyph per cell, padded to the widest glyph."""

from __future__ import annotations

from .scene import Scene


def to_text(sc: Scene) -> str:
    width = max([len(sc.background.glyph)] + [len(it.tile.glyph) for it in sc.items])
    grid = [[sc.background.glyph] * sc.cols for _ in range(sc.rows)]
    for it in sc.items:
        for i in range(it.h):
            for j in range(it.w):
                grid[it.r + i][it.c + j] = it.tile.glyph
    sep = " " if width > 1 else ""
    lines = [sep.join(g.rjust(width) for g in row) for row in grid]
    if sc.caption:
        lines.insert(0, sc.caption)
    return "\n".join(lines)
