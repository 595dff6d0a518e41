"""Fuzz: bad command-line values for every flag of solve, verify, show, dump, compile, generate
and models.

The property (issue 23, README "Exit codes"): a documented exit code, at most one line on stderr
of at most 300 characters (``puzzleplan: error: ...`` for codes 30 and up), and never a
traceback.  Where the outcome is certain the case names the exit codes it allows, so a value
that stops being refused (or starts being refused) fails here too.

Every value goes in as ``--flag=VALUE`` (or ``-OVALUE``), so a value that starts with ``-``
reaches the flag's own check instead of argparse's "expected one argument".  Searches that do
run use the 8-puzzle's easy start on the numpy kernel.  Engine options (``-E``) are left to the
engine registry's own tests.  About 300 cases by default; ``-m slow`` adds the full cross
product of values and flags, and hypothesis-drawn text for every numeric flag.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator

import pytest
from helpers import ROOT

from puzzleplan import cli

DOCUMENTED = {0, 10, 11, 12, 20, 21, 30, 31, 32, 33, 34, 35, 36}
EASY = str(ROOT / "instances" / "sliding" / "eight.txt") + "#eight-easy"
EIGHT = str(ROOT / "instances" / "sliding" / "eight.txt")
NUMPY = ["--kernel=numpy"]
OK_RUN = {0, 12}          # a search that ran: solved, or stopped at a limit
VERIFY_RUN = {0, 11, 12}  # verify with one engine: confirmed, unconfirmed, or a limit

# command prefixes that run quickly when every flag has a good value
BASE = {
    "solve": ["solve", "sliding", EASY, *NUMPY],
    "verify": ["verify", "sliding", EASY, *NUMPY, "--engines=bfs"],
    "show": ["show", "sliding", EASY],
    "show-plan": ["show", "sliding", EASY, "--plan="],
    "dump": ["dump", "sliding", EASY],
    "compile": ["compile", "sliding", EASY, "--to=cnf", "--horizon=2", "--output=@@out@@"],
    "generate": ["generate", "zpg", "--size=3x2", "--tries=2", "--time-limit=20"],
}

# ------------------------------------------------------------------ value corpora
# never a number: refused by every numeric flag
NOT_NUMBERS = ["abc", "", " ", "一", "😀", "\u202e5", "1,000", "0x10", "5 5", "1e", "--", "½", "five",
               "1\n2", "\t", "9" * 5000, "nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e400", "-1e400"]
NEGATIVE = ["-1", "-0.5", "-1e23", "-0", "0", "0.0"]
HUGE = ["1e23", str(10**23), str(2**63), str(2**64 + 1), "1e300"]
ODD_VALID = ["３", "٣", "1_0", "1e-300", " 7 ", "+2"]   # Python's float()/int() take these

# refused by a positive float (> 0 and finite)
POS_FLOAT_BAD = NOT_NUMBERS + NEGATIVE
# refused by a positive int: also fractions and huge floats that are not integers
POS_INT_BAD = NOT_NUMBERS + NEGATIVE + ["1.5", "1e-300", "0.5"]
SEED_BAD = NOT_NUMBERS + ["-1", "-5", str(cli.MAX_SEED + 1), "1e23", str(10**23), "1.5"]
INT_BAD = NOT_NUMBERS + ["1.5", "1e23"]   # plain type=int flags: no floats

NAMES = ["", " ", "nosuch", "BFS", "ｂｆｓ", "bfs ", "bfs,astar", "😀", "a" * 5000, "\n", "bfs\x1b[2J"]


PATH_KEYS = ("missing", "missing-dir", "dir", "empty", "binary", "latin1", "regular", "newline", "unicode",
             "long", "devnull", "empty-string", "out")
# cases name their odd paths by placeholder (stable test ids); each test puts the real paths in
P = {k: f"@@{k}@@" for k in PATH_KEYS}


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Odd paths: missing, directories, devices, binary and empty files, odd names."""
    tmp = tmp_path_factory.mktemp("fuzz-cli")
    d = tmp / "a-dir"
    d.mkdir()
    (tmp / "binary.bin").write_bytes(bytes(range(256)) * 4)
    (tmp / "empty.txt").write_bytes(b"")
    (tmp / "latin1.txt").write_bytes("size 3 3\ncaf\xe9\n".encode("latin-1"))
    (tmp / "regular.txt").write_text("x\n", encoding="utf-8")
    real = {"missing": tmp / "no-such-file.txt", "missing-dir": tmp / "no" / "such" / "x.txt", "dir": d,
            "empty": tmp / "empty.txt", "binary": tmp / "binary.bin", "latin1": tmp / "latin1.txt",
            "regular": tmp / "regular.txt", "newline": tmp / "a\nb.txt", "unicode": tmp / "ñ横😀.txt",
            "long": tmp / ("n" * 300), "devnull": os.devnull, "empty-string": "", "out": tmp / "out.cnf"}
    return {k: str(v) for k, v in real.items()}


