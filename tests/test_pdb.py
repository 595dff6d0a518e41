"""Pattern databases from the model (``Model.pattern``, ``solvers/pdb.py``).

Every value is checked against exact distances of the whole 8-puzzle space (181,440 states), the
additive sum is measured against Manhattan distance, models that break the abstraction's
conditions are refused, the disk cache round-trips, large tables run on every kernel, and IDA*
finds the same optima with and without the databases.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from helpers import ROOT, sliding_walk, write_sliding

from puzzleplan import api
from puzzleplan.encodings.npkernel import NumpyKernel
from puzzleplan.ir.task import ground
from puzzleplan.lang import Act, And, ModelError
from puzzleplan.lang import expr as lang_expr
from puzzleplan.lang.model import Model
from puzzleplan.solvers import pdb

EIGHT = ROOT / "instances" / "sliding" / "eight.txt"
GOAL8 = [1, 2, 3, 4, 5, 6, 7, 8, 0]


def _code(S: np.ndarray) -> np.ndarray:
    return (S * (9 ** np.arange(S.shape[1]))).sum(axis=1)


@pytest.fixture(scope="module")
def space():
    """Every state of the goal's component with its exact distance to the goal.

    Breadth-first from the goal over the numpy kernel's successors; that is the backward search
    because the move relation is symmetric, which is checked here on every edge.
    """
    loaded = api.load_task("sliding", f"{EIGHT}#eight-easy", ["heuristic=pdb"])
    plain = api.load_task("sliding", f"{EIGHT}#eight-easy", [])
    k = NumpyKernel(plain.task)
    seen = np.zeros(9 ** 9, dtype=np.bool_)
    front = np.array([GOAL8], dtype=np.int64)
    seen[_code(front)] = True
    layers, dists, edges = [front], [np.zeros(1, dtype=np.int64)], []
    d = 0
    while front.shape[0]:
        succ, par, _, _ = k.successors(front)
        cs, cp = _code(succ), _code(front)[par]
        edges.append(np.stack([cp, cs], axis=1))
        new = ~seen[cs]
        uniq, first = np.unique(cs[new], return_index=True)
        seen[uniq] = True
        front = succ[new][first]
        d += 1
        if front.shape[0]:
            layers.append(front)
            dists.append(np.full(front.shape[0], d))
    E = np.concatenate(edges)
    fwd = set(map(tuple, E.tolist()))
    assert all((b, a) in fwd for a, b in fwd), "the 8-puzzle's moves are not symmetric"
    S, D = np.concatenate(layers), np.concatenate(dists)
    assert S.shape[0] == 181_440 and D.max() == 31
    return loaded, plain, S, D


def test_every_value_is_at_most_the_true_distance(space):
    loaded, plain, S, D = space
    task = loaded.task
    assert [p.name for p in task.patterns] == ["tiles-1-4", "tiles-5-8"]
    total = np.zeros(S.shape[0], dtype=np.int64)
    for p in task.patterns:
        table, ab = pdb.table_for(task, p, use_cache=False)
        v = table[ab.rank(S)].astype(np.int64)
        assert (v <= D).all(), f"{p.name} overestimates at {int((v > D).sum())} states"
        assert (v < pdb.UNREACHED).all()               # one component: every abstract state reached
        assert v[D == 0].max() == 0 and v.max() > 10
        total += v
    assert (total <= D).all(), "the additive sum overestimates"
    # the heuristic the engines see (Table(pdb)[rank] expressions, maxed with Manhattan)
    man = NumpyKernel(plain.task).heuristic(S)
    h = NumpyKernel(task).heuristic(S)
    assert (h == np.maximum(man, total)).all()
    assert (h <= D).all()
    # the plain-Python reference interpreter reads the same tables
    from puzzleplan.lang import ops

    for i in range(0, S.shape[0], 6047):
        assert ops.evaluate(task.heuristic, S[i].tolist()) == h[i]


def test_additive_sum_beats_manhattan_on_average(space):
    loaded, plain, S, D = space
    total = np.zeros(S.shape[0], dtype=np.int64)
    for p in loaded.task.patterns:
        table, ab = pdb.table_for(loaded.task, p, use_cache=False)
        total += table[ab.rank(S)]
    man = NumpyKernel(plain.task).heuristic(S)
    assert total.mean() > man.mean() + 4          # measured: 19.13 against 14.00 (true mean 21.97)
    assert (total > man).mean() > 0.7


def _sliding_model(extra_guard: bool = False, swap: bool = False) -> Model:
    """A 3x3 sliding model written here, with an optional defect for the abstraction checks."""
    m = Model("test-sliding")
    t = m.vars("t", 0, 8, [1, 2, 3, 4, 5, 6, 0, 7, 8])
    dirs = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}

    @m.action("move", cell=range(9), d=tuple(dirs))
    def move(cell: int, d: str) -> Act | None:
        r, c = divmod(cell, 3)
        rr, cc = r + dirs[d][0], c + dirs[d][1]
        if not (0 <= rr < 3 and 0 <= cc < 3):
            return None
        other = rr * 3 + cc
        guard = (t[cell] == 0) & (t[other] != 7) if extra_guard else t[cell] == 0
        return Act(guard=guard, effects={t[cell]: t[other], t[other]: 0}, label=d)

    if swap:   # exchanges two tiles in one action: moves values of two patterns at once
        @m.action("swap")
        def swap_first() -> Act:
            return Act(guard=(t[0] != 0) & (t[8] != 0), effects={t[0]: t[8], t[8]: t[0]}, label="swap")

    m.goal(And(*[t[c] == GOAL8[c] for c in range(9)]))
    a = m.pattern(t, keep=(0, 1, 2, 3, 4), free=(0,), name="low")
    b = m.pattern(t, keep=(0, 5, 6, 7, 8), free=(0,), name="high")
    m.patterns([a, b], additive=True)
    return m


def test_a_guard_that_tells_collapsed_values_apart_is_refused():
    pdb.attach(ground(_sliding_model()), use_cache=False)      # the sound twin is accepted
    with pytest.raises(ModelError, match=r"model test-sliding, pattern 'low': the guard of action .* tells "
                                         r"collapsed values apart"):
        pdb.attach(ground(_sliding_model(extra_guard=True)), use_cache=False)


def test_additive_patterns_that_one_action_moves_together_are_refused():
    with pytest.raises(ModelError, match=r"declared additive with 'low', but action swap may move charged "
                                         r"values of both"):
        pdb.attach(ground(_sliding_model(swap=True)), use_cache=False)


def test_bad_declarations_are_model_errors():
    m = Model("x")
    t = m.vars("t", 0, 3, [0, 1, 2, 3])
    with pytest.raises(ModelError, match="free values .* are not kept"):
        m.pattern(t, keep=(1, 2), free=(0,))
    with pytest.raises(ModelError, match="state variables"):
        m.pattern([t[0] + 1], keep=(1,))
    with pytest.raises(ModelError, match="no pattern named 'nope'"):
        m.patterns(["nope"])
    # a kept value that some reachable state does not hold exactly once
    m2 = Model("twice")
    u = m2.vars("u", 0, 2, [1, 1, 0])

    @m2.action("move", i=range(3))
    def mv(i: int) -> Act:
        return Act(guard=u[i] == 0, effects={u[i]: u[(i + 1) % 3], u[(i + 1) % 3]: 0})

    m2.goal(u[0] == 0)
    m2.pattern(u, keep=(0, 1), name="dup")
    with pytest.raises(ModelError, match="value 1 is not held by exactly one"):
        pdb.attach(ground(m2), use_cache=False)


def test_the_disk_cache_round_trips(monkeypatch, tmp_path):
    monkeypatch.setenv("PUZZLEPLAN_CACHE", str(tmp_path))
    monkeypatch.setattr(pdb, "_MEMO", {})
    loaded = api.load_task("sliding", f"{EIGHT}#eight-easy", ["heuristic=pdb"])
    p = loaded.task.patterns[0]
    built, _ = pdb.table_for(loaded.task, p)
    files = sorted((tmp_path / "pdb").glob("pdb-*.npy"))
    assert len(files) == 2                                   # both patterns, written by load_task
    monkeypatch.setattr(pdb, "_MEMO", {})

    def no_build(*_a, **_k):
        raise AssertionError("the table should have come from the disk cache")

    monkeypatch.setattr(pdb, "build_table", no_build)
    other = api.load_task("sliding", f"{EIGHT}#eight-hardest-a", ["heuristic=pdb"])   # another start
    loaded_again, _ = pdb.table_for(other.task, other.task.patterns[0])
    assert loaded_again.dtype == np.uint8 and np.array_equal(loaded_again, built)
    # a damaged file is not trusted: the table is built again
    monkeypatch.undo()
    monkeypatch.setenv("PUZZLEPLAN_CACHE", str(tmp_path))
    monkeypatch.setattr(pdb, "_MEMO", {})
    for f in files:
        f.write_bytes(b"not a table")
    rebuilt, _ = pdb.table_for(loaded.task, p)
    assert np.array_equal(rebuilt, built)


def test_large_tables_agree_on_every_kernel(space):
    """Tables held as packed arrays (TableData): numpy, the interpreter and the compiled kernel agree."""
    from puzzleplan.encodings.kernel import make_kernel

    loaded, _, S, _ = space
    big = [n for n in lang_expr.walk([loaded.task.heuristic])
           if n.op == "table" and isinstance(n.val, lang_expr.TableData)]
    assert len(big) == 2 and all(n.val.dtype == "uint8" for n in big)
    rows = S[::7]
    want = NumpyKernel(loaded.task).heuristic(rows)
    for backend in ("interpreted", "numba"):
        got = make_kernel(loaded.task, backend).heuristic(rows)
        assert np.array_equal(got, want), backend


def test_idastar_with_pdb_finds_the_same_optima(tmp_path):
    rng = random.Random(22)
    expanded = {"manhattan": 0, "pdb": 0}
    for i in range(4):
        path = write_sliding(tmp_path / f"r{i}.txt", sliding_walk(3, GOAL8, rng, 60 + 10 * i), 3)
        costs = {}
        for h in ("manhattan", "pdb"):
            loaded = api.load_task("sliding", str(path), [f"heuristic={h}"])
            r = api.solve(loaded, "idastar", kernel="interpreted")
            assert r.status == "optimal" and r.stats["verified"]
            costs[h] = r.cost
            expanded[h] += r.stats["expanded"]
        assert costs["pdb"] == costs["manhattan"]
    assert expanded["pdb"] < expanded["manhattan"]


@pytest.mark.slow
def test_korf_001_with_pdb():
    """The 15-puzzle's 5-5-5 databases (built once, ~1 min, then cached) solve Korf's first instance."""
    korf = ROOT / "instances" / "sliding" / "korf100.txt"
    r = api.solve(api.load_task("sliding", f"{korf}#korf-001", ["heuristic=pdb"]), "idastar", kernel="numba")
    assert r.status == "optimal" and r.cost == 57


def test_korf100_transcription():
    """The 100 starts and published optima: the first ten as already recorded, mean 53.05 (Korf
    1985), and every optimum at least the Manhattan distance with the same parity."""
    from puzzleplan.lang.records import read_records, split_headers

    recs = read_records(str(ROOT / "instances" / "sliding" / "korf100.txt"))
    first = read_records(str(ROOT / "instances" / "sliding" / "korf100-first.txt"))
    assert [r.id for r in recs] == [f"korf-{i:03d}" for i in range(1, 101)]
    assert [r.lines for r in recs[:10]] == [r.lines for r in first]
    optima = []
    for r in recs:
        split_headers(r)
        cells = [int(x) for _, line in r.body[:4] for x in line.split()]
        assert sorted(cells) == list(range(16))
        man = sum(abs(i // 4 - v // 4) + abs(i % 4 - v % 4) for i, v in enumerate(cells) if v)
        opt = int(r.header("optimum"))
        assert man <= opt and (opt - man) % 2 == 0, r.id
        optima.append(opt)
    assert sum(optima) == 5305


def test_symbolic_engines_relax_the_tables_away():
    """sat and cpsat cannot post a lookup indexed by thousands of ranks: their copy of the heuristic
    replaces it by its least value (still a lower bound), and the optimum is unchanged."""
    loaded = api.load_task("sliding", f"{EIGHT}#eight-mid", ["heuristic=pdb"])
    relaxed = lang_expr.relax_assignments(loaded.task.heuristic)
    nodes = lang_expr.walk([relaxed])
    assert not any(n.op == "table" and isinstance(n.val, lang_expr.TableData) for n in nodes)
    for engine in ("sat", "cpsat"):
        r = api.solve(loaded, engine)
        assert r.status == "optimal" and r.cost == 14, engine
