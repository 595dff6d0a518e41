"""How a state looks: one declaration per model, drawn as text, SVG, PNG and GIF.

A model describes its board once as a grid of ``rows x cols`` cells and a
stack of *layers* over it, each made of expressions the model already has
(state variables, views, constants):

* ``look.cells(values, tiles, at=None)`` -- cell ``at[i]`` shows the tile of
  the current value of ``values[i]`` (no tile for that value: nothing drawn).
  A sliding-tile board is ``cells(t, {k: Tile(str(k)) ...})``; a sudoku grid
  is ``cells(digits, ...)``; constant clues around a grid are constant values.
* ``look.sprite(at, tile, size=(h, w))`` -- an object whose top-left cell is
  the value of ``at`` (row-major cell number; a negative value hides it),
  covering ``h x w`` cells.  A sliding block or a walking figure.

Because everything is an expression, the renderer (``puzzleplan.render``)
needs no code from the model: it evaluates the layers on a state with the
reference interpreter and draws the result, the same way for every puzzle.
The declaration is data, so it never runs model code while drawing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .errors import ModelError
from .expr import Expr, ExprLike, lift


@dataclass(frozen=True)
class Tile:
    """One look: ``glyph`` in text output, ``fill`` colour and ``label`` in pictures.

    ``label`` defaults to the glyph; ``fill=None`` draws no box (text only,
    e.g. a clue); ``ink`` is the label colour; ``shape`` is ``"rect"`` or
    ``"circle"`` (a figure rather than a block).
    """

    glyph: str
    fill: str | None = "#dddddd"
    label: str | None = None
    ink: str = "#111111"
    shape: str = "rect"

    def __post_init__(self) -> None:
        if not self.glyph:
            raise ModelError("a Tile needs a non-empty glyph (what text output prints)")
        if self.shape not in ("rect", "circle"):
            raise ModelError(f"Tile shape must be 'rect' or 'circle', got {self.shape!r}")

    @property
    def text(self) -> str:
        return self.glyph if self.label is None else self.label


@dataclass(frozen=True)
class CellLayer:
    values: tuple[Expr, ...]
    tiles: Mapping[int, Tile]
    at: tuple[int, ...]
    kind: str = "cell"


@dataclass(frozen=True)
class Sprite:
    at: Expr
    tile: Tile
    size: tuple[int, int] = (1, 1)
    kind: str = "sprite"


@dataclass
class Look:
    """A ``rows x cols`` board and its layers, drawn bottom to top."""

    rows: int
    cols: int
    background: Tile = Tile(".", fill="#f7f3e8")
    layers: list[CellLayer | Sprite] = field(default_factory=list)
    title: str = ""
    # heavy rules every (h, w) cells, offset by ``blocks_at`` (the top-left cell of the ruled area):
    # sudoku boxes; None = none
    blocks: tuple[int, int] | None = None
    blocks_at: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        if self.rows < 1 or self.cols < 1:
            raise ModelError(f"look: the board needs at least one cell, got {self.rows}x{self.cols}")
        if self.blocks is not None and not (1 <= self.blocks[0] and 1 <= self.blocks[1]):
            raise ModelError(f"look: blocks must be positive (h, w), got {self.blocks}")

    def cells(self, values: Sequence[ExprLike] | Sequence[Sequence[ExprLike]], tiles: Mapping[int, Tile],
              at: Sequence[int] | None = None) -> None:
        """Cell ``at[i]`` (default: i, row-major) shows ``tiles[value of values[i]]``.

        ``values`` may be a flat list or a list of rows (as ``Model.grid`` returns).
        """
        flat = [x for row in values for x in row] if values and isinstance(values[0], (list, tuple)) \
            else list(values)
        where = list(range(len(flat))) if at is None else [int(c) for c in at]
        if len(where) != len(flat):
            raise ModelError(f"look.cells: {len(flat)} values but {len(where)} cells")
        n = self.rows * self.cols
        bad = [c for c in where if not 0 <= c < n]
        if bad:
            raise ModelError(f"look.cells: cell {bad[0]} is outside the {self.rows}x{self.cols} board")
        self.layers.append(CellLayer(tuple(lift(v) for v in flat), dict(tiles), tuple(where)))  # type: ignore[arg-type]

    def sprite(self, at: ExprLike, tile: Tile, size: tuple[int, int] = (1, 1)) -> None:
        """An object covering ``size = (h, w)`` cells from the top-left cell ``at`` (negative: hidden)."""
        h, w = size
        if not (1 <= h <= self.rows and 1 <= w <= self.cols):
            raise ModelError(f"look.sprite: size {h}x{w} does not fit the {self.rows}x{self.cols} board")
        self.layers.append(Sprite(lift(at), tile, (int(h), int(w))))


__all__ = ["CellLayer", "Look", "Sprite", "Tile"]
