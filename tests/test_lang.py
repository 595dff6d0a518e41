"""The expression language and the grounded IR: folding, interning, bounds, total lookups,
validation, cost splitting, JSON.

Oracles: plain Python arithmetic on the same inputs (never a value the library computed),
and the interval-arithmetic *property* (every sampled value lies inside ``bounds``).
"""

from __future__ import annotations

import json
import operator
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from puzzleplan.encodings import npkernel
from puzzleplan.ir.task import Effect, GroundAction, Task, ground
from puzzleplan.lang import (
    FALSE,
    TRUE,
    Abs,
    Act,
    Add,
    And,
    Count,
    Element,
    Expr,
    If,
    Max,
    Member,
    Min,
    Model,
    ModelError,
    Not,
    Or,
    Table,
    ToInt,
    When,
    const,
)
from puzzleplan.lang.expr import bounds, var, walk
from puzzleplan.lang.model import VarInfo
from puzzleplan.verify import reference as ref

# ----------------------------------------------------------------------------- a tiny expression spec
# Expressions are drawn as nested tuples ("spec") and then (a) built with the language and
# (b) evaluated directly in Python.  (b) is the oracle for folding, reference and numpy semantics.

N_VARS = 3
VAR_RANGE = (-4, 6)

INT_BIN = {"add": operator.add, "sub": operator.sub, "mul": operator.mul}
CMP = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
       "gt": operator.gt, "ge": operator.ge}


def int_specs(depth: int) -> st.SearchStrategy:
    leaf = st.one_of(st.tuples(st.just("const"), st.integers(-5, 7)),
                     st.tuples(st.just("var"), st.integers(0, N_VARS - 1)))
    if depth == 0:
        return leaf
    sub = int_specs(depth - 1)
    return st.one_of(
        leaf,
        st.tuples(st.sampled_from(sorted(INT_BIN)), sub, sub),
        st.tuples(st.sampled_from(["floordiv", "mod"]), sub, st.integers(1, 4)),
        st.tuples(st.sampled_from(["min", "max"]), sub, sub),
        st.tuples(st.just("abs"), sub),
        st.tuples(st.just("neg"), sub),
        st.tuples(st.just("ite"), bool_specs(depth - 1), sub, sub),
        st.tuples(st.just("table"), st.lists(st.integers(-9, 9), min_size=1, max_size=6), sub,
                  st.integers(-9, 9)),
        st.tuples(st.just("element"), st.lists(sub, min_size=1, max_size=4), sub, sub),
        st.tuples(st.just("count"), st.lists(bool_specs(depth - 1), min_size=1, max_size=3)),
    )


def bool_specs(depth: int) -> st.SearchStrategy:
    leaf = st.tuples(st.just("bconst"), st.booleans())
    if depth == 0:
        return st.one_of(leaf, st.tuples(st.sampled_from(sorted(CMP)),
                                         st.tuples(st.just("var"), st.integers(0, N_VARS - 1)),
                                         st.tuples(st.just("const"), st.integers(-5, 7))))
    sub_i = int_specs(depth - 1)
    sub_b = bool_specs(depth - 1)
    return st.one_of(
        leaf,
        st.tuples(st.sampled_from(sorted(CMP)), sub_i, sub_i),
        st.tuples(st.sampled_from(["and", "or"]), sub_b, sub_b),
        st.tuples(st.just("not"), sub_b),
        st.tuples(st.just("bite"), sub_b, sub_b, sub_b),
    )


