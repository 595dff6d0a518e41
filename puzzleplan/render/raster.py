"""A scene as a Pillow image: PNG boards, PNG frame strips, animated GIF replays.

Pillow is an optional extra (``pip install puzzleplan[render]``,
docs/dependencies.md): raster output is the only thing that needs it, so it
is imported here, on first use, with a one-line error when it is missing.
The geometry is the SVG printer's (same cell size, same layout).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..lang.errors import EXIT_BAD_OPTION, PuzzleError
from .scene import Scene
from .svg import CELL, PAD, board_size


def _pil() -> Any:
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:
        raise PuzzleError("PNG and GIF output need Pillow: pip install 'puzzleplan[render]'",
                          code=EXIT_BAD_OPTION) from None
    return Image, ImageDraw, ImageFont


def _font(size: int) -> Any:
    _, _, ImageFont = _pil()
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1: fixed-size bitmap font
        return ImageFont.load_default()


def to_image(sc: Scene, size: tuple[int, int] | None = None) -> Any:
    """One board as an RGB image (``size`` pads it, so frames of a replay share one size)."""
    Image, ImageDraw, _ = _pil()
    w, h = size or board_size(sc)
    img = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(img)
    d.rectangle([PAD, PAD, PAD + sc.cols * CELL, PAD + sc.rows * CELL], fill=sc.background.fill or "white",
                outline="#888888")
    for r in range(1, sc.rows):
        d.line([PAD, PAD + r * CELL, PAD + sc.cols * CELL, PAD + r * CELL], fill="#cccccc")
    for c in range(1, sc.cols):
        d.line([PAD + c * CELL, PAD, PAD + c * CELL, PAD + sc.rows * CELL], fill="#cccccc")
    big, small = _font(18), _font(13)
    for it in sc.items:
        x, y = PAD + it.c * CELL, PAD + it.r * CELL
        x1, y1 = x + it.w * CELL, y + it.h * CELL
        t = it.tile
        if t.fill is not None:
            if t.shape == "circle":
                m = max(4, (min(it.w, it.h) * CELL) // 8)
                d.ellipse([x + m, y + m, x1 - m, y1 - m], fill=t.fill, outline="#333333", width=2)
            else:
                d.rounded_rectangle([x + 2, y + 2, x1 - 2, y1 - 2], radius=5, fill=t.fill, outline="#333333",
                                    width=2)
        if t.text:
            d.text(((x + x1) / 2, (y + y1) / 2), t.text, fill=t.ink, anchor="mm",
                   font=big if len(t.text) <= 2 else small)
    for r0, c0, r1, c1 in sc.rules:
        d.line([PAD + c0 * CELL, PAD + r0 * CELL, PAD + c1 * CELL, PAD + r1 * CELL], fill="#222222", width=3)
    if sc.caption:
        d.text((PAD, 2 * PAD + sc.rows * CELL + 10), sc.caption, fill="black", anchor="lm", font=_font(12))
    return img


def _frames(scenes: Sequence[Scene]) -> list[Any]:
    w = max(board_size(s)[0] for s in scenes)
    h = max(board_size(s)[1] for s in scenes)
    return [to_image(s, (w, h)) for s in scenes]


def strip(scenes: Sequence[Scene], per_row: int = 8) -> Any:
    """All frames tiled left to right, ``per_row`` to a row: a replay on one page."""
    Image, _, _ = _pil()
    frames = _frames(scenes)
    fw, fh = frames[0].size
    cols = min(per_row, len(frames))
    rows = -(-len(frames) // cols)
    out = Image.new("RGB", (cols * fw, rows * fh), "white")
    for i, f in enumerate(frames):
        out.paste(f, ((i % cols) * fw, (i // cols) * fh))
    return out


def save_png(scenes: Scene | Sequence[Scene], path: str) -> None:
    img = to_image(scenes) if isinstance(scenes, Scene) else strip(scenes)
    img.save(path, format="PNG")


def save_gif(scenes: Sequence[Scene], path: str, ms: int = 400, hold_ms: int = 2000) -> None:
    """Animated GIF, one frame per scene, looping; the first and last frames are held longer."""
    frames = _frames(scenes)
    durations = [ms] * len(frames)
    durations[0] = durations[-1] = hold_ms
    frames[0].save(path, format="GIF", save_all=True, append_images=frames[1:], duration=durations, loop=0,
                   disposal=1)
