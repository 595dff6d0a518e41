"""Kwirk ``control=free``: any character moves, no SELECT, characters interchangeable.

The option's promise is the same step optimum as the game's SELECT form (a switch costs no step)
with fewer states.  Checked against the independent reference Dijkstra of tests/helpers.py on
seeded random levels with two and three characters, against the published step optima on the two
GOING UP? floors with two characters, and the dead-state prune on the sorted slots against exact
costs-to-go.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

import pytest
from helpers import cost_to_go, reference_optimum, reference_reachable, run_cli
from test_kwirk import random_level

from puzzleplan import api
from puzzleplan.solvers import Limits
from puzzleplan.verify import reference as ref

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "instances" / "kwirk"


def _level(tmp: Path, rows: list[str], n_chars: int, name: str) -> Path:
    p = tmp / f"{name}.txt"
    p.write_text(f"; test level\ncharacters: {n_chars}\nsize: {len(rows[0])} {len(rows)}\nmap:\n"
                 + "\n".join(rows) + "\n")
    return p


def _random_level(rng: random.Random, n_chars: int) -> list[str]:
    """A small seeded level with ``n_chars`` characters (test_kwirk's generator, smaller and emptier)."""
    return random_level(rng, w=7, h=5, n_chars=n_chars, wall_p=0.15, holes=(0, 2), blocks=(1, 2))


def _pairs(tmp: Path, seed: int, count: int, prune: str = "none"):
    """(select, free) loaded pairs of seeded random levels the format accepts."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        n = 2 if i % 3 else 3
        rows = _random_level(rng, n)
        p = _level(tmp, rows, n, f"r{seed}-{i}")
        try:
            sel = api.load_task("kwirk", str(p), [f"prune={prune}"])
            fre = api.load_task("kwirk", str(p), [f"prune={prune}", "control=free"])
        except Exception:   # a random map the format refuses
            continue
        out.append((rows, sel, fre))
    return out


def test_same_optimum_as_select_on_random_levels(tmp_path: Path) -> None:
    """Reference Dijkstra on both forms (independent of every engine) gives the same optimum, or
    unsolvable for both; bfs on the free form meets it with a replayed plan."""
    pairs = _pairs(tmp_path, seed=5, count=36)
    solved = 0
    for rows, sel, fre in pairs:
        want = reference_optimum(sel.task)
        assert reference_optimum(fre.task) == want, rows
        r = api.solve(fre, "bfs", Limits(time_s=60), kernel="numpy")
        if want is None:
            assert r.status == "unsolvable", rows
        else:
            solved += 1
            assert r.status == "optimal" and r.cost == want and r.stats["verified"], rows
    assert len(pairs) >= 25 and solved >= 10


def test_fewer_states_than_select(tmp_path: Path) -> None:
    """Merging who is in control and sorting the characters shrinks the reachable space."""
    smaller = 0
    for _rows, sel, fre in _pairs(tmp_path, seed=8, count=12):
        a = len(reference_reachable(sel.task))
        b = len(reference_reachable(fre.task))
        assert b <= a
        smaller += b < a
    assert smaller > 0


def test_dead_prune_on_sorted_slots_cuts_only_states_without_a_plan(tmp_path: Path) -> None:
    """The prune reads each slot through the start side of a cut; with sorted slots another
    character may stand in a slot, and the rule must still call dead only states with no plan."""
    rng = random.Random(21)
    cut = levels = 0
    for i in range(24):
        n = 2 if i % 3 else 3
        rows = _random_level(rng, n)
        p = _level(tmp_path, rows, n, f"d{i}")
        try:
            plain = api.load_task("kwirk", str(p), ["prune=none", "control=free"])
            pruned = api.load_task("kwirk", str(p), ["prune=dead", "control=free"])
        except Exception:
            continue
        levels += 1
        for s, hstar in cost_to_go(plain.task).items():
            if ref.successors(plain.task, list(s)) and not ref.successors(pruned.task, list(s)):
                assert hstar is None, (rows, s)
                cut += 1
    assert levels >= 15
    assert cut > 0, "the prune never fired: the test proved nothing"


def _optima() -> dict[str, int]:
    with open(DATA / "known_optima.csv") as fh:
        return {r["file"]: int(r["step_optimum"]) for r in csv.DictReader(fh) if r["step_optimum"]}


@pytest.mark.parametrize("f", ["going-up/06_1-6.txt", "going-up/10_1-10.txt"])
def test_two_character_floors_keep_their_published_optimum(f: str) -> None:
    """1-6 (34) and 1-10 (45), known_optima.csv (computed outside this project), by bfs in the
    free form, with fewer stored states than the SELECT form."""
    free = api.solve(api.load_task("kwirk", str(DATA / f), ["control=free"]), "bfs", Limits(time_s=120),
                     kernel="numpy")
    sel = api.solve(api.load_task("kwirk", str(DATA / f)), "bfs", Limits(time_s=120), kernel="numpy")
    assert free.status == "optimal" and free.cost == _optima()[f] and free.stats["verified"]
    assert free.stats["states"] < sel.stats["states"]


def test_free_control_needs_the_steps_metric(tmp_path: Path, capsys) -> None:
    p = _level(tmp_path, ["#####", "#1.E#", "#.2.#", "#####"], 2, "frames")
    code, _, err = run_cli(["solve", "kwirk", p, "-O", "control=free", "-O", "metric=frames"], capsys)
    assert code != 0 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "control=free" in err and "metric=steps" in err
