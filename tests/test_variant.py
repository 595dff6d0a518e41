"""Declared variants: checked before use, never trusted; sat/cpsat unsolvability proofs from them.

Differential throughout: the engines' verdicts and optima against bfs (an
exhaustive search sharing nothing with the SAT/CP-SAT encodings), and a
wrong declaration must change nothing about the answers.
"""

from __future__ import annotations

import pytest

from puzzleplan import api
from puzzleplan.encodings.variant import check_variant, linear_terms
from puzzleplan.ir.task import ground
from puzzleplan.lang import Act, Model, ModelError, variant
from puzzleplan.lang.variant import variant_of
from puzzleplan.solvers import Limits

# tiny gardens bfs proves unsolvable (rocks only and with an ornament), and solvable ones
UNSOLVABLE = {
    "u3x4": "#.#\n...\n#..\n..#",
    "u4x4": "..#.\n....\n#.#.\nS...",
}
SOLVABLE = {
    "s3x3": "...\n.#.\n...",
    "s3x3o": "..#\n#..\nS.#",
    "s4x3": "#../#../.#.".replace("/", "\n"),
}


def _board(tmp_path, name: str, rows: str) -> str:
    grid = rows.splitlines()
    p = tmp_path / f"{name}.txt"
    p.write_text(f"size {len(grid)} {len(grid[0])}\ngarden\n" + "\n".join(grid) + "\n")
    return str(p)


def _solve(loaded: api.Loaded, engine: str) -> object:
    return api.solve(loaded, engine, Limits(time_s=60), kernel="numpy")


# ----------------------------------------------------------------------------- the declaration
def _counter(declared: str) -> Model:
    """x climbs 0 -> 3 (inc), y flips 0 -> 1 once (flip); the goal needs both: 4 steps.

    ``declared`` picks a variant: 'good' (5 - x - y), 'flip' (3 - x: flip does not lower it),
    'floor' (3 - x - y with floor 0: the goal state has -1).  Trusted, the two wrong ones would make
    horizon 3 a "proof" that no plan exists.
    """
    m = Model("counter")
    x = m.var("x", 0, 3, 0)
    y = m.var("y", 0, 1, 0)

    @m.action("inc")
    def inc() -> Act:
        return Act(guard=x < 3, effects={x: x + 1})

    @m.action("flip")
    def flip() -> Act:
        return Act(guard=y == 0, effects={y: 1})

    m.goal((x == 3) & (y == 1))
    expr = {"good": 5 - x - y, "flip": 3 - x, "floor": 3 - x - y}[declared]
    variant(m, expr, lo=0)
    return m


def test_declaration_is_an_integer_expression_and_reaches_the_task():
    m = Model("m")
    x = m.var("x", 0, 3, 0)
    with pytest.raises(ModelError, match="integer"):
        variant(m, x == 1)
    with pytest.raises(ModelError, match="lo must be an integer"):
        variant(m, x, lo=1.5)  # type: ignore[arg-type]
    variant(m, 3 - x, lo=0)
    m.goal(x == 3)
    spec = variant_of(ground(m).info)
    assert spec is not None and spec.lo == 0


def test_linear_terms_split_sums_and_constant_factors():
    m = Model("m")
    a, b = m.var("a", 0, 1, 0), m.var("b", 0, 1, 0)
    terms, k = linear_terms(2 * (a + 3) - b)
    assert k == 6 and sorted(c for c, _ in terms) == [-1, 2]


@pytest.mark.parametrize("declared,why", [("flip", "'flip()' does not lower it"), ("floor", "V < 0")])
def test_a_wrong_variant_is_refuted_and_claims_nothing(declared, why):
    task = ground(_counter(declared))
    chk = check_variant(task)
    assert chk is not None and chk.ok is False and why in chk.detail
    loaded = api.Loaded(None, None, None, {}, task, "counter")  # type: ignore[arg-type]
    for engine in ("sat", "cpsat"):
        r = _solve(loaded, engine)
        assert r.status == "optimal" and r.cost == 4, (engine, r.status, r.proof, r.message)


def test_a_good_variant_is_verified():
    task = ground(_counter("good"))
    chk = check_variant(task)
    assert chk is not None and chk.ok is True and chk.threshold == 5


# ----------------------------------------------------------------------------- Zen gardens
def test_zpg_variant_verifies_on_the_public_gardens():
    for name in ("puzzlescript-L2", "puzzlescript-L3", "suite-mix-01"):
        task = api.load_task("zpg", f"instances/zpg/{name}.txt").task
        chk = check_variant(task)
        assert chk is not None and chk.ok is True, (name, chk)


@pytest.mark.parametrize("name", sorted(UNSOLVABLE))
def test_unsolvable_gardens_sat_cpsat_agree_with_bfs(tmp_path, name):
    loaded = api.load_task("zpg", _board(tmp_path, name, UNSOLVABLE[name]))
    assert _solve(loaded, "bfs").status == "unsolvable"
    for engine in ("sat", "cpsat"):
        r = _solve(loaded, engine)
        assert r.status == "unsolvable", (engine, r.status, r.message)
        assert "variant" in r.proof and r.stats.get("variant_ok") is True, (engine, r.proof)


@pytest.mark.parametrize("name", sorted(SOLVABLE))
def test_solvable_gardens_keep_their_optimum_and_never_run_the_check(tmp_path, name):
    loaded = api.load_task("zpg", _board(tmp_path, name, SOLVABLE[name]))
    ref = _solve(loaded, "bfs")
    assert ref.status == "optimal"
    for engine in ("sat", "cpsat"):
        r = _solve(loaded, engine)
        assert (r.status, r.cost) == ("optimal", ref.cost), (engine, r.status, r.cost)
        assert "variant_ok" not in r.stats   # the check is lazy: a plan came first


# ----------------------------------------------------------------------------- PDR (not wired into an engine)
@pytest.mark.parametrize("name", sorted(UNSOLVABLE) + ["s3x3o"])
def test_pdr_agrees_with_bfs_on_tiny_gardens(tmp_path, name):
    """The experimental IC3/PDR prover: an inductive invariant (re-verified) iff bfs finds no plan."""
    from puzzleplan.encodings.pdr import prove_unreachable

    rows = UNSOLVABLE.get(name) or SOLVABLE[name]
    loaded = api.load_task("zpg", _board(tmp_path, name, rows))
    want = _solve(loaded, "bfs").status == "unsolvable"
    for backward in (True, False):
        r = prove_unreachable(loaded.task, backward=backward)
        assert r.unsolvable is want, (backward, r)


@pytest.mark.parametrize("engine", ["sat", "cpsat"])
def test_a_horizon_cap_at_the_threshold_proves_below_it_does_not(tmp_path, engine):
    loaded = api.load_task("zpg", _board(tmp_path, "u3x4", UNSOLVABLE["u3x4"]))
    threshold = check_variant(loaded.task).threshold   # type: ignore[union-attr]
    at = api.solve(loaded, engine, Limits(time_s=60), kernel="numpy", horizon=threshold)
    below = api.solve(loaded, engine, Limits(time_s=60), kernel="numpy", horizon=threshold - 1)
    assert at.status == "unsolvable" and f"at most {threshold} steps" in at.proof
    assert below.status == "unknown"
