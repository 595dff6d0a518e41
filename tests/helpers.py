"""Shared helpers for the test suite (plain functions; fixtures live in conftest.py).

Everything here is independent of the code under test except where noted:
random walks use the plain-Python reference successors, instance files are
written from Python data, and the small search below is an independent
breadth-first / Dijkstra over the reference semantics (no kernels, no packing).
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from puzzleplan.verify import reference as ref

ROOT = Path(__file__).resolve().parent.parent
KLOTSKI_DIR = ROOT / "instances" / "klotski"
FAYAA = KLOTSKI_DIR / "fayaa.txt"

# klotski piece shapes as (height, width)
SHAPE_2x2 = (2, 2)
SHAPE_1x1 = (1, 1)
SHAPE_H = (1, 2)   # 2 wide x 1 tall
SHAPE_V = (2, 1)   # 1 wide x 2 tall


# --------------------------------------------------------------------------- random states
def random_walk(task, rng: random.Random, length: int,
                start: Sequence[int] | None = None) -> list[tuple[int, ...]]:
    """States visited by a random walk of reference successors (the start included)."""
    s = list(task.init if start is None else start)
    out = [tuple(s)]
    for _ in range(length):
        succ = ref.successors(task, s)
        if not succ:
            break
        s = rng.choice(succ)[1]
        out.append(tuple(s))
    return out


def sample_states(task, seed: int, n_walks: int = 6, length: int = 60) -> list[tuple[int, ...]]:
    """Distinct states from several seeded random walks (in a stable order)."""
    rng = random.Random(seed)
    seen: dict[tuple[int, ...], None] = {}
    for _ in range(n_walks):
        for s in random_walk(task, rng, rng.randint(1, length)):
            seen.setdefault(s, None)
    return list(seen)


# --------------------------------------------------------------------------- successor multisets
def kernel_successors(kernel, states: Sequence[Sequence[int]]) -> list[list[tuple[int, tuple[int, ...]]]]:
    """Per state, the sorted list of (action, successor) a kernel's ``expand`` produces."""
    S = np.array(states, dtype=np.int64)
    succ, par, act = kernel.expand(S)
    assert succ.shape == (len(par), S.shape[1])
    assert len(act) == len(par)
    out: list[list[tuple[int, tuple[int, ...]]]] = [[] for _ in states]
    for row, p, a in zip(succ.tolist(), par.tolist(), act.tolist()):
        out[p].append((a, tuple(row)))
    return [sorted(x) for x in out]


def assert_kernel_matches_reference(kernel, task, S: np.ndarray) -> None:
    """Successors, goal test and heuristic of ``kernel`` equal the reference semantics on every row of S."""
    rows = S.tolist()
    assert kernel_successors(kernel, S) == reference_successors(task, rows)
    assert kernel.goal(S).tolist() == [ref.is_goal(task, s) for s in rows]
    assert kernel.heuristic(S).tolist() == [ref.heuristic(task, s) for s in rows]


def reference_successors(task, states: Sequence[Sequence[int]]) -> list[list[tuple[int, tuple[int, ...]]]]:
    return [sorted((a, tuple(s)) for a, s, _ in ref.successors(task, st)) for st in states]


# --------------------------------------------------------------------------- independent search
def reference_optimum(task, max_states: int = 2_000_000) -> int | None:
    """Optimal plan cost by Dijkstra over the reference semantics, up to symmetry; None = unsolvable.

    Independent of every engine: no kernels, no packing, no visited table other than a dict.
    """
    start = ref.canonical(task, task.init)
    dist = {start: 0}
    heap = [(0, start)]
    while heap:
        d, s = heapq.heappop(heap)
        if d > dist[s]:
            continue
        if ref.is_goal(task, s):
            return d
        for _, t, c in ref.successors(task, s):
            t = ref.canonical(task, t)
            nd = d + c
            if nd < dist.get(t, 1 << 60):
                dist[t] = nd
                heapq.heappush(heap, (nd, t))
        assert len(dist) <= max_states, "reference search too large for a test"
    return None


def reference_reachable(task) -> set[tuple[int, ...]]:
    """All canonical states reachable from the initial state (reference semantics, plain BFS)."""
    start = ref.canonical(task, task.init)
    seen = {start}
    q = deque([start])
    while q:
        s = q.popleft()
        for _, t, _ in ref.successors(task, s):
            t = ref.canonical(task, t)
            if t not in seen:
                seen.add(t)
                q.append(t)
    return seen


def encoder_reachable(task, groups: list[list[int]]) -> set[tuple[int, ...]]:
    """The reachable states as the symbolic encoders see them: each successor re-sorted within
    ``groups`` (their sort groups, or none), by the same step the encoders unroll."""
    from puzzleplan.encodings.symmetry import canonical, successor

    start = tuple(canonical(groups, task.init))
    seen = {start}
    todo = [start]
    while todo:
        s = todo.pop()
        for k in range(len(task.actions)):
            nxt = successor(task, k, s)
            if nxt is not None:
                c = tuple(canonical(groups, nxt))
                if c not in seen:
                    seen.add(c)
                    todo.append(c)
    return seen


