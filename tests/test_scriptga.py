"""The move-script GA (engine ``ga`` on transition models, solvers/scriptga.py) and lang.script().

* The vectorised decoder (whole population, numpy and compiled kernels) is
  compared with a one-genome-at-a-time decoder written here over the plain-
  Python reference successors: same actions, same end status, same moves.
* The paper's fitness is recomputed here from its printed pseudo-code.
* Runs: proven optima found on small boards (plans replayed by the checker),
  seeds reproducible, the time limit ends a run cleanly, an unsolvable board
  gives no plan, models without a script declaration are refused.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import ROOT, run_cli

from puzzleplan import api
from puzzleplan.lang import Act, Model, ModelError, progress, script
from puzzleplan.lang.scripting import spec_of
from puzzleplan.solvers import Limits
from puzzleplan.solvers.scriptga import PARTIAL, SOLVED, STUCK, ScriptDecoder
from puzzleplan.verify import reference as ref

ZPG = ROOT / "instances" / "zpg"


def reference_decode(task, genome, m: int, steps: int, max_steps: int) -> tuple[list[int], int, int]:
    """One script, decoded from its written rules (lang/scripting.py), over reference successors."""
    spec = spec_of(task.info)
    G = 2 + 2 * steps
    info = {}
    offset = 0
    for ch in spec.opening:
        info[ch.schema] = (0, offset, ch)
        offset += len(ch.options)
    for ch in spec.inner:
        info[ch.schema] = (1, 0, ch)

    def key(k: int) -> tuple[int, int, int] | None:
        a = task.actions[k]
        if a.name not in info:
            return None
        role, base, ch = info[a.name]
        p = dict(a.params)
        variant = ch.variants.index(p[ch.variant]) if ch.variant else 0
        return role, base + ch.options.index(p[ch.option]), variant

    s = list(task.init)
    plan: list[int] = []
    clause = inner = 0
    for _ in range(max_steps):
        if ref.is_goal(task, s):
            return plan, SOLVED, clause
        cands = [(key(k), k, t) for k, t, _ in ref.successors(task, s) if key(k) is not None]
        kinds = {c[0][0] for c in cands}
        if not kinds:
            return plan, STUCK, clause
        kind = 1 if 1 in kinds else 0
        if kind == 0 and clause >= m:
            return plan, PARTIAL, clause
        cands = [c for c in cands if c[0][0] == kind]
        base = clause * G if kind == 0 else (clause - 1) * G + 2 + 2 * (inner % steps)
        options = sorted({c[0][1] for c in cands})
        o = options[genome[base] % len(options)]
        variants = sorted(c for c in cands if c[0][1] == o)
        _, k, t = variants[genome[base + 1] % len(variants)]
        plan.append(k)
        s = t
        if kind == 0:
            clause, inner = clause + 1, 0
        else:
            inner += 1
    return plan, PARTIAL, clause


@pytest.mark.parametrize("board,kernel", [("suite-ornaments-01", "numpy"), ("suite-leaves-01", "numpy"),
                                          # a compile of its own: -m slow
                                          pytest.param("suite-rocks-01", "numba", marks=pytest.mark.slow)])
def test_vectorised_decoder_matches_the_reference_decoder(board, kernel):
    L = api.load_task("zpg", str(ZPG / f"{board}.txt"), ["prune=none"])
    k = L.kernel(kernel)
    dec = ScriptDecoder(k, spec_of(L.task.info), clauses=6)
    rng = np.random.default_rng(7)
    pop = dec.random(rng, 60)
    out = dec.decode(pop)
    seen = set()
    for i in range(len(pop)):
        plan, status, moves = reference_decode(L.task, pop[i].tolist(), 6, dec.steps, dec.max_steps)
        assert dec.plan_of(out["taken"], i) == plan, i
        assert (int(out["status"][i]), int(out["moves"][i])) == (status, moves), i
        s = list(L.task.init)
        for a in plan:
            s = ref.apply(L.task, L.task.actions[a], s)
        assert out["S"][i].tolist() == s, i
        seen.add(status)
    assert len(seen) >= 2          # the sample exercises more than one way a script ends


def test_paper_fitness_as_printed():
    L = api.load_task("zpg", str(ZPG / "suite-mix-01.txt"), ["prune=none"])
    k = L.kernel("numpy")
    dec = ScriptDecoder(k, spec_of(L.task.info), clauses=20)
    pop = dec.random(np.random.default_rng(3), 200)
    out = dec.decode(pop)
    fit = dec.paper_fitness(out)
    cells = L.task.info["cells"]
    unraked0 = sum(1 for v, x in zip(L.task.init, cells) if v == 0)
    kinds = set()
    for i in range(len(pop)):
        s = out["S"][i].tolist()
        area = sum(1 for v, _ in zip(s, cells) if v == 0) / unraked0
        moves = int(out["moves"][i])
        f = (20 - moves) * (200 / 20)
        if area > 0:
            f += (1 - area) * 200
            kinds.add("partial")
        elif ref.is_goal(L.task, s):
            f += 300
            kinds.add("full")
        else:
            f = 0
            kinds.add("zero")
        assert fit[i] == pytest.approx(f), i
    assert {"partial", "full"} <= kinds


@pytest.mark.parametrize("board,optimum", [("waikato-3x3-a", 3), ("suite-rocks-02", 3),
                                           ("suite-ornaments-02", 3), ("suite-leaves-04", 5)])
def test_paper_preset_finds_the_proven_optimum(board, optimum):
    L = api.load_task("zpg", str(ZPG / f"{board}.txt"))
    r = api.solve(L, "ga", Limits(), "numpy", preset="paper", seed=0, population=300, generations=15)
    assert r.status == "solved" and r.stats["verified"] and r.cost == optimum
    entries = [a for a in r.plan if L.task.actions[a].name == "enter"]
    assert len(entries) == r.cost                        # one paid action per excursion
    assert r.stats["evaluations"] == 300 * r.stats["generations"]
    assert r.stats["evaluations_to_best"] <= r.stats["evaluations"]
    costs = [c for c in r.stats["best_cost_by_generation"] if c is not None]
    assert costs == sorted(costs, reverse=True) and costs[-1] == optimum


def test_improved_preset_finds_the_optimum_and_is_reproducible():
    L = api.load_task("zpg", str(ZPG / "suite-leaves-04.txt"))
    a = api.solve(L, "ga", Limits(), "numpy", preset="improved", seed=1, population=200, generations=15)
    b = api.solve(L, "ga", Limits(), "numpy", preset="improved", seed=1, population=200, generations=15)
    assert a.status == "solved" and a.stats["verified"] and a.cost == 5
    assert (a.plan, a.stats["best_fitness_by_generation"]) == (b.plan, b.stats["best_fitness_by_generation"])
    assert a.stats["best_fitness_by_generation"][-1] == 1000 - 10 * 5


def test_seed_reproducible_and_target_stops_early():
    L = api.load_task("zpg", str(ZPG / "suite-mix-05.txt"))
    a = api.solve(L, "ga", Limits(), "numpy", seed=5, population=100, generations=6)
    b = api.solve(L, "ga", Limits(), "numpy", seed=5, population=100, generations=6)
    assert (a.plan, a.stats["best_fitness_by_generation"]) == (b.plan, b.stats["best_fitness_by_generation"])
    c = api.solve(L, "ga", Limits(), "numpy", seed=5, population=100, generations=50, target=a.cost)
    assert c.cost <= a.cost and c.stats["generations"] < 50


def test_time_limit_ends_cleanly_and_unsolvable_gives_no_plan():
    L = api.load_task("zpg", str(ZPG / "puzzlescript-L1.txt"))
    r = api.solve(L, "ga", Limits(time_s=0.001), "numpy", population=50)
    assert r.status == "limit" and r.stats["generations"] == 1
    U = api.load_task("zpg", str(ZPG / "suite-unsolvable-01.txt"))
    u = api.solve(U, "ga", Limits(), "numpy", population=50, generations=3)
    assert u.status == "unknown" and u.plan is None and u.cost is None


def test_cli_preset_paper_and_seed(capsys):
    board = str(ZPG / "waikato-5x3.txt")
    args = ["solve", "zpg", board, "-e", "ga", "-O", "preset=paper", "-O", "population=200",
            "-O", "generations=5", "--seed", "2", "--kernel", "numpy", "--json"]
    code, out, _ = run_cli(args, capsys)
    d = json.loads(out)
    assert code == 0 and d["status"] == "solved" and d["cost"] == 3 and d["stats"]["seed"] == 2
    assert d["stats"]["preset"] == "paper" and not d["optimal"]
    code, out, _ = run_cli(args[:-1], capsys)     # the text form counts the GA's work as evaluations
    assert code == 0 and f"{d['stats']['evaluations']:,} evaluations, 5 generations" in out
    code, _, err = run_cli(["solve", "zpg", board, "-e", "ga", "-O", "preset=best"], capsys)
    assert code == 31 and "preset" in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------------------------ the declaration
def _tiny() -> tuple[Model, object]:
    """Not a puzzle: x climbs 0 -> 5 by paid jumps of d + k (d, k the genes); at 4 a free nudge ends it."""
    m = Model("tiny")
    x = m.var("x", 0, 5, 0)

    @m.action("jump", d=(1, 2), k=(0, 1))
    def jump(d: int, k: int) -> Act:
        return Act(guard=x + d + k <= 5, effects={x: x + d + k})

    @m.action("nudge", d=(0,))
    def nudge(d: int) -> Act:
        return Act(guard=x == 4, effects={x: 5}, cost=0)

    m.goal(x == 5)
    return m, x


def test_script_declaration_checks_names_and_kinds():
    m, x = _tiny()
    with pytest.raises(ModelError, match="no action schema 'hop'"):
        script(m, opening={"hop": "d"}, inner={"nudge": "d"})
    with pytest.raises(ModelError, match="no parameter 'z'"):
        script(m, opening={"jump": ("d", "z")}, inner={"nudge": "d"})
    with pytest.raises(ModelError, match="both opening and inner"):
        script(m, opening={"jump": "d"}, inner={"jump": "d"})
    with pytest.raises(ModelError, match="integer"):
        progress(m, x == 5)
    progress(m, 5 - x)
    spec = script(m, opening={"jump": ("d", "k")}, inner={"nudge": "d"}, steps=3)
    assert spec.progress is not None and spec.opening_options == 2 and spec.variant_range == 2
    assert spec.inner_options == 1 and spec.steps == 3


def test_the_engine_knows_no_puzzle():
    """The same engine on a model that is no garden: the optimum (2 paid jumps) and a checked plan."""
    from puzzleplan.encodings.kernel import make_kernel
    from puzzleplan.ir.task import ground
    from puzzleplan.solvers import scriptga

    m, x = _tiny()
    script(m, opening={"jump": ("d", "k")}, inner={"nudge": "d"}, steps=2)
    progress(m, 5 - x)
    task = ground(m)
    r = scriptga.solve(make_kernel(task, "numpy"), Limits(), seed=1, population=40, generations=5, clauses=4)
    assert r.status == "solved" and r.cost == 2
    chk = ref.check_plan(task, r.plan)
    assert chk.ok and chk.cost == 2


def test_models_without_a_script_are_refused(capsys):
    code, _, err = run_cli(["solve", "sliding", str(ROOT / "instances" / "sliding" / "eight.txt"), "-e", "ga",
                            "--kernel", "numpy"], capsys)
    assert code == 31 and "script()" in err
