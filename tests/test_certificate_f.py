"""Certificates bounded by the heuristic (``--certificate-bound f``, docs/certificates.md).

S then holds the states reached with g + h < C, h the model's admissible heuristic, and the
checker excuses a successor outside S only when its own h says g + cost + h >= C.  Checked here:
such certificates are accepted on seeded sliding puzzles, Sokoban and Kwirk; they are the
g-bounded certificate cut to f < C (equal sets where h is consistent); every removed state is
rejected; a writer that inflates h is caught by the checker's own h; a model without an admissible
heuristic is refused on both sides; the trust in admissibility is real (a lying heuristic gets a
valid f certificate of a wrong optimum, which the g certificate refutes).
"""

from __future__ import annotations

import dataclasses
import heapq
import json
import random

import numpy as np
import pytest
from helpers import ROOT, reference_optimum, run_cli, write_sliding

from puzzleplan import api
from puzzleplan.certificate import write_certificate
from puzzleplan.lang.errors import PuzzleError
from puzzleplan.solvers import Limits
from puzzleplan.verify import certificate as cert
from puzzleplan.verify import reference as ref

MODELS_DIR = ROOT / "tests" / "models"
MICROBAN = ROOT / "instances" / "sokoban" / "microban.xsb"
KWIRK_ROOM = ROOT / "instances" / "kwirk" / "heading-out" / "030.txt"


def _scrambled(seed: int, n: int = 3, moves: int = 40) -> list[int]:
    """A solvable n x n board: a seeded random walk of the blank from the solved board."""
    rng = random.Random(seed)
    board = list(range(1, n * n)) + [0]
    b = n * n - 1
    for _ in range(moves):
        r, c = divmod(b, n)
        nxt = [(r + dr) * n + c + dc for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))
               if 0 <= r + dr < n and 0 <= c + dc < n]
        t = rng.choice(nxt)
        board[b], board[t] = board[t], board[b]
        b = t
    return board


def _both(loaded, tmp, engine: str = "astar"):
    """(result, g certificate, f certificate, f's write info)."""
    result = api.solve(loaded, engine, Limits(), kernel="numpy")
    assert result.status == "optimal"
    write_certificate(loaded, result, str(tmp / "g.cert"), kernel="numpy")
    info = write_certificate(loaded, result, str(tmp / "f.cert"), kernel="numpy", by="f")
    return result, cert.read(str(tmp / "g.cert")), cert.read(str(tmp / "f.cert")), info


def _h(task, key_to_state, k):
    return ref.heuristic(task, key_to_state(k))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_f_certificates_of_seeded_eight_puzzles_are_the_g_set_cut_to_f(tmp_path, seed):
    f = write_sliding(tmp_path / "p.txt", _scrambled(seed), 3)
    loaded = api.load_task("sliding", str(f))
    result, cg, cf, info = _both(loaded, tmp_path)
    task = loaded.task
    assert result.cost == reference_optimum(task)
    assert cf.header["version"] == 2 and cf.header["bound"] == "f" and info["bound"] == "f"
    assert cg.header["version"] == 1 and cg.header["bound"] == "g"   # g files stay version 1 ...
    assert b'"bound"' not in (tmp_path / "g.cert").read_bytes().split(b"\n")[1]   # ... byte for byte
    rf, rg = cert.check(task, cf), cert.check(task, cg)
    assert (rf.bound, rg.bound) == ("f", "g") and rf.cost == rg.cost == result.cost
    assert rf.excused > 0 and rg.excused == 0
    # Manhattan distance is consistent: S_f is exactly the states of S_g with g + h < C, same g
    unpack = cert._unpack_function(task, cert.var_layout(task))
    g_of = dict(zip(cg.keys, cg.g))
    cut = {k: g for k, g in g_of.items() if g + _h(task, unpack, k) < result.cost}
    assert dict(zip(cf.keys, cf.g)) == cut
    assert 0 < len(cf.keys) < len(cg.keys)