def cost_to_go(task) -> dict[tuple[int, ...], int | None]:
    """Exact optimal remaining cost h*(s) of every reachable canonical state (None = goal unreachable).

    Reference semantics only: forward reachability, then Dijkstra backwards from the goal states.
    """
    states = reference_reachable(task)
    back: dict[tuple[int, ...], list[tuple[tuple[int, ...], int]]] = {s: [] for s in states}
    for s in states:
        for _, t, c in ref.successors(task, s):
            back[ref.canonical(task, t)].append((s, c))
    dist: dict[tuple[int, ...], int] = {}
    heap = [(0, s) for s in states if ref.is_goal(task, s)]
    heapq.heapify(heap)
    while heap:
        d, s = heapq.heappop(heap)
        if s in dist:
            continue
        dist[s] = d
        for p, c in back[s]:
            if p not in dist:
                heapq.heappush(heap, (d + c, p))
    return {s: dist.get(s) for s in states}


# --------------------------------------------------------------------------- instance files
def klotski_text(rows: Sequence[str], size: tuple[int, int] | None = None,
                 goal: tuple[int, int] | None = None, rid: str | None = None) -> str:
    lines = []
    if rid is not None:
        lines.append(f"id: {rid}")
    if size is not None:
        lines.append(f"size: {size[0]}x{size[1]}")
    if goal is not None:
        lines.append(f"goal: {goal[0]},{goal[1]}")
    lines.extend(rows)
    return "\n".join(lines) + "\n"


def write_klotski(path: Path, rows: Sequence[str], size: tuple[int, int] | None = None,
                  goal: tuple[int, int] | None = None) -> Path:
    path.write_text(klotski_text(rows, size, goal), encoding="utf-8")
    return path


def sliding_text(start: Sequence[int], n: int, goal: Sequence[int] | None = None) -> str:
    def rows(vals: Sequence[int]) -> list[str]:
        return [" ".join(str(v) for v in vals[r * n:(r + 1) * n]) for r in range(n)]

    lines = rows(start)
    if goal is not None:
        lines.append("goal:")
        lines.extend(rows(goal))
    return "\n".join(lines) + "\n"


def write_sliding(path: Path, start: Sequence[int], n: int, goal: Sequence[int] | None = None) -> Path:
    path.write_text(sliding_text(start, n, goal), encoding="utf-8")
    return path


def sliding_walk(n: int, goal: Sequence[int], rng: random.Random, length: int) -> list[int]:
    """A start reached from ``goal`` by ``length`` random blank moves (never undoing the last one).

    Written from scratch (not with the model), so starts do not depend on the code under test.
    """
    s = list(goal)
    blank = s.index(0)
    prev = -1
    for _ in range(length):
        r, c = divmod(blank, n)
        nbrs = [(r + dr) * n + (c + dc) for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
                if 0 <= r + dr < n and 0 <= c + dc < n]
        choices = [x for x in nbrs if x != prev] or nbrs
        nxt = rng.choice(choices)
        s[blank], s[nxt] = s[nxt], s[blank]
        prev, blank = blank, nxt
    return s


def eight_walk_tasks(tmp_path: Path, seed: int, count: int, lo: int, hi: int) -> list[tuple[str, object]]:
    """``count`` 8-puzzle tasks, each started ``lo``..``hi`` random blank moves from the goal (seeded)."""
    from puzzleplan import api

    rng = random.Random(seed)
    goal = [1, 2, 3, 4, 5, 6, 7, 8, 0]
    out = []
    for i in range(count):
        start = sliding_walk(3, goal, rng, rng.randint(lo, hi))
        path = write_sliding(tmp_path / f"eight-{seed}-{i}.txt", start, 3)
        out.append((path.name, api.load_task("sliding", str(path)).task))
    return out


def permutation_parity(perm: Sequence[int]) -> int:
    """Parity of a permutation given as a sequence of distinct integers."""
    p = list(perm)
    seen = [False] * len(p)
    order = sorted(p)
    pos = {v: i for i, v in enumerate(order)}
    parity = 0
    for i in range(len(p)):
        if seen[i]:
            continue
        j, length = i, 0
        while not seen[j]:
            seen[j] = True
            j = pos[p[j]]
            length += 1
        parity ^= (length - 1) & 1
    return parity


def sliding_solvable(start: Sequence[int], goal: Sequence[int], n: int) -> bool:
    """Classical invariant: permutation parity of start->goal plus blank taxicab distance is even."""
    where = {v: i for i, v in enumerate(goal)}
    perm = [where[v] for v in start]
    b0, b1 = divmod(start.index(0), n), divmod(goal.index(0), n)
    blank_dist = abs(b0[0] - b1[0]) + abs(b0[1] - b1[1])
    return (permutation_parity(perm) + blank_dist) % 2 == 0


# --------------------------------------------------------------------------- klotski records
def klotski_records(path: Path) -> list[dict[str, object]]:
    """Records of a klotski collection file as dicts of headers (read independently of the library)."""
    recs: list[dict[str, object]] = []
    cur: dict[str, object] | None = None
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line.startswith("#"):
            continue
        if line.startswith("id:"):
            cur = {"id": line.split(":", 1)[1].strip()}
            recs.append(cur)
        elif cur is not None and ":" in line:
            k, v = line.split(":", 1)
            cur[k.strip()] = v.strip()
    return recs


# --------------------------------------------------------------------------- command line
def run_cli(argv: Sequence[object], capsys) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``puzzleplan ARGV`` run in-process (the code under test)."""
    from puzzleplan import cli

    try:
        code = cli.main([str(a) for a in argv])
    except SystemExit as e:                 # argparse usage errors exit through SystemExit
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err
