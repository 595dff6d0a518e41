"""Every operator of the language's table, in every back end that translates expressions.

The operator table (``puzzleplan.lang.ops.OPS``) is the plain-Python meaning of each
operator; the reference checker evaluates with it.  Here one sample expression per
operator (its root is that operator, over two small variables ``x`` in 0..3 and ``y`` in
-2..2) is evaluated on all 20 assignments by each back end and compared with the table:

* the numpy kernel and the compiled numba kernel: one task whose single action writes
  every sample into a variable of its own, expanded from every assignment (one compile);
* the CNF encoder: the sample's value-indexed literals read off a SAT model per assignment;
* the CP-SAT encoder: the posted sample read off a CP-SAT solution per assignment;
* the PDDL export: a task per sample, its grounded PDDL action applied to each state by the
  small STRIPS reader of ``test_pddl.py``.

An operator added to the table without a sample fails here, and so does a back end that
does not translate one.  ``GAPS`` names the only operators a back end is allowed to refuse
(and it must refuse them with its own error, not answer wrongly): ``MinAssignment`` exists
for admissible heuristics; CNF and CP-SAT post heuristics through ``relax_assignments``
and PDDL exports no heuristic.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from test_pddl import Strips, _decode, _facts_of

from puzzleplan.encodings.cpsat import CpPlan
from puzzleplan.encodings.kernel import make_kernel
from puzzleplan.encodings.pddl import PddlError, export
from puzzleplan.encodings.sat import TOP, CnfPlan, EncodingError
from puzzleplan.encodings.unrolled import ValueSetError
from puzzleplan.ir.task import Task, ground
from puzzleplan.lang import Abs, Act, And, Element, If, Max, Min, MinAssignment, Model, Not, Or, Table, ToInt
from puzzleplan.lang.expr import BOOL, Expr, const
from puzzleplan.lang.ops import OPS, evaluate

XS, YS = range(0, 4), range(-2, 3)
STATES = list(itertools.product(XS, YS))

# operators a back end may refuse (with its own error): MinAssignment is for heuristics only there
GAPS = {"cnf": {"assign"}, "cpsat": {"assign"}, "pddl": {"assign"}}


def _samples(x: Expr, y: Expr) -> dict[str, Expr]:
    return {
        "const": const(4), "var": y, "add": x + y + 1, "sub": x - y, "mul": x * y, "floordiv": (x - y) // 3,
        "mod": (x * y) % 3, "abs": Abs(x - 2 * y), "min": Min(x, y, 1), "max": Max(x, y),
        "toint": ToInt(x > y), "eq": x == y, "ne": x != y + 1, "lt": x < y, "le": x <= y - 1, "gt": x > y,
        "ge": x >= y, "and": And(x > 0, y < 1), "or": Or(x == 0, y > 1), "not": Not(x == y),
        "ite_int": If(x > y, x, y * 2), "ite_bool": If(x > 1, y > 0, y < 0),
        "table": Table([5, 6, 7], default=-1)[x + y], "element": Element([x, y, x + y], y + 1, default=9),
        "assign": MinAssignment([[x, y], [y + 1, x * 2]]),
    }


def _model(only: str | None = None) -> tuple[Task, dict[str, Expr], dict[str, int]]:
    """A task over x, y whose one action writes each sample (as 0/1 for booleans) into its own variable."""
    m = Model("ops" if only is None else f"ops-{only}")
    x = m.var("x", XS.start, XS.stop - 1, 0)
    y = m.var("y", YS.start, YS.stop - 1, 0)
    samples = _samples(x, y)
    if only is not None:
        samples = {only: samples[only]}
    outs = {}
    for name, e in samples.items():
        vals = [evaluate(e, [a, b]) for a, b in STATES]
        outs[name] = m.var(f"out_{name}", min(vals), max(vals), min(vals))

    @m.action("probe")
    def probe() -> Act:
        return Act(effects={outs[n]: ToInt(e) if e.kind == BOOL else e for n, e in samples.items()})

    @m.action("set", a=XS, b=YS)  # x and y take any value after one step (CP-SAT reads step 1)
    def set_(a: int, b: int) -> Act:
        return Act(effects={x: a, y: b})

    m.goal(x >= 0)
    task = ground(m)
    index = {n: task.names.index(f"out_{n}") for n in samples}
    return task, {n: e for n, e in samples.items()}, index


def _want(e: Expr) -> list[int]:
    return [evaluate(e, [a, b]) for a, b in STATES]


def test_every_operator_has_a_sample_of_its_own_kind_and_arity() -> None:
    m = Model("t")
    samples = _samples(m.var("x", 0, 3, 0), m.var("y", -2, 2, 0))
    assert set(samples) == set(OPS), "operators without a sample (add one) or samples of no operator"
    for name, e in samples.items():
        op = OPS[name]
        assert e.op == name, (name, e.op)
        assert op.arity is None or op.arity == len(e.args), name
        assert op.kind is None or op.kind == e.kind, name
        assert sum(f is not None for f in (op.leaf, op.apply, op.select)) == 1, name
        assert len(set(_want(e))) > 1 or name == "const", f"{name}: the sample is constant on the states"


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_kernels_translate_every_operator(backend: str) -> None:
    task, samples, index = _model()
    kernel = make_kernel(task, backend)
    init = task.init
    S = np.array([[a, b, *init[2:]] for a, b in STATES], dtype=np.int64)
    succ, par, act = kernel.expand(S)
    probe = [i for i, a in enumerate(act.tolist()) if task.actions[a].name == "probe"]
    assert sorted(int(par[i]) for i in probe) == list(range(len(STATES)))
    rows = {int(par[i]): succ[i] for i in probe}
    for name, e in samples.items():
        got = [int(rows[i][index[name]]) for i in range(len(STATES))]
        assert got == _want(e), (backend, name)


def test_cnf_translates_every_operator() -> None:
    from pysat.solvers import Solver

    task, samples, _ = _model()
    enc = CnfPlan(task, start=[XS, YS, *([v] for v in task.init[2:])], symmetry=False)
    encoded = {}
    for name, e in samples.items():
        if name in GAPS["cnf"]:
            with pytest.raises(EncodingError):
                enc.encode(e, 0)
            continue
        r = enc.encode(e, 0)
        encoded[name] = r if isinstance(r, int) else {v: r.lit(v) for v in r.values}
    assert set(encoded) == set(OPS) - GAPS["cnf"]
    with Solver(name="cadical195", bootstrap_with=enc.drain()) as s:
        for i, (a, b) in enumerate(STATES):
            assert s.solve(assumptions=[enc.x[0][0][a], enc.x[0][1][b]])
            true = {lit for lit in s.get_model() if lit > 0} | {TOP}
            for name, r in encoded.items():
                if isinstance(r, int):
                    got = int(_holds(r, true))
                else:
                    (got,) = [v for v, lit in r.items() if _holds(lit, true)]
                assert got == _want(samples[name])[i], (name, a, b)


def _holds(lit: int, true: set[int]) -> bool:
    return lit in true if lit > 0 else -lit not in true


def test_cpsat_translates_every_operator() -> None:
    from ortools.sat.python import cp_model

    task, samples, _ = _model()
    with pytest.raises(ValueSetError):
        CpPlan(task, 1, objective=False, symmetry=False)._post(samples["assign"], 1)
    live = {n: e for n, e in samples.items() if n not in GAPS["cpsat"]}
    assert set(live) == set(OPS) - GAPS["cpsat"]
    for i, (a, b) in enumerate(STATES):
        model = CpPlan(task, 1, objective=False, symmetry=False)
        posted = {n: model._post(e, 1) for n, e in live.items()}
        model.m.add(model.x[1][0] == a)
        model.m.add(model.x[1][1] == b)
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        assert solver.solve(model.m) in (cp_model.OPTIMAL, cp_model.FEASIBLE), (a, b)
        for name, p in posted.items():
            if isinstance(p, bool | int):
                got = int(p)
            elif samples[name].kind == BOOL:
                got = int(solver.boolean_value(p))
            else:
                got = int(solver.value(p))
            assert got == _want(samples[name])[i], (name, a, b)


@pytest.mark.parametrize("name", sorted(OPS))
def test_pddl_translates_every_operator(name: str) -> None:
    task, samples, index = _model(name)
    if name in GAPS["pddl"]:
        with pytest.raises(PddlError):
            export(task, name=task.name)
        return
    p = export(task, name=task.name)
    sx = Strips(p.domain, p.problem)
    for i, (a, b) in enumerate(STATES):
        state = [a, b, *task.init[2:]]
        succ = [_decode(sx, new, task.n_vars) for act, new, _ in sx.successors(_facts_of(p, sx, state))
                if not act.startswith("pp-") and task.actions[p.actions[act]].name == "probe"]
        assert len(succ) == 1, (name, a, b)
        assert succ[0][index[name]] == _want(samples[name])[i], (name, a, b)
