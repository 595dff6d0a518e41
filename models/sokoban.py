"""Sokoban: push every box onto a goal, one player step at a time (standard XSB levels).

Glossary
    square     a floor square the player can reach from his start, walking through boxes
               (the level's interior); numbered 0..n-1 in reading order.  Walls and the
               outside never enter the state.
    player     the state: the square the player stands on.
    box[k]     the state: the square of box k.  Boxes are identical, so they are declared
               interchangeable: the explicit engines store each state with the box squares
               sorted, and a level with 4 boxes has one state where it would have 4! = 24.
    occ[i]     derived view: is square i covered by some box.
    dead       a non-goal square from which no goal can be reached by pushes even with no
               other box on the board (computed at build time by searching a lone box
               backwards from every goal, with the part of the floor the player is in:
               ``Board.part_distances``).  A box pushed onto it can never be solved, so the
               push is not generated: sound pruning, the optimum is kept.
    dist[i]    pushes needed to bring one box from square i to its nearest goal, other boxes
               ignored (the same search, with the player wherever suits it best).

Actions (plans print in the usual LURD notation)
    ``u d l r``  the player steps onto an empty neighbouring square.
    ``U D L R``  the player steps onto a neighbouring box's square and pushes that box one
                 square on; the square behind it must be empty floor and not dead.

Metrics (option ``metric``); the first two are 0/1 costs, so bfs (0-1 BFS) is exact for them:
    moves    every player step costs 1 (pushes included): the classic "moves" score.
    pushes   a push costs 1, a plain step 0: the "pushes" score.
    pushes-moves  fewest pushes, then fewest moves among those (the usual tie-break, what
             solvers print as "push-optimal pushes/moves"): cost = pushes * W + moves.
    moves-pushes  fewest moves, then fewest pushes: cost = moves * W + pushes.
With W = TIE_WEIGHT (2^20) a cost-optimal plan is lexicographically optimal whenever
moves < W (moves-pushes) or (pushes + 1) * squares <= W (pushes-moves): see
docs/models/sokoban.md for the argument; ``split_cost`` turns a cost back into the pair.

Heuristic (option ``heuristic``): ``nearest`` = sum over boxes of the push distance to the
nearest goal (``Board.push_distances``: a lone box's fewest pushes, following where the player
can walk around it) -- every box needs at least that many pushes of its own, one push moves one
box, so the sum never exceeds the pushes still needed; and every push is also a move, so it
never exceeds the moves still needed either: admissible for both metrics. ``bipartite`` takes
the larger of that and the goal-side sum (each goal's nearest box). ``matching`` (the default)
is the cheapest assignment of boxes to distinct goals by per-goal push distances (see
``_matching``: a ``MinAssignment`` node, O(K^3) per state); it is never below the other two.
``prune=freeze`` adds freeze deadlocks to the dead squares: no push that completes a 2x2 block
of boxes and walls holding a box off its goal, or that leaves a box off its goal pinned for
good by walls, dead squares and boxes pinned in turn (``_blocked``).  ``prune=corral`` adds,
on top of that, the declaration ``Model.corrals``: with the pushes metric, astar and ucs then
expand from a state with a PI-corral (an unsolved area walled off from the player whose boundary
boxes can only be pushed into it, each such push reachable now) only the pushes into it; the
argument that an optimal plan survives is in docs/architecture.md ("Corral pruning").  The same
declaration lets astar raise the heuristic, with any metric, where boxes froze on goals: they are
walls for good, and the other boxes' distances on the board without them can only be longer
(docs/architecture.md, "Frozen targets").

Instance files: standard XSB (``#`` wall, `` ``/``-``/``_`` floor, ``$`` box, ``.`` goal,
``*`` box on goal, ``@`` player, ``+`` player on goal), several levels per file, each named by
a following ``Title:`` line (or any text line); ``;`` lines are comments.  The level is chosen
with ``-O level=N`` (1-based number in the file) or ``-O level='Microban 3'`` (its title).
See docs/models/sokoban.md for why the level is an option and not ``FILE#N``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from puzzleplan.lang import (
    Act,
    And,
    Expr,
    If,
    InstanceError,
    Max,
    Min,
    MinAssignment,
    Model,
    Not,
    Option,
    Or,
    Record,
    Sum,
    Table,
    Tile,
    is_uint,
    read_text,
    text_lines,
)

NAME = "sokoban"
COMMENT = ";"   # XSB comments; '#' is a wall (the record reader's default comment marker)
OPTIONS = [
    Option("metric", "pushes", "what one unit of cost is: 'moves' = every player step, "
           "'pushes' = only steps that push a box; 'pushes-moves' / 'moves-pushes' = that one first, "
           "ties broken by the other (cost = first * 2^20 + second)",
           choices=("moves", "pushes", "pushes-moves", "moves-pushes")),
    Option("heuristic", "matching", "'nearest' = sum of each box's push distance to its nearest goal; "
           "'bipartite' = the larger of that and, summed over goals, the distance of the nearest box; "
           "'matching' = the cheapest assignment of boxes to distinct goals (Hungarian method; "
           "never below the other two)",
           choices=("nearest", "bipartite", "matching")),
    Option("level", "1", "which level of the file: its 1-based number or its title"),
    Option("prune", "dead", "'dead' = never push a box onto a dead square; 'freeze' = also never "
           "leave a box off its goal that can never move again (a full 2x2 block of boxes and walls, "
           "or boxes pinned by walls, dead squares and each other); 'corral' = also, where the player "
           "is walled off from an unsolved area whose boundary boxes can only be pushed into it, expand "
           "only those pushes (PI-corrals; pushes metric, astar/ucs), and let astar count boxes frozen "
           "on goals as walls in its bound; 'none' = no pruning",
           choices=("dead", "freeze", "corral", "none")),
]

BOARD_CHARS = set("#$.*@+ -_")
FIRST_BOARD_CHARS = set("#$.*@+-_")
TIE_WEIGHT = 1 << 20     # the weight of the first count in the tie-broken metrics
# metric -> (cost of a plain step, cost of a push)
COSTS = {"moves": (1, 1), "pushes": (0, 1), "pushes-moves": (1, TIE_WEIGHT + 1),
         "moves-pushes": (TIE_WEIGHT, TIE_WEIGHT + 1)}
DIRS = (("u", -1, 0), ("d", 1, 0), ("l", 0, -1), ("r", 0, 1))
NO_SIDE = 4   # Board.parts: a part of the floor that touches no side of the box


@dataclass
class Level:
    """One XSB board as read: rows with '-'/'_' turned into spaces, and where it came from."""

    title: str
    rows: list[str]
    lines: list[int]                       # file line of each row
    source: str
    headers: dict[str, str] = field(default_factory=dict)

    def error(self, message: str, row: int | None = None) -> InstanceError:
        return InstanceError(message, self.source, self.lines[0 if row is None else row])


@dataclass
class Levels:
    """Every level of one file; ``build`` picks one with the ``level`` option."""

    source: str
    levels: list[Level]

    def pick(self, which: str) -> Level:
        w = which.strip()
        if is_uint(w) and 1 <= int(w) <= len(self.levels):
            return self.levels[int(w) - 1]
        for lv in self.levels:
            if lv.title.lower() == w.lower():
                return lv
        raise InstanceError(f"no level {which!r} in this file (it holds {len(self.levels)}: "
                            f"numbers 1..{len(self.levels)} or titles)", self.source)


# ----------------------------------------------------------------------------- reading XSB
def _is_board_line(text: str) -> bool:
    s = text.lstrip()
    return bool(s) and s[0] in FIRST_BOARD_CHARS


def read_xsb(text: str, source: str) -> Levels:
    """Split XSB text into levels and check each one's characters and pieces.

    A board is a run of lines starting (after spaces) with a board character; blank lines,
    ``;`` comments and text lines end it.  The first ``Title:`` (or plain text) line after a
    board names it.  Checks: only legend characters, exactly one player, as many boxes as goals,
    at least one box.
    """
    levels: list[Level] = []
    cur: Level | None = None
    titled = True
    for no, raw in enumerate(text_lines(text.removeprefix("\ufeff")), start=1):
        line = raw.rstrip()
        if _is_board_line(line):
            if cur is None:
                cur = Level("", [], [], source)
                levels.append(cur)
                titled = False
            bad = sorted(set(line) - BOARD_CHARS)
            if bad:
                raise InstanceError(f"unknown character {bad[0]!r} in a board row (XSB legend: # wall, "
                                    "space - _ floor, $ box, . goal, * box on goal, @ player, "
                                    "+ player on goal)", source, no)
            cur.rows.append(line.replace("-", " ").replace("_", " "))
            cur.lines.append(no)
            continue
        prev, cur = (levels[-1] if levels else None), None
        s = line.strip()
        if not s or s.startswith(";") or prev is None or titled:
            continue
        key, sep, value = s.partition(":")
        if sep and key.strip().replace(" ", "").isalnum():
            prev.headers[key.strip().lower()] = value.strip()
            if key.strip().lower() == "title":
                prev.title, titled = value.strip(), True
        else:
            prev.title, titled = s, True
    if not levels:
        raise InstanceError("no Sokoban board in this file (board rows start with one of # $ . * @ + - _)",
                            source, 1)
    for i, lv in enumerate(levels, start=1):
        lv.title = lv.title or f"level {i}"
        _check_pieces(lv)
    return Levels(source, levels)


def _check_pieces(lv: Level) -> None:
    players = [(r, c) for r, row in enumerate(lv.rows) for c, ch in enumerate(row) if ch in "@+"]
    if not players:
        raise lv.error("no player ('@' or '+') on the board")
    if len(players) > 1:
        raise lv.error(f"{len(players)} players on the board (one '@' or '+' allowed)", players[1][0])
    boxes = sum(row.count("$") + row.count("*") for row in lv.rows)
    goals = sum(row.count(".") + row.count("*") + row.count("+") for row in lv.rows)
    if boxes != goals:
        raise lv.error(f"{boxes} boxes but {goals} goals (they must be equal)")
    if boxes == 0:
        raise lv.error("no boxes on the board")


def parse(rec: Record) -> Levels:
    """Read the whole XSB file behind ``rec``.

    Levels are split by their ``Title:`` lines and blank lines, which the generic record reader
    does not know, so the whole file is re-read here as raw text (docs/models/sokoban.md).
    """
    return read_xsb(read_text(rec.source), rec.source)


# ----------------------------------------------------------------------------- the board
class Board:
    """Static facts of one level: squares, neighbours, goals, dead squares, push distances."""

    def __init__(self, lv: Level):
        self.lv = lv
        self.R = len(lv.rows)
        self.C = max(len(r) for r in lv.rows)
        grid = {(r, c): ch for r, row in enumerate(lv.rows) for c, ch in enumerate(row)}
        start = next(rc for rc, ch in grid.items() if ch in "@+")
        seen = {start}
        todo = [start]
        while todo:                                  # the player's area, boxes walked through
            r, c = todo.pop()
            for _, dr, dc in DIRS:
                q = (r + dr, c + dc)
                if q not in grid:
                    raise lv.error("the walls are not closed around the player (he can walk off the "
                                   "board)", start[0])
                if q not in seen and grid[q] != "#":
                    seen.add(q)
                    todo.append(q)
        # a box on a goal sealed off from the player (Microban 155 has some) can never move and is
        # already solved: it is left out of the state; any other box or goal out there is an error
        self.sealed = [rc for rc, ch in sorted(grid.items()) if ch == "*" and rc not in seen]
        for rc, ch in sorted(grid.items()):
            if ch in "$." and rc not in seen:
                what = "goal" if ch == "." else "box"
                raise lv.error(f"a {what} at row {rc[0] + 1}, column {rc[1] + 1} lies outside the "
                               "player's area", rc[0])
        self.rc = sorted(seen)                       # square i -> (row, col)
        self.index = {rc: i for i, rc in enumerate(self.rc)}
        self.n = len(self.rc)
        self.player0 = self.index[start]
        self.boxes0 = [self.index[rc] for rc in self.rc if grid[rc] in "$*"]
        self.goals = [self.index[rc] for rc in self.rc if grid[rc] in ".*+"]
        # per goal, then to the nearest goal; None: no goal ever (a dead square)
        self.by_part = [self.part_distances(g) for g in self.goals]
        self.to_goal = [self._least(d) for d in self.by_part]
        self.dist = [min((d for d in col if d is not None), default=None) for col in zip(*self.to_goal)]
        self.live = {i for i in range(self.n) if self.dist[i] is not None}

    def step(self, i: int | None, dr: int, dc: int) -> int | None:
        if i is None:
            return None
        r, c = self.rc[i]
        return self.index.get((r + dr, c + dc))

    @cached_property
    def parts(self) -> list[list[int]]:
        """parts[c][x]: which part of the floor square ``x`` lies in while a box stands on ``c``.

        The floor without ``c`` (walls only, no other box) splits into connected parts; those
        touching ``c`` are numbered from 0 (at most 4 of them), and ``NO_SIDE`` marks squares
        of a part that touches no side of ``c`` (and ``c`` itself).  The player can walk from one
        side of the box to another only within one part, and from a ``NO_SIDE`` part never
        reaches the box at all.
        """
        out = []
        for c in range(self.n):
            part = [NO_SIDE] * self.n
            label = 0
            for _, dr, dc in DIRS:
                s = self.step(c, dr, dc)
                if s is None or part[s] != NO_SIDE:
                    continue
                part[s], todo = label, [s]
                while todo:
                    x = todo.pop()
                    for _, er, ec in DIRS:
                        y = self.step(x, er, ec)
                        if y is not None and y != c and part[y] == NO_SIDE:
                            part[y] = label
                            todo.append(y)
                label += 1
            out.append(part)
        return out

    def part_distances(self, goal: int) -> dict[tuple[int, int], int]:
        """Fewest pushes taking a lone box from square ``i``, the player in part ``p`` of the
        floor (:attr:`parts`), onto ``goal``, keyed ``(i, p)``; a missing key: never.

        The search follows the player, not the box alone: after a push the player stands behind
        the box and must walk around it, without crossing it, to push it another way -- through
        a doorway the box itself may block.  Backwards from the goal: a box on ``y`` with the
        player in part ``p`` came by a push from ``x = y - d``, the player on ``x - d`` before
        and on ``x`` after, so ``x`` must lie in part ``p`` of ``y``.  Other boxes are ignored,
        so this is a lower bound on the pushes of that box from any state with the player in
        that part.
        """
        parts = self.parts
        dist: dict[tuple[int, int], int] = {(goal, p): 0 for p in range(NO_SIDE + 1)}
        q = deque((goal, p) for p in range(NO_SIDE))
        while q:
            y, p = q.popleft()
            for _, dr, dc in DIRS:
                x = self.step(y, -dr, -dc)
                if x is None or parts[y][x] != p:
                    continue
                behind = self.step(x, -dr, -dc)
                if behind is None:
                    continue
                key = (x, parts[x][behind])
                if key not in dist:
                    dist[key] = dist[y, p] + 1
                    q.append(key)
        return dist

    def push_distances(self, goal: int) -> list[int | None]:
        """dist[i]: fewest pushes taking a lone box from square ``i`` onto ``goal`` (None: never),
        with the player in whichever part suits it best (:meth:`part_distances`): a bound for
        every state, and None is proof that the box can never reach ``goal``.  (The classic
        pull distance, which lets the player appear on any side, is lower wherever walking
        around the box matters: XSokoban 17's initial bound goes from 121 to 201 pushes.)
        """
        return self._least(self.part_distances(goal))

    def _least(self, by_part: dict[tuple[int, int], int]) -> list[int | None]:
        best: list[int | None] = [None] * self.n
        for (i, _), d in by_part.items():
            if best[i] is None or d < best[i]:  # type: ignore[operator]
                best[i] = d
        return best

    def cell(self, i: int) -> int:
        r, c = self.rc[i]
        return r * self.C + c


def split_cost(metric: str, cost: int) -> tuple[int, int]:
    """(pushes, moves) of a plan from its cost under ``metric``."""
    if metric in ("pushes-moves", "moves-pushes"):
        first, second = divmod(cost, TIE_WEIGHT)
        return (first, second) if metric == "pushes-moves" else (second, first)
    raise ValueError(f"metric {metric!r} counts one thing only")


# ----------------------------------------------------------------------------- the model
FREEZE_DEPTH = 4   # boxes chained through one another that the freeze test follows (2 ** depth leaves)


def _blocked(b: Board, c: int, axis: int, walls: frozenset, depth: int, occupied: Callable) -> Expr | bool:
    """A box on square ``c`` can never again move along ``axis`` (0: left-right, 1: up-down).

    It cannot when, on that axis, a wall (or a square in ``walls``: boxes this proof already
    holds in place) is beside it: it can neither go there nor have the player push from there;
    when both neighbours are dead squares, onto which no push is generated; or when a neighbour
    holds a box that can never move along the *other* axis with ``c`` held in place -- along
    this one it could only go into ``c`` or be pushed from ``c``.  Every box the argument uses is
    then pinned by the others, so none of them ever moves (the first to move would need one of
    them gone).  ``depth`` bounds the chain of boxes followed; past it the answer is "maybe not".
    """
    dr, dc = (0, 1) if axis == 0 else (1, 0)
    ends = [b.step(c, -dr, -dc), b.step(c, dr, dc)]
    if any(e is None or e in walls for e in ends):
        return True
    if all(e not in b.live for e in ends):
        return True
    if depth == 0:
        return False
    held = walls | {c}
    parts = []
    for e in ends:
        box_there = occupied(e)
        if box_there is False:
            continue
        pinned = _blocked(b, e, 1 - axis, held, depth - 1, occupied)
        if pinned is not False:
            parts.append(pinned if box_there is True else And(box_there, pinned) if pinned is not True
                         else box_there)
    return Or(*parts) if parts else False


def _matching(b: Board, box: list, player: Expr, far: int) -> Expr:
    """Minimum-cost assignment of boxes to distinct goals, by per-goal push distances that know
    where the player is.

    Every goal ends with its own box, a box needs at least its push distance to its goal in
    pushes of its own, and one push moves one box: the cheapest assignment is a lower bound on
    the pushes (hence the moves) still needed.  The distance is the one for the part of the
    floor the player stands in, seen from that box (:meth:`Board.part_distances`): one lookup
    ``parts[box * n + player]`` per box, shared by its goals' tables (indexed ``box * 5 +
    part``).  It is symmetric in the boxes (they are interchangeable) and never below
    ``nearest`` or the goal-side sum, since each entry is at least the box's distance to its
    nearest goal, and to the goal's nearest box.
    """
    n, width = b.n, NO_SIDE + 1
    part = Table([p for row in b.parts for p in row])
    side = [part[x * n + player] for x in box]
    per_goal = []
    for d in b.by_part:
        per_goal.append(Table([d.get((i, p), far) for i in range(n) for p in range(width)], far))
    return MinAssignment([[t[x * width + s] for t in per_goal] for x, s in zip(box, side)])


def build(data: Levels, metric: str = "pushes", level: str = "1", prune: str = "dead",
          heuristic: str = "matching") -> Model:
    lv = data.pick(level)
    b = Board(lv)
    n, K = b.n, len(b.boxes0)
    m = Model(f"sokoban-{metric}")
    player = m.var("player", 0, n - 1, b.player0)
    box = [m.var(f"box[{k}]", 0, n - 1, b.boxes0[k]) for k in range(K)]
    occ = m.view("occ", [Or(*[box[k] == i for k in range(K)]) for i in range(n)])
    walk_cost, push_cost = COSTS[metric]

    @m.action("walk", i=range(n), d=DIRS)
    def walk(i: int, d: tuple[str, int, int]) -> Act | None:
        to = b.step(i, d[1], d[2])
        if to is None:
            return None
        return Act(guard=And(player == i, Not(occ[to])), effects={player: to}, cost=walk_cost, label=d[0])

    goalset = set(b.goals)

    def frozen_blocks(to: int, at: int) -> list:
        """For a box pushed from ``at`` onto ``to``: the 2x2 blocks around ``to`` that the push fills.

        A 2x2 block whose four squares are all walls or boxes can never change: no box in it can
        be pushed along either axis, since the square beyond or the square for the player is
        inside the block.  If one of its boxes is off a goal the level is lost (sound).  The
        player ends on ``at``, so a block containing ``at`` is not full.
        """
        r, c = b.rc[to]
        out = []
        for dr, dc in ((-1, -1), (-1, 0), (0, -1), (0, 0)):
            sq = [(r + dr + y, c + dc + x) for y in (0, 1) for x in (0, 1)]
            idx = [b.index.get(q) for q in sq]
            if at in idx:
                continue
            others = [q for q in idx if q is not None and q != to]
            full = And(*[occ[q] for q in others])
            off = Or(to not in goalset, *[occ[q] for q in others if q not in goalset])
            out.append(And(full, off))
        return out

    def frozen_off_goal(to: int, at: int) -> list:
        """For a box pushed from ``at`` onto ``to``: conditions that some box off its goal is then
        frozen for good (docs/models/sokoban.md, "Freeze deadlocks"): the pushed box, or a box
        beside it that the push pins.  Each is a proof by :func:`_blocked` on both axes."""
        def occupied(x: int) -> Expr | bool:
            return True if x == to else False if x == at else occ[x]

        out = []
        for c in [to, *[q for _, dr, dc in DIRS if (q := b.step(to, dr, dc)) is not None and q != at]]:
            if c in goalset:
                continue
            axes = [_blocked(b, c, axis, frozenset(), FREEZE_DEPTH, occupied) for axis in (0, 1)]
            if any(a is False for a in axes):
                continue
            frozen = And(*axes)
            out.append(frozen if c == to else And(occ[c], frozen))
        return out

    @m.action("push", k=range(K), i=range(n), d=DIRS)
    def push(k: int, i: int, d: tuple[str, int, int]) -> Act | None:
        at = b.step(i, d[1], d[2])
        to = b.step(at, d[1], d[2])
        if at is None or to is None or (prune != "none" and to not in b.live):
            return None
        guard = And(player == i, box[k] == at, Not(occ[to]))
        if prune in ("freeze", "corral"):   # a box for good off its goal loses (as many boxes as goals)
            guard = And(guard, *[Not(f) for f in frozen_blocks(to, at) + frozen_off_goal(to, at)])
        return Act(guard=guard,
                   effects={player: at, box[k]: to}, cost=push_cost, label=d[0].upper())

    m.interchangeable([(x,) for x in box])
    m.walks("walk", reversible=True)   # player-reachability: ucs/astar store only post-push states
    if prune == "corral":
        m.corrals(player, box, b.goals)
    m.goal(And(*[occ[g] for g in b.goals]))
    far = n * K + 1                      # a box on a dead square: no plan at all, any bound is admissible
    dist = Table([far if x is None else x for x in b.dist], far)
    nearest = Sum(dist[x] for x in box)
    if heuristic == "matching":
        pushes_left = _matching(b, box, player, far)
    elif heuristic != "nearest":
        # every goal ends with a box of its own, which needs at least its distance to that goal in
        # pushes of its own: summed over goals, the nearest box's distance is a lower bound too
        per_goal = [Table([far if x is None else x for x in ds], far) for ds in b.to_goal]
        pushes_left = Max(nearest, Sum(Min(*[t[x] for x in box]) for t in per_goal))
    else:
        pushes_left = nearest
    # each push still needed costs push_cost, plain steps cost >= 0: admissible
    m.heuristic(pushes_left * push_cost, admissible=True)
    rc = b.rc

    @m.display
    def show(values: list[int]) -> str:
        rows = [list(row.ljust(b.C)) for row in lv.rows]
        for i, (r, c) in enumerate(rc):
            rows[r][c] = "." if i in goalset else " "
        for x in values[1:1 + K]:
            r, c = rc[x]
            rows[r][c] = "*" if x in goalset else "$"
        r, c = rc[values[0]]
        rows[r][c] = "+" if values[0] in goalset else "@"
        return "\n".join("".join(row).rstrip() for row in rows)

    # pictures: walls, floor and goals, boxes (on a goal or not), the player
    look = m.look(b.R, b.C, background=Tile(" ", fill=None))
    walls = [r * b.C + c for r, row in enumerate(lv.rows) for c, ch in enumerate(row) if ch == "#"]
    look.cells([0] * len(walls) + [1] * len(b.sealed),
               {0: Tile("#", fill="#777777", label=""), 1: Tile("*", fill="#43a047")},
               at=walls + [r * b.C + c for r, c in b.sealed])
    floor = {0: Tile(" ", fill="#f2e3b3", label=""), 1: Tile(".", fill="#f2e3b3"),
             2: Tile("$", fill="#b5651d"), 3: Tile("*", fill="#43a047")}
    look.cells([If(occ[i], 2, 0) + (1 if i in goalset else 0) for i in range(n)], floor,
               at=[b.cell(i) for i in range(n)])
    look.sprite(Table([b.cell(i) for i in range(n)])[player], Tile("@", fill="#1e88e5", shape="circle"))

    m.info.update(title=lv.title, rows=b.R, cols=b.C, squares=n, boxes=K, sealed=len(b.sealed),
                  dead=sorted(b.rc[i] for i in range(n) if i not in b.live))
    return m
