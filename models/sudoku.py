"""Sudoku: fill a 9x9 grid so that every row, column and 3x3 box holds 1..9 once.

Glossary
    d[r,c]   digit in row r (top = 0), column c (left = 0)
    box      the 3x3 block (r // 3, c // 3)
    givens   the digits printed in the puzzle

Instance format: the common one-line form -- 81 characters, row by row, ``0`` or ``.`` for a
blank -- one puzzle per line, many per file (``FILE#k`` picks the k-th puzzle, default the
first).  Lines starting with ``#`` are comments.  (``ONE_PER_LINE`` tells the loader.)
"""

from __future__ import annotations

from puzzleplan.lang import CspModel, Record, Tile

NAME = "sudoku"
OPTIONS: list = []
ONE_PER_LINE = True


def parse(rec: Record) -> list[int]:
    if len(rec.lines) != 1:
        raise rec.error("a sudoku record is one line of 81 characters")
    no, text = rec.lines[0]
    s = text.strip()
    if len(s) != 81:
        raise rec.error(f"expected 81 characters, found {len(s)}", no)
    out = []
    for i, ch in enumerate(s):
        if ch in ".0":
            out.append(0)
        elif ch in "123456789":
            out.append(int(ch))
        else:
            raise rec.error(f"character {i + 1} is {ch!r}: only 1-9, 0 and . are allowed", no)
    return out


def build(cells: list[int]) -> CspModel:
    m = CspModel(NAME)
    d = m.grid("d", 9, 9, 1, 9)
    for i, v in enumerate(cells):
        if v:
            m.given(d[i // 9][i % 9], v)
    for r in range(9):
        m.all_different(d[r], label=f"row {r + 1}")
    for c in range(9):
        m.all_different([d[r][c] for r in range(9)], label=f"column {c + 1}")
    for b in range(9):
        r0, c0 = 3 * (b // 3), 3 * (b % 3)
        m.all_different([d[r0 + i][c0 + j] for i in range(3) for j in range(3)], label=f"box {b + 1}")

    @m.display
    def show(values: list[int]) -> str:
        rows = []
        for r in range(9):
            if r and r % 3 == 0:
                rows.append("------+-------+------")
            row = [str(values[r * 9 + c]) for c in range(9)]
            rows.append(" | ".join(" ".join(row[k:k + 3]) for k in (0, 3, 6)))
        return "\n".join(rows)

    # pictures: givens on grey, found digits on white (an unsolved cell is 0: not drawn)
    look = m.look(9, 9, background=Tile(".", fill="#ffffff"), blocks=(3, 3))
    flat = [d[r][c] for r in range(9) for c in range(9)]
    for given, fill in ((True, "#d0d0d0"), (False, "#ffffff")):
        at = [i for i in range(81) if bool(cells[i]) == given]
        look.cells([flat[i] for i in at], {v: Tile(str(v), fill=fill) for v in range(1, 10)}, at=at)
    return m
