"""The hand-written Hua Rong Dao BFS lives beside its suite (bench/hrd_baseline.py), not in the package.

The speed suite loads it by path (``hand_written`` in the suite file); these tests pin its optima
on 横刀立马, the suite's wiring, and that the importable package keeps no puzzle-specific solver.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest
from helpers import FAYAA, ROOT
from test_layers import PUZZLE_NAMES, _code_without_docs

from puzzleplan import api
from puzzleplan.bench import memprobe
from puzzleplan.bench.baselines import load_hand_written
from puzzleplan.bench.speed import run_speed
from puzzleplan.bench.suite import SuiteError, load_suite
from puzzleplan.lang.errors import PuzzleError

HAND = ROOT / "bench" / "hrd_baseline.py"
HDLM = f"{FAYAA}#fayaa-001"


@pytest.mark.parametrize("metric, optimum", [("steps", 116), ("moves", 81)])
def test_hand_written_bfs_finds_the_published_optima(metric, optimum):
    mod = load_hand_written(HAND)
    loaded = api.load_task("klotski", HDLM, [f"metric={metric}"])
    run = mod.bfs(mod.start_board(loaded), metric)
    assert run.cost == optimum and len(run.plan) == optimum
    assert run.name == "hand-written" and run.expanded > 20_000


def _suite(tmp_path: Path, hand: str | None) -> Path:
    shutil.copy(HAND, tmp_path / "my_baseline.py")
    lines = ['name = "t"', 'kind = "speed"', "repetitions = 1", "warmup = 0", "[[speed]]",
             'label = "hdlm"', 'model = "klotski"', f'instance = "{HDLM}"', 'metrics = ["steps"]',
             'baselines = ["hand-written"]', "kernels = []", "rss_memory = false",
             "expect = { steps = 116 }"]
    if hand is not None:
        lines.append(f'hand_written = "{hand}"')
    path = tmp_path / "t.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_speed_suite_loads_the_hand_written_file_beside_it(tmp_path):
    suite = load_suite(str(_suite(tmp_path, "my_baseline.py")))
    records, report, checks = run_speed(suite, progress=None)
    assert checks and all(c["ok"] for c in checks), checks
    assert [r["solver"] for r in records] == ["hand-written"] and records[0]["cost"] == 116
    assert report["speed"][0]["metrics"]["steps"]["rows"]["hand-written"]["cost"] == 116


def test_speed_suite_without_the_file_is_an_option_error(tmp_path):
    suite = load_suite(str(_suite(tmp_path, None)))
    with pytest.raises(SuiteError, match="hand_written") as e:
        run_speed(suite, progress=None)
    assert e.value.code == 31
    suite = load_suite(str(_suite(tmp_path, "missing.py")))
    with pytest.raises(PuzzleError, match="no such hand-written baseline file") as e:
        run_speed(suite, progress=None)
    assert e.value.code == 31 and str(e.value.file).endswith("missing.py")


def test_memory_probe_runs_the_hand_written_file(capsys):
    assert memprobe.main([f"hand-written:{HAND}", "klotski", HDLM, "metric=moves"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["cost"] == 81


def test_bundled_speed_suite_names_the_file():
    suite = load_suite("hrd-speed")
    (sec,) = suite.data["speed"]
    assert "hand-written" in sec["baselines"]
    assert (suite.path.parent / sec["hand_written"]).resolve() == HAND.resolve()


def test_the_package_holds_no_puzzle_specific_solver():
    assert importlib.util.find_spec("puzzleplan.bench.baseline") is None
    for path in sorted((ROOT / "puzzleplan" / "bench").glob("*.py")):
        code = _code_without_docs(path).lower()
        hits = [pat for pat in PUZZLE_NAMES if re.search(pat, code)]
        assert not hits, f"{path.relative_to(ROOT)} mentions {hits} in code"
