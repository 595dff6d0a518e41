"""Zen Puzzle Garden: rake every sand square, one excursion from the perimeter at a time.

Glossary
    garden     R x C interior squares (the sand area); the walkable perimeter
               ring around it is implicit and never part of the state.
    cell       r * C + c, row-major, row 0 on top.
    sand[r,c]  the state of every square that is not a rock:
               0 = unraked sand (a leaf square counts as unraked while its
               leaf lies there), 1 = raked, or the monk stands on it (a square
               is raked when vacated; marking it on entry is equivalent,
               because the monk must leave every square before the goal),
               2 = an ornament stands on it (the sand under it is unraked).
               Cells no ornament can ever reach have the domain 0..1.
    pos        the monk: -1 = on the perimeter, else the cell he stopped on.
    gate       the "one-way gate" (Houston, White & Amos 2012): 1 + the
               direction back to the perimeter while the monk stands on the
               square he just entered (without having left it); 0 otherwise.
    line       the squares from a cell in a direction, up to a rock or the
               edge (an "open" line ends at the perimeter).
    excursion  enter from the perimeter, slide, choose, ... step back out:
               ONE move, the unit of cost.

Actions (the cost model: entering costs 1, everything else 0)
    enter  ``top3D`` ``right0L`` ``bottom5U`` ``left2R`` (the side, the
           column or row, the direction of travel; numbered clockwise like
           the paper's perimeter points): step onto an unraked border square
           and slide to the next stop (or across and out).  Cost 1.
    slide  ``U`` ``D`` ``L`` ``R`` from a stop: the whole straight slide to
           the next stop is ONE action (conditional effects over the line),
           or out onto the perimeter.  Cost 0.
    +k     a slide (or entry) that ends in front of an ornament may push it
           k >= 1 squares on in the same direction (``R+2``); k = 0 is the
           plain slide.  The ornament moves only onto unraked, empty sand and
           never onto the perimeter; the monk follows it square by square
           and then stops behind it.
    Leaves (``y`` ``o`` ``r``) are collected by moving over them, yellow
    leaves before any orange, orange before any red; a leaf that may not be
    collected yet is an obstacle.  Several leaves of one colour are allowed.

A stop offers at most two directions (forward is blocked, backward is
raked, or is the perimeter gate right after entering); with none the monk is
stuck, a dead state with no successors.  Rules the paper leaves open and
their readings are in docs/models/zpg.md.

Record format: ../instances/zpg/FORMAT.md (``size R C``, ``garden``, R rows
of ``.`` sand, ``#`` rock, ``S`` ornament, ``y``/``o``/``r`` leaves).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path

from puzzleplan.lang import (
    Act,
    Add,
    And,
    Count,
    Expr,
    If,
    InstanceError,
    Max,
    Model,
    Not,
    Option,
    Or,
    Record,
    Tile,
    ToInt,
    When,
    progress,
    read_text,
    script,
    split_headers,
    text_lines,
    variant,
)

NAME = "zpg"
OPTIONS = [
    Option("goal", "final", "which squares must be raked at the end: 'final' = every square not under an "
           "ornament at the end (the game); 'initial' = every square not under a rock or an ornament at "
           "the start (the paper's literal wording; pushing then never helps)", choices=("final", "initial")),
    Option("stepback", "same", "the one-way gate right after entering: 'same' = he may not step back onto "
           "the perimeter square he came from (Houston/White/Amos); 'any' = onto no perimeter square",
           choices=("same", "any")),
    Option("heuristic", "components", "astar estimate: 'components' (admissible: isolated pockets and "
           "dead squares, see docs/models/zpg.md), 'area' (number of unraked squares, the paper's "
           "AreaFitness-style guidance, NOT admissible), 'none'", choices=("components", "area", "none")),
    Option("prune", "dead", "'dead' = no moves out of a state that provably cannot be finished (an "
           "unraked square walled in for good); the optimum is unchanged; 'none' = the plain rules",
           choices=("dead", "none")),
]

DIRS = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}
BACK = {"U": "D", "D": "U", "L": "R", "R": "L"}
CODE = {"U": 1, "D": 2, "L": 3, "R": 4}     # gate values
SYMBOLS = {".": "sand", "#": "rock", "S": "ornament", "y": "leaf", "o": "leaf", "r": "leaf"}
LEAF_RANK = {"y": 0, "o": 1, "r": 2}
SIZE_RE = re.compile(r"^\s*size\s+([0-9]{1,9})\s+([0-9]{1,9})\s*$", re.IGNORECASE)


@dataclass
class Garden:
    """A parsed board: ``rows`` of symbols (R rows of C characters) and its provenance."""

    rows: list[str]
    name: str
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def R(self) -> int:
        return len(self.rows)

    @property
    def C(self) -> int:
        return len(self.rows[0])


# ----------------------------------------------------------------------------- reading boards
def _raw_rows(rec: Record, after_line: int, n: int) -> list[tuple[int, str]] | None:
    """The ``n`` lines after line ``after_line`` of the record's file, read raw.

    Why: the record reader drops every line starting with ``#`` as a comment,
    but ``#`` is also the rock symbol, so a garden row such as ``#..#`` would
    vanish.  The grid is therefore re-read from the file by line number (the
    record keeps them); None when the source is not a readable file.
    """
    try:
        lines = text_lines(read_text(rec.source))
    except InstanceError:
        return None
    out = []
    for no in range(after_line + 1, after_line + 1 + n):
        if no > len(lines) or not lines[no - 1].strip():
            break
        out.append((no, lines[no - 1].rstrip()))
    return out


def parse(rec: Record) -> Garden:
    split_headers(rec)
    body = rec.body
    size_at = next((i for i, (_, t) in enumerate(body) if t.strip().lower().startswith("size")), None)
    garden_at = next((i for i, (_, t) in enumerate(body) if t.strip().lower() == "garden"), None)
    if size_at is None:
        raise rec.error("no 'size ROWS COLS' line")
    m = SIZE_RE.match(body[size_at][1])
    if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
        raise rec.error(f"size must look like 'size 6 6' (rows cols), got {body[size_at][1].strip()!r}",
                        body[size_at][0])
    R, C = int(m.group(1)), int(m.group(2))
    if R * C > 400:
        raise rec.error(f"a {R}x{C} garden is too large for this model (at most 400 squares)",
                        body[size_at][0])
    if garden_at is None or garden_at < size_at:
        raise rec.error("no 'garden' line after the size line", body[size_at][0])
    for no, text in body[size_at + 1:garden_at]:
        raise rec.error(f"unexpected line before 'garden': {text.strip()!r}", no)
    garden_no = body[garden_at][0]
    rows = _raw_rows(rec, garden_no, R)
    if rows is None:                     # an in-memory record: its body is all we have
        rows = body[garden_at + 1: garden_at + 1 + R]
    if len(rows) < R:
        last = rows[-1][0] if rows else garden_no
        raise rec.error(f"garden has {len(rows)} rows, expected {R} (size line)", last)
    last_row_no = rows[-1][0]
    extra = [(no, t) for no, t in body if no > last_row_no]
    if extra:
        raise rec.error(f"unexpected line after the {R} garden rows: {extra[0][1].strip()!r}", extra[0][0])
    for no, text in rows:
        if len(text) != C:
            raise rec.error(f"row has {len(text)} squares, expected {C} (ragged row)", no)
        for ch in text:
            if ch == "=":
                raise rec.error("walkable squares '=' inside the garden are not supported by this model", no)
            if ch not in SYMBOLS:
                raise rec.error(f"unknown square symbol {ch!r} (use . sand, # rock, S ornament, "
                                "y o r leaves)", no)
    grid = [t for _, t in rows]
    if not any(ch in ".yor" for row in grid for ch in row):
        raise rec.error("the garden has no sand to rake", garden_no)
    headers = {k: v for k, (v, _) in rec.headers.items()}
    return Garden(grid, rec.id or headers.get("name") or Path(rec.source).stem, headers)


# ----------------------------------------------------------------------------- geometry
def entries(R: int, C: int) -> list[tuple[str, int, int, str]]:
    """Perimeter entry points clockwise from the north face of the top-left square (the paper's c).

    Each is (label, row, col, direction of travel); 2R + 2C of them.
    """
    out = [(f"top{c}D", 0, c, "D") for c in range(C)]
    out += [(f"right{r}L", r, C - 1, "L") for r in range(R)]
    out += [(f"bottom{c}U", R - 1, c, "U") for c in reversed(range(C))]
    out += [(f"left{r}R", r, 0, "R") for r in reversed(range(R))]
    return out


class Board:
    """Static facts of one garden, shared by the model's actions, goal and heuristic."""

    def __init__(self, g: Garden):
        self.g = g
        self.R, self.C = g.R, g.C
        self.sym = {(r, c): ch for r, row in enumerate(g.rows) for c, ch in enumerate(row)}
        self.cells = [r * self.C + c for (r, c), ch in sorted(self.sym.items()) if ch != "#"]
        self.leaves = {r * self.C + c: LEAF_RANK[ch] for (r, c), ch in self.sym.items() if ch in LEAF_RANK}
        self.ornament_cells = self._ornament_reach()

    def inside(self, r: int, c: int) -> bool:
        return 0 <= r < self.R and 0 <= c < self.C

    def rock(self, cell: int) -> bool:
        return self.sym[divmod(cell, self.C)] == "#"

    def line(self, cell: int, d: str) -> tuple[list[int], bool]:
        """Cells after ``cell`` in direction d up to a rock or the edge; True if it ends at the perimeter."""
        r, c = divmod(cell, self.C)
        dr, dc = DIRS[d]
        out = []
        while True:
            r, c = r + dr, c + dc
            if not self.inside(r, c):
                return out, True
            if self.sym[(r, c)] == "#":
                return out, False
            out.append(r * self.C + c)

    def neighbours(self, cell: int) -> list[int]:
        r, c = divmod(cell, self.C)
        return [(r + dr) * self.C + c + dc for dr, dc in DIRS.values()
                if self.inside(r + dr, c + dc) and self.sym[(r + dr, c + dc)] != "#"]

    def open_sides(self, cell: int) -> int:
        """How many perimeter squares touch this cell."""
        r, c = divmod(cell, self.C)
        return sum(not self.inside(r + dr, c + dc) for dr, dc in DIRS.values())

    def _ornament_reach(self) -> set[int]:
        """Cells an ornament might ever stand on (over-approximation: straight pushes over rock-free,
        leaf-free squares with a non-rock square behind for the monk)."""
        seen = {r * self.C + c for (r, c), ch in self.sym.items() if ch == "S"}
        todo = list(seen)
        while todo:
            x = todo.pop()
            r, c = divmod(x, self.C)
            for dr, dc in DIRS.values():
                br, bc, nr, nc = r - dr, c - dc, r + dr, c + dc
                if not (self.inside(br, bc) and self.inside(nr, nc)):
                    continue
                if self.sym[(br, bc)] == "#" or self.sym[(nr, nc)] in "#yor":
                    continue
                y = nr * self.C + nc
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        return seen


# ----------------------------------------------------------------------------- the model
def build(g: Garden, goal: str = "final", stepback: str = "same", heuristic: str = "components",
          prune: str = "dead") -> Model:
    b = Board(g)
    R, C = b.R, b.C
    m = Model(f"zpg-{R}x{C}")
    init = {".": 0, "y": 0, "o": 0, "r": 0, "S": 2}
    sand: dict[int, Expr] = {}
    for cell in b.cells:
        r, c = divmod(cell, C)
        hi = 2 if cell in b.ornament_cells else 1
        sand[cell] = m.var(f"sand[{r},{c}]", 0, hi, init[b.sym[(r, c)]])
    pos = m.var("pos", -1, R * C - 1, -1)
    gate = m.var("gate", 0, 4 if stepback == "same" else 1, 0)
    has_ornaments = bool(b.ornament_cells)
    kmax = max(R, C) - 2 if has_ornaments else 0

    def free(line: list[int], i: int) -> Expr:
        """Square line[i] can be entered, given that the monk crossed line[:i] to get there."""
        x = line[i]
        ok = sand[x] == 0
        if x in b.leaves:
            crossed = set(line[:i])
            earlier = [y for y, rank in b.leaves.items() if rank < b.leaves[x] and y not in crossed]
            ok = And(ok, *[sand[y] == 1 for y in earlier])
        return ok

    def move(line: list[int], open_end: bool, k: int, guard: Expr, cost: int, label: str,
             gate_back: str | None) -> Act | None:
        """One straight slide along ``line`` (the monk's next squares), with k pushes at its end.

        ``gate_back``: for an entry, the direction back to the perimeter (the gate to set if he
        stops on the entry square); None for a slide from a stop.
        """
        n = len(line)
        effects: dict[Expr, Expr | int] = {}
        when: list[When] = []
        if n == 0:              # a border cell, outward: step out onto the perimeter
            return Act(guard=guard, effects={pos: -1, gate: 0}, cost=cost, label=label) if k == 0 else None
        fr = [free(line, i) for i in range(n)]
        reach = [fr[0]]
        for i in range(1, n):
            reach.append(And(reach[-1], fr[i]))
        effects[sand[line[0]]] = 1
        for i in range(1, n):
            when.append(When(reach[i], {sand[line[i]]: 1}))
        if k == 0:
            stop: Expr | int = -1 if open_end else line[-1]
            for i in range(n - 2, -1, -1):
                stop = If(fr[i + 1], stop, line[i])
            effects[pos] = stop
            if gate_back is None:
                effects[gate] = 0
            else:
                code = CODE[gate_back] if stepback == "same" else 1
                if n == 1:
                    effects[gate] = 0 if open_end else code
                else:
                    effects[gate] = If(fr[1], 0, code)
            return Act(guard=And(guard, fr[0]), effects=effects, cost=cost, label=label, when=when)
        # pushes: the slide stops on line[j] (j >= 0) with an ornament on line[j+1]
        pushes = []
        for j in range(0, n - 1 - k):
            orn, dest = line[j + 1], line[j + 2: j + 2 + k]
            if orn not in b.ornament_cells or any(y in b.leaves or y not in b.ornament_cells for y in dest):
                continue
            pj = And(reach[j], sand[orn] == 2, *[sand[y] == 0 for y in dest])
            assign: dict[Expr, Expr | int] = {sand[y]: 1 for y in line[j + 1: j + 1 + k]}
            assign[sand[line[j + 1 + k]]] = 2
            assign[pos] = line[j + k]
            pushes.append((pj, assign))
        if not pushes:
            return None
        effects[gate] = 0
        when += [When(pj, assign) for pj, assign in pushes]
        return Act(guard=And(guard, fr[0], Or(*[pj for pj, _ in pushes])), effects=effects, cost=cost,
                   label=f"{label}+{k}", when=when)

    dead, bound = _components_bound(b, sand, pos, stepback)
    alive = Not(dead) if prune == "dead" else None
    ents = entries(R, C)

    @m.action("enter", e=range(len(ents)), k=range(kmax + 1))
    def enter(e: int, k: int) -> Act | None:
        label, r, c, d = ents[e]
        cell = r * C + c
        if b.rock(cell):
            return None
        rest, open_end = b.line(cell, d)
        guard = pos == -1 if alive is None else And(pos == -1, alive)
        return move([cell] + rest, open_end, k, guard, 1, label, BACK[d])

    @m.action("slide", cell=b.cells, d=tuple(DIRS), k=range(kmax + 1))
    def slide(cell: int, d: str, k: int) -> Act | None:
        line, open_end = b.line(cell, d)
        guard = pos == cell if alive is None else And(pos == cell, alive)
        if not line and open_end:
            # stepping out: forbidden right after entering through this very side (the gate)
            guard = And(guard, gate != CODE[d]) if stepback == "same" else And(guard, gate == 0)
        elif not line:
            return None
        return move(line, open_end, k, guard, 0, d, None)

    # the paper's GA genome (Coldridge & Amos): a clause opens with an entry point c (the order of
    # `ents`: clockwise from the north face of the top-left square) and a push count, then at every
    # stop a direction (never more than two are open: forward is blocked, backward raked) and a
    # push count; its AreaFitness is unraked squares / unraked squares at the start
    script(m, opening={"enter": ("e", "k")}, inner={"slide": ("d", "k")}, inner_options=2, steps=8)
    progress(m, Count(sand[x] == 0 for x in b.cells))
    # every action rakes an unraked square (entering or sliding on: -2, the monk maybe leaving the
    # perimeter: +1) or steps out onto the perimeter (-1), and nothing ever unrakes one: a ranking
    # function, so no plan is longer than 2 * (unraked squares) + 1 steps (the sat / cpsat engines
    # verify the claim and use it as the horizon that proves a board unsolvable)
    variant(m, 2 * Count(sand[x] == 0 for x in b.cells) + ToInt(pos >= 0), lo=0)

    # goal --------------------------------------------------------------------------------
    if goal == "final":
        must = [sand[x] != 0 for x in b.cells]                 # raked or under an ornament
    else:
        must = [sand[x] == 1 for x in b.cells if b.sym[divmod(x, C)] != "S"]
    m.goal(And(pos == -1, *must))

    # heuristic ---------------------------------------------------------------------------
    if heuristic == "components":
        m.heuristic(bound, admissible=True)
    elif heuristic == "area":
        m.heuristic(Count(sand[x] == 0 for x in b.cells), admissible=False)

    letters = {0: ".", 1: "~", 2: "S"}
    cells = list(b.cells)

    @m.display
    def show(values: list[int]) -> str:
        grid = [["#"] * C for _ in range(R)]
        for x, v in zip(cells, values):
            r, c = divmod(x, C)
            ch = letters[v]
            if v == 0 and b.sym[(r, c)] in LEAF_RANK:
                ch = b.sym[(r, c)]
            grid[r][c] = ch
        p = values[len(cells)]
        if p >= 0:
            grid[p // C][p % C] = "M"
        lines = ["".join(row) for row in grid]
        if p < 0:
            lines.append("(monk on the perimeter)")
        return "\n".join(lines)

    # pictures: rocks, sand (raked or not, ornaments), leaves still lying on sand, the monk
    look = m.look(R, C, background=Tile("#", fill="#777777", label=""))
    sand_tiles = {0: Tile(".", fill="#f2e3b3", label=""), 1: Tile("~", fill="#c9a86a"),
                  2: Tile("S", fill="#8c8c8c", shape="circle")}
    sand_tiles.update({3 + rank: Tile(ch, fill="#7cb342") for ch, rank in LEAF_RANK.items()})
    look.cells([If(sand[x] == 0, 3 + b.leaves[x], sand[x]) if x in b.leaves else sand[x] for x in cells],
               sand_tiles, at=cells)
    look.sprite(pos, Tile("M", fill="#e53935", shape="circle"))

    m.info.update(rows=R, cols=C, name=g.name, entries=[e[0] for e in ents], cells=cells)
    return m


def _components_bound(b: Board, sand: dict[int, Expr], pos: Expr, stepback: str) -> tuple[Expr, Expr]:
    """(dead, h): a dead-state test and a lower bound on the excursions still needed.

    The proof is in docs/models/zpg.md; in short:

    Squares still to be dealt with (unraked, or under an ornament) only ever
    disappear, and one excursion touches squares of one 4-connected component
    of them (the monk's path and the squares ornaments are pushed onto are a
    connected chain of such squares).  So every component holding an unraked
    square needs its own excursion, except the one the monk, if he is out on
    the sand, can still reach in this excursion.  Counting components exactly
    is not a local expression; counted here: isolated single squares, isolated
    pairs, and one more if any other unraked square exists.  A square the monk
    can no longer pass through (fewer than two ways in and out) and an
    isolated pair walled in on all sides make the state dead.
    """
    zero = {x: sand[x] == 0 for x in b.cells}
    todo = {x: sand[x] != 1 for x in b.cells}
    nb = {x: b.neighbours(x) for x in b.cells}
    single: dict[int, Expr] = {}
    dead_terms = []
    for x in b.cells:
        single[x] = And(zero[x], *[Not(todo[y]) for y in nb[x]])
        if x in b.ornament_cells:
            continue                  # an ornament might end up covering it instead
        # the monk's visit needs a way in and a different way out: a neighbour not raked yet
        # (unraked, or holding an ornament he may push away), a perimeter side (two of them only
        # if the gate allows in-and-straight-out), or, as the way in, the square he stands on now
        sides = b.open_sides(x) if stepback == "same" else min(b.open_sides(x), 1)
        links = Count([todo[y] for y in nb[x]] + [Or(*[pos == y for y in nb[x]])]) + sides
        if sides < 2:
            dead_terms.append(And(zero[x], links < 2))
    pairs: dict[tuple[int, int], Expr] = {}
    for x in b.cells:
        for y in nb[x]:
            if y > x:
                around = [z for z in set(nb[x]) | set(nb[y]) if z not in (x, y)]
                pairs[(x, y)] = And(todo[x], todo[y], Or(zero[x], zero[y]), *[Not(todo[z]) for z in around])
                if b.open_sides(x) == 0 and b.open_sides(y) == 0 and not {x, y} & b.ornament_cells:
                    dead_terms.append(pairs[(x, y)])     # walled in: he could get in, never out
    other = Or(*[And(zero[x], Not(single[x]), *[Not(p) for (u, v), p in pairs.items() if x in (u, v)])
                 for x in b.cells])
    count = Count(list(single.values()) + list(pairs.values())) + ToInt(other) - ToInt(pos >= 0)
    # ends of excursions: a square with fewer than two ways in and out over the sand must use a
    # perimeter side for each missing one, and every excursion has exactly two perimeter ends
    # (the one the monk is in has one left)
    ends = []
    for x in b.cells:
        if x in b.ornament_cells or not b.open_sides(x):
            continue
        inner = Count([todo[y] for y in nb[x]] + [Or(*[pos == y for y in nb[x]])])
        ends.append(If(zero[x], Max(2 - inner, 0), 0))
    ends_bound = (Add(*ends) - ToInt(pos >= 0) + 1) // 2 if ends else 0
    dead = Or(*dead_terms)
    return dead, If(dead, len(b.cells) + 1, Max(count, ends_bound, 0))


# ----------------------------------------------------------------------------- random boards
def generate(rng: random.Random, width: int, height: int, rocks: float = 0.15, ornaments: int = 0,
             leaves: int = 0) -> str:
    """A random board as instance text: rocks at the given density, some ornaments and leaves.

    Used by ``puzzleplan generate`` (``-G rocks=0.2 -G ornaments=1 -G leaves=3``), which keeps the
    boards whose proven optimum lies in a range: difficulty comes from the proof, not from here.
    """
    rows, cols = height, width
    if ornaments + leaves + round(rocks * rows * cols) >= rows * cols:
        raise ValueError("too many rocks, ornaments and leaves for the board")
    cells = [(r, c) for r in range(rows) for c in range(cols)]
    rng.shuffle(cells)
    grid = [["."] * cols for _ in range(rows)]
    n_rocks = max(0, round(rocks * rows * cols))
    it = iter(cells)
    for _ in range(n_rocks):
        r, c = next(it)
        grid[r][c] = "#"
    for _ in range(ornaments):
        r, c = next(it)
        grid[r][c] = "S"
    for i in range(leaves):
        r, c = next(it)
        grid[r][c] = "yor"[min(i, 2)]
    body = "\n".join("".join(row) for row in grid)
    return f"size {rows} {cols}\ngarden\n{body}\n"