@pytest.mark.parametrize("level", ["1", "9", "14"])   # h at the start below the optimum (on 3, 7, 12 not)
def test_sokoban_f_certificates_are_valid_and_hold_no_state_below_its_true_cost(tmp_path, level):
    loaded = api.load_task("sokoban", str(MICROBAN), [f"level={level}", "metric=pushes", "prune=none"])
    result, cg, cf, _ = _both(loaded, tmp_path)
    task = loaded.task
    rep = cert.check(task, cf)
    assert rep.cost == result.cost and rep.states == len(cf.keys) and rep.excused > 0
    assert cert.check(task, cg).states == len(cg.keys) > len(cf.keys)
    # a subset of S_g; g only as low as the cheapest path inside S_f allows (never below S_g's)
    g_of = dict(zip(cg.keys, cg.g))
    assert all(k in g_of and g >= g_of[k] for k, g in zip(cf.keys, cf.g))


def test_a_kwirk_f_certificate_is_valid(tmp_path):
    loaded = api.load_task("kwirk", str(KWIRK_ROOM))
    result, cg, cf, _ = _both(loaded, tmp_path, engine="bfs")
    rep = cert.check(loaded.task, cf)
    assert rep.bound == "f" and rep.cost == result.cost == 24 and rep.states < len(cg.keys)
    # the transcribed heuristic agrees with the reference on the sampled states and beyond
    tr = cert._Transcription(loaded.task).heuristic()
    unpack = cert._unpack_function(loaded.task, cert.var_layout(loaded.task))
    for k in list(cf.keys)[::max(1, len(cf.keys) // 200)]:
        s = unpack(k)
        assert tr(s) == ref.heuristic(loaded.task, s)


@pytest.fixture(scope="module")
def eight(tmp_path_factory):
    d = tmp_path_factory.mktemp("f8")
    f = write_sliding(d / "p.txt", _scrambled(7, moves=60), 3)
    loaded = api.load_task("sliding", str(f))
    result, _, cf, _ = _both(loaded, d)
    return loaded, result, cf, d


def test_every_removed_state_is_rejected(eight):
    loaded, _, cf, _ = eight
    rng = random.Random(5)
    init = cert._key_function(loaded.task, cert.var_layout(loaded.task))(loaded.task.init)
    picks = rng.sample(range(len(cf.keys)), min(25, len(cf.keys)))
    for i in picks + [list(cf.keys).index(init)]:
        bad = dataclasses.replace(cf, keys=cf.keys[:i] + cf.keys[i + 1:], g=cf.g[:i] + cf.g[i + 1:])
        with pytest.raises(cert.CertificateRejected) as e:
            cert.check(loaded.task, bad)
        msg = str(e.value)
        assert ("is missing from S and g + h is below the optimum" in msg
                or "initial state is not in S" in msg), msg


def test_the_checker_computes_h_itself(eight, monkeypatch, tmp_path):
    """A writer whose h is too high (here by 2) drops states the checker's own h keeps: rejected."""
    loaded, result, cf, _ = eight
    kernel = loaded.kernel("numpy")
    real = kernel.heuristic
    monkeypatch.setattr(kernel, "heuristic", lambda S: real(S) + 2)
    monkeypatch.setattr(loaded, "kernel", lambda name="numpy": kernel)
    write_certificate(loaded, result, str(tmp_path / "lie.cert"), kernel="numpy", by="f")
    lie = cert.read(str(tmp_path / "lie.cert"))
    assert len(lie.keys) < len(cf.keys)
    with pytest.raises(cert.CertificateRejected) as e:
        cert.check(loaded.task, lie)
    assert "g + h is below the optimum" in str(e.value)


def test_the_fast_heuristic_is_cross_checked(eight, monkeypatch):
    loaded, _, cf, _ = eight
    real = cert._Transcription.heuristic

    def off_by_one(self):
        h = real(self)
        return lambda s: h(s) + 1

    monkeypatch.setattr(cert._Transcription, "heuristic", off_by_one)
    with pytest.raises(cert.CertificateRejected) as e:
        cert.check(loaded.task, cf)
    assert "fast heuristic disagrees with the reference" in str(e.value)
    assert cert.check(loaded.task, cf, mode="reference").bound == "f"   # the reference alone


def test_a_heuristic_that_fails_excuses_nothing(eight, monkeypatch):
    """The reference's h raising (a model bug) is a rejection with the reason, not a traceback."""
    loaded, _, cf, _ = eight

    def broken(task, s):
        raise ZeroDivisionError("integer division by zero")

    monkeypatch.setattr(cert.reference, "heuristic", broken)
    with pytest.raises(cert.CertificateRejected) as e:
        cert.check(loaded.task, cf, mode="reference")
    assert "heuristic cannot be evaluated" in str(e.value) and "ZeroDivisionError" in str(e.value)


def test_h_at_the_start_reaching_the_optimum_needs_no_states(tmp_path):
    f = write_sliding(tmp_path / "one.txt", [1, 2, 3, 4, 5, 6, 7, 0, 8], 3)   # one move, h = 1
    loaded = api.load_task("sliding", str(f))
    result, _, cf, info = _both(loaded, tmp_path)
    assert result.cost == 1 and info["states"] == 0 == len(cf.keys)
    assert cert.check(loaded.task, cf).states == 0


def test_a_model_without_an_admissible_heuristic_is_refused(eight, tmp_path):
    loaded, result, cf, _ = eight
    task = dataclasses.replace(loaded.task, heuristic_admissible=False)
    forged = dataclasses.replace(cf, header={**cf.header, "fingerprint": cert.fingerprint(task)})
    with pytest.raises(cert.CertificateRejected) as e:
        cert.check(task, forged)
    assert "declares no admissible heuristic" in str(e.value)
    jugs = tmp_path / "jugs.txt"
    jugs.write_text("a: 4\nb: 9\ntarget: 6\n", encoding="utf-8")
    lj = api.load_task(str(MODELS_DIR / "jugs.py"), str(jugs))
    rj = api.solve(lj, "bfs", Limits(), kernel="numpy")
    with pytest.raises(PuzzleError) as e:
        write_certificate(lj, rj, str(tmp_path / "j.cert"), kernel="numpy", by="f")
    assert e.value.code == 31 and "admissible" in str(e.value)


def test_the_trust_is_real_a_lying_heuristic_gets_a_valid_f_certificate(tmp_path):
    """liar.py declares admissible a heuristic that overestimates: astar reports 3, the optimum is 2.
    The g certificate of 3 is rejected (a goal below it); the f one is accepted -- which is why an
    f certificate's claim names the heuristic it trusts."""
    inst = tmp_path / "liar.txt"
    inst.write_text("name: graph\n", encoding="utf-8")
    loaded = api.load_task(str(MODELS_DIR / "liar.py"), str(inst))
    result, cg, cf, _ = _both(loaded, tmp_path)
    assert result.cost == 3 and reference_optimum(loaded.task) == 2
    with pytest.raises(cert.CertificateRejected):
        cert.check(loaded.task, cg)
    assert cert.check(loaded.task, cf).cost == 3


def test_format_versions(eight, tmp_path):
    loaded, _, cf, d = eight
    raw = (d / "f.cert").read_bytes()
    head_end = raw.index(b"\n", len(cert.MAGIC))
    head = json.loads(raw[len(cert.MAGIC): head_end])
    for change, code in (({"version": 1}, 30), ({"version": 3}, 30), ({"bound": "h"}, 30),
                         ({"kind": "unsolvable"}, 30)):
        bad = tmp_path / "bad.cert"
        line = json.dumps({**head, **change}, separators=(",", ":")).encode()
        bad.write_bytes(cert.MAGIC + line + raw[head_end:])
        with pytest.raises(cert.CertificateFormatError) as e:
            cert.read(str(bad))
        assert e.value.code == code


@pytest.mark.skipif(not cert._CAN_FORK, reason="needs fork")
def test_parallel_check_counts_the_same_excuses(eight):
    loaded, _, cf, _ = eight
    one, two = cert.check(loaded.task, cf), cert.check(loaded.task, cf, jobs=2)
    assert (one.states, one.transitions, one.excused) == (two.states, two.transitions, two.excused)


def test_cli_solve_check_and_verify(tmp_path, capsys):
    f = write_sliding(tmp_path / "p.txt", _scrambled(7, moves=60), 3)
    path = tmp_path / "s.cert"
    code, out, _ = run_cli(["solve", "sliding", f, "-e", "astar", "--kernel", "numpy", "-q",
                            "--certificate", path, "--certificate-bound", "f"], capsys)
    assert code == 0 and "bounded by g + h" in out
    code, out, _ = run_cli(["check-certificate", "sliding", f, path], capsys)
    assert code == 0 and "certificate valid" in out and "admissibility is trusted" in out
    code, out, _ = run_cli(["check-certificate", "sliding", f, path, "--json"], capsys)
    doc = json.loads(out)
    assert doc["valid"] and doc["bound"] == "f" and doc["excused"] > 0
    code, out, _ = run_cli(["verify", "sliding", f, "--engines", "astar,bfs", "--kernel", "numpy",
                            "--certificate", tmp_path / "dir", "--certificate-bound", "f"], capsys)
    # one paradigm (explicit): unconfirmed, exit 11; a certificate never changes the verdict
    flat = out.replace("\n", " ").replace("    ", "")
    assert code == 11 and "trusting the model's admissible heuristic" in flat
    assert list((tmp_path / "dir").glob("*.f.cert"))
    # unsolvable: the search's answer stands (exit 10), no f certificate, a note says why
    odd = write_sliding(tmp_path / "odd.txt", [2, 1, 3, 4, 5, 6, 7, 8, 0], 3)
    code, _, err = run_cli(["solve", "sliding", odd, "--kernel", "numpy", "-q", "--certificate",
                            tmp_path / "u.cert", "--certificate-bound", "f"], capsys)
    assert code == 10 and "proves optima only" in err and not (tmp_path / "u.cert").exists()
    code, out, _ = run_cli(["verify", "sliding", odd, "--engines", "bfs", "--kernel", "numpy",
                            "--certificate", tmp_path / "udir", "--certificate-bound", "f"], capsys)
    assert code == 11 and "none written (from bfs)" in out and "proves optima only" in out.replace("\n", " ")
    # a model without a heuristic: refused before any search, exit 31
    jugs = tmp_path / "jugs.txt"
    jugs.write_text("a: 4\nb: 9\ntarget: 6\n", encoding="utf-8")
    code, _, err = run_cli(["solve", str(MODELS_DIR / "jugs.py"), jugs, "--certificate", tmp_path / "j.cert",
                            "--certificate-bound", "f", "-q"], capsys)
    assert code == 31 and "admissible" in err and not (tmp_path / "j.cert").exists()


def test_the_pass_drops_exactly_what_h_rules_out(eight):
    """The writer's pass against a plain-Python search of {g + h < C} through such states."""
    from puzzleplan.certificate import collect

    loaded, result, cf, _ = eight
    task, C = loaded.task, result.cost
    keys, gs = collect(loaded.kernel("numpy"), C, by_h=True)
    key = cert._key_function(task, cert.var_layout(task))
    best = {key(task.init): 0}
    todo = [(0, tuple(task.init))]
    while todo:
        g, s = heapq.heappop(todo)
        if best.get(key(s), -1) < g:
            continue
        for _, t, c in ref.successors(task, s):
            kt = key(t)
            if g + c < C and g + c + ref.heuristic(task, t) < C and g + c < best.get(kt, C):
                best[kt] = g + c
                heapq.heappush(todo, (g + c, tuple(ref.canonical(task, t))))
    assert dict(zip((int(k) for k in keys[:, 0]), (int(x) for x in gs))) == best
    assert np.array_equal(keys[:, 0], np.array(sorted(best), dtype=np.uint64))