def _fill(argv: list[str], paths: dict[str, str]) -> list[str]:
    out = []
    for a in argv:
        for k, v in paths.items():
            a = a.replace(P[k], v)
        out.append(a)
    return out


# ------------------------------------------------------------------ the property
def check(argv: list[str], allowed: set[int], capsys: pytest.CaptureFixture[str]) -> int:
    try:
        code = cli.main(argv)
    except SystemExit as e:          # argparse usage errors leave through SystemExit(31)
        code = e.code
    out, err = capsys.readouterr()
    shown = repr(argv)[:300]
    assert code in DOCUMENTED, (shown, code, err[-2000:])
    assert "Traceback" not in err and "Traceback" not in out, (shown, err[-3000:])
    lines = err.splitlines()
    assert len(lines) <= 1, (shown, err[:2000])
    if lines:
        assert len(lines[0]) <= cli.MAX_ERROR_CHARS, (shown, lines[0][:400])
    if code >= 30:
        assert lines and lines[0].startswith("puzzleplan: error: "), (shown, code, err[:500])
    assert code in allowed, (shown, code, err[:500])
    return code


def _flag(flag: str, value: str) -> list[str]:
    if flag.startswith("--"):
        return [f"{flag}={value}"]
    return [f"{flag}{value}"] if value else [flag, value]


# ------------------------------------------------------------------ cases
Case = tuple[str, list[str], set[int]]

# (command, flag, kind, codes allowed for a value the flag accepts)
NUMERIC = [
    ("solve", "--time-limit", "pos_float", OK_RUN),
    ("solve", "--max-states", "pos_int", OK_RUN),
    ("solve", "--max-memory", "pos_float", OK_RUN),
    ("solve", "--progress-every", "pos_float", {0}),
    ("solve", "--seed", "seed", {0}),
    ("solve", "--count", "pos_int", {0, 31}),            # not a constraint model: only --count 1 passes
    ("verify", "--time-limit", "pos_float", VERIFY_RUN),
    ("verify", "--max-states", "pos_int", VERIFY_RUN),
    ("show-plan", "--time-limit", "pos_float", OK_RUN),
    ("show", "--animate", "pos_float", {0}),
    ("compile", "--horizon", "int", {0, 31}),            # 1..10,000
    ("compile", "--max-cost", "int", {0, 31}),           # >= 0; above horizon x cost: clamped
    ("generate", "--min-moves", "int", {0, 12}),
    ("generate", "--max-moves", "int", {0, 12, 31}),     # below --min-moves: 31
    ("generate", "--seed", "seed", {0, 12}),
    ("generate", "--tries", "pos_int", {0, 12}),
    ("generate", "--time-limit", "pos_float", {0, 12}),
]

REFUSED = {"pos_float": POS_FLOAT_BAD, "pos_int": POS_INT_BAD, "seed": SEED_BAD, "int": INT_BAD}
ACCEPTED = {"pos_float": HUGE + ODD_VALID, "pos_int": HUGE[:4] + ["1e6", "３", "+2", " 7 "],
            "seed": ["0", str(cli.MAX_SEED), "３", "+2"],
            "int": ["0", "-1", "３", str(10**30), str(2**63)]}


def numeric_cases(full: bool) -> Iterator[Case]:
    """Every refused and accepted value for every numeric flag (slow run), or a different slice of
    five refused values and two accepted ones per flag (default run), so the default run still
    meets every value of the corpus on some flag."""
    for i, (command, flag, kind, ok) in enumerate(NUMERIC):
        refused, accepted = REFUSED[kind], ACCEPTED[kind]
        if not full:
            refused = [refused[(5 * i + j) % len(refused)] for j in range(5)]
            accepted = [accepted[(2 * i + j) % len(accepted)] for j in range(2)]
        for v in dict.fromkeys(refused):
            yield f"{command} {flag}={v[:20]!r}", BASE[command] + _flag(flag, v), {31}
        for v in dict.fromkeys(accepted):
            yield f"{command} {flag}={v[:20]!r} (accepted)", BASE[command] + _flag(flag, v), ok


