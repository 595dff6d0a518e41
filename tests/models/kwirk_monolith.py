"""Test fixture: models/kwirk.py as it stood before its ``build`` was split into parts (issue 24).

A frozen copy, kept only as the oracle of tests/test_kwirk_parts.py: the split model must ground
to the very same task (variables, actions, guards, effects, costs, goal, heuristic, symmetry,
walks and pictures) as this one-function ``build``.  Do not edit it to follow the model: once
the model's rules change on purpose, this oracle has done its work and goes, with its test.
Rules and glossary: the docstring of models/kwirk.py.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
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

NAME = "kwirk_monolith"
OPTIONS = [
    Option("metric", "steps", "'steps' = the game's step counter (switches free); 'frames' = TAS frame "
           "costs, bird's-eye view; 'frames-diagonal' = frame costs with the diagonal view's fill; "
           "'steps-switches' = fewest steps, then fewest switches (a step costs 1000, a switch 1)",
           choices=("steps", "steps-switches", "frames", "frames-diagonal")),
    Option("prune", "dead", "'dead' = states that provably cannot be solved any more have no moves "
           "(a needed hole no block can still fill, or an immovable block on a needed cell: "
           "docs/models/kwirk.md); 'none' = every state keeps its moves. Both are exact",
           choices=("dead", "none")),
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


# ----------------------------------------------------------------------------- the model
def build(data: Level, metric: str = "steps", prune: str = "dead") -> Model:
    lv = data
    b = Board(lv)
    W = lv.W
    steps = metric in ("steps", "steps-switches")
    lex = LEX if metric == "steps-switches" else 1     # fewest steps first, then fewest switches
    fill_extra = 26 if metric == "frames-diagonal" else 18
    m = Model(f"kwirk-{metric}")
    nc = len(lv.chars)
    top = b.n - 1

    # --- state
    pos = [m.var(f"pos[{slot}]", 0, top, c) for slot, c in lv.chars]
    active = m.var("active", 0, nc - 1, 0) if nc > 1 else None
    block_size = [(w, h) for _, w, h in lv.blocks]
    block_pos: list[list[int]] = []          # valid top-left cells per block
    block = []
    for k, (p0, w, h) in enumerate(lv.blocks):
        valid = [p for p in range(b.n) if b.fits(p, w, h)]
        block_pos.append(valid)
        block.append(m.var(f"block[{k}]", 0, max(valid), p0))
    periods, rot = [], []
    for t, (_, arms) in enumerate(lv.turnstiles):
        period = next(q for q in (1, 2, 4) if {(a + q) % 4 for a in arms} == set(arms))
        periods.append(period)
        rot.append(m.var(f"rot[{t}]", 0, period - 1, 0) if period > 1 else None)
    hole = [m.var(f"hole[{j}]", 0, 1, 1) for j in range(len(lv.holes))]
    lastsw = None if steps else m.var("lastsw", 0, 1, 0, aux=True)

    # --- derived
    def rot_value(t: int) -> Expr:
        return rot[t] if rot[t] is not None else 0  # type: ignore[return-value]

    def arms_at(t: int, r: int) -> list[int]:
        return sorted((a + r) % 4 for a in lv.turnstiles[t][1])

    arm_preds: dict[int, list[tuple[int, Expr]]] = {}   # cell -> [(turnstile, "an arm of t is here")]
    for t, (p, _) in enumerate(lv.turnstiles):
        for d in range(4):
            c = b.step(p, d)
            if c is None:
                continue
            rs = [r for r in range(periods[t]) if d in arms_at(t, r)]
            if not rs:
                continue
            if len(rs) == periods[t]:
                pred: Expr = And()
            else:
                pred = Or(*[rot_value(t) == r for r in rs])
            arm_preds.setdefault(c, []).append((t, pred))

    covers: dict[int, list[Expr]] = {}              # cell -> ["block k covers it"]
    for k, (_, w, h) in enumerate(lv.blocks):
        tab: dict[int, list[int]] = {}
        for p in block_pos[k]:
            for c in b.rect(p, w, h):
                tab.setdefault(c, []).append(p)
        for c, ps in tab.items():
            size = max(ps) + 1
            tab_c = Table([1 if q in ps else 0 for q in range(size)], 0)
            covers.setdefault(c, []).append(tab_c[block[k]] == 1)

    def blocked_by_block(c: int) -> Expr:
        return Or(*covers.get(c, []))

    def arm_here(c: int, but: int | None = None) -> Expr:
        return Or(*[pr for t, pr in arm_preds.get(c, []) if t != but])

    def char_here(c: int) -> Expr:
        return Or(*[x == c for x in pos]) if c != GONE else Or()

    def occupied(c: int, but_turnstile: int | None = None) -> Expr:
        return Or(blocked_by_block(c), arm_here(c, but_turnstile), char_here(c))

    def open_hole(c: int) -> Expr:
        j = b.hole_index.get(c)
        return hole[j] == 1 if j is not None else Or()

    me = pos[0] if active is None else Element(pos, active)
    alive = Not(dead_state(b, lv, pos, block, hole, block_pos)) if prune == "dead" else None

    def guarded(g: Expr) -> Expr:
        return g if alive is None else And(alive, g)

    def move_to(target: int) -> tuple[dict, list]:
        """Effects putting the character in control on cell ``target``."""
        if active is None:
            return {pos[0]: target}, []
        return {}, [When(active == k, {pos[k]: target}) for k in range(nc)]

    def move_from_to(pairs: list[tuple[int, int]]) -> tuple[dict, list]:
        """Effects moving the character in control from cell a to cell b, for each (a, b).

        Constant targets (one conditional effect per starting cell, or a plain effect when there
        is one) rather than "position + offset": the SAT encoder then writes one clause per
        effect instead of one per value the position can take.
        """
        if len(pairs) == 1:
            return move_to(pairs[0][1])
        if active is None:
            return {}, [When(pos[0] == a, {pos[0]: b_}) for a, b_ in pairs]
        return {}, [When(And(active == k, pos[k] == a), {pos[k]: b_}) for k in range(nc) for a, b_ in pairs]

    def next_slot(k: int) -> Expr:
        """The next slot after k (cyclic) that is still in the room, after k itself leaves."""
        out: Expr | int = k
        for j in reversed(range(1, nc)):
            kk = (k + j) % nc
            out = If(pos[kk] != GONE, kk, out)
        return out  # type: ignore[return-value]

    present = Count(x != GONE for x in pos)

    def cost(steps_cost: int, frames_cost: Expr | int) -> Expr | int:
        if steps:
            return steps_cost * lex if steps_cost else (1 if lex > 1 else 0)
        return frames_cost

    def not_switch() -> dict:
        return {} if lastsw is None else {lastsw: 0}

    # --- actions
    # one walk schema per character (the one in control moves): a walk then changes one variable,
    # which lets the engines compute whole walking regions at once (solvers/walkgraph.py)
    @m.action("walk", k=range(nc), c=range(b.n), d=range(4))
    def walk(k: int, c: int, d: int) -> Act | None:
        to = b.step(c, d)
        if not b.open[c] or to is None or not b.open[to]:
            return None
        mine = pos[k] == c if active is None else And(active == k, pos[k] == c)
        return Act(guard=guarded(And(mine, Not(occupied(to)), Not(open_hole(to)))),
                   effects={pos[k]: to, **not_switch()}, cost=cost(1, 9), label=DIRS[d])

    @m.action("exit", c=range(b.n), d=range(4))
    def leave(c: int, d: int) -> Act | None:
        to = b.step(c, d)
        if not b.open[c] or to != lv.exit:
            return None
        if active is None:
            return Act(guard=guarded(me == c), effects={pos[0]: GONE, **not_switch()}, cost=cost(1, 9),
                       label=DIRS[d])
        when = [When(active == k, {pos[k]: GONE, active: next_slot(k)}) for k in range(nc)]
        return Act(guard=guarded(me == c), effects=not_switch(), when=when,
                   cost=cost(1, 9 + 30 * ToInt(present >= 2)), label=DIRS[d])

    @m.action("switch")
    def switch() -> Act | None:
        if active is None:
            return None
        when = [When(active == k, {active: next_slot(k)}) for k in range(nc)]
        eff = {} if lastsw is None else {lastsw: 1}
        return Act(guard=guarded(present >= 2), effects=eff, when=when,
                   cost=cost(0, 30 + 2 * (lastsw if lastsw is not None else 0)), label="S")

    for k in range(len(lv.blocks)):
        w, h = block_size[k]
        valid = set(block_pos[k])

        @m.action(f"push{k}", p=block_pos[k], d=range(4))
        def push(p: int, d: int, k: int = k, w: int = w, h: int = h, valid: set = valid) -> Act | None:
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
            guard = And(block[k] == p,
                        Or(*[And(me == i, Not(open_hole(f))) for i, f in pushers]),
                        *[Not(occupied(c)) for c in lead])
            eff, when = move_from_to([(i, f) for i, f in pushers])
            eff = {**eff, block[k]: q, **not_switch()}
            fill = None
            if all(c in b.hole_index for c in new):
                fill = And(*[open_hole(c) for c in new])
                when = [*when, When(fill, {block[k]: GONE, **{hole[b.hole_index[c]]: 0 for c in new}})]
            frames = 10 if fill is None else 10 + fill_extra * ToInt(fill)
            return Act(guard=guarded(guard), effects=eff, when=when, cost=cost(1, frames), label=DIRS[d])

    for t, (pv, _) in enumerate(lv.turnstiles):
        @m.action(f"turn{t}", r=range(periods[t]), a=range(4), d=range(4))
        def turn(r: int, a: int, d: int, t: int = t, pv: int = pv) -> Act | None:
            arms = arms_at(t, r)
            if a not in arms or d % 2 == a % 2:
                return None                           # no arm there, or an end-on push
            c = b.step(pv, a)
            pusher = b.step(c, (d + 2) % 4) if c is not None else None
            if c is None or pusher is None or not b.open[pusher]:
                return None
            sense = 1 if d == (a + 1) % 4 else -1     # clockwise or counter-clockwise
            conds = [me == pusher, Not(open_hole(c))]
            for a2 in arms:
                r2 = (a2 + sense) % 4
                dest = b.step(pv, r2)
                corner = b.step(dest, a2) if dest is not None else None
                for cell in (corner, dest):
                    if cell == pusher:
                        continue                      # the pusher's own cell may be a swept corner
                    if cell is None or not b.open[cell]:
                        return None
                    if cell == dest:
                        conds.append(Not(Or(blocked_by_block(cell), arm_here(cell, t), char_here(cell))))
                    else:
                        conds.append(Not(occupied(cell)))
            carry = (d + 2) % 4 in arms
            target = c
            if carry:
                target = b.step(c, d)
                if target is None or not b.open[target]:
                    return None
                conds.append(Not(open_hole(target)))
            eff, when = move_to(target)
            eff = {**eff, **not_switch()}
            if rot[t] is not None:
                eff[rot[t]] = (r + sense) % periods[t]
            return Act(guard=guarded(And(rot_value(t) == r, *conds)), effects=eff, when=when,
                       cost=cost(1, 12), label=DIRS[d])

    # --- goal, heuristic, symmetry
    m.goal(And(*[x == GONE for x in pos]))
    dist = b.exit_distance()
    dist[GONE] = 0
    per_step = lex if steps else 9
    m.heuristic(Sum(per_step * Table(dist, 0)[x] for x in pos), admissible=True)
    by_size: dict[tuple[int, int], list[int]] = {}
    for k, sz in enumerate(block_size):
        by_size.setdefault(sz, []).append(k)
    for ks in by_size.values():
        m.interchangeable([(block[k],) for k in ks])
    m.walks("walk", reversible=True)   # ucs/astar store only states after a push, turn, switch or exit

    # --- display
    letters = BLOCK_LETTERS
    n_pos, n_act = len(pos), (1 if active is not None else 0)
    n_blk = len(block)

    @m.display
    def show(values: list[int]) -> str:
        grid = [[ch if ch in "#*E" else "." for ch in row] for row in lv.rows]
        i = n_pos + n_act
        bvals = values[i:i + n_blk]
        i += n_blk
        rvals = {}
        for t in range(len(lv.turnstiles)):
            if rot[t] is not None:
                rvals[t] = values[i]
                i += 1
            else:
                rvals[t] = 0
        hvals = values[i:i + len(hole)]

        def put(c: int, ch: str) -> None:
            grid[c // W][c % W] = ch

        for j, c in enumerate(lv.holes):
            if hvals[j]:
                put(c, "O")
        for k, p in enumerate(bvals):
            if p != GONE:
                w, h = block_size[k]
                for c in b.rect(p, w, h):
                    put(c, letters[k % len(letters)])
        for t, (pv, _) in enumerate(lv.turnstiles):
            for a in arms_at(t, rvals[t]):
                put(pv + b.delta(a), ARROWS[a])
        for (slot, _), c in zip(lv.chars, values[:n_pos]):
            if c != GONE:
                put(c, str(slot))
        return "\n".join("".join(row) for row in grid)

    # pictures: static cells, holes, blocks, arms, characters
    look = m.look(lv.H, W)
    statics = [c for c in range(b.n) if lv.at(c) in "#*E"]
    look.cells([{"#": 0, "*": 1, "E": 2}[lv.at(c)] for c in statics],
               {0: Tile("#", fill="#555555", label=""), 1: Tile("*", fill="#8d6e63"),
                2: Tile("E", fill="#7cb342")}, at=statics)
    if hole:
        look.cells(hole, {0: Tile(".", fill="#f7f3e8", label=""),
                          1: Tile("O", fill="#222222", ink="#ffffff")}, at=lv.holes)
    for k, x in enumerate(block):
        w, h = block_size[k]
        look.sprite(If(x == GONE, -1, x), Tile(letters[k % len(letters)], fill="#a1887f"), size=(h, w))
    for t, (pv, _) in enumerate(lv.turnstiles):
        cells, vals = [], []
        for d in range(4):
            c = b.step(pv, d)
            if c is None or not any(d in arms_at(t, r) for r in range(periods[t])):
                continue
            cells.append(c)
            there = Or(*[rot_value(t) == r for r in range(periods[t]) if d in arms_at(t, r)])
            vals.append(If(there, d + 1, 0))
        look.cells(vals, {0: Tile(".", fill=None, label=""),
                          **{d + 1: Tile(ARROWS[d], fill="#ffb74d") for d in range(4)}}, at=cells)
    for (slot, _), x in zip(lv.chars, pos):
        look.sprite(If(x == GONE, -1, x), Tile(str(slot), fill="#1e88e5", shape="circle"))

    m.info.update(title=lv.title, mode=lv.mode, width=W, height=lv.H, characters=nc,
                  blocks=len(lv.blocks), turnstiles=len(lv.turnstiles), holes=len(lv.holes))
    return m
