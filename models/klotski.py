"""Hua Rong Dao / Klotski and its variations on any W x H board.

Glossary
    cell     r * W + c, row-major; row 0 is the top (away from the exit).
    piece    a solid rectangle: 2x2 (曹操, always letter A, the target),
             2 wide x 1 tall (关羽, "horizontal"), 1 wide x 2 tall (将,
             "vertical"), 1x1 (兵).
    pos[p]   the state: top-left cell of piece p.
    occ[c]   derived view: is cell c covered by some piece.
    step     one piece moves one cell (the unit of every metric).
    last     (metrics ``moves``/``straight`` only) bookkeeping of which piece
             moved last, stored as that piece's position (and direction), so
             it is unchanged when identical pieces are permuted -- the
             representation Zhao & Xu use ("the block moved is represented
             by its position").

Metrics, all as 0/1 step costs, so every exact engine computes them:
    moves     (default; fayaa.com, Zhao & Xu) one piece moved any distance
              along any path, corners included: a step of the piece that
              moved last is free.
    straight  one straight slide: a step continuing the last step's piece
              *and direction* is free.
    steps     every step costs 1.

Option ``action=move`` (metrics ``moves`` and ``straight``): one action per whole move, a
piece along any path the empty cells allow (``straight``: along one line), each costing 1
(:func:`whole_move_paths`).  The same optima as the cell steps
(tests/test_klotski_whole_moves.py), with unit costs: a symbolic engine's horizon then
counts moves, not steps, and needs no zero-cost run bound.

Record format: ../instances/klotski/FORMAT.md, plus optional headers
``size: WxH`` (default 4x5) and ``goal: r,c`` (top-left cell of A at the
goal; default bottom-middle ``H-2, (W-2)//2``).  Same-shaped pieces other
than A are interchangeable (the paper's three pattern conditions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from puzzleplan.lang import (
    Act,
    And,
    Element,
    Expr,
    If,
    Max,
    Model,
    Not,
    Option,
    OptionError,
    Or,
    Record,
    Table,
    Tile,
    ToInt,
    split_headers,
)

NAME = "klotski"
OPTIONS = [
    Option("metric", "moves", "what one unit of cost is", choices=("moves", "straight", "steps")),
    Option("action", "cell", "what one action is: cell (a piece moves one cell; with metric moves or "
           "straight a continuation is free) or move (metrics moves and straight: a whole move, the "
           "piece along any path the empty cells allow, or one straight slide, each action costing 1)",
           choices=("cell", "move")),
]

SHAPES = {(2, 2): "2x2", (1, 2): "2x1 horizontal", (2, 1): "1x2 vertical", (1, 1): "1x1"}
DIRS = (("up", -1, 0), ("down", 1, 0), ("left", 0, -1), ("right", 0, 1))
MAX_WHOLE_EMPTY = 6


@dataclass
class Piece:
    letter: str
    r: int
    c: int
    h: int
    w: int


@dataclass
class Layout:
    id: str
    width: int
    height: int
    pieces: list[Piece]      # A first
    goal: tuple[int, int]
    headers: dict[str, str]


def parse(rec: Record) -> Layout:
    split_headers(rec)
    W, H = 4, 5
    if "size" in rec.headers:
        m = re.fullmatch(r"\s*([0-9]{1,9})\s*[xX×]\s*([0-9]{1,9})\s*", rec.headers["size"][0])
        if not m or int(m.group(1)) < 2 or int(m.group(2)) < 2:
            raise rec.error(f"size must look like 4x5 (width x height), got {rec.headers['size'][0]!r}",
                            rec.header_line("size"))
        W, H = int(m.group(1)), int(m.group(2))
    grid = rec.body
    if not grid:
        raise rec.error("no board rows")
    if len(grid) != H:
        where = grid[min(len(grid), H) - 1][0] if len(grid) < H else grid[H][0]
        raise rec.error(f"board has {len(grid)} rows, expected {H}", where)
    cells: dict[str, list[tuple[int, int]]] = {}
    for r, (no, text) in enumerate(grid):
        if len(text) != W:
            raise rec.error(f"row has {len(text)} cells, expected {W} (ragged row)", no)
        for c, ch in enumerate(text):
            if ch == ".":
                continue
            if not ("A" <= ch <= "Z"):
                raise rec.error(f"unknown cell character {ch!r} (use A-Z for pieces, '.' for empty)", no)
            cells.setdefault(ch, []).append((r, c))
    if "A" not in cells:
        raise rec.error("no target piece 'A' on the board", grid[0][0])
    pieces: list[Piece] = []
    # A first, then by shape, then reading order: layouts with the same piece set get the same
    # variable order, hence one compiled kernel for all of them
    shape_rank = {shape: i for i, shape in enumerate(SHAPES)}

    def order(ch: str) -> tuple:
        rows = [r for r, _ in cells[ch]]
        cols = [c for _, c in cells[ch]]
        shape = (max(rows) - min(rows) + 1, max(cols) - min(cols) + 1)
        return (ch != "A", shape_rank.get(shape, len(SHAPES)), cells[ch][0])

    for letter in sorted(cells, key=order):
        cs = cells[letter]
        rows = [r for r, _ in cs]
        cols = [c for _, c in cs]
        r0, c0 = min(rows), min(cols)
        h, w = max(rows) - r0 + 1, max(cols) - c0 + 1
        line = grid[r0][0]
        if len(cs) != h * w or set(cs) != {(r0 + i, c0 + j) for i in range(h) for j in range(w)}:
            raise rec.error(f"piece {letter} is not a solid rectangle", line)
        if (h, w) not in SHAPES:
            raise rec.error(f"piece {letter} has unknown shape {w} wide x {h} tall "
                            "(known: 2x2, 2x1, 1x2, 1x1)", line)
        pieces.append(Piece(letter, r0, c0, h, w))
    a = pieces[0]
    if "goal" in rec.headers:
        m = re.fullmatch(r"\s*([0-9]{1,9})\s*,\s*([0-9]{1,9})\s*", rec.headers["goal"][0])
        if not m:
            raise rec.error("goal must be 'row,col' (top-left cell of A)", rec.header_line("goal"))
        goal = (int(m.group(1)), int(m.group(2)))
    else:
        goal = (H - 2, (W - 2) // 2)
    if not (0 <= goal[0] <= H - a.h and 0 <= goal[1] <= W - a.w):
        raise rec.error(f"goal {goal[0]},{goal[1]} puts piece A off the board", rec.header_line("goal"))
    headers = {k: v for k, (v, _) in rec.headers.items()}
    return Layout(rec.id or headers.get("name", "layout"), W, H, pieces, goal, headers)


def whole_move_paths(h: int, w: int, empty: int,
                     straight: bool = False) -> list[tuple[tuple[str, ...], tuple[int, int], frozenset]]:
    """Every way an ``h`` x ``w`` piece can make one move when the board has ``empty`` empty cells.

    ``straight``: one move is a slide along one line (metric ``straight``): paths that repeat
    their first direction only; the argument below holds for them as it stands.

    Why this list is complete: during a move the other pieces stand still, so every cell the
    moving piece covers on the way is its own or was empty: the union of its footprints along
    the path has at most ``h w + empty`` cells.  Of the paths between two positions the
    shortest visits no position twice, so the simple paths within that union bound reach every
    position one move can reach.  A path whose cells (beyond the starting footprint) include
    all of another path's to the same end is dropped: the other applies whenever it does.

    Returns (directions, displacement (rows, columns), cells needed empty relative to the
    starting top-left cell), one per kept path.
    """
    start = frozenset((i, j) for i in range(h) for j in range(w))
    limit = h * w + empty
    found: list[tuple[tuple[str, ...], tuple[int, int], frozenset]] = []

    def walk(at: tuple[int, int], seen: set, union: frozenset, names: tuple[str, ...]) -> None:
        for name, dr, dc in DIRS:
            nxt = (at[0] + dr, at[1] + dc)
            if nxt in seen or (straight and names and name != names[0]):
                continue
            grown = union | {(nxt[0] + i, nxt[1] + j) for i in range(h) for j in range(w)}
            if len(grown) > limit:
                continue
            path = (*names, name)
            found.append((path, nxt, grown - start))
            walk(nxt, seen | {nxt}, grown, path)

    walk((0, 0), {(0, 0)}, start, ())
    kept = []
    for path, end, need in found:
        dominated = any(e == end and (n < need or (n == need and (len(p), p) < (len(path), path)))
                        for p, e, n in found)
        if not dominated:
            kept.append((path, end, need))
    return kept


def _cell_table(p: Piece, i: int, j: int, W: int, H: int) -> list[int]:
    """The cell at offset (i, j) from piece p's top-left cell, per top-left cell (-1: off the board)."""
    t = []
    for x in range(W * H):
        r0, c0 = divmod(x, W)
        rr, cc = r0 + i, c0 + j
        fits = 0 <= r0 <= H - p.h and 0 <= c0 <= W - p.w
        t.append(rr * W + cc if fits and 0 <= rr < H and 0 <= cc < W else -1)
    return t


