"""Issue 23, "Command line" and "Security": each finding's input as a regression test.

Every error is checked for the CLI's contract: a documented exit code, exactly one line on
stderr, no traceback.  Searches use the numpy kernel on the 8-puzzle's easy start (fast).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT, run_cli

from puzzleplan import cli
from puzzleplan.encodings import compiled
from puzzleplan.lang.errors import PuzzleError
from puzzleplan.solvers.result import MAX_COUNT, MAX_FLOAT, positive

EASY = str(ROOT / "instances" / "sliding" / "eight.txt") + "#eight-easy"
NUMPY = ["--kernel", "numpy"]


def one_line_error(err: str, fragment: str = "") -> str:
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("puzzleplan: error: "), err
    assert len(lines[0]) <= cli.MAX_ERROR_CHARS
    assert fragment in lines[0], err
    return lines[0]


def expect(argv: list[str], code: int, capsys: pytest.CaptureFixture[str], fragment: str = "") -> str:
    got, _, err = run_cli(argv, capsys)
    assert got == code, err
    return one_line_error(err, fragment)


# ------------------------------------------------------------------ outputs that refuse writes
needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


@needs_dev_full
@pytest.mark.parametrize("argv", [
    ["show", "sliding", EASY],
    ["dump", "sliding", EASY],
    ["dump", "sliding", EASY, "--json"],
    ["solve", "sliding", EASY, *NUMPY],
    ["solve", "sliding", EASY, *NUMPY, "--json"],
    ["show", "sliding", EASY, "--format", "svg"],
    ["models"],
    ["--help"],
])
def test_stdout_on_a_full_disk_is_exit_35(argv: list[str], capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    with open("/dev/full", "w") as full:
        monkeypatch.setattr(sys, "stdout", full)
        code = cli.main(argv)
        monkeypatch.undo()
    assert code == 35
    one_line_error(capsys.readouterr().err, "cannot write standard output: No space left on device")


@needs_dev_full
@pytest.mark.parametrize("argv", [["show", "sliding", EASY], ["--help"]])
def test_stdout_on_a_full_disk_as_a_process(argv: list[str]) -> None:
    """The real thing: no second complaint from the interpreter's flush of stdout at exit, and no
    silent exit 0 from argparse, which swallows the error of writing its help."""
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "puzzleplan.cli", *argv], stdout=full,
                           stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 35
    one_line_error(p.stderr, "No space left on device")


@needs_dev_full
@pytest.mark.parametrize("to", ["cnf", "cpsat"])
def test_compile_into_dev_full_is_exit_35(to: str, capsys: pytest.CaptureFixture[str]) -> None:
    expect(["compile", "sliding", EASY, "--to", to, "-T", "2", "-o", "/dev/full"], 35, capsys, "/dev/full")


@pytest.mark.skipif(not os.path.exists("/proc/version"), reason="needs /proc")
@pytest.mark.parametrize("argv", [
    ["compile", "sliding", EASY, "--to", "cnf", "-T", "2", "-o", "/proc/version"],
    ["compile", "sliding", EASY, "--to", "pddl", "-o", "/proc/version"],
    ["show", "sliding", EASY, "--format", "svg", "-o", "/proc/version"],
])
def test_outputs_into_proc_version_are_exit_35(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """As root /proc/version opens for writing and refuses the data at close (EIO)."""
    expect(argv, 35, capsys, "/proc/version")


def test_generate_out_into_a_missing_directory_is_refused_before_searching(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no" / "such" / "dir" / "x.txt"
    expect(["generate", "zpg", "--size", "4x3", "--out", str(missing)], 35, capsys, "no such directory")
    expect(["generate", "zpg", "--size", "4x3", "--out", str(tmp_path)], 35, capsys, "is a directory")


@needs_dev_full
def test_generate_out_on_a_full_disk_is_exit_35(capsys: pytest.CaptureFixture[str]) -> None:
    expect(["generate", "zpg", "--size", "4x3", "--min-moves", "3", "--max-moves", "4", "--seed", "1",
            "--out", "/dev/full"], 35, capsys, "No space left on device")


# ------------------------------------------------------------------ numbers that are not limits
@pytest.mark.parametrize("flag", ["--time-limit", "--max-memory", "--progress-every"])
@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "Infinity", "1e400"])
def test_non_finite_limits_are_exit_31(flag: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    expect(["solve", "sliding", EASY, *NUMPY, flag, value], 31, capsys, "must be a finite number")


def test_positive_converter() -> None:
    as_int, as_float = positive(int), positive(float)
    assert as_int("12") == 12 and as_int("1e6") == 10**6
    assert as_int(str(10**23)) == MAX_COUNT and as_int("1e23") == MAX_COUNT
    assert as_float("0.25") == 0.25
    assert as_float("1e23") == MAX_FLOAT   # a timer of 1e23 s overflows time_t
    import argparse

    for bad in ("0", "-3", "1.5", "nan", "inf", "", "x", "9" * 5000):
        with pytest.raises(argparse.ArgumentTypeError):
            as_int(bad)
    for bad in ("0", "-0.0", "nan", "-inf", "inf", "1e999", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            as_float(bad)


@pytest.mark.parametrize("value", ["1e23", str(10**23), str(2**63), str(2**64 + 1)])
def test_huge_max_states_means_no_limit(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["solve", "sliding", EASY, *NUMPY, "--max-states", value, "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["status"] == "optimal"


@pytest.mark.parametrize("flag", ["--time-limit", "--max-memory", "--progress-every"])
def test_huge_seconds_and_megabytes_mean_no_limit(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["solve", "sliding", EASY, *NUMPY, f"{flag}=1e23", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["status"] == "optimal"


def test_huge_max_states_with_the_compiled_bfs(capsys: pytest.CaptureFixture[str]) -> None:
    """The input of the report: 10**23 overflowed a C long inside the compiled bfs loop."""
    code, out, err = run_cli(["solve", "sliding", EASY, "--max-states", str(10**23), "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["status"] == "optimal"


@pytest.mark.parametrize("value", ["-1", "-5", str(cli.MAX_SEED + 1), str(10**23), "1.5", "x", ""])
@pytest.mark.parametrize("command", [["solve", "zpg", "instances/zpg/suite-mix-03.txt", "-e", "ga"],
                                     ["generate", "zpg", "--size", "4x3"]])
def test_seeds_outside_what_engines_accept_are_exit_31(command: list[str], value: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    expect([*command, f"--seed={value}"], 31, capsys, "--seed")


def test_largest_seed_runs_ga(capsys: pytest.CaptureFixture[str]) -> None:
    """The top of the range reaches numpy's RandomState (one small generation, numpy kernel)."""
    code, out, err = run_cli(["solve", "zpg", str(ROOT / "instances/zpg/suite-mix-03.txt"), "-e", "ga",
                              *NUMPY, "-E", "generations=1", "-E", "population=20",
                              "--seed", str(cli.MAX_SEED), "--json"], capsys)
    assert "Traceback" not in err
    assert code in (0, 12), err
    doc = json.loads(out)
    assert doc["engine"] == "ga" and doc["stats"]["evaluations"] > 0


