"""Session-wide fixtures: loaded tasks and their kernels, built once per test session.

Every distinct model *structure* compiles a numba kernel (seconds, cached on
disk afterwards), so the compiled kernel is built here for a handful of fixed
tasks only; everything else uses the numpy kernel.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest
from helpers import FAYAA, write_klotski, write_sliding

from puzzleplan import api

# `--kernel auto` starts a detached compile after a long interpreted search: never from the tests,
# whose processes must all end with the run
os.environ["PUZZLEPLAN_BACKGROUND_COMPILE"] = "0"


@functools.cache
def load(model: str, instance: str, *options: str) -> api.Loaded:
    """``api.load_task`` memoised per session (a Loaded caches its kernels)."""
    return api.load_task(model, instance, list(options))


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("instances")


@pytest.fixture(scope="session")
def fayaa001_steps() -> api.Loaded:
    return load("klotski", f"{FAYAA}#fayaa-001", "metric=steps")


@pytest.fixture(scope="session")
def fayaa001_moves() -> api.Loaded:
    return load("klotski", f"{FAYAA}#fayaa-001", "metric=moves")


@pytest.fixture(scope="session")
def fayaa001_straight() -> api.Loaded:
    return load("klotski", f"{FAYAA}#fayaa-001", "metric=straight")


# A small layout: 4x4 board, 2x2 target; optimum 27 steps / 19 moves.
SMALL_A = ["BAA.", "CAAD", "E..D", "FFGH"]


# ---------------------------------------------------------------- a catalog of tasks by name
TINY = ["AB.", "CDE", "FG."]            # 3x3, seven 1x1 pieces, A must reach the bottom-right corner
TINY_B = ["AB.", "CDE", "F.G"]          # same pieces: shares TINY's compiled kernel

_SPECS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # name: (model, instance file name or FAYAA#ID, options)
    "klotski-001-steps": ("klotski", f"{FAYAA}#fayaa-001", ("metric=steps",)),
    "klotski-001-moves": ("klotski", f"{FAYAA}#fayaa-001", ("metric=moves",)),
    "klotski-001-straight": ("klotski", f"{FAYAA}#fayaa-001", ("metric=straight",)),
    "klotski-117-moves": ("klotski", f"{FAYAA}#fayaa-117", ("metric=moves",)),
    "klotski-117-straight": ("klotski", f"{FAYAA}#fayaa-117", ("metric=straight",)),
    "klotski-205-moves": ("klotski", f"{FAYAA}#fayaa-205", ("metric=moves",)),     # three empty cells
    "klotski-5x4-straight": ("klotski", "wide.txt", ("metric=straight",)),
    "klotski-1x1-moves": ("klotski", "unit_target.txt", ("metric=moves",)),
    "klotski-tiny-steps": ("klotski", "tiny.txt", ("metric=steps",)),
    "klotski-small-steps": ("klotski", "small_a.txt", ("metric=steps",)),
    "eight": ("sliding", "eight.txt", ()),
    "eight-oddgoal": ("sliding", "eight_oddgoal.txt", ()),
    "eight-noheuristic": ("sliding", "eight.txt", ("heuristic=none",)),
    "fifteen": ("sliding", "fifteen.txt", ()),
    "twentyfour": ("sliding", "twentyfour.txt", ()),
}

# tasks whose compiled (numba) kernel the suite builds; keep this list short (compile time)
NUMBA_TASKS = ["eight", "fifteen", "klotski-001-steps", "klotski-001-moves", "klotski-tiny-steps"]


def _write_catalog_files(d: Path) -> None:
    write_sliding(d / "eight.txt", [8, 6, 7, 2, 5, 4, 3, 0, 1], 3)
    write_sliding(d / "eight_oddgoal.txt", [1, 2, 3, 4, 5, 6, 7, 8, 0], 3, goal=[1, 2, 3, 4, 5, 6, 8, 7, 0])
    write_sliding(d / "fifteen.txt", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0, 15], 4)
    write_sliding(d / "twentyfour.txt", list(range(1, 24)) + [0, 24], 5)
    write_klotski(d / "wide.txt", ["BAAC.", "DAACE", "DFF.E", "GHIJK"], size=(5, 4), goal=(0, 3))
    write_klotski(d / "unit_target.txt", ["BCCA", "BDE.", "FDG.", "HHIJ"], size=(4, 4), goal=(3, 0))
    write_klotski(d / "tiny.txt", TINY, size=(3, 3), goal=(2, 2))
    write_klotski(d / "tiny_b.txt", TINY_B, size=(3, 3), goal=(2, 2))
    write_klotski(d / "small_a.txt", SMALL_A, size=(4, 4), goal=(2, 1))


@pytest.fixture(scope="session")
def catalog(data_dir: Path):
    """``catalog(name) -> Loaded`` for the tasks in ``_SPECS`` (loaded once per session)."""
    _write_catalog_files(data_dir)

    def get(name: str) -> api.Loaded:
        model, inst, opts = _SPECS[name]
        path = inst if "#" in inst else str(data_dir / inst)
        return load(model, path, *opts)

    return get