def _whole_moves(m: Model, lay: Layout, pos: list, occ: object, straight: bool) -> None:
    """Option ``action=move``: one action per piece and kept path (:func:`whole_move_paths`), cost 1."""
    W, H = lay.width, lay.height
    empty = W * H - sum(p.h * p.w for p in lay.pieces)
    if empty > MAX_WHOLE_EMPTY:   # the paths grow about 2.4x per empty cell (672 for a 1x1 piece at 6)
        raise OptionError(f"action=move lists every path one move can take; with {empty} empty cells "
                          f"(at most {MAX_WHOLE_EMPTY}) there are too many: use action=cell")
    for k, p in enumerate(lay.pieces):
        for path, (dr, dc), need in whole_move_paths(p.h, p.w, empty, straight):
            tables = [_cell_table(p, i, j, W, H) for i, j in sorted(need)]
            if not any(all(t[x] >= 0 for t in tables) for x in range(W * H)):
                continue   # the path leaves every board position (small boards)
            free = And(*[Not(Element(occ, Table(t, default=-1)[pos[k]], default=True)) for t in tables])
            label = f"{p.letter} {','.join(path)}"

            def schema(free: Expr = free, k: int = k, delta: int = dr * W + dc, label: str = label) -> Act:
                return Act(guard=free, effects={pos[k]: pos[k] + delta}, label=label)

            m.action(f"move_{p.letter}_{'_'.join(path)}")(schema)