def choice_cases() -> Iterator[Case]:
    for command in ("solve", "verify"):
        for v in ["", "numbaa", "NUMPY", "ｎｕｍｐｙ", "numpy "]:
            yield f"{command} --kernel={v!r}", BASE[command] + [f"--kernel={v}"], {31}
    for v in ["", "jpg", "SVG", "text ", "😀"]:
        yield f"show --format={v!r}", BASE["show"] + [f"--format={v}"], {31}
    for v in ["", "moves", "STEP"]:
        yield f"show --frames={v!r}", BASE["show"] + [f"--frames={v}"], {31}
    for v in ["", "CNF", "dimacs", "pddl ", "😀", "sat"]:
        argv = ["compile", "sliding", EASY, f"--to={v}", "--horizon=2", "-o@@out@@"]
        yield f"compile --to={v!r}", argv, {31}


def name_cases() -> Iterator[Case]:
    for v in NAMES:
        yield f"solve --engine={v[:20]!r}", BASE["solve"] + [f"--engine={v}"], {33}
        yield f"show --engine={v[:20]!r} --plan", ["show", "sliding", EASY, f"--engine={v}", "--plan="], {33}
        yield f"generate --engine={v[:20]!r}", BASE["generate"] + [f"--engine={v}"], {33}
    for v in ["", ",", ",,", "nosuch", "bfs,nosuch", "ｂｆｓ", "😀", "a" * 5000, "bfs;astar", "\n"]:
        yield f"verify --engines={v[:20]!r}", ["verify", "sliding", EASY, *NUMPY, f"--engines={v}"], {31, 33}
    argv = ["verify", "sliding", EASY, *NUMPY, "--engines=bfs,,astar"]   # the empty name is skipped
    yield "verify --engines='bfs,,astar' (accepted)", argv, VERIFY_RUN


OPTION_VALUES = ["", "=", "noequals", "=v", "heuristic=", "heuristic=nosuch", "nosuch=1",
                 "héuristic=manhattan", "heuristic=" + "x" * 5000, "heuristic=manhattan=1", "\n=\n", "😀=😀"]


def option_cases(full: bool) -> Iterator[Case]:
    values = OPTION_VALUES if full else OPTION_VALUES[:8]
    for command in ("solve", "verify", "show", "dump", "compile"):
        for v in values:
            yield f"{command} -O {v[:20]!r}", BASE[command] + _flag("-O", v), {31}
    for v in values[:6]:
        yield f"generate -O {v[:20]!r}", BASE["generate"] + _flag("-O", v), {31}
    for v in ["", "=", "rocks", "rocks=abc", "nosuch=1", "rocks=nan", "rocks=inf", "rocks=1e308",
              "leaves=1e30", "ornaments=99", "=1", "😀=1"]:
        yield f"generate -G {v!r}", BASE["generate"] + _flag("-G", v), {31}
    yield "generate -G ornaments=-1 (accepted)", BASE["generate"] + ["-G", "ornaments=-1"], {0, 12}


def size_cases() -> Iterator[Case]:
    for v in ["", "x", "6", "3x3x3", "-3x3", "3x-3", "3.5x2", "0x3", "3x0", "65x2", "2x65", "99999x99999",
              "1e3x2", "３x3", "٣x3", "3 x 3 x", "😀", "9" * 5000 + "x2", "x3", "3x"]:
        yield f"generate --size={v[:20]!r}", ["generate", "zpg", f"--size={v}"], {31}
    yield "generate --size=3X2 (accepted)", ["generate", "zpg", "--size=3X2", "--tries=2"], {0, 12}
    yield "generate --size=3×2 (accepted)", ["generate", "zpg", "--size=3×2", "--tries=2"], {0, 12}


