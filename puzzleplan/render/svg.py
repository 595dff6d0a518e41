"""A scene (or a strip of scenes) as SVG text.

SVG is plain XML, so it is written directly: no dependency, and the output
is easy to test (each drawn item is a ``<g class="cell">`` or
``<g class="sprite">`` group; a strip wraps each board in ``<g class="frame">``).
"""

from __future__ import annotations

from collections.abc import Sequence
from xml.sax.saxutils import escape, quoteattr

from .scene import Item, Scene

CELL = 40        # pixels per cell
PAD = 6          # margin around a board
CAPTION = 20     # caption band height, when there is a caption


def board_size(sc: Scene) -> tuple[int, int]:
    cap = CAPTION if sc.caption else 0
    return sc.cols * CELL + 2 * PAD, sc.rows * CELL + 2 * PAD + cap


def _item(it: Item) -> str:
    x, y = PAD + it.c * CELL, PAD + it.r * CELL
    w, h = it.w * CELL, it.h * CELL
    t = it.tile
    parts = [f'<g class="{it.kind}" data-glyph={quoteattr(t.glyph)}>']
    if t.fill is not None:
        if t.shape == "circle":
            parts.append(f'<circle cx="{x + w / 2}" cy="{y + h / 2}" r="{min(w, h) / 2 - 4}" '
                         f'fill={quoteattr(t.fill)} stroke="#333" stroke-width="1.5"/>')
        else:
            parts.append(f'<rect x="{x + 2}" y="{y + 2}" width="{w - 4}" height="{h - 4}" rx="5" '
                         f'fill={quoteattr(t.fill)} stroke="#333" stroke-width="1.5"/>')
    if t.text:
        size = 18 if len(t.text) <= 2 else 13
        parts.append(f'<text x="{x + w / 2}" y="{y + h / 2}" font-size="{size}" font-family="sans-serif" '
                     f'text-anchor="middle" dominant-baseline="central" fill={quoteattr(t.ink)}>'
                     f'{escape(t.text)}</text>')
    parts.append("</g>")
    return "".join(parts)


def board_svg(sc: Scene) -> list[str]:
    """The SVG elements of one board at the origin (no ``<svg>`` wrapper)."""
    out = []
    bg = sc.background
    fill = bg.fill or "white"
    out.append(f'<rect class="board" x="{PAD}" y="{PAD}" width="{sc.cols * CELL}" height="{sc.rows * CELL}" '
               f'fill={quoteattr(fill)} stroke="#888"/>')
    for r in range(1, sc.rows):
        out.append(f'<line x1="{PAD}" y1="{PAD + r * CELL}" x2="{PAD + sc.cols * CELL}" '
                   f'y2="{PAD + r * CELL}" stroke="#ccc"/>')
    for c in range(1, sc.cols):
        out.append(f'<line x1="{PAD + c * CELL}" y1="{PAD}" x2="{PAD + c * CELL}" '
                   f'y2="{PAD + sc.rows * CELL}" stroke="#ccc"/>')
    out.extend(_item(it) for it in sc.items)
    for r0, c0, r1, c1 in sc.rules:
        out.append(f'<line class="rule" x1="{PAD + c0 * CELL}" y1="{PAD + r0 * CELL}" x2="{PAD + c1 * CELL}" '
                   f'y2="{PAD + r1 * CELL}" stroke="#222" stroke-width="3"/>')
    if sc.caption:
        y = PAD * 2 + sc.rows * CELL + CAPTION / 2
        out.append(f'<text class="caption" x="{PAD}" y="{y}" font-size="12" font-family="sans-serif" '
                   f'dominant-baseline="central">{escape(sc.caption)}</text>')
    return out


def to_svg(scenes: Scene | Sequence[Scene], per_row: int = 8) -> str:
    """One board, or a strip of boards (``per_row`` to a row) in one SVG document."""
    scs = [scenes] if isinstance(scenes, Scene) else list(scenes)
    if not scs:
        raise ValueError("nothing to draw")
    bw = max(board_size(s)[0] for s in scs)
    bh = max(board_size(s)[1] for s in scs)
    cols = min(per_row, len(scs))
    rows = -(-len(scs) // cols)
    W, H = cols * bw, rows * bh
    body: list[str] = []
    if len(scs) == 1:
        body = board_svg(scs[0])
        W, H = board_size(scs[0])
    else:
        for i, s in enumerate(scs):
            x, y = (i % cols) * bw, (i // cols) * bh
            body.append(f'<g class="frame" transform="translate({x},{y})">')
            body.extend(board_svg(s))
            body.append("</g>")
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
            f'viewBox="0 0 {W} {H}">')
    return "\n".join([head, *body, "</svg>"]) + "\n"
