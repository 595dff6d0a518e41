"""Kwirk (Puzzle Boy, Game Boy 1989): walk every character to the exit, pushing blocks and turnstiles.

Rules: instances/kwirk/RULES.md (checked there against the game's code and two solvers).
File format: instances/kwirk/FORMAT.md.  Model notes and figures: docs/models/kwirk.md.

Glossary
    cell       index y * W + x of the full map (origin top-left).  Moving one cell in direction
               d adds a constant, so a move's effect is "position + delta".
    static     walls ``#``, turnstile pivots ``*`` and the exit ``E`` never change; everything
               else is state.  Cell 0 is always a wall (the map has a wall border), so the value
               0 means "gone" for characters (left by the exit) and blocks (dropped into holes).
    pos[k]     the state: cell of character slot k (0 = gone).  Slots are the characters present
               in the file, in the game's order 1..4.
    active     the state (only with >= 2 characters): the slot in control.
    me         derived: the cell of the character in control.
    block[b]   the state: top-left cell of block b (0 = it filled its holes and is gone).  Blocks of
               equal size are declared interchangeable.
    rot[t]     the state (turnstiles whose shape is not symmetric under a quarter turn): how many
               clockwise quarter turns turnstile t made, modulo its period (2 for a straight one,
               4 for single/L/T; a plus needs no variable).
    hole[j]    the state: 1 while hole cell j (from the map or ``holes_under``) is still open.
               A block or an arm may stand over an open hole; the hole reappears when it leaves.
    occupied   derived per cell: some block, arm or character is on it.

Actions (labels are the game's buttons: U R D L, and S for SELECT)
    walk       into an empty, hole-free cell;
    exit       onto E: the character leaves; control passes to the next remaining slot;
    push       a block one cell: the cell walked into must not be over an open hole, the block's
               leading edge must be free of walls, pivots, the exit and objects (holes are fine);
               if every cell under the block is then an open hole, the block fills them and is gone;
    turn       a turnstile by a quarter: every arm's swept corner (except the pusher's own cell)
               and destination must be free (own arms excepted); end-on pushes do not exist;
               with an arm opposite the move, the character is carried two cells (not onto a hole);
    switch     S: control to the next remaining slot (needs >= 2 characters left).

Metrics (option ``metric``)
    steps               the game's step counter: every walk, push, exit and turn costs 1; switches
                        (manual or automatic) cost 0.
    frames              the TAS frame costs (RULES.md): walk 9, push 10, filling push 10+18
                        (bird's-eye view), turn 12, switch 30 (32 right after a switch), exit 9
                        (+30 when characters remain: the automatic hand-over).
    frames-diagonal     the same with 10+26 for a filling push (diagonal view).
    steps-switches      fewest steps, then fewest switches: a step costs 1000, a switch 1 (exact as
                        long as the fewest-switch step-optimal plan uses < 1000 switches).

Dead states (option ``prune``, default ``dead``): a state where a hole every walk of a remaining
character to the exit must cross can no longer be filled by any block, or where a block that can
never move again covers such a cell, has no moves (``dead_state``; sound, so optima are unchanged).

Heuristic: the sum, over the characters still in the room, of their walking distance to the exit
on the static map (walls and pivots block; holes and objects are ignored; a step may also jump two
cells across a pivot's neighbour, which is what a turnstile carry does).  Each step moves one
character by at most that much, so it never overestimates the steps (x 9 for frames, x 1000 for
steps-switches): admissible.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from puzzleplan.lang import (
    Act,
    And,
    Count,
    Element,
    Expr,
    If,
    InstanceError,
    Model,
    Not,
    Option,
    OptionError,
    Or,
    Record,
    Sum,
    Table,
    Tile,
    ToInt,
    When,
    is_uint,
    read_text,
    text_lines,
)

NAME = "kwirk"
OPTIONS = [
    Option("metric", "steps", "'steps' = the game's step counter (switches free); 'frames' = TAS frame "
           "costs, bird's-eye view; 'frames-diagonal' = frame costs with the diagonal view's fill; "
           "'steps-switches' = fewest steps, then fewest switches (a step costs 1000, a switch 1)",
           choices=("steps", "steps-switches", "frames", "frames-diagonal")),
    Option("prune", "dead", "'dead' = states that provably cannot be solved any more have no moves "
           "(a needed hole no block can still fill, or an immovable block on a needed cell: "
           "docs/models/kwirk.md); 'none' = every state keeps its moves. Both are exact",
           choices=("dead", "none")),
    Option("control", "select", "'select' = the game's SELECT button passes control (a state "
           "variable says who is in control); 'free' = metric steps only: any character still in the "
           "room moves, no SELECT, characters interchangeable (switches cost no step, so the step "
           "optima are the same, with up to n * n! fewer states for n characters; no macro walking)",
           choices=("select", "free")),
]

DIRS = ("U", "R", "D", "L")                 # clockwise: a quarter turn clockwise is index + 1
VEC = ((0, -1), (1, 0), (0, 1), (-1, 0))
ARROWS = "^>v<"                             # arm pointing U R D L away from its pivot
BLOCK_LETTERS = "abcdefghijklmnpqrstuwxyzABCDFGHIJKLMNPQRSTUWXYZ"
STATIC_FREE = set(".O1234") | set(ARROWS) | set(BLOCK_LETTERS)
GONE = 0
LEX = 1000     # metric steps-switches: one step outweighs any number of switches a step-optimal plan needs


@dataclass
class Level:
    """One level as read from its file: the map and the objects on it."""

    source: str
    title: str
    mode: str
    W: int
    H: int
    rows: list[str]                        # the map as in the file
    row_lines: list[int]                   # file line of each map row
    chars: list[tuple[int, int]] = field(default_factory=list)     # (slot 1..4, cell), by slot
    blocks: list[tuple[int, int, int]] = field(default_factory=list)  # (top-left cell, w, h)
    turnstiles: list[tuple[int, tuple[int, ...]]] = field(default_factory=list)  # (pivot, arm dirs)
    holes: list[int] = field(default_factory=list)
    exit: int = -1
    headers: dict[str, str] = field(default_factory=dict)

    def at(self, cell: int) -> str:
        return self.rows[cell // self.W][cell % self.W]


# ----------------------------------------------------------------------------- reading
def parse(rec: Record) -> Level:
    """Read a level file (FORMAT.md).

    The generic record reader drops lines starting with ``#`` as comments and every map row
    starts with a wall, so the file is re-read here as raw text (as the Sokoban model does).
    """
    return read_level(read_text(rec.source), rec.source)


def read_level(text: str, source: str) -> Level:
    """Parse FORMAT.md text; every malformation is an InstanceError naming its line."""
    lines = text_lines(text.removeprefix("\ufeff"))
    headers: dict[str, tuple[str, int]] = {}
    map_at = None
    for no, raw in enumerate(lines, start=1):
        s = raw.strip()
        if not s or s.startswith(";"):
            continue
        key, sep, value = s.partition(":")
        if not sep or not key.strip().replace("_", "").isalnum():
            raise InstanceError(f"expected 'key: value' or 'map:' before the map, got {s[:30]!r}", source, no)
        key = key.strip().lower()
        if key in headers:
            raise InstanceError(f"header {key!r} given twice", source, no)
        if key == "map":
            map_at = no
            break
        headers[key] = (value.strip(), no)
    if map_at is None:
        raise InstanceError("no 'map:' line", source, len(lines) or 1)

    def need(key: str) -> tuple[str, int]:
        if key not in headers:
            raise InstanceError(f"missing header {key!r}", source, map_at)
        return headers[key]

    size, size_line = need("size")
    parts = size.split()
    if len(parts) != 2 or not all(is_uint(p) for p in parts) or min(int(p) for p in parts) < 3:
        raise InstanceError(f"size: needs 'width height' (integers >= 3), got {size!r}", source, size_line)
    W, H = int(parts[0]), int(parts[1])
    mode, mode_line = headers.get("mode", ("going-up", map_at))
    if mode not in ("going-up", "heading-out"):
        raise InstanceError(f"mode: must be going-up or heading-out, got {mode!r}", source, mode_line)
    rows, row_lines = [], []
    for k in range(H):
        no = map_at + 1 + k
        if no > len(lines):
            raise InstanceError(f"the map has {k} rows, size says {H}", source, len(lines))
        row = lines[no - 1].rstrip()     # trailing spaces are not map cells (the border is wall)
        if len(row) != W:
            raise InstanceError(f"map row {k + 1} has {len(row)} characters, size says {W}", source, no)
        rows.append(row)
        row_lines.append(no)
    for no in range(map_at + H + 1, len(lines) + 1):
        if lines[no - 1].strip() and not lines[no - 1].strip().startswith(";"):
            raise InstanceError(f"text after the {H} map rows (size says height {H})", source, no)
    lv = Level(source, headers.get("title", (Path(source).stem, 0))[0], mode, W, H, rows, row_lines,
               headers={k: v for k, (v, _) in headers.items()})
    _read_objects(lv, headers)
    return lv


def _read_objects(lv: Level, headers: dict[str, tuple[str, int]]) -> None:
    W, H = lv.W, lv.H

    def err(msg: str, cell: int | None = None) -> InstanceError:
        return InstanceError(msg, lv.source, lv.row_lines[0 if cell is None else cell // W])

    legal = STATIC_FREE | set("#*E")
    letters: dict[str, list[int]] = {}
    slots: dict[int, int] = {}
    exits = []
    for y, row in enumerate(lv.rows):
        for x, ch in enumerate(row):
            c = y * W + x
            if ch not in legal:
                raise err(f"unknown map character {ch!r} at column {x + 1} (legend: FORMAT.md)", c)
            if (x in (0, W - 1) or y in (0, H - 1)) and ch != "#":
                raise err(f"the map border must be wall '#', found {ch!r} at column {x + 1}", c)
            if ch in "1234":
                if int(ch) in slots:
                    raise err(f"character {ch} appears twice", c)
                slots[int(ch)] = c
            elif ch == "E":
                exits.append(c)
            elif ch == "O":
                lv.holes.append(c)
            elif ch in BLOCK_LETTERS:
                letters.setdefault(ch, []).append(c)
    if len(exits) != 1:
        raise err(f"the map needs exactly one exit 'E', found {len(exits)}")
    lv.exit = exits[0]
    if not slots:
        raise err("no character (1-4) on the map")
    lv.chars = sorted(slots.items())
    if "characters" in headers:
        text, line = headers["characters"]
        if not is_uint(text) or int(text) != len(slots):
            raise InstanceError(f"characters: says {text!r} but the map has {len(slots)}", lv.source, line)
    for ch, cells in sorted(letters.items(), key=lambda kv: kv[1][0]):
        xs = [c % W for c in cells]
        ys = [c // W for c in cells]
        w, h = max(xs) - min(xs) + 1, max(ys) - min(ys) + 1
        if w * h != len(cells):
            raise err(f"block {ch!r} is not a filled rectangle", cells[0])
        lv.blocks.append((min(ys) * W + min(xs), w, h))
    arm_owner: dict[int, int] = {}
    for y, row in enumerate(lv.rows):
        for x, ch in enumerate(row):
            if ch != "*":
                continue
            p = y * W + x
            arms = []
            for d, (dx, dy) in enumerate(VEC):
                if lv.rows[y + dy][x + dx] == ARROWS[d]:
                    arms.append(d)
                    arm_owner[p + dy * W + dx] = p
            if not arms:
                raise err(f"turnstile pivot at column {x + 1} has no arm", p)
            lv.turnstiles.append((p, tuple(arms)))
    for y, row in enumerate(lv.rows):
        for x, ch in enumerate(row):
            if ch in ARROWS and y * W + x not in arm_owner:
                raise err(f"turnstile arm {ch!r} at column {x + 1} has no pivot '*' on the side it "
                          "points away from", y * W + x)
    if "holes_under" in headers:
        text, line = headers["holes_under"]
        for item in text.split():
            xy = item.split(",")
            if len(xy) != 2 or not all(is_uint(v) for v in xy):
                raise InstanceError(f"holes_under: {item!r} is not x,y", lv.source, line)
            c = int(xy[1]) * W + int(xy[0])
            if not (int(xy[0]) < W and int(xy[1]) < H) or c not in arm_owner:
                raise InstanceError(f"holes_under: {item} is not a turnstile arm's cell", lv.source, line)
            lv.holes.append(c)
    lv.holes.sort()


# ----------------------------------------------------------------------------- static facts
class Board:
    """Static geometry: which cells are open, block positions, exit distances."""

    def __init__(self, lv: Level):
        self.lv = lv
        self.W, self.H = lv.W, lv.H
        self.n = lv.W * lv.H
        # cells an object may ever occupy: not wall, pivot or exit
        self.open = [lv.at(c) in STATIC_FREE for c in range(self.n)]
        # cells a character may ever stand on: also the exit
        self.walkable = [self.open[c] or c == lv.exit for c in range(self.n)]
        self.hole_index = {c: j for j, c in enumerate(lv.holes)}
        self.pivots = {p for p, _ in lv.turnstiles}

    def step(self, c: int, d: int) -> int | None:
        x, y = c % self.W + VEC[d][0], c // self.W + VEC[d][1]
        if 0 <= x < self.W and 0 <= y < self.H:
            return y * self.W + x
        return None

    def delta(self, d: int) -> int:
        return VEC[d][1] * self.W + VEC[d][0]

    def rect(self, p: int, w: int, h: int) -> list[int]:
        return [p + dy * self.W + dx for dy in range(h) for dx in range(w)]

    def fits(self, p: int, w: int, h: int) -> bool:
        x, y = p % self.W, p // self.W
        if x + w > self.W or y + h > self.H:
            return False
        return all(self.open[c] for c in self.rect(p, w, h))

    def exit_distance(self) -> list[int]:
        """Fewest steps from each cell to the exit, ignoring every movable thing (a lower bound).

        Besides one-cell moves, a step may jump two cells straight across a cell next to a pivot
        (a turnstile carry), whether or not an arm is there now.
        """
        far = 4 * self.n
        dist = [far] * self.n
        ex = self.lv.exit
        dist[ex] = 0
        q = deque([ex])
        while q:                          # backwards: y reached from x by a move in direction d
            y = q.popleft()
            for d in range(4):
                x = self.step(y, (d + 2) % 4)         # one-cell move x -> y
                cand = [x] if x is not None else []
                if x is not None and self._next_to_pivot_across(x, d):
                    x2 = self.step(x, (d + 2) % 4)
                    if x2 is not None:
                        cand.append(x2)               # carry x2 -> x -> y in one step
                for s in cand:
                    if self.walkable[s] and dist[s] == far:
                        dist[s] = dist[y] + 1
                        q.append(s)
        return dist

    def reach(self, start: int, avoid: int = -1) -> set[int]:
        """Cells a character at ``start`` could walk to on the static grid, never onto ``avoid``."""
        seen, q = {start}, deque([start])
        while q:
            c = q.popleft()
            for d in range(4):
                n = self.step(c, d)
                if n is not None and n != avoid and self.walkable[n] and n not in seen:
                    seen.add(n)
                    q.append(n)
        return seen

    def needed_cells(self, start: int) -> dict[int, set[int]]:
        """Cells on every walk from ``start`` to the exit (single-cell cuts of the walkable grid).

        For each such cell x: the cells on ``start``'s side of x (reachable from ``start`` without
        stepping onto x).  A character crosses cells one by one (a turnstile carry too passes the
        cell in between), so one standing on x's start side must still step onto x to get out;
        once it stands anywhere else it has crossed x already.
        """
        every = self.reach(start)
        if self.lv.exit not in every:
            return {}
        out = {}
        for c in every:
            if c in (start, self.lv.exit):
                continue
            side = self.reach(start, c)
            if self.lv.exit not in side:
                out[c] = side
        return out

    def block_moves(self, w: int, h: int) -> dict[int, list[int]]:
        """Top-left cells a w x h block can be pushed to in one push, ignoring every movable thing.

        A superset of the real pushes (objects, holes under the pusher and falling are ignored).
        """
        valid = {p for p in range(self.n) if self.fits(p, w, h)}
        out: dict[int, list[int]] = {p: [] for p in valid}
        for p in valid:
            here = set(self.rect(p, w, h))
            for d in range(4):
                q = p + self.delta(d)
                if q not in valid:
                    continue
                face = [f for f in here if f - self.delta(d) not in here]
                if any(self.open[f - self.delta(d)] for f in face):
                    out[p].append(q)
        return out

    def _next_to_pivot_across(self, c: int, d: int) -> bool:
        """Is cell c an orthogonal neighbour of a pivot, on the axis across direction d?"""
        for side in ((d + 1) % 4, (d + 3) % 4):
            q = self.step(c, side)
            if q is not None and q in self.pivots:
                return True
        return False


# ----------------------------------------------------------------------------- dead states
def dead_state(b: Board, lv: Level, pos: list[Expr], block: list[Expr], hole: list[Expr],
               block_pos: list[list[int]]) -> Expr:
    """True in states from which no plan exists any more (``prune=dead``); sound, never complete.

    A *needed* cell of a character is one every walk from its starting cell to the exit steps onto
    (a cut of the static grid, :meth:`Board.needed_cells`); it is still needed while the character
    stands on the start's side of it.  For a character in the room and a cell it still needs:

    * a needed **hole** still open must be filled, by a block dropped entirely over holes; if no
      block left can reach such a placement, even on the static map with every movable thing
      ignored (:meth:`Board.block_moves`), the state is dead;
    * a block standing on the cell that it cannot leave even on that map (no push in any
      direction fits) bars the way for good: dead.

    Both facts only over-approximate what can still happen (more block moves than the real ones,
    the initial holes as the holes), so no state with a plan is called dead.
    """
    holes = set(lv.holes)
    sizes = [(w, h) for _, w, h in lv.blocks]
    moves = {sz: b.block_moves(*sz) for sz in set(sizes)}
    back: dict[tuple[int, int], dict[int, list[int]]] = {sz: {} for sz in moves}
    for sz, mv in moves.items():
        for p, qs in mv.items():
            for q in qs:
                back[sz].setdefault(q, []).append(p)
    fills: dict[tuple[tuple[int, int], int], set[int]] = {}

    def can_fill(sz: tuple[int, int], x: int) -> set[int]:
        """Positions from which a block of size ``sz`` can still reach a placement filling x."""
        if (sz, x) not in fills:
            w, h = sz
            can = {q for q in moves[sz] if x in b.rect(q, w, h) and all(y in holes for y in b.rect(q, w, h))}
            todo = list(can)
            while todo:
                for p in back[sz].get(todo.pop(), []):
                    if p not in can:
                        can.add(p)
                        todo.append(p)
            fills[(sz, x)] = can
        return fills[(sz, x)]

    terms: list[Expr] = []
    for slot, (_, start) in enumerate(lv.chars):
        for x, side in sorted(b.needed_cells(start).items()):
            on_side = Table([1 if c in side else 0 for c in range(b.n)], 0)[pos[slot]] == 1
            j = b.hole_index.get(x)
            if j is not None:
                cant = []
                for k, sz in enumerate(sizes):
                    can = can_fill(sz, x)
                    size = max(block_pos[k]) + 1
                    cant.append(Table([0 if q in can else 1 for q in range(size)], 1)[block[k]] == 1)
                terms.append(And(hole[j] == 1, on_side, *cant))
            stuck_here = []
            for k, (w, h) in enumerate(sizes):
                mv = moves[(w, h)]
                size = max(block_pos[k]) + 1
                stuck = [1 if q in mv and not mv[q] and x in b.rect(q, w, h) else 0 for q in range(size)]
                if any(stuck):
                    stuck_here.append(Table(stuck, 0)[block[k]] == 1)
            if stuck_here:
                terms.append(And(on_side, Or(*stuck_here)))
    return Or(*terms)


# ----------------------------------------------------------------------------- push and turn rules
# What the static map alone decides about one push or one turn: which cells the rule touches.
# Whether those cells are free in a given state is the guard's business (class Rules below).
@dataclass(frozen=True)
class Push:
    """A push of a w x h block from top-left cell p one cell in direction d, as the static map allows it."""

    to: int                                  # the block's new top-left cell
    lead: tuple[int, ...]                    # cells the block moves onto: they must be free
    pushers: tuple[tuple[int, int], ...]     # (cell the character pushes from, cell it steps onto)
    fills: tuple[int, ...]                   # the block's new cells if all are hole cells, else ()


def push_rule(b: Board, p: int, d: int, w: int, h: int, valid: set[int]) -> Push | None:
    """The push of the block at ``p`` in direction ``d``, or None when the static map forbids it.

    ``valid`` holds the top-left cells where the block fits at all.  Every cell of the block's
    back face whose neighbour behind is open is a place to push from (a 2-wide block has two).
    """
    q = p + b.delta(d)
    if q not in valid:
        return None
    here = set(b.rect(p, w, h))
    new = b.rect(q, w, h)
    lead = [c for c in new if c not in here]
    face = [f for f in here if f - b.delta(d) not in here]
    pushers = [(f - b.delta(d), f) for f in face if b.open[f - b.delta(d)]]
    if not pushers:
        return None
    fills = tuple(new) if all(c in b.hole_index for c in new) else ()
    return Push(q, tuple(lead), tuple(pushers), fills)


def turnstile_period(arms: tuple[int, ...] | list[int]) -> int:
    """Quarter turns after which the turnstile looks the same: 1 (plus), 2 (straight) or 4."""
    return next(q for q in (1, 2, 4) if {(a + q) % 4 for a in arms} == set(arms))


def arms_after(arms: tuple[int, ...] | list[int], r: int) -> list[int]:
    """Directions of the arms after ``r`` clockwise quarter turns."""
    return sorted((a + r) % 4 for a in arms)


def arm_places(b: Board, pivot: int, arms: tuple[int, ...], period: int) -> list[tuple[int, int, list[int]]]:
    """(direction, cell, rotations with an arm there) for each pivot neighbour an arm can reach."""
    out = []
    for d in range(4):
        c = b.step(pivot, d)
        if c is None:
            continue
        rs = [r for r in range(period) if d in arms_after(arms, r)]
        if rs:
            out.append((d, c, rs))
    return out


@dataclass(frozen=True)
class Turn:
    """A quarter turn of a turnstile by pushing its arm in direction a with a move in direction d."""

    pusher: int                              # the character's cell before the push
    arm: int                                 # the pushed arm's cell: must not be over an open hole
    sense: int                               # +1 clockwise, -1 counter-clockwise
    sweep: tuple[tuple[int, bool], ...]      # (cell, is an arm's destination) that must be free, in order
    target: int                              # the character's cell after: the arm's cell, or one beyond
    carried: bool                            # an arm opposite the move carries the character two cells


def turn_rule(b: Board, pivot: int, arms: list[int], a: int, d: int) -> Turn | None:
    """The turn of arm ``a`` pushed in direction ``d``, the arms at ``arms``; None if impossible.

    End-on pushes (d along a) do not exist.  Each arm sweeps the corner between its cell and its
    destination; the pusher's own cell may be a swept corner (the character steps out of it).
    A destination is later checked free of everything but this turnstile's own arms, a corner
    free of everything: the split is kept in ``sweep``.
    """
    if a not in arms or d % 2 == a % 2:
        return None
    c = b.step(pivot, a)
    pusher = b.step(c, (d + 2) % 4) if c is not None else None
    if c is None or pusher is None or not b.open[pusher]:
        return None
    sense = 1 if d == (a + 1) % 4 else -1
    sweep = []
    for a2 in arms:
        dest = b.step(pivot, (a2 + sense) % 4)
        corner = b.step(dest, a2) if dest is not None else None
        for cell in (corner, dest):
            if cell == pusher:
                continue
            if cell is None or not b.open[cell]:
                return None
            sweep.append((cell, cell == dest))
    carried = (d + 2) % 4 in arms
    target = c
    if carried:
        target = b.step(c, d)
        if target is None or not b.open[target]:
            return None
    return Turn(pusher, c, sense, tuple(sweep), target, carried)


# ----------------------------------------------------------------------------- state and predicates
class State:
    """The state variables of one level (glossary above) and the predicates the rules share.

    Declares the variables on ``m`` in a fixed order: pos, active, block, rot, hole, lastsw.
    """

    def __init__(self, m: Model, lv: Level, b: Board, track_switch: bool, free: bool = False):
        self.lv, self.b = lv, b
        self.nc = nc = len(lv.chars)
        self.pos = [m.var(f"pos[{slot}]", 0, b.n - 1, c) for slot, c in lv.chars]
        self.active = m.var("active", 0, nc - 1, 0) if nc > 1 and not free else None
        self.free = free and nc > 1      # every character moves on its own: the actions name it
        self.block_size = [(w, h) for _, w, h in lv.blocks]
        self.block_pos: list[list[int]] = []          # valid top-left cells per block
        self.block: list[Expr] = []
        for k, (p0, w, h) in enumerate(lv.blocks):
            valid = [p for p in range(b.n) if b.fits(p, w, h)]
            self.block_pos.append(valid)
            self.block.append(m.var(f"block[{k}]", 0, max(valid), p0))
        self.periods: list[int] = []
        self.rot: list[Expr | None] = []
        for t, (_, arms) in enumerate(lv.turnstiles):
            period = turnstile_period(arms)
            self.periods.append(period)
            self.rot.append(m.var(f"rot[{t}]", 0, period - 1, 0) if period > 1 else None)
        self.hole = [m.var(f"hole[{j}]", 0, 1, 1) for j in range(len(lv.holes))]
        self.lastsw = m.var("lastsw", 0, 1, 0, aux=True) if track_switch else None

        self._arm_preds: dict[int, list[tuple[int, Expr]]] = {}   # cell -> [(t, "an arm of t is here")]
        for t, (p, arms) in enumerate(lv.turnstiles):
            for _, c, rs in arm_places(b, p, arms, self.periods[t]):
                pred = And() if len(rs) == self.periods[t] else Or(*[self.rot_value(t) == r for r in rs])
                self._arm_preds.setdefault(c, []).append((t, pred))
        self._covers: dict[int, list[Expr]] = {}                  # cell -> ["block k covers it"]
        for k, (_, w, h) in enumerate(lv.blocks):
            tab: dict[int, list[int]] = {}
            for p in self.block_pos[k]:
                for c in b.rect(p, w, h):
                    tab.setdefault(c, []).append(p)
            for c, ps in tab.items():
                tab_c = Table([1 if q in ps else 0 for q in range(max(ps) + 1)], 0)
                self._covers.setdefault(c, []).append(tab_c[self.block[k]] == 1)
        # the cell of the character in control; None under control=free, where no one is and every
        # action names the character it moves (mover(k) with k given)
        self.me: Expr | None = None if self.free else (
            self.pos[0] if self.active is None else Element(self.pos, self.active))
        self.present = Count(x != GONE for x in self.pos)

    def rot_value(self, t: int) -> Expr:
        return self.rot[t] if self.rot[t] is not None else 0  # type: ignore[return-value]

    def arms_at(self, t: int, r: int) -> list[int]:
        return arms_after(self.lv.turnstiles[t][1], r)

    def blocked_by_block(self, c: int) -> Expr:
        return Or(*self._covers.get(c, []))

    def arm_here(self, c: int, but: int | None = None) -> Expr:
        return Or(*[pr for t, pr in self._arm_preds.get(c, []) if t != but])

    def char_here(self, c: int) -> Expr:
        return Or(*[x == c for x in self.pos]) if c != GONE else Or()

    def occupied(self, c: int, but_turnstile: int | None = None) -> Expr:
        return Or(self.blocked_by_block(c), self.arm_here(c, but_turnstile), self.char_here(c))

    def open_hole(self, c: int) -> Expr:
        j = self.b.hole_index.get(c)
        return self.hole[j] == 1 if j is not None else Or()

    def mover(self, k: int | None) -> Expr:
        """The cell of the character that moves: character ``k`` (control ``free``), else the one
        in control."""
        if k is not None:
            return self.pos[k]
        assert self.me is not None, "control=free: every action names the character it moves"
        return self.me

    def move_to(self, target: int, k: int | None = None) -> tuple[dict, list]:
        """Effects putting the moving character (:meth:`mover`) on cell ``target``."""
        if k is not None or self.active is None:
            return {self.pos[k or 0]: target}, []
        return {}, [When(self.active == i, {self.pos[i]: target}) for i in range(self.nc)]

    def move_from_to(self, pairs: list[tuple[int, int]], k: int | None = None) -> tuple[dict, list]:
        """Effects moving the moving character (:meth:`mover`) from cell a to cell b, for each (a, b).

        Constant targets (one conditional effect per starting cell, or a plain effect when there
        is one) rather than "position + offset": the SAT encoder then writes one clause per
        effect instead of one per value the position can take.
        """
        if len(pairs) == 1:
            return self.move_to(pairs[0][1], k)
        pos, active = self.pos, self.active
        if k is not None or active is None:
            x = pos[k or 0]
            return {}, [When(x == a, {x: b_}) for a, b_ in pairs]
        return {}, [When(And(active == i, pos[i] == a), {pos[i]: b_})
                    for i in range(self.nc) for a, b_ in pairs]

    def next_slot(self, k: int) -> Expr:
        """The next slot after k (cyclic) that is still in the room, after k itself leaves."""
        out: Expr | int = k
        for j in reversed(range(1, self.nc)):
            kk = (k + j) % self.nc
            out = If(self.pos[kk] != GONE, kk, out)
        return out  # type: ignore[return-value]

    def not_switch(self) -> dict:
        return {} if self.lastsw is None else {self.lastsw: 0}


# ----------------------------------------------------------------------------- the rules
class Rules:
    """The action schemas: one method per schema, called by the grounder with its parameters.

    ``alive`` (``prune=dead``: "not a dead state") is added to every guard.
    """

    def __init__(self, s: State, metric: str, alive: Expr | None):
        self.s, self.b, self.lv = s, s.b, s.lv
        self.valid = [set(ps) for ps in s.block_pos]
        self.steps = metric in ("steps", "steps-switches")
        self.lex = LEX if metric == "steps-switches" else 1     # fewest steps first, then fewest switches
        self.fill_extra = 26 if metric == "frames-diagonal" else 18
        self.alive = alive

    def guarded(self, g: Expr) -> Expr:
        return g if self.alive is None else And(self.alive, g)

    def cost(self, steps_cost: int, frames_cost: Expr | int) -> Expr | int:
        """The action's cost under the metric: its steps, or its TAS frames (module docstring)."""
        if self.steps:
            return steps_cost * self.lex if steps_cost else (1 if self.lex > 1 else 0)
        return frames_cost

    def walk(self, k: int, c: int, d: int) -> Act | None:
        s, b = self.s, self.b
        to = b.step(c, d)
        if not b.open[c] or to is None or not b.open[to]:
            return None
        mine = s.pos[k] == c if s.active is None else And(s.active == k, s.pos[k] == c)
        return Act(guard=self.guarded(And(mine, Not(s.occupied(to)), Not(s.open_hole(to)))),
                   effects={s.pos[k]: to, **s.not_switch()}, cost=self.cost(1, 9), label=DIRS[d])

    def leave(self, c: int, d: int, who: int | None = None) -> Act | None:
        """``who``: the character that leaves (control ``free``); None: the one in control."""
        s, b = self.s, self.b
        to = b.step(c, d)
        if not b.open[c] or to != self.lv.exit:
            return None
        if s.active is None:
            k = who or 0
            return Act(guard=self.guarded(s.pos[k] == c), effects={s.pos[k]: GONE, **s.not_switch()},
                       cost=self.cost(1, 9), label=DIRS[d])
        when = [When(s.active == k, {s.pos[k]: GONE, s.active: s.next_slot(k)}) for k in range(s.nc)]
        return Act(guard=self.guarded(s.mover(None) == c), effects=s.not_switch(), when=when,
                   cost=self.cost(1, 9 + 30 * ToInt(s.present >= 2)), label=DIRS[d])

    def switch(self) -> Act | None:
        s = self.s
        if s.active is None:
            return None
        when = [When(s.active == k, {s.active: s.next_slot(k)}) for k in range(s.nc)]
        eff = {} if s.lastsw is None else {s.lastsw: 1}
        return Act(guard=self.guarded(s.present >= 2), effects=eff, when=when,
                   cost=self.cost(0, 30 + 2 * (s.lastsw if s.lastsw is not None else 0)), label="S")

    def push(self, k: int, p: int, d: int, who: int | None = None) -> Act | None:
        """``who``: the character that pushes (control ``free``); None: the one in control."""
        s = self.s
        w, h = s.block_size[k]
        pr = push_rule(self.b, p, d, w, h, self.valid[k])
        if pr is None:
            return None
        me = s.mover(who)
        guard = And(s.block[k] == p,
                    Or(*[And(me == i, Not(s.open_hole(f))) for i, f in pr.pushers]),
                    *[Not(s.occupied(c)) for c in pr.lead])
        eff, when = s.move_from_to(list(pr.pushers), who)
        eff = {**eff, s.block[k]: pr.to, **s.not_switch()}
        fill = None
        if pr.fills:
            fill = And(*[s.open_hole(c) for c in pr.fills])
            drop = {s.block[k]: GONE, **{s.hole[self.b.hole_index[c]]: 0 for c in pr.fills}}
            when = [*when, When(fill, drop)]
        frames = 10 if fill is None else 10 + self.fill_extra * ToInt(fill)
        return Act(guard=self.guarded(guard), effects=eff, when=when, cost=self.cost(1, frames),
                   label=DIRS[d])

    def turn(self, t: int, r: int, a: int, d: int, who: int | None = None) -> Act | None:
        """``who``: the character that turns it (control ``free``); None: the one in control."""
        s = self.s
        tr = turn_rule(self.b, self.lv.turnstiles[t][0], s.arms_at(t, r), a, d)
        if tr is None:
            return None
        conds = [s.mover(who) == tr.pusher, Not(s.open_hole(tr.arm))]
        # a destination may hold this turnstile's own arm (it moves away); a corner nothing at all
        conds += [Not(s.occupied(cell, t if is_dest else None)) for cell, is_dest in tr.sweep]
        if tr.carried:
            conds.append(Not(s.open_hole(tr.target)))
        eff, when = s.move_to(tr.target, who)
        eff = {**eff, **s.not_switch()}
        rot = s.rot[t]
        if rot is not None:
            eff[rot] = (r + tr.sense) % s.periods[t]
        return Act(guard=self.guarded(And(s.rot_value(t) == r, *conds)), effects=eff, when=when,
                   cost=self.cost(1, 12), label=DIRS[d])