def build(spec) -> Expr:
    op = spec[0]
    if op == "const":
        return const(spec[1])
    if op == "bconst":
        return const(bool(spec[1]))
    if op == "var":
        return var(spec[1])
    if op in INT_BIN:
        a, b = build(spec[1]), build(spec[2])
        return {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b}[op]()
    if op == "floordiv":
        return build(spec[1]) // spec[2]
    if op == "mod":
        return build(spec[1]) % spec[2]
    if op == "min":
        return Min(build(spec[1]), build(spec[2]))
    if op == "max":
        return Max(build(spec[1]), build(spec[2]))
    if op == "abs":
        return Abs(build(spec[1]))
    if op == "neg":
        return -build(spec[1])
    if op == "ite":
        return If(build(spec[1]), build(spec[2]), build(spec[3]))
    if op == "table":
        return Table(spec[1], default=spec[3])[build(spec[2])]
    if op == "element":
        return Element([build(x) for x in spec[1]], build(spec[2]), default=build(spec[3]))
    if op == "count":
        return Count([build(x) for x in spec[1]])
    if op in CMP:
        a, b = build(spec[1]), build(spec[2])
        return {"eq": lambda: a == b, "ne": lambda: a != b, "lt": lambda: a < b, "le": lambda: a <= b,
                "gt": lambda: a > b, "ge": lambda: a >= b}[op]()
    if op == "and":
        return And(build(spec[1]), build(spec[2]))
    if op == "or":
        return Or(build(spec[1]), build(spec[2]))
    if op == "not":
        return Not(build(spec[1]))
    if op == "bite":
        return If(build(spec[1]), build(spec[2]), build(spec[3]))
    raise AssertionError(op)


def py_eval(spec, s) -> int:
    """Direct Python semantics of a spec (booleans as 0/1); the test oracle."""
    op = spec[0]
    if op == "const":
        return spec[1]
    if op == "bconst":
        return int(spec[1])
    if op == "var":
        return s[spec[1]]
    if op in INT_BIN:
        return INT_BIN[op](py_eval(spec[1], s), py_eval(spec[2], s))
    if op == "floordiv":
        return py_eval(spec[1], s) // spec[2]
    if op == "mod":
        return py_eval(spec[1], s) % spec[2]
    if op == "min":
        return min(py_eval(spec[1], s), py_eval(spec[2], s))
    if op == "max":
        return max(py_eval(spec[1], s), py_eval(spec[2], s))
    if op == "abs":
        return abs(py_eval(spec[1], s))
    if op == "neg":
        return -py_eval(spec[1], s)
    if op in ("ite", "bite"):
        return py_eval(spec[2], s) if py_eval(spec[1], s) else py_eval(spec[3], s)
    if op == "table":
        vals, i = spec[1], py_eval(spec[2], s)
        return vals[i] if 0 <= i < len(vals) else spec[3]
    if op == "element":
        items, i = spec[1], py_eval(spec[2], s)
        return py_eval(items[i], s) if 0 <= i < len(items) else py_eval(spec[3], s)
    if op == "count":
        return sum(1 for x in spec[1] if py_eval(x, s))
    if op in CMP:
        return int(CMP[op](py_eval(spec[1], s), py_eval(spec[2], s)))
    if op == "and":
        return int(bool(py_eval(spec[1], s)) and bool(py_eval(spec[2], s)))
    if op == "or":
        return int(bool(py_eval(spec[1], s)) or bool(py_eval(spec[2], s)))
    if op == "not":
        return 1 - py_eval(spec[1], s)
    raise AssertionError(op)


states_strategy = st.lists(st.lists(st.integers(*VAR_RANGE), min_size=N_VARS, max_size=N_VARS),
                           min_size=1, max_size=12)

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(spec=st.one_of(int_specs(3), bool_specs(3)), states=states_strategy)
def test_reference_and_numpy_evaluation_match_python_semantics(spec, states):
    e = build(spec)
    S = np.array(states, dtype=np.int64)
    got_np = npkernel.evaluate(e, S)
    for row, s in enumerate(states):
        want = py_eval(spec, s)
        assert ref.evaluate(e, s) == want
        assert int(got_np[row]) == want
    if e.kind == "bool":
        assert got_np.dtype == np.bool_