def build(lay: Layout, metric: str = "moves", action: str = "cell") -> Model:
    W, H, P = lay.width, lay.height, lay.pieces
    n_cells = W * H
    whole = action == "move"
    if whole and metric == "steps":
        raise OptionError("action=move makes one action of a whole move, so it counts moves: it needs "
                          "metric=moves or metric=straight, not metric=steps")
    m = Model(f"klotski-{metric}" + ("-whole" if whole else ""))
    pos = [m.var(f"pos[{p.letter}]", 0, n_cells - 1, p.r * W + p.c) for p in P]
    if metric == "moves" and not whole:
        last = m.var("last", -1, n_cells - 1, -1, aux=True)
    elif metric == "straight" and not whole:
        last = m.var("last", -1, 4 * n_cells - 1, -1, aux=True)
    if metric != "steps" and not whole:
        # `last` only makes a continuation free; after one step two states that differ only in
        # `last` agree again, so their optimal remaining costs differ by at most 1
        m.aux_bound(1)

    def covers(p: Piece, cell: int) -> list[int]:
        """Top-left positions from which piece p covers ``cell`` (only placements inside the board)."""
        r, c = divmod(cell, W)
        out = []
        for i in range(p.h):
            for j in range(p.w):
                r0, c0 = r - i, c - j
                if 0 <= r0 <= H - p.h and 0 <= c0 <= W - p.w:
                    out.append(r0 * W + c0)
        return out

    occ = m.view("occ", [
        Or(*[Table([1 if x in covers(p, cell) else 0 for x in range(n_cells)])[pos[k]] == 1
             for k, p in enumerate(P)])
        for cell in range(n_cells)
    ])

    if whole:
        _whole_moves(m, lay, pos, occ, straight=metric == "straight")
    for k, p in enumerate(P if not whole else ()):
        for d, (name, dr, dc) in enumerate(DIRS):
            # cells the piece newly covers, as a function of its top-left cell (-1 = off the board)
            if dr:
                edge = [(p.h if dr > 0 else -1, j) for j in range(p.w)]
            else:
                edge = [(i, p.w if dc > 0 else -1) for i in range(p.h)]
            tables = [Table(_cell_table(p, ei, ej, W, H), default=-1) for ei, ej in edge]
            free = And(*[Not(Element(occ, tab[pos[k]], default=True)) for tab in tables])
            delta = dr * W + dc
            effects = {pos[k]: pos[k] + delta}
            cost = 1
            if metric == "moves":
                effects[last] = pos[k] + delta
                cost = If(last == pos[k], 0, 1)
            elif metric == "straight":
                effects[last] = (pos[k] + delta) * 4 + d
                cost = If(last == pos[k] * 4 + d, 0, 1)

            def schema(free: Expr = free, effects: dict = effects, cost: Expr | int = cost,
                       label: str = f"{p.letter} {name}") -> Act:
                return Act(guard=free, effects=effects, cost=cost, label=label)

            m.action(f"move_{p.letter}_{name}")(schema)

    gr, gc = lay.goal
    goal_cell = gr * W + gc
    m.goal(pos[0] == goal_cell)
    a = P[0]
    row, col = pos[0] // W, pos[0] % W
    dist_r = If(row > gr, row - gr, gr - row)
    dist_c = If(col > gc, col - gc, gc - col)
    # admissible: every step of A brings it at most one cell closer; with moves/straight, A's own
    # continuation is free right after A moved, so one unit less is all we may claim then
    if metric == "steps":
        m.heuristic(dist_r + dist_c, admissible=True)
    elif metric == "straight" and whole:   # one slide changes one of A's coordinates
        m.heuristic(ToInt(dist_r > 0) + ToInt(dist_c > 0), admissible=True)
    elif metric == "straight":
        a_moved_last = last // 4 == pos[0]
        m.heuristic(Max(ToInt(dist_r > 0) + ToInt(dist_c > 0) - ToInt(a_moved_last), 0), admissible=True)
    elif whole:   # every move costs 1 and A is not home
        m.heuristic(ToInt(Not(pos[0] == goal_cell)), admissible=True)
    else:
        m.heuristic(If(last == pos[0], 0, ToInt(Not(pos[0] == goal_cell))), admissible=True)

    # identical shapes are interchangeable; the target piece A never is
    by_shape: dict[tuple[int, int], list[int]] = {}
    for k, p in enumerate(P[1:], start=1):
        by_shape.setdefault((p.h, p.w), []).append(k)
    for ks in by_shape.values():
        m.interchangeable([(pos[k],) for k in ks])

    letters = [p.letter for p in P]
    shapes = [(p.h, p.w) for p in P]

    @m.display
    def show(values: list[int]) -> str:
        board = [["."] * W for _ in range(H)]
        for letter, (h, w), x in zip(letters, shapes, values):
            r0, c0 = divmod(x, W)
            for i in range(h):
                for j in range(w):
                    board[r0 + i][c0 + j] = letter
        return "\n".join("".join(row) for row in board)

    # pictures (puzzleplan.render): every piece a block of its shape's colour
    look = m.look(H, W)
    colours = {(2, 2): "#d9534f", (1, 2): "#5b9bd5", (2, 1): "#70ad47", (1, 1): "#f0c419"}
    for k, p in enumerate(P):
        look.sprite(pos[k], Tile(p.letter, fill=colours.get((p.h, p.w), "#bbbbbb")), size=(p.h, p.w))

    m.info.update(width=W, height=H, goal=lay.goal, id=lay.id, target_shape=(a.h, a.w))
    return m