# ----------------------------------------------------------------------------- the model
def build(data: Level, metric: str = "steps", prune: str = "dead", control: str = "select") -> Model:
    lv = data
    b = Board(lv)
    if control == "free" and metric != "steps":
        raise OptionError(f"control=free drops the SELECT button, which costs nothing only under "
                          f"metric=steps (not {metric}): use control=select")
    m = Model(f"kwirk-{metric}" + ("-free" if control == "free" else ""))
    s = State(m, lv, b, track_switch=metric not in ("steps", "steps-switches"), free=control == "free")
    alive = Not(dead_state(b, lv, s.pos, s.block, s.hole, s.block_pos)) if prune == "dead" else None
    rules = Rules(s, metric, alive)

    # one walk schema per character (the one in control moves): a walk then changes one variable,
    # which lets the engines compute whole walking regions at once (solvers/walkgraph.py)
    m.action("walk", k=range(s.nc), c=range(b.n), d=range(4))(rules.walk)
    # control=free: each character acts on its own, one ground action per character (``who``)
    who = {"who": range(s.nc)} if s.free else {}
    m.action("exit", c=range(b.n), d=range(4), **who)(rules.leave)
    m.action("switch")(rules.switch)   # none without someone in control
    for k in range(len(lv.blocks)):
        m.action(f"push{k}", p=s.block_pos[k], d=range(4), **who)(partial(rules.push, k))
    for t in range(len(lv.turnstiles)):
        m.action(f"turn{t}", r=range(s.periods[t]), a=range(4), d=range(4), **who)(partial(rules.turn, t))

    # goal, heuristic, symmetry
    m.goal(And(*[x == GONE for x in s.pos]))
    dist = b.exit_distance()
    dist[GONE] = 0
    per_step = rules.lex if rules.steps else 9
    m.heuristic(Sum(per_step * Table(dist, 0)[x] for x in s.pos), admissible=True)
    by_size: dict[tuple[int, int], list[int]] = {}
    for k, sz in enumerate(s.block_size):
        by_size.setdefault(sz, []).append(k)
    for ks in by_size.values():
        m.interchangeable([(s.block[k],) for k in ks])
    if s.free:
        # who stands where is all that matters once anyone may move; the dead-state rule reads
        # each slot's cell only through "stands on the start's side of a cut", which says the same
        # of whichever character stands there (dead_state), so it stays sound on sorted slots
        m.interchangeable([(x,) for x in s.pos])
    else:   # macro walking needs the one in control as the walks' selector (solvers/walkgraph.py)
        m.walks("walk", reversible=True)   # ucs/astar store only states after a push, turn, switch or exit

    m.display(partial(show, s))
    add_pictures(m, s)
    m.info.update(title=lv.title, mode=lv.mode, width=lv.W, height=lv.H, characters=s.nc,
                  blocks=len(lv.blocks), turnstiles=len(lv.turnstiles), holes=len(lv.holes))
    return m


