"""Seeded differential tests of the successor kernels.

The compiled (numba) kernel, the numpy kernel and the plain-Python reference
(``puzzleplan.verify.reference``) must agree state by state: the multiset of
(action, successor) pairs, goal, heuristic, canonical form; packing must
round-trip.  States come from seeded random walks of the *reference*
successors, plus uniformly random vectors inside the variable domains (not
necessarily reachable: the semantics must agree there too).
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from conftest import NUMBA_TASKS, load
from helpers import kernel_successors, reference_successors, sample_states

from puzzleplan.encodings import compiled, packing
from puzzleplan.encodings.kernel import CompiledKernel, DomainError
from puzzleplan.verify import reference as ref

ALL_TASKS = [
    "klotski-001-steps", "klotski-001-moves", "klotski-001-straight", "klotski-117-moves",
    "klotski-117-straight", "klotski-205-moves", "klotski-5x4-straight", "klotski-1x1-moves",
    "klotski-tiny-steps", "klotski-small-steps", "eight", "eight-oddgoal", "eight-noheuristic",
    "fifteen", "twentyfour",
]
SEED = 20240601


def random_vectors(task, rng: np.random.Generator, n: int) -> np.ndarray:
    lo = np.array([v.lo for v in task.variables])
    hi = np.array([v.hi for v in task.variables])
    return rng.integers(lo, hi + 1, size=(n, task.n_vars))


def mixed_states(task, seed: int) -> np.ndarray:
    """Seeded random-walk states plus random in-domain vectors."""
    walk = sample_states(task, seed, n_walks=5, length=40)
    rnd = random_vectors(task, np.random.default_rng(seed), 60)
    return np.concatenate([np.array(walk, dtype=np.int64), rnd])


def goal_state(task) -> list[int] | None:
    """A state satisfying the goal, found by the reference on a few candidate edits of the init."""
    info = task.info
    s = list(task.init)
    if "goal" in info:                       # klotski: put the target's top-left cell on the goal cell
        r, c = info["goal"]
        s[0] = r * info["width"] + c
    else:                                    # sliding: the goal is the only state satisfying it
        s = [int(x) for x in _sliding_goal(task)]
    return s if ref.is_goal(task, s) else None


def _sliding_goal(task) -> list[int]:
    # read the goal back from the goal expression: an And of (t[c] == k) comparisons
    vals = [0] * task.n_vars
    for cmp in task.goal.args:
        a, b = cmp.args
        vals[a.val] = b.val
    return vals


@pytest.mark.parametrize("name", ALL_TASKS)
def test_numpy_kernel_matches_reference(catalog, name):
    loaded = catalog(name)
    task = loaded.task
    k = loaded.kernel("numpy")
    S = mixed_states(task, SEED)
    assert kernel_successors(k, S) == reference_successors(task, S.tolist())
    # the engines read action costs from the kernel
    assert k.costs.tolist() == [a.cost for a in task.actions]


@pytest.mark.parametrize("name", ALL_TASKS)
def test_goal_heuristic_canonical_numpy_vs_reference(catalog, name):
    loaded = catalog(name)
    task = loaded.task
    k = loaded.kernel("numpy")
    S = mixed_states(task, SEED + 1)
    g = goal_state(task)
    assert g is not None, "could not build a goal state for this task"
    S = np.concatenate([S, np.array([g], dtype=np.int64)])
    rows = S.tolist()
    goals = k.goal(S)
    assert goals.dtype == np.bool_
    assert goals.tolist() == [ref.is_goal(task, s) for s in rows]
    assert goals[-1]                                        # the positive case is really tested
    assert k.heuristic(S).tolist() == [ref.heuristic(task, s) for s in rows]
    assert [tuple(r) for r in k.canonical(S).tolist()] == [ref.canonical(task, s) for s in rows]


@pytest.mark.parametrize("name", NUMBA_TASKS)
def test_compiled_kernel_matches_numpy_and_reference(catalog, name):
    loaded = catalog(name)
    task = loaded.task
    kb, kn = loaded.kernel("numba"), loaded.kernel("numpy")
    assert kb.backend == "numba" and kn.backend == "numpy"
    S = mixed_states(task, SEED + 2)
    g = goal_state(task)
    S = np.concatenate([S, np.array([g], dtype=np.int64)])
    rows = S.tolist()
    compiled = kernel_successors(kb, S)
    assert compiled == kernel_successors(kn, S)
    assert compiled == reference_successors(task, rows)
    assert kb.goal(S).tolist() == kn.goal(S).tolist() == [ref.is_goal(task, s) for s in rows]
    assert kb.heuristic(S).tolist() == kn.heuristic(S).tolist() == [ref.heuristic(task, s) for s in rows]
    assert np.array_equal(kb.canonical(S), kn.canonical(S))
    assert np.array_equal(kb.canon_pack(S), kn.canon_pack(S))
    assert np.array_equal(kb.pack(S), kn.pack(S))
    assert np.array_equal(kb.unpack(kb.pack(S)), S)


def test_compiled_expand_handles_batches_larger_than_its_buffer(catalog):
    # > 2**20 successors: the compiled kernel must resume where its output buffer filled up
    loaded = catalog("eight")
    kb, kn = loaded.kernel("numba"), loaded.kernel("numpy")
    base = mixed_states(loaded.task, SEED + 3)[:8]
    S = np.repeat(base, 40_000, axis=0)
    a = kb.expand(S)
    b = kn.expand(S)
    order_a = np.lexsort((a[2], a[1]))
    order_b = np.lexsort((b[2], b[1]))
    assert np.array_equal(a[1][order_a], b[1][order_b])
    assert np.array_equal(a[2][order_a], b[2][order_b])
    assert np.array_equal(a[0][order_a], b[0][order_b])



@pytest.mark.parametrize("backend", ["numba", "interpreted"])
def test_compiled_expand_resumes_when_its_size_estimate_was_low(catalog, backend):
    # the buffers are sized from the most successors per state seen so far; states with more
    # than that (here: an estimate of one) must still all come out. A task whose compiled kernel
    # this file builds anyway (NUMBA_TASKS): a compile of its own cost 38 s on a slow day
    loaded = catalog("klotski-001-moves")
    kb, kn = loaded.kernel(backend), loaded.kernel("numpy")
    S = mixed_states(loaded.task, SEED + 4)
    S = np.repeat(S, 1 + 4096 // max(1, S.shape[0]), axis=0)
    want = kernel_successors(kn, S)
    kb._seen = 1
    assert kernel_successors(kb, S) == want
    assert kb._seen > 1

@pytest.mark.parametrize("name", ["twentyfour", "klotski-117-straight", "klotski-001-moves", "eight"])
def test_packing_round_trips_and_compiled_packer_agrees(catalog, name):
    loaded = catalog(name)
    task = loaded.task
    k = loaded.kernel("numpy")
    lay = k.layout
    S = random_vectors(task, np.random.default_rng(SEED + 4), 300).astype(np.int64)
    # include the domain corners: every variable at lo, every variable at hi
    S = np.concatenate([S, [[v.lo for v in task.variables]], [[v.hi for v in task.variables]]])
    K = k.pack(S)
    assert K.dtype == np.uint64 and K.shape == (len(S), lay.n_words)
    assert np.array_equal(k.unpack(K), S)
    # the compiled packer (used by the numba kernel) gives the same words
    K2 = np.empty_like(K)
    packing.pack_nb(S, lay.lo, lay.word, lay.shift, lay.n_words, K2)
    assert np.array_equal(K, K2)
    S2 = np.empty_like(S)
    packing.unpack_nb(K, lay.lo, lay.word, lay.shift, lay.mask, S2)
    assert np.array_equal(S2, S)
    # distinct states get distinct keys
    distinct_states = {tuple(r) for r in S.tolist()}
    distinct_keys = {tuple(r) for r in K.tolist()}
    assert len(distinct_keys) == len(distinct_states)


def test_multiword_layout_is_used_where_needed(catalog):
    # the 24-puzzle needs 25 x 5 bits: more than one 64-bit word
    assert catalog("twentyfour").kernel("numpy").layout.n_words >= 2
    assert catalog("eight").kernel("numpy").layout.n_words == 1


# ----------------------------------------------------------------------------- symmetry
SYMMETRIC = ["klotski-001-steps", "klotski-001-moves", "klotski-001-straight", "klotski-117-moves",
             "klotski-205-moves", "klotski-5x4-straight", "klotski-1x1-moves", "klotski-tiny-steps"]


def _canonical_successors(task, state) -> set[tuple[tuple[int, ...], int]]:
    return {(ref.canonical(task, t), c) for _, t, c in ref.successors(task, state)}


@pytest.mark.parametrize("name", SYMMETRIC)
def test_interchangeable_groups_are_true_symmetries(catalog, name):
    """canonical successors of s == canonical successors of canonical(s), costs included."""
    loaded = catalog(name)
    task = loaded.task
    assert task.groups, "this task should declare interchangeable pieces"
    k = loaded.kernel("numpy")
    states = sample_states(task, SEED + 5, n_walks=5, length=50)
    checked = 0
    for s in states:
        c = ref.canonical(task, s)
        assert _canonical_successors(task, s) == _canonical_successors(task, c)
        checked += c != s
    assert checked > 0, "no sampled state was non-canonical: the test proved nothing"
    # the numpy kernel's canonical successors say the same
    S = np.array(states, dtype=np.int64)

    def kernel_view(batch: np.ndarray) -> list[set]:
        succ, par, act = k.expand(batch)
        out: list[set] = [set() for _ in states]
        for row, p, a in zip(k.canonical(succ).tolist(), par.tolist(), act.tolist()):
            out[p].add((tuple(row), int(k.costs[a])))
        return out

    assert kernel_view(S) == kernel_view(k.canonical(S))


@pytest.mark.parametrize("name", SYMMETRIC[:3])
def test_canonical_is_idempotent_and_invariant_under_group_permutations(catalog, name):
    loaded = catalog(name)
    task = loaded.task
    k = loaded.kernel("numpy")
    rng = random.Random(SEED + 6)
    states = sample_states(task, SEED + 6)
    for s in states:
        c = ref.canonical(task, s)
        assert ref.canonical(task, c) == c
        # permute the objects of every group at random: the canonical form must not change
        t = list(s)
        for group in task.groups:
            perm = list(group)
            rng.shuffle(perm)
            for src, dst in zip(group, perm):
                for i, j in zip(src, dst):
                    t[j] = s[i]
        assert ref.canonical(task, t) == c
        assert k.canonical(np.array([t])).tolist()[0] == list(c)


# ----------------------------------------------------------------------------- every operator
MODELS_DIR = Path(__file__).parent / "models"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def ops_task(tmp_path_factory):
    p = tmp_path_factory.mktemp("ops") / "ops.txt"
    p.write_text("x: 1\ny: 2\nz: 0\n", encoding="utf-8")
    return load(str(MODELS_DIR / "ops.py"), str(p))


def _all_states(task) -> np.ndarray:
    grids = np.meshgrid(*[np.arange(v.lo, v.hi + 1) for v in task.variables], indexing="ij")
    return np.stack([g.ravel() for g in grids], axis=1).astype(np.int64)


def test_every_operator_agrees_across_numpy_and_reference_on_every_state(ops_task):
    task = ops_task.task
    S = _all_states(task)
    rows = S.tolist()
    kn = ops_task.kernel("numpy")
    assert kernel_successors(kn, S) == reference_successors(task, rows)
    assert kn.goal(S).tolist() == [ref.is_goal(task, s) for s in rows]
    assert any(kn.goal(S))
    assert kn.heuristic(S).tolist() == [ref.heuristic(task, s) for s in rows]


def test_every_operator_agrees_in_the_compiled_kernel_on_every_state(ops_task):
    task = ops_task.task
    S = _all_states(task)
    kb, kn = ops_task.kernel("numba"), ops_task.kernel("numpy")
    assert kernel_successors(kb, S) == kernel_successors(kn, S)
    assert kb.goal(S).tolist() == kn.goal(S).tolist()
    assert kb.heuristic(S).tolist() == kn.heuristic(S).tolist()


@pytest.mark.parametrize("budget", [1, 7])
def test_split_compiled_kernel_agrees_on_every_state(ops_task, budget):
    # a kernel spread over many small functions (shared values passed through arrays) must be
    # the one-function kernel: budget 1 puts every action and every shared local in its own piece
    task = ops_task.task
    src, _ = compiled.generate(task, budget)
    assert "def _epre0(" in src and "def _eact1(" in src and "def _hval(" in src
    assert src.count("@njit") > compiled.generate(task)[0].count("@njit") + 3
    S = _all_states(task)
    kb = CompiledKernel(task, budget)
    kn = ops_task.kernel("numpy")
    assert kernel_successors(kb, S) == kernel_successors(kn, S)
    assert kb.goal(S).tolist() == kn.goal(S).tolist()
    assert kb.heuristic(S).tolist() == kn.heuristic(S).tolist()


def test_out_of_domain_successor_is_refused_by_every_kernel_and_the_reference(tmp_path):
    inst = tmp_path / "o.txt"
    inst.write_text("start: 0\n", encoding="utf-8")
    loaded = load(str(MODELS_DIR / "overflow.py"), str(inst))
    task = loaded.task
    top = [3, 0]                                  # x at the top of its domain: "up" overflows
    with pytest.raises(ref.DomainViolation):
        ref.successors(task, top)
    with pytest.raises(DomainError):
        loaded.kernel("numpy").expand(np.array([[2, 0], top]))
    with pytest.raises(DomainError):
        loaded.kernel("numba").expand(np.array([[2, 0], top]))
    # below the top of the domain, all three agree again
    S = np.array([[0, 0], [1, 0], [2, 0], [3, 1]])
    assert kernel_successors(loaded.kernel("numpy"), S) == reference_successors(task, S.tolist())
    assert kernel_successors(loaded.kernel("numba"), S) == reference_successors(task, S.tolist())


@pytest.mark.parametrize("model,instance,opts", [
    ("sokoban", "instances/sokoban/microban.xsb", ("level=21",)),
    ("kwirk", "instances/kwirk/going-up/06_1-6.txt", ()),
    ("kwirk", "instances/kwirk/heading-out/127.txt", ()),
    ("zpg", "instances/zpg/puzzlescript-L1.txt", ()),
    ("sliding", "instances/sliding/eight-depths.txt#walk-2050-020", ()),
])
def test_indexed_numpy_successors_equal_the_plain_evaluation(model, instance, opts):
    """Large batches are split by each action's equality conjunct: same successors, same order."""
    root = Path(__file__).resolve().parent.parent
    loaded = load(model, str(root / instance), *opts)
    task = loaded.task
    walk = np.array(sample_states(task, SEED, n_walks=12, length=50), dtype=np.int64)
    S = np.concatenate([walk, random_vectors(task, np.random.default_rng(SEED), 400)])
    assert S.shape[0] >= 400
    nk = loaded.kernel("numpy")._np
    assert any(k is not None for k in nk.key_of)
    try:
        nk.INDEX_FROM = 1
        indexed = nk.successors(S)
        nk.INDEX_FROM = 1 << 30
        plain = nk.successors(S)
    finally:
        nk.INDEX_FROM = type(nk).INDEX_FROM
    for a, b in zip(indexed, plain):
        assert np.array_equal(a, b)
    few = walk[:40]
    assert kernel_successors(loaded.kernel("numpy"), few) == reference_successors(task, few.tolist())


