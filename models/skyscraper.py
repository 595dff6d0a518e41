"""Skyscrapers (Towers): a Latin square whose edge clues count the buildings seen from each side.

Glossary
    n          grid size; heights are 1..n
    h[r,c]     height of the building in row r (top = 0), column c (left = 0)
    top[c]     clue above column c: buildings seen looking down the column (0 = no clue)
    bottom[c]  clue below column c, looking up
    left[r]    clue left of row r, looking right
    right[r]   clue right of row r, looking left
    seen       a building is seen when it is taller than every building in front of it:
               the number seen is the number of *records* of the line (``CspModel.records``)

Instance format: ``instances/skyscraper/FORMAT.md`` (``size``, ``top``, ``bottom``, ``left``,
``right``, optional ``givens``, then ``solution`` -- reference data only, never read here).
"""

from __future__ import annotations

from puzzleplan.lang import CspModel, Record, Tile, to_int

NAME = "skyscraper"
OPTIONS: list = []

_SIDES = ("top", "bottom", "left", "right")


def parse(rec: Record) -> dict:
    lines = [(no, text.split("#")[0].split()) for no, text in rec.lines]
    lines = [(no, words) for no, words in lines if words]
    if not lines or lines[0][1][0] != "size":
        raise rec.error("the first line must be 'size N'", lines[0][0] if lines else None)
    no, words = lines[0]
    size = to_int(words[1], 1, 30) if len(words) == 2 else None
    if size is None:
        raise rec.error("'size' needs one integer 1..30", no)
    n = size
    data: dict = {"n": n, "givens": None}
    i = 1
    for side in _SIDES:
        if i >= len(lines) or lines[i][1][0] != side:
            got = lines[i][1][0] if i < len(lines) else "end of file"
            raise rec.error(f"expected the '{side}' clue line, found {got!r}",
                            lines[i][0] if i < len(lines) else lines[-1][0])
        no, words = lines[i]
        data[side] = _ints(rec, no, words[1:], n, 0, n, f"{side} clues")
        i += 1
    if i < len(lines) and lines[i][1][0] == "givens":
        if len(lines[i][1]) != 1:
            raise rec.error("'givens' stands alone on its line", lines[i][0])
        rows = []
        for r in range(n):
            i += 1
            if i >= len(lines) or lines[i][1][0] in ("solution",):
                raise rec.error(f"givens: expected {n} rows, found {r}", lines[min(i, len(lines) - 1)][0])
            no, words = lines[i]
            rows.append(_ints(rec, no, words, n, 0, n, f"givens row {r + 1}"))
        data["givens"] = rows
        i += 1
    if i < len(lines) and lines[i][1][0] != "solution":
        raise rec.error(f"unexpected line {' '.join(lines[i][1])!r}", lines[i][0])
    return data


def _ints(rec: Record, no: int, words: list[str], n: int, lo: int, hi: int, what: str) -> list[int]:
    if len(words) != n:
        raise rec.error(f"{what}: expected {n} numbers, found {len(words)}", no)
    out = []
    for w in words:
        v = rec.int_field(w, what, no)
        if not lo <= v <= hi:
            raise rec.error(f"{what}: {v} is outside {lo}..{hi}", no)
        out.append(v)
    return out


def build(data: dict) -> CspModel:
    n = data["n"]
    m = CspModel(NAME)
    h = m.grid("h", n, n, 1, n)
    if data["givens"]:
        for r, row in enumerate(data["givens"]):
            for c, v in enumerate(row):
                if v:
                    m.given(h[r][c], v)
    rows = [h[r] for r in range(n)]
    cols = [[h[r][c] for r in range(n)] for c in range(n)]
    for r in range(n):  # rows first: engines may treat them as permutations
        m.all_different(rows[r], label=f"row {r + 1}")
    for c in range(n):
        m.all_different(cols[c], label=f"column {c + 1}")
    lines = {"top": cols, "bottom": [col[::-1] for col in cols],
             "left": rows, "right": [row[::-1] for row in rows]}
    for side in _SIDES:
        for j, k in enumerate(data[side]):
            if k:
                m.records(lines[side][j], k, label=f"{side} clue {j + 1} = {k}")

    @m.display
    def show(values: list[int]) -> str:
        def clue(v: int) -> str:
            return str(v) if v else "."

        w = len(str(n))
        out = ["   " + " ".join(clue(v).rjust(w) for v in data["top"])]
        for r in range(n):
            cells = " ".join(str(values[r * n + c]).rjust(w) for c in range(n))
            out.append(f"{clue(data['left'][r]).rjust(w)}  {cells}  {clue(data['right'][r])}")
        out.append("   " + " ".join(clue(v).rjust(w) for v in data["bottom"]))
        return "\n".join(out)

    # pictures: the n x n heights inside a ring of clues (constants; 0 = no clue, not drawn)
    look = m.look(n + 2, n + 2, background=Tile(" ", fill="#ffffff"), blocks=(n, n), blocks_at=(1, 1))
    inner = [(r + 1) * (n + 2) + c + 1 for r in range(n) for c in range(n)]
    look.cells(h, {v: Tile(str(v), fill="#a9c4e6") for v in range(1, n + 1)}
               | {0: Tile(".", fill=None, label="")}, at=inner)
    ring = [(0, j + 1, "top") for j in range(n)] + [(n + 1, j + 1, "bottom") for j in range(n)] \
        + [(j + 1, 0, "left") for j in range(n)] + [(j + 1, n + 1, "right") for j in range(n)]
    look.cells([data[side][j - 1 if side in ("top", "bottom") else r - 1] for r, j, side in ring],
               {v: Tile(str(v), fill=None, ink="#a33") for v in range(1, n + 1)},
               at=[r * (n + 2) + c for r, c, _ in ring])

    m.info["size"] = n
    return m