@SETTINGS
@given(spec=int_specs(3), los=st.lists(st.integers(-4, 3), min_size=N_VARS, max_size=N_VARS),
       widths=st.lists(st.integers(0, 4), min_size=N_VARS, max_size=N_VARS), seed=st.integers(0, 2**32))
def test_bounds_are_sound(spec, los, widths, seed):
    e = build(spec)
    vb = [(lo, lo + w) for lo, w in zip(los, widths)]
    lo, hi = bounds(e, vb)
    assert lo <= hi
    rng = random.Random(seed)
    corners = [[vb[i][(mask >> i) & 1] for i in range(N_VARS)] for mask in range(2 ** N_VARS)]
    samples = corners + [[rng.randint(a, b) for a, b in vb] for _ in range(30)]
    for s in samples:
        assert lo <= ref.evaluate(e, s) <= hi, (s, lo, hi)


def test_bounds_examples_computed_by_hand():
    x, y = var(0), var(1)
    vb = [(0, 3), (1, 2)]
    assert bounds(x + y, vb) == (1, 5)
    assert bounds(x - y, vb) == (-2, 2)
    assert bounds(x * y, vb) == (0, 6)
    assert bounds(Table([5, 7, 9, 11])[x], vb) == (5, 11)          # index provably inside
    assert bounds(Table([5, 7])[x], vb) == (0, 7)                  # may fall out: default 0 joins


# ----------------------------------------------------------------------------- constant folding
@given(a=st.integers(-50, 50), b=st.integers(-50, 50))
def test_constant_arithmetic_and_comparisons_fold_to_python_values(a, b):
    ca, cb = const(a), const(b)
    for name, f in INT_BIN.items():
        r = {"add": ca + cb, "sub": ca - cb, "mul": ca * cb}[name]
        assert r.is_const and r.val == f(a, b)
    for name, f in CMP.items():
        r = {"eq": ca == cb, "ne": ca != cb, "lt": ca < cb, "le": ca <= cb, "gt": ca > cb,
             "ge": ca >= cb}[name]
        assert r.is_const and r.kind == "bool" and bool(r.val) == f(a, b)
    assert Min(ca, cb).val == min(a, b) and Max(ca, cb).val == max(a, b)
    assert Abs(ca).val == abs(a)
    assert (-ca).val == -a
    d = abs(b) + 1
    assert (ca // d).val == a // d and (ca % d).val == a % d


def test_identities_fold_away():
    x = var(0)
    b = x == 3
    assert x * 1 is x and 1 * x is x
    assert (x * 0).is_const and (x * 0).val == 0
    assert x - 0 is x
    assert Add(x, 0) is x
    assert And(TRUE, b) is b and Or(FALSE, b) is b
    assert And(FALSE, b) is FALSE and Or(TRUE, b) is TRUE
    assert Not(Not(b)) is b
    assert If(TRUE, x, 5) is x and If(FALSE, x, 5).val == 5
    assert If(b, x, x) is x
    assert (x == x) is TRUE and (x < x) is FALSE
    assert Table([4, 5, 6])[const(1)].val == 5
    assert Table([4, 5, 6], default=-7)[const(9)].val == -7
    assert Element([x, var(1)], const(1)) is var(1)
    assert Member(x, [], range(4)) is FALSE and Member(x, range(4), range(4)) is TRUE
    s = Add(x, 2, 3, var(1), 4)
    consts = [a.val for a in s.args if a.is_const]
    assert consts == [9]


def test_python_truth_value_is_refused():
    with pytest.raises(TypeError):
        bool(var(0) == 1)


def test_division_needs_a_positive_constant_divisor():
    x = var(0)
    for bad in (lambda: x // 0, lambda: x % -2, lambda: x // var(1), lambda: 7 // x):
        with pytest.raises(TypeError):
            bad()
    with pytest.raises(ValueError):
        Member(x, [1], range(1, 4))                 # Member needs a domain range(0, n)
    with pytest.raises(ValueError):
        Table([])
    with pytest.raises(ValueError):
        Element([], x)


def test_bool_and_int_do_not_mix_implicitly():
    with pytest.raises(TypeError):
        And(var(0), TRUE)          # an int where a bool is needed
    assert Count([var(0) == 1, var(1) == 2]).kind == "int"
    assert ToInt(var(0) == 1).kind == "int"


# ----------------------------------------------------------------------------- interning
@given(spec=st.one_of(int_specs(3), bool_specs(3)))
def test_structurally_equal_expressions_are_one_object(spec):
    assert build(spec) is build(spec)


def test_interning_distinguishes_structure():
    x = var(0)
    assert x + 1 is x + 1
    assert x + 1 is not x + 2
    assert Table([1, 2, 3])[x] is Table([1, 2, 3])[x]
    assert Table([1, 2, 3])[x] is not Table([1, 2, 4])[x]
    assert Table([1, 2, 3], default=0)[x] is not Table([1, 2, 3], default=1)[x]
    assert const(1) is not const(True)               # int 1 and bool True are different nodes
    shared = (x + 1) * 2
    e = shared + shared
    assert len([n for n in walk([e]) if n is shared]) == 1


# ----------------------------------------------------------------------------- total lookups
@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.integers(-20, 20), min_size=1, max_size=8), default=st.integers(-20, 20),
       index=st.lists(st.integers(-12, 12), min_size=1, max_size=20))