@pytest.mark.parametrize("model,instance,opts", [
    # compiling a level's two kernels takes minutes on this machine: the real levels are slow-marked
    pytest.param("sokoban", "instances/sokoban/microban.xsb", ("level=2", "metric=pushes"),
                 marks=pytest.mark.slow),
    pytest.param("zpg", "instances/zpg/puzzlescript-L1.txt", (), marks=pytest.mark.slow),
    ("walker", "", ()),
])
def test_dispatched_kernel_is_the_plain_kernel_row_by_row(model, instance, opts, monkeypatch, tmp_path):
    """The successor generator (``compiled.dispatch_plan``) evaluates only a row's candidate
    actions: the successors, their parents and their actions must be the plain kernel's, in the
    same order, and the reference semantics'."""
    untested = model == "walker"    # two actions test no cell: every dispatched function holds them
    if untested:
        inst = tmp_path / "w.txt"
        inst.write_text("n: 8\n", encoding="utf-8")
        model, instance = str(MODELS_DIR / "walker.py"), str(inst)
    else:
        instance = str(ROOT / instance)
    loaded = load(model, instance, *opts)
    task = loaded.task
    plan = compiled.dispatch_plan(task)
    assert plan is not None and len(plan[1]) >= compiled.DISPATCH_MIN_VALUES
    assert bool(plan[2]) == untested
    assert "def _dv0(" in compiled.generate(task)[0]
    S = mixed_states(task, SEED + 7)
    dispatched = CompiledKernel(task)
    monkeypatch.setattr(compiled, "DISPATCH_MIN_VALUES", 1 << 30)
    assert "def _dv0(" not in compiled.generate(task)[0]
    plain = CompiledKernel(task)
    for a, b in zip(dispatched.expand(S), plain.expand(S)):
        assert np.array_equal(a, b)
    assert kernel_successors(dispatched, S) == reference_successors(task, S.tolist())