def path_cases() -> Iterator[Case]:
    p = P
    # MODEL: a bundled name or a path; anything else is 32
    for key in ("missing", "dir", "empty", "binary", "devnull", "newline", "unicode", "long", "empty-string"):
        for command in ("solve", "dump"):
            argv = [command, p[key], EASY, *(NUMPY if command == "solve" else [])]
            yield f"{command} MODEL={key}", argv, {32}
    for v in ["nosuch", "KLOTSKI", "sliding.py", "😀", "a" * 5000, "../sliding", "sliding\n"]:
        yield f"dump MODEL={v[:20]!r}", ["dump", v, EASY], {32}
    yield "generate MODEL=sliding (no generate())", ["generate", "sliding", "--size=3x3"], {32}
    yield "generate MODEL=dir", ["generate", p["dir"], "--size=3x3"], {32}
    # INSTANCE: missing, a directory, empty, binary, not UTF-8, odd names, bad record ids
    instances = [p[k] for k in ("missing", "dir", "empty", "binary", "latin1", "devnull", "newline",
                                "unicode", "long", "empty-string", "missing-dir")]
    instances += ["#", "#eight-easy", f"{EIGHT}#nosuch", f"{EIGHT}#0", f"{EIGHT}#-1", f"{EIGHT}#{'9' * 400}",
                  f"{EIGHT}#😀", f"{EIGHT}#eight-easy#x", f"{p['dir']}#1"]
    for inst in instances:
        yield f"dump INSTANCE={inst[-30:]!r}", ["dump", "sliding", inst], {30}
    yield "dump INSTANCE=FILE# (accepted)", ["dump", "sliding", f"{EIGHT}#"], {0}  # = the first record
    for inst in instances[:4]:
        for command in ("solve", "verify", "show", "compile"):
            argv = [*BASE[command][:2], inst, *BASE[command][3:]]
            yield f"{command} INSTANCE={inst[-30:]!r}", argv, {30}
    # --plan FILE
    for key in ("missing", "dir", "empty", "binary", "latin1", "devnull", "newline", "regular", "long"):
        yield f"show --plan={key}", ["show", "sliding", EASY, f"--plan={p[key]}"], {34}
        yield f"show --format=svg --plan={key}", [*BASE["show"], "--format=svg", f"--plan={p[key]}"], {34}


def output_cases() -> Iterator[Case]:
    p = P
    cpsat = ["compile", "sliding", EASY, "--to=cpsat", "--horizon=2"]
    for out in (p["missing-dir"], p["dir"], "/proc/version", "/dev/full", p["empty-string"]):
        name = out[-25:]
        empty = out == p["empty-string"]
        for fmt in ("svg", "png"):   # png without a file name: "give -o FILE"
            argv = [*BASE["show"], f"--format={fmt}", f"--output={out}"]
            yield f"show --format={fmt} -o {name!r}", argv, {31} if empty and fmt == "png" else {35}
        argv = [*BASE["show-plan"], "--format=gif", f"--output={out}"]
        yield f"show --plan --format=gif -o {name!r}", argv, {31} if empty else {35}
        yield f"compile cnf -o {name!r}", [*BASE["compile"][:-1], f"--output={out}"], {31} if empty else {35}
        yield f"compile cpsat -o {name!r}", [*cpsat, f"--output={out}"], {31} if empty else {35}
        yield f"generate --out={name!r}", [*BASE["generate"], f"--out={out}"], {0} if empty else {35}
    for out in (p["regular"], p["missing-dir"], "/proc/version", p["empty-string"], " "):
        argv = ["compile", "sliding", EASY, "--to=pddl", f"--output={out}"]
        yield f"compile pddl -o {out[-25:]!r}", argv, {31} if out in (p["empty-string"], " ") else {35}
    for out in (p["missing-dir"].replace(".txt", ".png"), p["dir"], p["regular"], "/proc/version"):
        yield f"solve --layers-plot={out[-25:]!r}", [*BASE["solve"], f"--layers-plot={out}"], {31, 35}
    pddl = ["compile", "sliding", EASY, "--to=pddl", f"--output={p['dir']}"]
    yield "compile pddl with --horizon", [*pddl, "--horizon=3"], {31}
    yield "compile pddl with --max-cost", [*pddl, "--max-cost=3"], {31}
    yield "compile cnf without --horizon", ["compile", "sliding", EASY, "--to=cnf", "--output=@@out@@"], {31}


def usage_cases() -> Iterator[Case]:
    for argv in ([], ["--nosuch"], ["nosuch"], ["solve"], ["solve", "sliding"], ["models", "extra"],
                 ["models", "--nosuch"], ["dump", "sliding", EASY, "--json=yes"],
                 ["show", "sliding", EASY, "-f"],
                 ["solve", "sliding", EASY, "--enumerate", "--engine=astar", *NUMPY],
                 ["solve", "sliding", EASY, "--time-limit"], ["generate", "zpg"],
                 ["compile", "sliding", EASY], ["verify", "sliding", EASY, "--engines"], ["😀"],
                 ["solve", "sliding", EASY, "--kernel"], ["solve", "sliding", EASY, "--time-limit=--"],
                 ["generate", "zpg", "--size=3x2", "--seed=--"]):
        yield f"usage {' '.join(a[-12:] for a in argv)!r}", list(argv), {31}
    yield "models", ["models"], {0}


