"""The hand-written Hua Rong Dao breadth-first search the ``hrd-speed`` suite times puzzleplan against.

A benchmark baseline, not part of the library: it lives beside the suite
(bench/hrd-speed.toml names it with ``hand_written = "hrd_baseline.py"``) and
``puzzleplan bench`` loads it by path.  Written the way one would write it by
hand: a dict of visited states and a ``collections.deque``, one state at a
time, no numpy.

The board is a 20-byte string, one byte per cell, holding a *shape code* (the
digit representation of Zhao & Xu): same-shaped pieces get the same codes, so
the string itself is the canonical key and interchangeable pieces are never
told apart.  Codes: ``.`` empty, ``S`` 1x1, ``V``/``v`` top/bottom of a
1-wide 2-tall piece, ``H``/``h`` left/right of a 2-wide 1-tall piece,
``A``/``a`` top-left/other cells of the 2x2 piece.  Two metrics: ``steps``
(one piece moves one cell = 1) and ``moves`` (the published convention: one
piece moved any distance along any path = 1; from each position every
piece's reachable placements are found by a flood fill with the other pieces
fixed, and each one is a successor at cost 1).

It tests the goal when a state is taken off the queue (as the layered ``bfs``
engine does), counts ``expanded`` and ``generated`` the same way, and returns
the optimum and a plan; the time it reports is search time only.

The suite's interface: ``start_board(loaded)`` (untimed preparation) and
``bfs(board, metric, stop_at_goal=True)`` returning a ``BaselineRun``.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from puzzleplan.api import Loaded
from puzzleplan.bench.baselines import BaselineRun
from puzzleplan.lang.records import split_headers

W, H = 4, 5
EMPTY = ord(".")
# shape code of the top-left cell -> (rows, cols, codes of the covered cells in reading order)
SHAPES: dict[int, tuple[int, int, bytes]] = {
    ord("S"): (1, 1, b"S"),
    ord("V"): (2, 1, b"Vv"),
    ord("H"): (1, 2, b"Hh"),
    ord("A"): (2, 2, b"Aaaa"),
}
GOAL_CELL = 3 * W + 1          # top-left cell of the 2x2 piece at the bottom middle
STEPS = ((-1, 0), (1, 0), (0, -1), (0, 1))


def start_board(loaded: Loaded) -> bytes:
    """The start of a loaded ``klotski`` instance as a shape-code board (its 5 grid rows)."""
    rec = loaded.record
    if not rec.body and not rec.headers:
        split_headers(rec)
    return hrd_board([text.strip() for _, text in rec.body])


def hrd_board(rows: Sequence[str]) -> bytes:
    """The shape-code board of a layout: 5 rows of 4 letters (``.`` empty, equal letters = one piece)."""
    if len(rows) != H or any(len(r) != W for r in rows):
        raise ValueError("a Hua Rong Dao layout is 5 rows of 4 cells")
    cells: dict[str, list[tuple[int, int]]] = {}
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch != ".":
                cells.setdefault(ch, []).append((r, c))
    board = bytearray(b"." * (W * H))
    for letter, cs in cells.items():
        r0, c0 = min(r for r, _ in cs), min(c for _, c in cs)
        h, w = max(r for r, _ in cs) - r0 + 1, max(c for _, c in cs) - c0 + 1
        code = {(1, 1): "S", (2, 1): "V", (1, 2): "H", (2, 2): "A"}.get((h, w))
        if code is None or len(cs) != h * w:
            raise ValueError(f"piece {letter} is not a 1x1, 1x2, 2x1 or 2x2 rectangle")
        if code == "A" and letter != "A":
            raise ValueError("the 2x2 piece must be the target A")
        for (dr, dc), ch in zip(((i, j) for i in range(h) for j in range(w)), SHAPES[ord(code)][2]):
            board[(r0 + dr) * W + c0 + dc] = ch
    return bytes(board)


def _footprints() -> dict[int, list[list[tuple[int, int]] | None]]:
    """For each shape and top-left cell: the (cell, code) pairs it covers, or None if it sticks out."""
    out: dict[int, list[list[tuple[int, int]] | None]] = {}
    for code, (h, w, codes) in SHAPES.items():
        table: list[list[tuple[int, int]] | None] = []
        for p in range(W * H):
            r, c = divmod(p, W)
            if r + h > H or c + w > W:
                table.append(None)
                continue
            cov = [(r + i) * W + c + j for i in range(h) for j in range(w)]
            table.append(list(zip(cov, codes)))
        out[code] = table
    return out


FOOT = _footprints()


def _slides() -> dict[int, list[list[tuple[int, tuple[int, ...], tuple[int, ...]]]]]:
    """For each shape and top-left cell: (new top-left, cells that must be empty, cells left behind)."""
    out: dict[int, list[list[tuple[int, tuple[int, ...], tuple[int, ...]]]]] = {}
    for code in SHAPES:
        table = []
        for p in range(W * H):
            moves = []
            here = FOOT[code][p]
            if here is not None:
                r, c = divmod(p, W)
                for dr, dc in STEPS:
                    rr, cc = r + dr, c + dc
                    if not (0 <= rr < H and 0 <= cc < W):
                        continue
                    there = FOOT[code][rr * W + cc]
                    if there is None:
                        continue
                    old = {x for x, _ in here}
                    new = {x for x, _ in there}
                    moves.append((rr * W + cc, tuple(sorted(new - old)), tuple(sorted(old - new))))
            table.append(moves)
        out[code] = table
    return out


SLIDES = _slides()


def _step_successors(board: bytes) -> list[tuple[bytes, tuple[int, int]]]:
    out = []
    for p, ch in enumerate(board):
        slides = SLIDES.get(ch)
        if slides is None:
            continue
        for q, need, left in slides[p]:
            if all(board[x] == EMPTY for x in need):
                b = bytearray(board)
                for x in left:
                    b[x] = EMPTY
                for x, code in FOOT[ch][q]:  # type: ignore[union-attr]
                    b[x] = code
                out.append((bytes(b), (p, q)))
    return out


def _move_successors(board: bytes) -> list[tuple[bytes, tuple[int, int]]]:
    """Every placement each piece can reach by unit steps while the others stay put: one move each."""
    out = []
    for p, ch in enumerate(board):
        if ch not in SHAPES:
            continue
        foot = FOOT[ch]
        base = bytearray(board)
        for x, _ in foot[p]:  # type: ignore[union-attr]
            base[x] = EMPTY
        seen = {p}
        stack = [p]
        while stack:
            cur = stack.pop()
            for q, _need, _left in SLIDES[ch][cur]:
                if q in seen:
                    continue
                if all(base[x] == EMPTY for x, _ in foot[q]):  # type: ignore[union-attr]
                    seen.add(q)
                    stack.append(q)
                    b = bytearray(base)
                    for x, code in foot[q]:  # type: ignore[union-attr]
                        b[x] = code
                    out.append((bytes(b), (p, q)))
    return out


def bfs(start: bytes, metric: str = "steps", stop_at_goal: bool = True) -> BaselineRun:
    """Plain BFS over shape-code boards; ``metric`` is ``steps`` or ``moves``."""
    if metric not in ("steps", "moves"):
        raise ValueError(f"metric must be steps or moves, not {metric!r}")
    succ = _step_successors if metric == "steps" else _move_successors
    t0 = time.perf_counter()
    parent: dict[bytes, tuple[bytes, tuple[int, int]] | None] = {start: None}
    queue: deque[tuple[bytes, int]] = deque([(start, 0)])
    expanded = generated = 0
    found: tuple[bytes, int] | None = None
    while queue:
        board, depth = queue.popleft()
        if board[GOAL_CELL] == ord("A") and found is None:
            found = (board, depth)
            if stop_at_goal:
                break
        expanded += 1
        for nxt, mv in succ(board):
            generated += 1
            if nxt not in parent:
                parent[nxt] = (board, mv)
                queue.append((nxt, depth + 1))
    elapsed = time.perf_counter() - t0
    plan: list[Any] = []
    if found is not None:
        b: bytes = found[0]
        while parent[b] is not None:
            prev, mv = parent[b]  # type: ignore[misc]
            plan.append(mv)
            b = prev
        plan.reverse()
    return BaselineRun("hand-written", metric, found[1] if found else None, expanded, generated,
                       len(parent), elapsed, plan)


def render(board: bytes) -> str:
    return "\n".join(board[r * W:(r + 1) * W].decode() for r in range(H))
