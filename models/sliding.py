"""Sliding-tile puzzles (8-, 15-, 24-puzzle; any n x n).

Glossary
    cell   r * n + c, row-major, 0 = top-left.
    tile   1 .. n*n-1; 0 is the blank.
    t[c]   the state: which tile lies on cell c.
    move   the blank swaps with a neighbour; named by the blank's direction
           (U, D, L, R), the usual convention of the sliding-tile literature.

Instance file: optional ``key: value`` header lines, then n rows of n
integers (0 = blank).  The goal is 1..n*n-1 with the blank last, unless a
``goal:`` line follows, then n more rows.  Several puzzles per file: start
each with an ``id:`` header and separate them by blank lines.
"""

from __future__ import annotations

from dataclasses import dataclass

from puzzleplan.lang import Act, And, Model, Option, OptionError, Record, Sum, Table, Tile, split_headers

NAME = "sliding"
OPTIONS = [
    Option("heuristic", "manhattan", "admissible estimate used by astar/idastar: pdb = additive pattern "
           "databases (8-puzzle 4-4, 15-puzzle 5-5-5, blank free) maxed with Manhattan distance",
           choices=("manhattan", "pdb", "none")),
]

# Additive pattern groups by board side: the tiles (goal numbers) each pattern keeps, beside the blank.
PDB_GROUPS = {
    3: ((1, 2, 3, 4), (5, 6, 7, 8)),
    4: ((1, 2, 3, 4, 5), (6, 7, 8, 9, 10), (11, 12, 13, 14, 15)),
}

DIRS = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}


@dataclass
class Sliding:
    n: int
    start: list[int]
    goal: list[int]
    name: str


def _rows(rec: Record, lines: list[tuple[int, str]], n: int | None) -> tuple[list[int], int]:
    """Read n rows of n integers from ``lines``; returns the values and how many lines were used."""
    values: list[int] = []
    used = 0
    for no, text in lines:
        parts = text.split()
        row = [rec.int_field(x, "tile", no) for x in parts]
        if n is None:
            n = len(row)
        if len(row) != n:
            raise rec.error(f"row has {len(row)} numbers, expected {n}", no)
        values.extend(row)
        used += 1
        if used == n:
            break
    if n is None or used < n:
        last = lines[-1][0] if lines else rec.first_line
        raise rec.error(f"expected {n or 'n'} rows of tiles, found {used}", last)
    return values, used


def _check_perm(rec: Record, vals: list[int], n: int, rows: list[tuple[int, str]], what: str) -> None:
    """The values must be 0..n*n-1 once each; an error names the row holding the first bad value."""
    if sorted(vals) != list(range(n * n)):
        seen: set[int] = set()
        line = rows[0][0]
        for i, v in enumerate(vals):
            if not 0 <= v < n * n or v in seen:
                line = rows[i // n][0]
                break
            seen.add(v)
        missing = sorted(set(range(n * n)) - set(vals))
        dup = sorted({v for v in vals if vals.count(v) > 1})
        out = sorted(v for v in vals if not 0 <= v < n * n)
        detail = (f"out of range {out}" if out else f"repeated {dup}" if dup else f"missing {missing}")
        raise rec.error(f"{what} is not a permutation of 0..{n * n - 1} ({detail})", line)


def parse(rec: Record) -> Sliding:
    split_headers(rec)
    body = rec.body
    if not body:
        raise rec.error("no tile rows")
    if len(body[0][1].split()) < 2:
        raise rec.error("a sliding puzzle needs at least 2 columns", body[0][0])
    start, used = _rows(rec, body, None)
    n = int(round(len(start) ** 0.5))
    _check_perm(rec, start, n, body[:used], "start")
    rest = body[used:]
    goal = list(range(1, n * n)) + [0]
    if rest:
        no, text = rest[0]
        if text.strip().lower().rstrip(":") != "goal" and not text.strip().lower().startswith("goal:"):
            raise rec.error(f"unexpected line after the {n} rows: {text.strip()!r}", no)
        after = text.split(":", 1)[1].strip() if ":" in text else ""
        goal_lines = ([(no, after)] if after else []) + rest[1:]
        goal, gused = _rows(rec, goal_lines, n)
        _check_perm(rec, goal, n, goal_lines[:gused], "goal")
        if len(goal_lines) > gused:
            raise rec.error("unexpected line after the goal rows", goal_lines[gused][0])
    return Sliding(n, start, goal, rec.id or rec.header("name") or f"{n * n - 1}-puzzle")


def build(inst: Sliding, heuristic: str = "manhattan") -> Model:
    n = inst.n
    m = Model(f"sliding-{n * n - 1}")
    t = m.vars("t", 0, n * n - 1, inst.start)

    @m.action("move", cell=range(n * n), d=tuple(DIRS))
    def move(cell: int, d: str) -> Act | None:
        r, c = divmod(cell, n)
        rr, cc = r + DIRS[d][0], c + DIRS[d][1]
        if not (0 <= rr < n and 0 <= cc < n):
            return None
        other = rr * n + cc
        return Act(guard=t[cell] == 0, effects={t[cell]: t[other], t[other]: 0}, label=d)

    m.goal(And(*[t[c] == inst.goal[c] for c in range(n * n)]))
    if heuristic == "pdb":
        if n not in PDB_GROUPS:
            raise OptionError(f"heuristic=pdb has patterns for the 8- and 15-puzzle, not the "
                              f"{n * n - 1}-puzzle")
        names = [m.pattern(t, keep=(0, *tiles), free=(0,), name=f"tiles-{tiles[0]}-{tiles[-1]}")
                 for tiles in PDB_GROUPS[n]]
        m.patterns(names, additive=True)
    if heuristic in ("manhattan", "pdb"):
        where = {tile: divmod(i, n) for i, tile in enumerate(inst.goal)}
        terms = []
        for cell in range(n * n):
            r, c = divmod(cell, n)
            dist = [0 if v == 0 else abs(r - where[v][0]) + abs(c - where[v][1]) for v in range(n * n)]
            terms.append(Table(dist)[t[cell]])
        m.heuristic(Sum(terms), admissible=True)

    width = len(str(n * n - 1))

    @m.display
    def show(values: list[int]) -> str:
        rows = []
        for r in range(n):
            rows.append(" ".join(("." if v == 0 else str(v)).rjust(width) for v in values[r * n:(r + 1) * n]))
        return "\n".join(rows)

    look = m.look(n, n)   # pictures: each tile's number on a block, the hole left empty
    look.cells(t, {k: Tile(str(k), fill="#e8c07d") for k in range(1, n * n)})

    m.info.update(n=n, name=inst.name)
    return m