# ----------------------------------------------------------------------------- display and pictures
def show(s: State, values: list[int]) -> str:
    """A state as map text (FORMAT.md characters); ``values`` in the order State declares them."""
    lv, b = s.lv, s.b
    grid = [[ch if ch in "#*E" else "." for ch in row] for row in lv.rows]
    i = len(s.pos) + (1 if s.active is not None else 0)
    bvals = values[i:i + len(s.block)]
    i += len(s.block)
    rvals = {}
    for t in range(len(lv.turnstiles)):
        if s.rot[t] is not None:
            rvals[t] = values[i]
            i += 1
        else:
            rvals[t] = 0
    hvals = values[i:i + len(s.hole)]

    def put(c: int, ch: str) -> None:
        grid[c // lv.W][c % lv.W] = ch

    for j, c in enumerate(lv.holes):
        if hvals[j]:
            put(c, "O")
    for k, p in enumerate(bvals):
        if p != GONE:
            w, h = s.block_size[k]
            for c in b.rect(p, w, h):
                put(c, BLOCK_LETTERS[k % len(BLOCK_LETTERS)])
    for t, (pv, _) in enumerate(lv.turnstiles):
        for a in s.arms_at(t, rvals[t]):
            put(pv + b.delta(a), ARROWS[a])
    for (slot, _), c in zip(lv.chars, values[:len(s.pos)]):
        if c != GONE:
            put(c, str(slot))
    return "\n".join("".join(row) for row in grid)


def add_pictures(m: Model, s: State) -> None:
    """The look: static cells, holes, blocks, arms, characters (in that order, later ones on top)."""
    lv, b = s.lv, s.b
    look = m.look(lv.H, lv.W)
    statics = [c for c in range(b.n) if lv.at(c) in "#*E"]
    look.cells([{"#": 0, "*": 1, "E": 2}[lv.at(c)] for c in statics],
               {0: Tile("#", fill="#555555", label=""), 1: Tile("*", fill="#8d6e63"),
                2: Tile("E", fill="#7cb342")}, at=statics)
    if s.hole:
        look.cells(s.hole, {0: Tile(".", fill="#f7f3e8", label=""),
                            1: Tile("O", fill="#222222", ink="#ffffff")}, at=lv.holes)
    for k, x in enumerate(s.block):
        w, h = s.block_size[k]
        letter = BLOCK_LETTERS[k % len(BLOCK_LETTERS)]
        look.sprite(If(x == GONE, -1, x), Tile(letter, fill="#a1887f"), size=(h, w))
    for t, (pv, arms) in enumerate(lv.turnstiles):
        cells, vals = [], []
        for d, c, rs in arm_places(b, pv, arms, s.periods[t]):
            cells.append(c)
            vals.append(If(Or(*[s.rot_value(t) == r for r in rs]), d + 1, 0))
        look.cells(vals, {0: Tile(".", fill=None, label=""),
                          **{d + 1: Tile(ARROWS[d], fill="#ffb74d") for d in range(4)}}, at=cells)
    for (slot, _), x in zip(lv.chars, s.pos):
        look.sprite(If(x == GONE, -1, x), Tile(str(slot), fill="#1e88e5", shape="circle"))