# ------------------------------------------------------------------ generate --size
@pytest.mark.parametrize("size", ["99999x99999", "65x2", "2x65", "0x3", "3x0", "1000000x1"])
def test_absurd_sizes_are_refused_up_front(size: str, capsys: pytest.CaptureFixture[str]) -> None:
    expect(["generate", "zpg", "--size", size], 31, capsys, "each side must be between 1 and 64")


@pytest.mark.parametrize("size", ["6", "x", "3x3x3", "-3x3", "３x3", "3.5x2", "", "٣x3"])
def test_malformed_sizes_are_exit_31(size: str, capsys: pytest.CaptureFixture[str]) -> None:
    expect(["generate", "zpg", f"--size={size}"], 31, capsys, "--size")


def test_size_cap_is_documented(capsys: pytest.CaptureFixture[str]) -> None:
    from puzzleplan.generate import MAX_SIDE, parse_size

    assert parse_size("64x64") == (64, 64) and parse_size("6×5") == (6, 5)
    code, help_text, _ = run_cli(["generate", "--help"], capsys)
    assert code == 0
    assert f"1..{MAX_SIDE}" in " ".join(help_text.split())
    assert f"{MAX_SIDE} per side" in (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("param", ["rocks=nan", "rocks=inf", "rocks=1e308", "rocks=-inf", "ornaments=1e30"])
def test_generator_parameters_that_break_the_generator_are_exit_31(
        param: str, capsys: pytest.CaptureFixture[str]) -> None:
    expect(["generate", "zpg", "--size", "4x3", "-G", param], 31, capsys)


def test_max_moves_below_min_moves_is_exit_31(capsys: pytest.CaptureFixture[str]) -> None:
    expect(["generate", "zpg", "--size", "4x3", "--min-moves", "5", "--max-moves", "2"], 31, capsys)


# ------------------------------------------------------------------ plan files
@pytest.fixture
def easy_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    code, out, _ = run_cli(["solve", "sliding", EASY, *NUMPY, "--json"], capsys)
    assert code == 0
    return json.loads(out)


@pytest.mark.parametrize("data", [bytes(range(256)), b"{\xff\xfe}", b"\x80\x81\x82", b"up\n\xc3\x28\n"])
def test_binary_plan_file_is_exit_34(data: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "plan.bin"
    f.write_bytes(data)
    expect(["show", "sliding", EASY, "--plan", str(f)], 34, capsys, "not UTF-8")


def test_plan_with_nul_bytes_names_the_label_safely(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "plan.txt"
    f.write_bytes(b"ab\x00cd\n" + b"x" * 100_000 + b"\n")
    expect(["show", "sliding", EASY, "--plan", str(f)], 34, capsys, "plan.txt:1: action 'ab\\x00cd'")


@pytest.mark.parametrize("key, value, fragment", [
    ("cost", 1, "the file says cost 1, but its plan replays to cost"),
    ("cost", 10**30, "the file says cost 1000000000000000000000000000000"),
    ("cost", -2, "the file says cost -2"),
    ("cost", "2", "the file says cost 2"),
    ("cost", True, "the file says cost True"),
    ("steps", 99, "the file says steps 99"),
])
def test_plan_file_whose_numbers_lie_is_exit_34(easy_plan: dict, key: str, value: object, fragment: str,
                                                tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "plan.json"
    f.write_text(json.dumps({**easy_plan, key: value}), encoding="utf-8")
    expect(["show", "sliding", EASY, "--plan", str(f)], 34, capsys, fragment)


def test_plan_file_that_tells_the_truth_replays(easy_plan: dict, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "plan.json"
    f.write_text("\ufeff" + json.dumps(easy_plan), encoding="utf-8")   # a BOM too
    code, out, err = run_cli(["show", "sliding", EASY, "--plan", str(f)], capsys)
    assert code == 0, err
    assert out.rstrip().endswith(f"goal reached, cost {easy_plan['cost']}")


@pytest.mark.parametrize("text", [
    '{"plan": "up"}', '{"plan": {"up": 1}}', '{"plan": [1, 2]}', '{"plan": null, "status": "limit"}',
    '{"plan": [' * 100_000, '{' + '"a": [' * 50_000, '{"cost": 3}', "{", '{"plan": ["up"]} trailing',
])
def test_malformed_json_plans_are_exit_34(text: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "plan.json"
    f.write_text(text, encoding="utf-8")
    expect(["show", "sliding", EASY, "--plan", str(f)], 34, capsys, "plan.json:1:")


def test_plan_file_that_is_a_directory_is_exit_34(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expect(["show", "sliding", EASY, "--plan", str(tmp_path)], 34, capsys, "cannot read plan")


# ------------------------------------------------------------------ control characters in paths
@pytest.fixture
def newline_instance(tmp_path: Path) -> str:
    path = tmp_path / "a\n(define (domain evil))\r\x1b[2J.txt"
    path.write_bytes((ROOT / "instances" / "sliding" / "eight.txt").read_bytes())
    return f"{path}#eight-easy"


def test_newline_in_the_instance_path_stays_in_the_pddl_comment(newline_instance: str, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pddl"
    code, _, err = run_cli(["compile", "sliding", newline_instance, "--to", "pddl", "-o", str(out)], capsys)
    assert code == 0, err
    for name in ("domain.pddl", "problem.pddl"):
        lines = (out / name).read_text(encoding="utf-8").splitlines()
        first = next(i for i, ln in enumerate(lines) if not ln.startswith(";"))
        assert lines[first].startswith("(define (")
        assert sum(ln.lstrip().startswith("(define") for ln in lines) == 1
        escaped = "a\\n(define (domain evil))\\r\\x1b[2J.txt#eight-easy"
        assert any(ln.endswith(escaped) for ln in lines[:first])


def test_newline_in_the_instance_path_stays_in_the_cnf_comment(newline_instance: str, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "f.cnf"
    code, _, err = run_cli(["compile", "sliding", newline_instance, "--to", "cnf", "-T", "1", "-o", str(out)],
                           capsys)
    assert code == 0, err
    lines = out.read_text(encoding="utf-8").splitlines()
    p = next(i for i, ln in enumerate(lines) if ln.startswith("p cnf"))
    assert all(ln.startswith("c ") for ln in lines[:p])


def test_comment_text_escapes_control_characters() -> None:
    from puzzleplan.encodings.pddl import comment_text

    assert comment_text("a\nb\r\x00c\u2028d\te 横") == "a\\nb\\r\\x00c\\u2028d\\te 横"


@pytest.mark.parametrize("path", ["no\nsuch.txt", "x\x00y", "\x1b[31mred", "e" * 5000])
def test_errors_naming_odd_paths_stay_one_line(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    got, _, err = run_cli(["dump", "sliding", path], capsys)
    assert got in (30, 31)
    line = one_line_error(err)
    assert "\x1b" not in line


# ------------------------------------------------------------------ the kernel cache directory
@pytest.fixture
def cache_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    base = tmp_path / "cache"
    monkeypatch.setenv("PUZZLEPLAN_CACHE", str(base))
    return base


def refused(fragment: str) -> str:
    with pytest.raises(PuzzleError) as info:
        compiled.cache_dir()
    assert info.value.code == compiled.EXIT_UNSAFE_CACHE == 36
    assert fragment in str(info.value)
    return str(info.value)


def test_a_new_cache_directory_is_private(cache_env: Path) -> None:
    d = compiled.cache_dir()
    assert d == cache_env / "kernels"
    for p in (cache_env, d):
        assert stat.S_IMODE(p.stat().st_mode) & 0o077 == 0
        assert p.stat().st_uid == os.getuid()


@pytest.mark.parametrize("which", ["base", "kernels"])
@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o775, 0o722])
def test_a_cache_directory_others_can_write_is_refused(cache_env: Path, which: str, mode: int) -> None:
    d = cache_env / "kernels"
    d.mkdir(parents=True)
    target = cache_env if which == "base" else d
    target.chmod(mode)
    message = refused("writable by other users")
    assert str(target) in message


def test_an_existing_private_cache_directory_is_used_and_closed(cache_env: Path) -> None:
    d = cache_env / "kernels"
    d.mkdir(parents=True)
    d.chmod(0o755)
    cache_env.chmod(0o755)
    assert compiled.cache_dir() == d
    assert stat.S_IMODE(d.stat().st_mode) == 0o700          # nobody else reaches the modules in it
    assert stat.S_IMODE(cache_env.stat().st_mode) == 0o755  # the base is the user's: left as it is


def test_a_world_writable_numba_pycache_is_refused(cache_env: Path) -> None:
    """numba keeps its pickled index beside the module, in kernels/__pycache__ (umask 000 makes it 0777)."""
    pycache = cache_env / "kernels" / "__pycache__"
    pycache.mkdir(parents=True)
    pycache.chmod(0o777)
    refused("writable by other users")


needs_root = pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                                reason="giving a directory to another user needs root")


@needs_root
@pytest.mark.parametrize("which", ["base", "kernels"])
def test_a_cache_directory_owned_by_another_user_is_refused(cache_env: Path, which: str) -> None:
    d = cache_env / "kernels"
    d.mkdir(parents=True, mode=0o700)
    os.chown(cache_env if which == "base" else d, 12345, 12345)
    refused("owned by uid 12345")


@needs_root
def test_a_link_to_a_foreign_directory_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    foreign = tmp_path / "foreign"
    foreign.mkdir(mode=0o700)
    os.chown(foreign, 12345, 12345)
    (tmp_path / "link").symlink_to(foreign)
    monkeypatch.setenv("PUZZLEPLAN_CACHE", str(tmp_path / "link"))
    refused("owned by uid 12345")


def test_the_temp_fallback_is_private_and_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("PUZZLEPLAN_CACHE", str(blocker / "cache"))   # cannot be created: falls back
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(tmp))
    d = compiled.cache_dir()
    assert d == tmp / f"puzzleplan-kernels-{os.getuid()}"
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    d.chmod(0o777)   # the report's case: a world-writable directory in $TMPDIR
    refused("writable by other users")
    if os.getuid() == 0:
        d.chmod(0o700)
        os.chown(d, 12345, 12345)
        refused("owned by uid 12345")


def test_a_world_writable_numba_cache_dir_is_refused(cache_env: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    nb = tmp_path / "numba"
    nb.mkdir()
    nb.chmod(0o777)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(nb))
    refused("writable by other users")


def test_the_cli_refuses_an_unsafe_cache_with_exit_36(cache_env: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    (cache_env / "kernels").mkdir(parents=True)
    cache_env.chmod(0o777)
    expect(["solve", "sliding", EASY, "--kernel", "numba"], 36, capsys, "unsafe kernel cache directory")
    # the numpy kernel imports nothing from the cache: unaffected
    code, _, err = run_cli(["solve", "sliding", EASY, *NUMPY], capsys)
    assert code == 0, err


def test_exit_36_is_documented() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    cli_md = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "| 36 |" in readme and "| 36 |" in cli_md
