"""Fuzzing malformed instances for every bundled model, and broken model files (issue 23).

The property, for every input: ``puzzleplan dump`` (no search, no compile: fast) returns a
documented exit code (0, or 30 for an instance, 32 for a model file), prints at most one line on
stderr, at most 300 characters long, naming the file (and its line where the input has one),
and never a traceback.  The corpora are seeded, so a failure reproduces; ``-m slow`` runs ten
times as many cases.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from helpers import run_cli
from test_hardening_inputs import HEADER, SEEDS

DOCUMENTED = {0, 10, 12, 30, 31, 32, 33, 34, 35}
ODD = ["\ufeff", "²", "٣", "\u200b", "\u00a0", "\u0301", "\t", "\r", "\x0c", "\u2028", "𝟘", "Ａ", "\x7f",
       "-", "+", "#", ":", ";", " ", "", "\\", "'", '"', "é", "中"]
NUMBERS = ["-1", "0", "-0", "99999999999999999999", "9" * 5000, "1e9", "1_0", "0x10", "+3", "3.0", "NaN"]


def check(code: int, out: str, err: str, path: Path, line_expected: bool = False) -> None:
    assert "Traceback" not in err and "Traceback" not in out, err[-2000:]
    assert code in DOCUMENTED, (code, err[-2000:])
    lines = err.splitlines()
    if code in (0, 10, 12):
        assert not lines, err[:1000]
        return
    assert len(lines) == 1, err[:2000]
    assert len(lines[0]) <= 300, lines[0]
    assert lines[0].startswith("puzzleplan: error: "), lines[0]
    assert str(path) in lines[0], lines[0]
    if line_expected:
        assert re.search(re.escape(str(path)) + r":\d+: ", lines[0]), lines[0]


# ---------------------------------------------------------------------------- instance mutations
def _mutate(text: str, rng: random.Random) -> tuple[bytes, str]:
    """One random corruption of an instance text; returns the bytes and what was done."""
    lines = text.splitlines()
    kind = rng.choice(["truncate", "byteflip", "odd", "number", "drop-line", "dup-line", "swap-lines",
                       "long-line", "resize", "replace-char", "blank-middle"])
    if kind == "truncate":
        cut = rng.randrange(len(text) + 1)
        return text[:cut].encode("utf-8"), kind
    if kind == "byteflip":
        data = bytearray(text.encode("utf-8"))
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data), kind
    if kind == "odd":
        i = rng.randrange(len(text) + 1)
        return (text[:i] + rng.choice(ODD) + text[i:]).encode("utf-8"), kind
    if kind == "number":
        spots = [m.span() for m in re.finditer(r"[0-9]+", text)]
        if spots:
            a, b = rng.choice(spots)
            return (text[:a] + rng.choice(NUMBERS) + text[b:]).encode("utf-8"), kind
        return (rng.choice(NUMBERS) + "\n" + text).encode("utf-8"), kind
    if kind == "drop-line" and len(lines) > 1:
        del lines[rng.randrange(len(lines))]
    elif kind == "dup-line":
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    elif kind == "swap-lines" and len(lines) > 1:
        i, j = rng.sample(range(len(lines)), 2)
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "long-line":
        i = rng.randrange(len(lines))
        lines[i] = lines[i] + rng.choice(["#", ".", "9", "x", " "]) * rng.choice([50, 5000, 200_000])
    elif kind == "resize":
        i = rng.randrange(len(lines))
        lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)] if rng.random() < 0.5 else lines[i] * 2
    elif kind == "replace-char":
        i = rng.randrange(len(lines))
        if lines[i]:
            j = rng.randrange(len(lines[i]))
            lines[i] = lines[i][:j] + rng.choice(ODD + list("#.$*@+ABCDZz0123456789")) + lines[i][j + 1:]
    elif kind == "blank-middle":
        lines.insert(rng.randrange(len(lines) + 1), "")
    return ("\n".join(lines) + "\n").encode("utf-8"), kind


def _instance_cases(n_per_model: int, seed: int) -> list[tuple[str, int]]:
    return [(model, seed * 100_003 + k) for model in sorted(SEEDS) for k in range(n_per_model)]


def _run_instance_case(tmp_path: Path, capsys, model: str, case_seed: int) -> None:
    rng = random.Random(case_seed)
    text = SEEDS[model]
    for _ in range(rng.choice([1, 1, 2, 3])):
        data, _kind = _mutate(text, rng)
        text = data.decode("utf-8", errors="replace")
    path = tmp_path / f"fuzz-{model}.txt"
    path.write_bytes(data)
    arg = str(path)
    if rng.random() < 0.15:
        arg += "#" + rng.choice(["nope", "²", "0", "-1", "99", "1", "", "x#y", "9" * 40])
    code, out, err = run_cli(["dump", model, arg], capsys)
    check(code, out, err, path)


# 8 models x 30 = 240 instance cases by default (about 10 s)
@pytest.mark.parametrize("model, case_seed", _instance_cases(30, 1))
def test_fuzzed_instance(tmp_path, capsys, model, case_seed):
    _run_instance_case(tmp_path, capsys, model, case_seed)


@pytest.mark.slow
@pytest.mark.parametrize("model, case_seed", _instance_cases(300, 2))
def test_fuzzed_instance_many(tmp_path, capsys, model, case_seed):
    _run_instance_case(tmp_path, capsys, model, case_seed)


@pytest.mark.parametrize("model", sorted(SEEDS))
@pytest.mark.parametrize("what", ["empty", "binary", "nul", "only-bom", "directory", "missing"])
def test_degenerate_instance_files(tmp_path, capsys, model, what):
    path = tmp_path / "d.txt"
    if what == "empty":
        path.write_bytes(b"")
    elif what == "binary":
        path.write_bytes(bytes(range(256)) * 4)
    elif what == "nul":
        path.write_bytes(SEEDS[model].encode("utf-8").replace(b"\n", b"\n\x00", 1))
    elif what == "only-bom":
        path.write_bytes(b"\xef\xbb\xbf\n")
    elif what == "directory":
        path.mkdir()
    code, out, err = run_cli(["dump", model, path], capsys)
    assert code == 30, err
    check(code, out, err, path)


# ---------------------------------------------------------------------------- broken model files
GOOD_BODY = '''    m = Model("t")
    x = m.var("x", 0, 3, 0)
    y = m.var("y", 0, 1, 0)

    @m.action("inc", k=range(2))
    def inc(k):
        return Act(guard=(x < 3) & (y == 0), effects={x: x + 1}, cost=1 + k)

    @m.action("flip")
    def flip():
        return Act(guard=x == 3, effects={y: 1 - y}, when=[When(y == 0, {x: 3})])

    m.goal((x == 3) & (y == 1))
    m.heuristic(3 - x)
    return m
'''

# replacements applied to GOOD_BODY: each breaks it in one way a model author might
BREAKS = [
    ("(x < 3) & (y == 0)", "(x < 3) and (y == 0)"), ("(x < 3) & (y == 0)", "x < 3 or y == 0"),
    ("(x < 3) & (y == 0)", "not x"), ("(x < 3) & (y == 0)", "0 <= x < 3"),
    ("(x < 3) & (y == 0)", "x"), ("(x < 3) & (y == 0)", "1 / 0"), ("(x < 3) & (y == 0)", "x < 3.5"),
    ("(x < 3) & (y == 0)", "[x]"), ("(x < 3) & (y == 0)", "None"), ("(x < 3) & (y == 0)", "'yes'"),
    ("cost=1 + k", "cost=-1"), ("cost=1 + k", "cost=10**40"), ("cost=1 + k", "cost=x * 10**12"),
    ("cost=1 + k", "cost=x - 5"), ("cost=1 + k", "cost=1.5"), ("cost=1 + k", "cost=y == 0"),
    ("cost=1 + k", "cost=1 // k"), ("effects={x: x + 1}", "effects={x + 1: x}"),
    ("effects={x: x + 1}", "effects=[x]"), ("effects={x: x + 1}", "effects={x: x + 100}"),
    ("effects={x: x + 1}", "effects={x: x > 1}"), ("effects={x: x + 1}", "effects={x: 'a'}"),
    ("effects={x: x + 1}", "effects={3: 1}"), ("when=[When(y == 0, {x: 3})]", "when=[(y, x)]"),
    ("when=[When(y == 0, {x: 3})]", "when=5"), ("when=[When(y == 0, {x: 3})]", "when=[When(x, {x: 3})]"),
    ('m.var("x", 0, 3, 0)', 'm.var("x", 0, 10**30, 0)'), ('m.var("x", 0, 3, 0)', 'm.var("x", 3, 0, 0)'),
    ('m.var("x", 0, 3, 0)', 'm.var("x", 0, 3, 9)'), ('m.var("x", 0, 3, 0)', 'm.var("x", 0, 3.5, 0)'),
    ('m.var("x", 0, 3, 0)', 'm.var("x", 0, "3", 0)'), ('m.var("y", 0, 1, 0)', 'm.var("x", 0, 1, 0)'),
    ('m.var("x", 0, 3, 0)', 'm.var("x", -2**62, 2**62, 0)'),
    ("    m.goal((x == 3) & (y == 1))\n", ""), ("m.goal((x == 3) & (y == 1))", "m.goal(x)"),
    ("m.goal((x == 3) & (y == 1))", "m.goal(Model('o').var('z', 0, 5, 0) == 3)"),
    ("m.goal((x == 3) & (y == 1))", "m.goal('done')"), ("m.heuristic(3 - x)", "m.heuristic(x == 3)"),
    ("m.heuristic(3 - x)", "m.heuristic(x - 10**6)"), ("m.heuristic(3 - x)", "m.heuristic(3.5)"),
    ("return m\n", "return None\n"), ("return m\n", "return 42\n"),
    ('@m.action("inc", k=range(2))', '@m.action("inc", k=5)'),
    ('@m.action("flip")', '@m.action("flip", j=range(1))'),
    ("    return m\n", "    m.walks('nothing')\n    return m\n"),
    ("    return m\n", "    m.interchangeable([(x + 1,), (y,)])\n    return m\n"),
    ("    return m\n", "    m.interchangeable([(x,), (y,)])\n    return m\n"),
    ("    return m\n", "    m.aux_bound(-1)\n    return m\n"),
    ("    return m\n", "    raise RuntimeError('x' * 100000)\n"),
    ("    return m\n", "    raise ValueError('line one\\nline two')\n"),
    ("    return m\n", "    return build(data)\n"),
]


def _model_case(tmp_path: Path, body: str) -> tuple[Path, Path]:
    path = tmp_path / "broken_model.py"
    path.write_text(HEADER + body, encoding="utf-8")
    inst = tmp_path / "inst.txt"
    inst.write_text("x\n", encoding="utf-8")
    return path, inst


def test_the_unbroken_model_file_works(tmp_path, capsys):
    path, inst = _model_case(tmp_path, GOOD_BODY)
    code, out, err = run_cli(["solve", path, inst, "-e", "ucs", "--kernel", "numpy"], capsys)
    assert code == 0, err


@pytest.mark.parametrize("old, new", BREAKS, ids=[f"{i}" for i in range(len(BREAKS))])
def test_broken_model_file(tmp_path, capsys, old, new):
    assert old in GOOD_BODY
    path, inst = _model_case(tmp_path, GOOD_BODY.replace(old, new, 1))
    code, out, err = run_cli(["dump", path, inst], capsys)
    check(code, out, err, path, line_expected=code == 32 and "return build(data)" not in new)


def _random_break(rng: random.Random) -> str:
    body = GOOD_BODY
    for _ in range(rng.randint(1, 3)):
        old, new = rng.choice(BREAKS)
        body = body.replace(old, new, 1)
    return body


@pytest.mark.parametrize("case_seed", range(20))
def test_randomly_broken_model_file(tmp_path, capsys, case_seed):
    path, inst = _model_case(tmp_path, _random_break(random.Random(case_seed)))
    code, out, err = run_cli(["dump", path, inst], capsys)
    check(code, out, err, path)


@pytest.mark.slow
@pytest.mark.parametrize("case_seed", range(1000, 1300))
def test_randomly_broken_model_file_many(tmp_path, capsys, case_seed):
    path, inst = _model_case(tmp_path, _random_break(random.Random(case_seed)))
    code, out, err = run_cli(["dump", path, inst], capsys)
    check(code, out, err, path)
