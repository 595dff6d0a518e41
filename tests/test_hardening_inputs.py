"""Regression tests for issue 23's findings on instances and model files, one input each.

Every bad input ends in one line on stderr, ``puzzleplan: error: FILE:LINE: message``, with a
documented exit code (30 instance, 32 model) and never a traceback.  Model files are written
here with the offending line marked ``# <-``, so the test knows which line the error must name.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import FAYAA, ROOT, run_cli

from puzzleplan import api
from puzzleplan.lang import ModelError
from puzzleplan.lang.errors import InstanceError, PuzzleError
from puzzleplan.lang.expr import walk

GOOD_KLOTSKI = ["BAAC", "BAAC", "DEEF", "DGHF", "I..J"]
KWIRK_1_1 = ROOT / "instances" / "kwirk" / "going-up" / "01_1-1.txt"

# one small valid instance per bundled model (file text), for the shared-layer findings
SEEDS: dict[str, str] = {
    "klotski": "id: x\nname: t\n" + "\n".join(GOOD_KLOTSKI) + "\n",
    "sliding": "id: e\n1 2 3\n4 5 6\n0 7 8\n",
    "zpg": "# name: z\nsize 3 3\ngarden\n...\n.#.\n...\n",
    "sokoban": "####\n# .#\n#  ###\n#*@  #\n#  $ #\n#  ###\n####\nTitle: Microban 1\n",
    "kwirk": KWIRK_1_1.read_text(encoding="utf-8"),
    "lightsout": "id: c\n.*.\n***\n.*.\n",
    "skyscraper": "size 4\ntop 1 2 3 2\nbottom 2 1 2 3\nleft 1 4 2 2\nright 3 1 2 3\n",
    "sudoku": ".2.......9.34.5...45......73.7..2...6.......1.....36....87....9..48..3......19.7.\n",
}


def one_error_line(code: int, out: str, err: str, expected: int) -> str:
    assert code == expected, (code, err)
    assert "Traceback" not in err + out
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert len(lines[0]) <= 300, len(lines[0])
    assert lines[0].startswith("puzzleplan: error: ")
    return lines[0]


def named_line(line: str, path: Path) -> int:
    m = re.search(re.escape(str(path)) + r":(\d+): \S", line)
    assert m, f"no '{path}:LINE: message' in {line!r}"
    return int(m.group(1))


# ============================================================================ instances
@pytest.mark.parametrize("model", sorted(SEEDS))
def test_non_ascii_digit_as_record_id(tmp_path, capsys, model):
    path = tmp_path / "inst.txt"
    path.write_text(SEEDS[model], encoding="utf-8")
    code, out, err = run_cli(["dump", model, f"{path}#²"], capsys)
    line = one_error_line(code, out, err, 30)
    assert str(path) in line and "²" in line


@pytest.mark.parametrize("model", sorted(SEEDS))
def test_utf8_byte_order_mark_is_accepted(tmp_path, capsys, model):
    plain, bom = tmp_path / "plain.txt", tmp_path / "bom.txt"
    plain.write_text(SEEDS[model], encoding="utf-8")
    bom.write_bytes(b"\xef\xbb\xbf" + SEEDS[model].encode("utf-8"))
    code, out, err = run_cli(["dump", model, plain], capsys)
    assert code == 0, err
    code2, out2, err2 = run_cli(["dump", model, bom], capsys)
    assert code2 == 0, err2
    assert out2 == out


def test_kwirk_accepts_trailing_spaces(tmp_path, capsys):
    path = tmp_path / "spaces.txt"
    path.write_text("".join(line + "   \n" for line in SEEDS["kwirk"].splitlines()), encoding="utf-8")
    code, out, err = run_cli(["dump", "kwirk", path], capsys)
    assert code == 0, err
    assert out.startswith("task kwirk")


@pytest.mark.parametrize("model, text, bad", [
    ("sliding", "id: e\n1 2 3\n4 5 ²\n0 7 8\n", "4 5 ²"),
    ("sliding", "id: e\n1 2 3\n4 5 6\n0 7 " + "8" * 5000 + "\n", "0 7 8"),
    ("skyscraper", "size 4\ntop 1 2 3 2\nbottom 2 1 2 ³\nleft 1 4 2 2\nright 3 1 2 3\n", "bottom"),
    ("skyscraper", "size ²\ntop 1 2 3 2\nbottom 2 1 2 3\nleft 1 4 2 2\nright 3 1 2 3\n", "size"),
    ("klotski", "size: 4x5\ngoal: ³,1\n" + "\n".join(GOOD_KLOTSKI) + "\n", "goal"),
    ("kwirk", SEEDS["kwirk"].replace("size: 18 5", "size: 18 ⁵"), "size"),
    ("kwirk", SEEDS["kwirk"].replace("characters: 1", "characters: ¹"), "characters"),
    ("zpg", "size 3 ³\ngarden\n...\n.#.\n...\n", "size"),
], ids=["sliding-tile", "sliding-5000-digits", "skyscraper-clue", "skyscraper-size", "klotski-goal",
        "kwirk-size", "kwirk-characters", "zpg-size"])
def test_superscript_digit_in_a_number_field_names_the_instance_line(tmp_path, capsys, model, text, bad):
    path = tmp_path / "num.txt"
    path.write_text(text, encoding="utf-8")
    code, out, err = run_cli(["dump", model, path], capsys)
    line = one_error_line(code, out, err, 30)
    expected = next(i for i, t in enumerate(text.splitlines(), start=1) if t.startswith(bad))
    assert named_line(line, path) == expected


def test_a_five_megabyte_line_is_not_echoed(tmp_path, capsys):
    path = tmp_path / "huge.txt"
    path.write_text("size: 4x5\n" + "\n".join(GOOD_KLOTSKI[:3]) + "\n" + "D" * 5_000_000 + "\nI..J\n",
                    encoding="utf-8")
    code, out, err = run_cli(["dump", "klotski", path], capsys)
    line = one_error_line(code, out, err, 30)
    assert named_line(line, path) == 5


def test_error_messages_are_capped_and_one_line():
    e = InstanceError("got " + "x" * 10_000 + "\nsecond line", "some/file.txt", 7)
    text = str(e)
    assert text.startswith("some/file.txt:7: got xxx") and text.endswith("…")
    assert len(text) <= 280 and "\n" not in text
    assert str(PuzzleError("a\nb\u2028c")) == "a\\nb\\nc"


def test_klotski_target_of_another_shape_is_a_documented_variant(tmp_path, capsys):
    """The model deliberately takes an A of any of the four shapes (docs/models/klotski.md says so)."""
    path = tmp_path / "unit.txt"
    path.write_text("size: 3x3\ngoal: 2,2\nAB.\nCDE\nF.G\n", encoding="utf-8")
    code, out, err = run_cli(["dump", "klotski", path], capsys)
    assert code == 0, err
    doc = (ROOT / "docs" / "models" / "klotski.md").read_text(encoding="utf-8")
    assert "`A` may have any of the four shapes" in doc


# ============================================================================ model files
HEADER = '''from puzzleplan.lang import Act, CspModel, If, Model, Not, When


def parse(rec):
    return None


def build(data):
'''


def model_file(tmp_path: Path, body: str) -> tuple[Path, int | None]:
    """A model file whose build() is ``body``; the line marked ``# <-`` is the one to be named."""
    text = HEADER + body
    path = tmp_path / "user_model.py"
    path.write_text(text, encoding="utf-8")
    marked = [i for i, t in enumerate(text.splitlines(), start=1) if t.rstrip().endswith("# <-")]
    return path, marked[0] if marked else None