def test_table_out_of_range_gives_default_in_reference_and_numpy(values, default, index):
    e = Table(values, default=default)[var(0)]
    S = np.array([[i] for i in index], dtype=np.int64)
    got = npkernel.evaluate(e, S)
    for row, i in enumerate(index):
        want = values[i] if 0 <= i < len(values) else default
        assert ref.evaluate(e, [i]) == want
        assert got[row] == want


@settings(max_examples=300, deadline=None)
@given(states=st.lists(st.lists(st.integers(-6, 6), min_size=4, max_size=4), min_size=1, max_size=20),
       n_items=st.integers(1, 3))
def test_element_out_of_range_gives_dynamic_default_in_reference_and_numpy(states, n_items):
    # items are variables 1..n_items, the index is variable 0, the default is variable 3 (state-dependent)
    items = [var(1 + k) * 2 for k in range(n_items)]
    e = Element(items, var(0), default=var(3) + 100)
    S = np.array(states, dtype=np.int64)
    got = npkernel.evaluate(e, S)
    for row, s in enumerate(states):
        i = s[0]
        want = 2 * s[1 + i] if 0 <= i < n_items else s[3] + 100
        assert ref.evaluate(e, s) == want
        assert got[row] == want


def test_boolean_element_with_out_of_range_index_is_the_boolean_default():
    flags = [var(1) == 1, var(2) == 1]
    e = Element(flags, var(0), default=True)
    assert e.kind == "bool"
    for s, want in (([-1, 0, 0], 1), ([2, 0, 0], 1), ([0, 0, 1], 0), ([1, 0, 1], 1)):
        assert ref.evaluate(e, s) == want
        assert bool(npkernel.evaluate(e, np.array([s]))[0]) == bool(want)


# ----------------------------------------------------------------------------- IR validate()
def _task(variables=None, actions=None, goal=None, heuristic=None, groups=None) -> Task:
    vs = variables or [VarInfo("x", 0, 3, 0), VarInfo("y", 0, 3, 1)]
    x = var(0)
    acts = actions if actions is not None else [
        GroundAction("inc", "inc", x < 3, (Effect(0, x + 1),), 1)]
    return Task("t", vs, acts, goal if goal is not None else (x == 3), heuristic=heuristic,
                groups=groups or [])


def test_validate_accepts_a_wellformed_task():
    _task().validate()
    _task(heuristic=3 - var(0), groups=[[(0,), (1,)]]).validate()