def verify_and_certificate_cases() -> Iterator[Case]:
    """The flags verify and the certificates brought: --jobs, --count, --certificate, check-certificate."""
    p = P
    run = ["verify", "sliding", EASY, "--engines=bfs,astar", *NUMPY]
    for v in ("0", "-1", "abc", "nan", "1e400", ""):
        yield f"verify --jobs={v!r}", [*run, f"--jobs={v}"], {31}
        yield f"verify --count={v!r}", [*run, f"--count={v}"], {31}
    yield "verify --jobs=2", [*run, "--jobs=2"], VERIFY_RUN
    yield "verify --count=2 on a transition model", [*run, "--count=2"], {31}
    yield "verify --max-memory=nan", [*run, "--max-memory=nan"], {31}
    yield "verify idastar with --kernel numpy", ["verify", "sliding", EASY, "--engines=idastar", *NUMPY], {31}
    for key, codes in (("missing-dir", VERIFY_RUN), ("dir", VERIFY_RUN), ("regular", {35}),
                       ("empty-string", {31})):
        yield f"verify --certificate={key}", [*run, f"--certificate={p[key]}"], codes
    yield "verify --certificate=/proc/version", [*run, "--certificate=/proc/version"], {35}
    for key in ("missing", "dir", "empty", "binary", "latin1", "regular", "devnull", "unicode", "newline"):
        yield f"check-certificate {key}", ["check-certificate", "sliding", EASY, p[key]], {30}
    for out in (p["missing-dir"], "/proc/version", p["dir"]):
        yield f"solve --certificate={out[-25:]!r}", [*BASE["solve"], f"--certificate={out}"], {35}


def _sample(cases: Iterator[Case], full: bool) -> Iterator[Case]:
    """All cases (slow run), or a stable half of them chosen by name (default run)."""
    return (c for c in cases if full or zlib.crc32(c[0].encode()) % 100 < 45)


def all_cases(full: bool) -> list[Case]:
    sampled = (choice_cases(), name_cases(), option_cases(full), size_cases(), path_cases())
    return [*numeric_cases(full), *(c for g in sampled for c in _sample(g, full)), *output_cases(),
            *usage_cases(), *verify_and_certificate_cases()]


DEFAULT = {name: (argv, allowed) for name, argv, allowed in all_cases(False)}
SLOW = {name: case for name, *case in all_cases(True) if name not in DEFAULT}


def run_case(argv: list[str], allowed: set[int], paths: dict[str, str],
             capsys: pytest.CaptureFixture[str]) -> None:
    for device in ("/proc/version", "/dev/full"):
        if any(device in a for a in argv) and not os.path.exists(device):
            pytest.skip(f"no {device} here")
    check(_fill(argv, paths), allowed, capsys)


@pytest.mark.parametrize("name", list(DEFAULT))
def test_bad_cli_value(name: str, paths: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    run_case(*DEFAULT[name], paths, capsys)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SLOW))
def test_bad_cli_value_full(name: str, paths: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    argv, allowed = SLOW[name]
    run_case(argv, allowed, paths, capsys)


def test_the_default_run_is_large_enough() -> None:
    names = [name for name, _, _ in all_cases(False)]
    assert len(names) == len(set(names)), "case names must be unique"
    assert len(names) >= 200


# ------------------------------------------------------------------ hypothesis: any text, every numeric flag
@pytest.mark.slow
@pytest.mark.parametrize("command, flag, kind, ok", NUMERIC, ids=[f"{c} {f}" for c, f, _, _ in NUMERIC])
def test_any_text_for_a_numeric_flag(command: str, flag: str, kind: str, ok: set[int],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    from hypothesis import HealthCheck, assume, given, settings
    from hypothesis import strategies as st

    numberish = st.from_regex(r"\A[-+]?[0-9]{0,30}(\.[0-9]*)?(e[-+]?[0-9]{1,4})?\Z")
    text = st.one_of(st.text(max_size=30), numberish)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(text.filter(lambda s: "\x00" not in s))
    def run(value: str) -> None:
        if flag == "--horizon":   # a valid horizon near 10,000 writes a formula for minutes
            try:
                assume(int(value) <= 50)
            except ValueError:
                pass
        check(BASE[command] + _flag(flag, value), ok | {31}, capsys)

    run()