def instance(tmp_path: Path) -> Path:
    p = tmp_path / "inst.txt"
    p.write_text("anything\n", encoding="utf-8")
    return p


COUNTER = '''    m = Model("t")
    x = m.var("x", 0, 3, 0)
'''

MODEL_FILE_CASES = {
    # name: build() body; the line the error must name is marked
    "python-and": COUNTER + '''
    @m.action("inc")
    def inc():
        return Act(guard=(x < 3) and (x >= 0), effects={x: x + 1})  # <-

    m.goal(x == 3)
    return m
''',
    "python-if": COUNTER + '''
    if x > 2:  # <-
        pass
    m.goal(x == 3)
    return m
''',
    "python-not": COUNTER + '''
    m.goal(not (x == 3))  # <-
    return m
''',
    "chained-comparison": COUNTER + '''
    m.goal(0 < x < 3)  # <-
    return m
''',
    "duplicate-variable": COUNTER + '''
    m.var("x", 0, 3, 0)  # <-
    m.goal(x == 3)
    return m
''',
    "empty-domain": '''    m = Model("t")
    x = m.var("x", 3, 0, 0)  # <-
    m.goal(x == 3)
    return m
''',
    "initial-value-outside-domain": '''    m = Model("t")
    x = m.var("x", 0, 3, 7)  # <-
    m.goal(x == 3)
    return m
''',
    "huge-domain": '''    m = Model("t")
    x = m.var("x", 0, 10**30, 0)  # <-
    m.goal(x == 3)
    return m
''',
    "missing-goal": '''    m = Model("t")  # <-
    m.var("x", 0, 3, 0)
    return m
''',
    "bad-effect-target": COUNTER + '''
    @m.action("inc")  # <-
    def inc():
        return Act(guard=x < 3, effects={x + 1: x + 1})

    m.goal(x == 3)
    return m
''',
    "impossible-value": COUNTER + '''
    @m.action("jump")  # <-
    def jump():
        return Act(effects={x: x + 10})

    m.goal(x == 3)
    return m
''',
    "negative-cost": COUNTER + '''
    @m.action("inc")  # <-
    def inc():
        return Act(guard=x < 3, effects={x: x + 1}, cost=-1)

    m.goal(x == 3)
    return m
''',
    "state-dependent-negative-cost": COUNTER + '''
    @m.action("inc")  # <-
    def inc():
        return Act(guard=x < 3, effects={x: x + 1}, cost=x - 2)

    m.goal(x == 3)
    return m
''',
    "huge-constant-cost": COUNTER + '''
    @m.action("inc")  # <-
    def inc():
        return Act(guard=x < 3, effects={x: x + 1}, cost=10**30)

    m.goal(x == 3)
    return m
''',
    "huge-state-dependent-cost": COUNTER + '''
    @m.action("inc")  # <-
    def inc():
        return Act(guard=x < 3, effects={x: x + 1}, cost=x * 10**15)

    m.goal(x == 3)
    return m
''',
    "exception-in-guard": COUNTER + '''
    @m.action("inc", k=range(2))
    def inc(k):
        return Act(guard=x < 3 // k, effects={x: x + 1})  # <-

    m.goal(x == 3)
    return m
''',
    "float-in-effect": COUNTER + '''
    @m.action("inc")  # <-
    def inc():
        return Act(guard=x < 3, effects={x: 0.5})

    m.goal(x == 3)
    return m
''',
    "goal-over-another-models-variable": COUNTER + '''
    other = Model("other")
    y = other.var("y", 0, 5, 0)

    @m.action("inc")
    def inc():
        return Act(guard=x < 3, effects={x: x + 1})

    m.goal(y == 3)  # <-
    return m
''',
    "effect-on-another-models-variable": COUNTER + '''
    other = Model("other")
    y = other.var("y", 0, 5, 0)

    @m.action("inc")  # <-
    def inc():
        return Act(guard=x < 3, effects={y: x + 1})

    m.goal(x == 3)
    return m
''',
    "csp-duplicate-variable": '''    m = CspModel("c")
    m.var("a", 1, 3)
    m.var("a", 1, 3)  # <-
    return m
''',
    "csp-given-outside-domain": '''    m = CspModel("c")
    a = m.var("a", 1, 3)
    m.given(a, 9)  # <-
    return m
''',
    "csp-constraint-over-another-models-variable": '''    m = CspModel("c")
    a = m.var("a", 1, 3)
    other = CspModel("o")
    b = other.var("b", 1, 3)
    m.constraint(a != b, label="x")  # <-
    return m
''',
}