@pytest.mark.parametrize("broken", [
    "init outside domain", "duplicate name", "unknown variable", "goal not bool", "heuristic not int",
    "guard not bool", "negative cost", "non-integer cost", "effect never in domain", "effect value bool",
    "effect condition not bool", "assigned twice", "effect on unknown variable", "group arity",
    "group domains", "variable in two objects",
])
def test_validate_rejects_broken_tasks(broken):
    x, y = var(0), var(1)
    ok_act = GroundAction("inc", "inc", x < 3, (Effect(0, x + 1),), 1)
    kw: dict = {}
    if broken == "init outside domain":
        kw["variables"] = [VarInfo("x", 0, 3, 5), VarInfo("y", 0, 3, 1)]
    elif broken == "duplicate name":
        kw["variables"] = [VarInfo("x", 0, 3, 0), VarInfo("x", 0, 3, 1)]
    elif broken == "unknown variable":
        kw["goal"] = var(7) == 1
    elif broken == "goal not bool":
        kw["goal"] = x + 1
    elif broken == "heuristic not int":
        kw["heuristic"] = x == 1
    elif broken == "guard not bool":
        kw["actions"] = [GroundAction("a", "a", x + 1, (Effect(0, x),), 1)]
    elif broken == "negative cost":
        kw["actions"] = [GroundAction("a", "a", x < 3, (Effect(0, x + 1),), -1)]
    elif broken == "non-integer cost":
        kw["actions"] = [GroundAction("a", "a", x < 3, (Effect(0, x + 1),), 1.5)]
    elif broken == "effect never in domain":
        kw["actions"] = [GroundAction("a", "a", x < 3, (Effect(0, x + 10),), 1)]
    elif broken == "effect value bool":
        kw["actions"] = [GroundAction("a", "a", x < 3, (Effect(0, x == 1),), 1)]
    elif broken == "effect condition not bool":
        kw["actions"] = [GroundAction("a", "a", x < 3, (Effect(0, x + 1, cond=y + 1),), 1)]
    elif broken == "assigned twice":
        kw["actions"] = [GroundAction("a", "a", x < 3, (Effect(0, x + 1), Effect(0, y)), 1)]
    elif broken == "effect on unknown variable":
        kw["actions"] = [GroundAction("a", "a", x < 3, (Effect(5, x),), 1)]
    elif broken == "group arity":
        kw["groups"] = [[(0,), (0, 1)]]
    elif broken == "group domains":
        kw["variables"] = [VarInfo("x", 0, 3, 0), VarInfo("y", 0, 4, 1)]
        kw["groups"] = [[(0,), (1,)]]
    elif broken == "variable in two objects":
        kw["groups"] = [[(0,), (0,)]]
    kw.setdefault("actions", [ok_act])
    with pytest.raises(ModelError):
        _task(**kw).validate()


def test_model_builder_rejects_bad_declarations():
    m = Model("m")
    m.var("x", 0, 3, 0)
    with pytest.raises(ModelError):
        m.var("x", 0, 3, 0)
    with pytest.raises(ModelError):
        m.var("y", 0, 3, 4)
    with pytest.raises(ModelError):
        m.var("z", 3, 0, 1)
    with pytest.raises(ModelError):
        ground(m)                               # no goal declared


# ----------------------------------------------------------------------------- ground(): cost splitting
def _cost_model() -> tuple[Model, Expr, Expr]:
    m = Model("costs")
    x = m.var("x", 0, 4, 0)
    y = m.var("y", 0, 2, 0)
    cost = If(y == 1, 0, x + y)          # ranges over 0..6 by bounds

    @m.action("step", d=(1, -1))
    def step(d):
        return Act(guard=(x + d >= 0) & (x + d <= 4), effects={x: x + d}, cost=cost, label=f"step {d}")

    @m.action("flip")
    def flip():
        return Act(guard=TRUE, effects={y: (y + 1) % 3}, cost=2)

    m.goal(x == 4)
    return m, cost, x


