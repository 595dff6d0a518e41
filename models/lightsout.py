"""Lights Out: switch every light off; pressing a light toggles it and its orthogonal neighbours.

Glossary
    board      R x C lights (R = C = 5 on the original handheld game).
    cell       named like a chessboard square: column letter, row number
               counted from the top (a1 = top-left, c2 = row 2, column 3).
    x[r,c]     the state: 1 if the light at row r, column c is on.
    press      the only action: toggles the pressed light and its
               orthogonal neighbours on the board. Cost 1.

Instance file: optional ``key: value`` headers, then R rows of C characters,
``*`` for a light that is on and ``.`` for one that is off.  Several boards
per file: start each with an ``id:`` header, separate them by blank lines.
"""

from puzzleplan.lang import Act, Model, Option, Record, Sum, Tile, split_headers

NAME = "lightsout"
OPTIONS = [
    Option("heuristic", "lit", "estimate for astar/idastar: lit lights / most toggled by one press",
           choices=("lit", "none")),
]

STEPS = ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1))   # the pressed light and its 4 neighbours
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def parse(rec: Record) -> list[list[int]]:
    split_headers(rec)
    rows: list[list[int]] = []
    for line, text in rec.body:
        text = text.strip()
        bad = [ch for ch in text if ch not in "*."]
        if bad:
            raise rec.error(f"{bad[0]!r} is not a light: use * (on) or . (off)", line)
        if rows and len(text) != len(rows[0]):
            raise rec.error(f"row has {len(text)} lights, the first row has {len(rows[0])}", line)
        rows.append([1 if ch == "*" else 0 for ch in text])
    if not rows:
        raise rec.error("no rows of lights")
    if len(rows[0]) > len(LETTERS):
        raise rec.error(f"at most {len(LETTERS)} columns", rec.body[0][0])
    return rows


def build(rows: list[list[int]], heuristic: str = "lit") -> Model:
    R, C = len(rows), len(rows[0])
    m = Model(f"lightsout-{R}x{C}")
    x = m.grid("x", 0, 1, rows)

    def toggled(r: int, c: int) -> list[tuple[int, int]]:
        """The cells a press on (r, c) toggles: itself and its neighbours on the board."""
        return [(r + dr, c + dc) for dr, dc in STEPS if 0 <= r + dr < R and 0 <= c + dc < C]

    @m.action("press", r=range(R), c=range(C))
    def press(r: int, c: int) -> Act:
        flips = {x[i][j]: 1 - x[i][j] for i, j in toggled(r, c)}
        return Act(effects=flips, cost=1, label=f"{LETTERS[c]}{r + 1}")

    lit = Sum(x[r][c] for r in range(R) for c in range(C))
    m.goal(lit == 0)

    if heuristic == "lit":
        most = max(len(toggled(r, c)) for r in range(R) for c in range(C))
        m.heuristic((lit + most - 1) // most, admissible=True)

    @m.display
    def show(values: list[int]) -> str:
        return "\n".join("".join("*" if v else "." for v in values[r * C:(r + 1) * C]) for r in range(R))

    look = m.look(R, C)
    look.cells([x[r][c] for r in range(R) for c in range(C)],
               {1: Tile("*", fill="#ffd24a"), 0: Tile(".", fill="#3b3b46", ink="#3b3b46")})
    return m