@pytest.mark.parametrize("case", sorted(MODEL_FILE_CASES))
def test_broken_model_file_names_its_line(tmp_path, capsys, case):
    path, line = model_file(tmp_path, MODEL_FILE_CASES[case])
    code, out, err = run_cli(["dump", path, instance(tmp_path)], capsys)
    msg = one_error_line(code, out, err, 32)
    assert named_line(msg, path) == line, msg


def test_python_logic_on_an_expression_says_what_to_use(tmp_path, capsys):
    path, _ = model_file(tmp_path, MODEL_FILE_CASES["python-and"])
    code, out, err = run_cli(["dump", path, instance(tmp_path)], capsys)
    msg = one_error_line(code, out, err, 32)
    assert all(w in msg for w in ("&", "|", "~", "If"))


def test_negative_heuristic_is_clamped_and_cpsat_solves(tmp_path, capsys):
    path, _ = model_file(tmp_path, COUNTER + '''
    @m.action("inc")
    def inc():
        return Act(guard=x < 3, effects={x: x + 1})

    m.goal(x == 3)
    m.heuristic(x - 5)
    return m
''')
    loaded = api.load_task(str(path), str(instance(tmp_path)))
    from puzzleplan.verify import reference as ref

    h = loaded.task.heuristic
    assert h is not None and all(ref.evaluate(h, [v]) >= 0 for v in range(4))
    code, out, err = run_cli(["solve", path, instance(tmp_path), "-e", "cpsat", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["cost"] == 3


def test_tasks_read_plain_variables_and_share_nodes():
    """A model's variables carry their model; the grounded task's do not, so two loads of one
    structure share their expression nodes (and a task's JSON node table rebuilds them)."""
    from puzzleplan.lang.expr import var

    a = api.load_task("klotski", f"{FAYAA}#fayaa-001").task
    b = api.load_task("klotski", f"{FAYAA}#fayaa-001").task
    assert a is not b and a.goal is b.goal and a.actions[0].guard is b.actions[0].guard
    nodes = walk([a.goal, a.heuristic] + [x.guard for x in a.actions])
    assert all(n is var(n.val) for n in nodes if n.op == "var")


# ---------------------------------------------------------------------------- all_different over expressions
QUEENS = '''    n = 6
    m = CspModel("queens")
    g = m.grid("q", 1, n, 0, n - 1)
    q = g[0]
    m.all_different(q, label="rows")
    m.all_different([q[r] + r for r in range(n)], label="diagonal")
    m.all_different([q[r] - r for r in range(n)], label="anti-diagonal")
    return m
'''


def test_all_different_over_expressions_n_queens(tmp_path, capsys):
    path, _ = model_file(tmp_path, QUEENS)
    for engine in ("backtrack", "cpsat", "sat"):
        code, out, err = run_cli(["solve", path, instance(tmp_path), "-e", engine, "--json"], capsys)
        assert code == 0, (engine, err)
        (q,) = json.loads(out)["solution"]
        assert len(set(q)) == 6
        assert len({v + r for r, v in enumerate(q)}) == 6 and len({v - r for r, v in enumerate(q)}) == 6
    code, out, err = run_cli(["solve", path, instance(tmp_path), "-e", "backtrack", "--count", "100",
                              "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["solutions"] == 4          # 6-queens has 4 solutions


def test_all_different_and_records_over_expressions():
    from puzzleplan.lang import CspModel

    m = CspModel("c")
    a = m.grid("a", 1, 3, 1, 3)[0]
    with pytest.raises(ModelError) as e:
        m.all_different([a[0] == 1, a[1] + 0, a[2] + 1])       # a boolean item
    assert e.value.file == __file__
    m.all_different([a[0] + 1, a[1], a[2]], label="d")
    assert [c.label for c in m.constraints] == ["d [0,1]", "d [0,2]", "d [1,2]"]
    m.records([a[0] + 1, a[1] + 1, a[2] + 1], 2, label="seen")
    assert m.constraints[-1].kind == "expr" and m.constraints[-1].label == "seen"
    m.records(a, 2, label="plain")
    assert m.constraints[-1].kind == "records"


def test_instance_errors_keep_their_code():
    assert InstanceError("x").code == 30 and ModelError("x").code == 32


def test_domain_escapes_lists_the_effects_that_can_leave_a_domain():
    """The one rule (docs/language.md): an applicable action leaving a domain is a model error;
    ``Task.domain_escapes`` gives engines that do not expand states the condition to rule out."""
    from puzzleplan.ir.task import ground
    from puzzleplan.lang import Act, Model

    m = Model("o")
    x = m.var("x", 0, 3, 0)
    y = m.var("y", 0, 1, 0)

    @m.action("up")
    def up():
        return Act(guard=y == 0, effects={x: x + 1})

    @m.action("safe")
    def safe():
        return Act(guard=x < 3, effects={y: 0})

    m.goal((x == 3) & (y == 1))
    task = ground(m)
    from puzzleplan.verify import reference as ref

    (esc,) = task.domain_escapes()
    assert task.actions[esc[0]].label == "up()"
    assert [s for s in range(4) if ref.evaluate(esc[2], [s, 0])] == [3]
    assert not ref.evaluate(esc[2], [3, 1])


def test_interned_nodes_outlive_a_garbage_collection():
    """Encoders cache per node by id(): nodes freed mid-run would hand their ids to new nodes.

    With weakly interned nodes, the records decomposition built inside the CNF encoder was freed and
    its ids reused: sat crashed and cpsat called a uniquely solvable skyscraper unsolvable.
    """
    import gc

    from puzzleplan import api
    from puzzleplan.solvers import Limits

    loaded = api.load_task("skyscraper", "instances/skyscraper/tatham-4x4-easy-1.txt")
    answers = {}
    for engine in ("backtrack", "sat", "cpsat"):
        gc.collect()
        r = api.solve(loaded, engine, Limits(60), count=2)
        answers[engine] = (r.status, r.solutions, r.assignment)
    assert answers["sat"] == answers["cpsat"] == answers["backtrack"]
    assert answers["backtrack"][:2] == ("solved", 1)