def test_ground_splits_state_dependent_cost_into_constant_cost_actions():
    m, cost, x = _cost_model()
    task = ground(m)
    assert all(isinstance(a.cost, int) and a.cost >= 0 for a in task.actions)
    for d in (1, -1):
        split = [a for a in task.actions if a.label == f"step {d}"]
        assert len({a.cost for a in split}) == len(split) > 1
        for xs in range(5):
            for ys in range(3):
                s = [xs, ys]
                original_guard = 0 <= xs + d <= 4
                applicable = [a for a in split if ref.applicable(a, s)]
                if not original_guard:
                    assert applicable == []
                    continue
                # exactly one copy applies, and it carries the cost the expression has in s
                assert len(applicable) == 1
                want = 0 if ys == 1 else xs + ys
                assert applicable[0].cost == want == ref.evaluate(cost, s)
                assert ref.apply(task, applicable[0], s) == [xs + d, ys]
    flips = [a for a in task.actions if a.name == "flip"]
    assert [a.cost for a in flips] == [2]
    assert task.cost_kind == "general"


def test_ground_rejects_a_cost_that_can_be_negative():
    m = Model("neg")
    x = m.var("x", 0, 3, 0)

    @m.action("a")
    def a():
        return Act(guard=x < 3, effects={x: x + 1}, cost=x - 2)

    m.goal(x == 3)
    with pytest.raises(ModelError):
        ground(m)


def test_ground_drops_actions_whose_guard_folds_false_and_keeps_conditional_effects():
    m = Model("w")
    x = m.var("x", 0, 3, 0)
    y = m.var("y", 0, 1, 0)

    @m.action("a", k=range(3))
    def a(k):
        if k == 2:
            return None
        return Act(guard=FALSE if k == 1 else x < 3, effects={x: x + 1},
                   when=[When(x == 2, {y: 1}), When(FALSE, {y: 0})])

    m.goal(y == 1)
    task = ground(m)
    assert [a.label for a in task.actions] == ["a(k=0)"]
    (act,) = task.actions
    assert len(act.effects) == 2                       # the When(FALSE) assignment is gone
    assert ref.apply(task, act, [1, 0]) == [2, 0]
    assert ref.apply(task, act, [2, 0]) == [3, 1]


# ----------------------------------------------------------------------------- to_json
def _rebuild(doc: dict) -> list[Expr]:
    nodes: list[Expr] = []
    for n in doc["nodes"]:
        args = tuple(nodes[i] for i in n["args"])
        assert all(i < len(nodes) for i in n["args"]), "children must come before parents"
        val = n.get("val")
        if isinstance(val, list):
            val = tuple(val)
        nodes.append(Expr(n["op"], args, val, n["kind"]))
    return nodes


def test_to_json_is_valid_json_and_rebuilds_the_same_expressions(fayaa001_moves):
    for task in (fayaa001_moves.task, ground(_cost_model()[0])):
        doc = json.loads(task.to_json())
        assert [v["name"] for v in doc["variables"]] == task.names
        assert [(v["lo"], v["hi"], v["init"]) for v in doc["variables"]] == \
            [(v.lo, v.hi, v.init) for v in task.variables]
        nodes = _rebuild(doc)          # interning: a faithful node table rebuilds the very same objects
        assert nodes[doc["goal"]] is task.goal
        if task.heuristic is not None:
            assert nodes[doc["heuristic"]] is task.heuristic
        assert len(doc["actions"]) == len(task.actions)
        for ja, a in zip(doc["actions"], task.actions):
            assert ja["cost"] == a.cost and ja["label"] == a.label
            assert nodes[ja["guard"]] is a.guard
            assert len(ja["effects"]) == len(a.effects)
            for je, e in zip(ja["effects"], a.effects):
                assert je["var"] == e.var and nodes[je["value"]] is e.value
                assert (je["cond"] is None) == (e.cond is None)
                if e.cond is not None:
                    assert nodes[je["cond"]] is e.cond
        assert doc["groups"] == [[list(o) for o in g] for g in task.groups]
