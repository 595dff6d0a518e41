"""Certificates of optimality and unsolvability (puzzleplan/certificate.py writes them,
puzzleplan/verify/certificate.py checks them with the reference semantics only).

Valid certificates are accepted; each kind of corruption is rejected with the condition it
breaks: a state removed, a g value raised or lowered, a goal state listed, the plan altered,
a non-canonical or duplicated state, another task's certificate, a false symmetry claim.
"""

from __future__ import annotations

import dataclasses
import json
import random

import pytest
from helpers import ROOT, reference_optimum, run_cli, sample_states, write_klotski, write_sliding

from puzzleplan import api
from puzzleplan.certificate import collect, write_certificate
from puzzleplan.solvers import Limits
from puzzleplan.verify import certificate as cert
from puzzleplan.verify import reference as ref

MODELS_DIR = ROOT / "tests" / "models"
KLOTSKI_ROWS = ["AAB.", "AAC.", "DEFF", "G..H"]   # 4x4, six interchangeable 1x1 pieces


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cert")
    return {
        # an optimum of 14 moves, a few thousand states below it
        "sliding": write_sliding(d / "eight.txt", [8, 1, 3, 4, 0, 2, 7, 6, 5], 3),
        "swapped": write_sliding(d / "two.txt", [1, 2, 3, 0], 2, goal=[2, 1, 3, 0]),   # odd parity
        "klotski": write_klotski(d / "k.txt", KLOTSKI_ROWS, size=(4, 4)),
        "jugs": _jugs(d, 4, 9, 6),
        "jugs_none": _jugs(d, 2, 6, 5),
    }


def _jugs(d, a: int, b: int, t: int):
    f = d / f"jugs{a}{b}{t}.txt"
    f.write_text(f"a: {a}\nb: {b}\ntarget: {t}\n", encoding="utf-8")
    return f


def _make(loaded, engine: str = "bfs", path=None, tmp=None):
    result = api.solve(loaded, engine, Limits(), kernel="numpy")
    path = path or (tmp / f"{engine}.cert")
    info = write_certificate(loaded, result, str(path), kernel="numpy")
    return result, info, cert.read(str(path))


def _rejects(task, c: cert.Certificate, words: str) -> str:
    with pytest.raises(cert.CertificateRejected) as e:
        cert.check(task, c)
    assert words in str(e.value), str(e.value)
    assert e.value.code == cert.EXIT_CERT_REJECTED == 22
    return str(e.value)


def _without(c: cert.Certificate, i: int) -> cert.Certificate:
    return dataclasses.replace(c, keys=c.keys[:i] + c.keys[i + 1:], g=c.g[:i] + c.g[i + 1:])


def _with_g(c: cert.Certificate, i: int, g: int) -> cert.Certificate:
    gs = list(c.g)
    gs[i] = g
    return dataclasses.replace(c, g=gs)


def _plan_states(task, plan):
    """Keys of the canonical states a plan passes, in order (the initial state first)."""
    key = cert._key_function(task, cert.var_layout(task))
    s = list(task.init)
    out = [key(s)]
    for k in plan:
        s = ref.apply(task, task.actions[k], s)
        out.append(key(s))
    return out


# ----------------------------------------------------------------------------- accepted
@pytest.mark.parametrize("name,options,engine,optimum", [
    ("sliding", [], "bfs", None),
    ("sliding", [], "astar", None),
    ("klotski", [], "bfs", 9),                  # 0/1 costs (moves metric): the 0-1 BFS case
    ("klotski", ["metric=steps"], "ucs", 17),
])
def test_valid_certificates_are_accepted(files, tmp_path, name, options, engine, optimum):
    loaded = api.load_task(name, str(files[name]), options)
    result, info, c = _make(loaded, engine, tmp=tmp_path)
    assert result.status == "optimal" and info["kind"] == "optimum"
    # the plain-Python search of the helpers takes 20 s on the klotski layout: its optima are pinned
    expected = reference_optimum(loaded.task) if optimum is None else optimum
    assert expected == result.cost == c.header["cost"] == info["cost"]
    rep = cert.check(loaded.task, c)
    assert (rep.kind, rep.cost, rep.states) == ("optimum", result.cost, info["states"])
    assert rep.transitions > rep.states > 10 and rep.reference_states >= 1
    assert all(0 <= g < result.cost for g in c.g)
    if name == "klotski":
        assert loaded.task.groups and rep.mode == "fast"


def test_general_costs_and_reference_mode(files, tmp_path):
    loaded = api.load_task(str(MODELS_DIR / "jugs.py"), str(files["jugs"]), ["cost=litres"])
    assert loaded.task.cost_kind == "general"
    result, _, c = _make(loaded, "ucs", tmp=tmp_path)
    assert result.cost == reference_optimum(loaded.task)
    assert cert.check(loaded.task, c, mode="reference").mode == "reference"
    # a g value one too high on a state whose cheapest parent is the initial state
    key = cert._key_function(loaded.task, cert.var_layout(loaded.task))
    first = next(t for k, t, cost in ref.successors(loaded.task, loaded.task.init) if 0 < cost < result.cost)
    i = c.keys.index(key(first))
    _rejects(loaded.task, _with_g(c, i, c.g[i] + 1), "more than")


def test_unsolvable_certificates(files, tmp_path):
    for loaded, engine in ((api.load_task("sliding", str(files["swapped"])), "bfs"),
                           (api.load_task(str(MODELS_DIR / "jugs.py"), str(files["jugs_none"]),
                                          ["cost=litres"]), "ucs")):
        result, info, c = _make(loaded, engine, tmp=tmp_path)
        assert result.status == "unsolvable" and c.header["kind"] == "unsolvable"
        rep = cert.check(loaded.task, c)
        assert rep.kind == "unsolvable" and rep.cost is None and rep.states == info["states"] > 1
        # every reachable state is needed: removing any one leaves a successor (or the start) missing
        for i in range(len(c.keys)):
            _rejects(loaded.task, _without(c, i), "initial state is not in S" if c.g[i] == 0 and i ==
                     c.g.index(0) and c.g.count(0) == 1 else "is missing from S")


# ----------------------------------------------------------------------------- rejected
@pytest.fixture(scope="module")
def sliding_cert(files, tmp_path_factory):
    loaded = api.load_task("sliding", str(files["sliding"]))
    result, _, c = _make(loaded, tmp=tmp_path_factory.mktemp("sl"))
    return loaded, result, c


def test_a_removed_state_is_rejected(sliding_cert):
    loaded, result, c = sliding_cert
    task = loaded.task
    states = _plan_states(task, result.plan)
    # a state on the optimal plan, deepest in S: it is the successor of the plan's previous state
    i = c.keys.index(states[-2])
    assert c.g[i] == result.cost - 1
    _rejects(task, _without(c, i), "is missing from S")
    # the initial state
    _rejects(task, _without(c, c.keys.index(states[0])), "initial state is not in S")
    # every state of S is someone's successor below C (or the initial state): any removal is caught
    rng = random.Random(3)
    for i in rng.sample(range(len(c.keys)), 20):
        _rejects(task, _without(c, i), "")


def test_wrong_g_values_are_rejected(sliding_cert):
    loaded, result, c = sliding_cert
    task, C = loaded.task, result.cost
    states = _plan_states(task, result.plan)
    # raised: the plan's second state is a successor of the initial state at cost 1
    i = c.keys.index(states[1])
    assert c.g[i] == 1
    _rejects(task, _with_g(c, i, 2), "has g = 2, more than 0 + 1")
    # lowered: the plan's last state before the goal, claimed one cheaper, must then list the goal
    i = c.keys.index(states[-2])
    _rejects(task, _with_g(c, i, C - 2), "is missing from S")
    # out of range
    _rejects(task, _with_g(c, i, C), f"outside 0..{C - 1}")
    _rejects(task, _with_g(c, c.keys.index(states[0]), 1), "initial state is not in S with g = 0")


def test_altered_plans_and_claims_are_rejected(sliding_cert):
    loaded, result, c = sliding_cert
    task, plan = loaded.task, result.plan

    def head(**kw):
        return dataclasses.replace(c, header={**c.header, **kw})

    _rejects(task, head(plan=plan[:-1], plan_labels=None), "does not reach the goal")
    other = next(k for k in range(len(task.actions)) if k != plan[0])
    _rejects(task, head(plan=[other] + plan[1:], plan_labels=None), "does not replay")
    _rejects(task, head(plan_labels=list(reversed(c.header["plan_labels"]))), "labels")
    _rejects(task, head(cost=result.cost + 1), "the plan costs")
    _rejects(task, head(cost=result.cost - 1), "the plan costs")
    _rejects(task, head(plan=["x"]), "not a list of action indices")


def test_a_goal_state_in_s_is_rejected(sliding_cert, tmp_path):
    """A certificate for a cost two above the optimum (plan: one move there and back first)."""
    loaded, result, c = sliding_cert
    task = loaded.task
    s0 = task.init
    k, back = next((a, b) for a, t, _ in ref.successors(task, s0)
                   for b, u, _ in ref.successors(task, t) if u == list(s0))
    keys, gs = collect(loaded.kernel("numpy"), result.cost + 2)
    words = keys.astype("<u8").ravel().tolist()
    bad = cert.Certificate({**c.header, "cost": result.cost + 2, "plan": [k, back] + result.plan,
                            "plan_labels": None}, [int(x) for x in words], gs.tolist())
    _rejects(task, bad, "is a goal state")


def test_format_level_corruptions(sliding_cert, files):
    loaded, result, c = sliding_cert
    task = loaded.task
    ks, gs = list(c.keys), list(c.g)
    swapped = dataclasses.replace(c, keys=[ks[1], ks[0]] + ks[2:], g=[gs[1], gs[0]] + gs[2:])
    _rejects(task, swapped, "strictly ascending")
    twice = dataclasses.replace(c, keys=ks + [ks[-1]], g=gs + [gs[-1]])
    _rejects(task, twice, "strictly ascending")
    _rejects(task, dataclasses.replace(c, header={**c.header, "fingerprint": "sha256:0"}), "another task")
    # the same certificate against another instance
    other = api.load_task("sliding", f"{ROOT}/instances/sliding/eight.txt#eight-easy")
    _rejects(other.task, c, "another task")


def test_non_canonical_states_are_rejected(files, tmp_path):
    loaded = api.load_task("klotski", str(files["klotski"]), ["metric=steps"])
    task = loaded.task
    _, _, c = _make(loaded, tmp=tmp_path)
    layout = cert.var_layout(task)
    unpack = cert._unpack_function(task, layout)
    group = [o[0] for o in task.groups[0]]
    i = next(i for i, k in enumerate(c.keys) if len({unpack(k)[v] for v in group}) == len(group))
    s = list(unpack(c.keys[i]))
    s[group[0]], s[group[1]] = s[group[1]], s[group[0]]       # the same board, objects not sorted
    k = sum((x - v.lo) << (64 * w + sh) for x, v, (w, sh, _) in zip(s, task.variables, layout))
    keys = sorted(list(c.keys[:i]) + list(c.keys[i + 1:]) + [k])
    g = {**dict(zip(c.keys, c.g)), k: c.g[i]}
    _rejects(task, dataclasses.replace(c, keys=keys, g=[g[x] for x in keys]), "not in canonical form")


def test_symmetry_claims_are_checked(files):
    klotski = api.load_task("klotski", str(files["klotski"])).task
    assert cert.check_symmetry(klotski) == ""
    # piece A (2x2) is not interchangeable with a 1x1 piece, though their domains are equal
    fake = dataclasses.replace(klotski, groups=[[(0,), (2,)]])
    assert "changes the goal" in cert.check_symmetry(fake)
    fake = dataclasses.replace(klotski, groups=[[(2,), (3,)], [(1,), (4,)]])   # 1x2 vs 1x1: moves differ
    assert "maps action" in cert.check_symmetry(fake)
    sliding = api.load_task("sliding", str(files["sliding"])).task
    why = cert.check_symmetry(dataclasses.replace(sliding, groups=[[(1,), (2,)]]))
    assert "swapping t[1] <-> t[2] changes the goal" in why


def test_transcription_agrees_with_the_reference(files):
    for name, options in (("klotski", []), ("sliding", []), (str(MODELS_DIR / "jugs.py"), ["cost=litres"])):
        inst = files["jugs"] if name.endswith("jugs.py") else files[name]
        task = api.load_task(name, str(inst), options).task
        fast = cert._Transcription(task).fn
        for s in sample_states(task, seed=5):
            for room in (1, 2, float("inf")):
                assert fast(s, room) == cert._reference_successors(task, s, room), (name, s, room)


# ----------------------------------------------------------------------------- files and command line
def test_cli_solve_writes_and_check_certificate_accepts(files, tmp_path, capsys):
    path = tmp_path / "k.cert"
    code, out, _ = run_cli(["solve", "klotski", files["klotski"], "--kernel", "numpy", "-q",
                            "--certificate", path], capsys)
    assert code == 0 and "certificate: " in out and path.stat().st_size > 100
    code, out, err = run_cli(["check-certificate", "klotski", files["klotski"], path], capsys)
    assert code == 0, err
    assert "certificate valid" in out and "optimum 9" in out
    code, out, _ = run_cli(["check-certificate", "klotski", files["klotski"], path, "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["valid"] and doc["cost"] == 9 and doc["kind"] == "optimum"
    # the same file against other options: another task
    code, out, _ = run_cli(["check-certificate", "klotski", files["klotski"], path, "-O", "metric=steps"],
                           capsys)
    assert code == 22 and "another task" in out
    # one state removed, written back as a file
    c = cert.read(str(path))
    bad = tmp_path / "bad.cert"
    keep = [i for i in range(len(c.keys)) if i != len(c.keys) // 2]
    W = c.header["layout"]["words"]
    words = [(c.keys[i] >> (64 * j)) & (2**64 - 1) for i in keep for j in range(W)]
    bad.write_bytes(cert.encode(c.header, words, [c.g[i] for i in keep]))
    code, out, _ = run_cli(["check-certificate", "klotski", files["klotski"], bad], capsys)
    assert code == 22 and "certificate rejected" in out
    code, out, _ = run_cli(["check-certificate", "klotski", files["klotski"], bad, "--json"], capsys)
    assert code == 22 and json.loads(out)["valid"] is False


def test_cli_unsolvable_and_bad_files(files, tmp_path, capsys):
    path = tmp_path / "u.cert"
    code, out, _ = run_cli(["solve", "sliding", files["swapped"], "--kernel", "numpy", "-q", "--json",
                            "--certificate", path], capsys)
    assert code == 10 and json.loads(out)["certificate"]["kind"] == "unsolvable"
    code, out, _ = run_cli(["check-certificate", "sliding", files["swapped"], path], capsys)
    assert code == 0 and "is unsolvable" in out
    data = path.read_bytes()
    for name, content, words in (("trunc.cert", data[:-5], "body holds"),
                                 ("junk.cert", b"hello\n", "not a puzzleplan certificate"),
                                 ("head.cert", cert.MAGIC + b"{]\n", "malformed certificate header")):
        (tmp_path / name).write_bytes(content)
        code, _, err = run_cli(["check-certificate", "sliding", files["swapped"], tmp_path / name], capsys)
        assert code == 30 and words in err and err.count("\n") == 1, err
    code, _, err = run_cli(["check-certificate", "sliding", files["swapped"], tmp_path / "none.cert"], capsys)
    assert code == 30 and "cannot read certificate" in err
    # a limit: no certificate, a note, the limit's own exit code
    code, _, err = run_cli(["solve", "sliding", f"{ROOT}/instances/sliding/eight.txt#eight-hardest-a",
                            "--kernel", "numpy", "-q", "--max-states", "50", "--certificate",
                            tmp_path / "x.cert"], capsys)
    assert code == 12 and "no certificate written" in err and not (tmp_path / "x.cert").exists()
    code, _, err = run_cli(["solve", "sliding", files["sliding"], "--kernel", "numpy", "-q",
                            "--certificate", tmp_path / "no" / "dir" / "x.cert"], capsys)
    assert code == 35 and "cannot write certificate" in err


# ----------------------------------------------------------------------------- limits
def test_the_certificate_pass_keeps_the_runs_limits(files, tmp_path, capsys):
    """The pass that collects S can hold far more states than the search stored (astar never
    stores most of S): it keeps the run's state, memory and time limits and writes nothing past
    them, while the search's result and exit code stand."""
    import time

    from puzzleplan.certificate import CertificateLimit

    loaded = api.load_task("sliding", str(files["sliding"]))
    result = api.solve(loaded, "astar", Limits(), kernel="numpy")
    assert result.status == "optimal"
    states = len(collect(loaded.kernel("numpy"), result.cost)[0])
    stored = result.stats["states"]
    assert stored * 4 < states       # the search stored a small part of S
    cap = (stored + states) // 2     # enough for the search, not for S
    path = tmp_path / "capped.cert"
    with pytest.raises(CertificateLimit, match="in the certificate pass"):
        write_certificate(loaded, result, str(path), kernel="numpy", limits=Limits(max_states=cap))
    assert not path.exists()
    past = Limits(time_s=1.0, started=time.perf_counter() - 5.0)     # the run's deadline has passed
    with pytest.raises(CertificateLimit, match="time limit"):
        write_certificate(loaded, result, str(path), kernel="numpy", limits=past)
    assert not path.exists()
    info = write_certificate(loaded, result, str(path), kernel="numpy", limits=Limits(max_states=states))
    assert info["states"] == states and cert.check(loaded.task, cert.read(str(path))).states == states
    # the command line: the plan and exit code of the search, a note instead of the file
    path = tmp_path / "cli.cert"
    code, out, err = run_cli(["solve", "sliding", files["sliding"], "-e", "astar", "--kernel", "numpy", "-q",
                              "--json", "--max-states", cap, "--certificate", path], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["status"] == "optimal" and "certificate" not in doc
    assert "no certificate written: state limit in the certificate pass" in err, err
    assert err.count("\n") == 1 and not path.exists()
    code, out, _ = run_cli(["verify", "sliding", files["sliding"], "--engines", "astar,bfs", "--kernel",
                            "numpy", "--max-states", cap, "--certificate", tmp_path / "v"], capsys)
    assert "certificate: none written (from astar)" in out, out


def test_the_check_keeps_its_limits(sliding_cert, files, tmp_path, capsys, monkeypatch):
    """A certificate's size is its writer's choice, so the checker has limits of its own: past its
    time or memory limit it stops undecided (exit 12), neither accepting nor rejecting."""
    import time

    loaded, _, c = sliding_cert
    path = tmp_path / "s.cert"
    write_certificate(loaded, api.solve(loaded, "bfs", Limits(), kernel="numpy"), str(path), kernel="numpy")
    n = len(c.keys)
    assert n > 3 * cert.LIMIT_EVERY
    # generous limits: the same verdict as without them
    assert cert.check_file(loaded.task, str(path), limits=cert.CheckLimits(600, 100_000)).states == n
    # a deadline already passed: undecided before the first state, and no verdict
    with pytest.raises(cert.CheckUndecided, match=r"time limit \(1 s\) after 0 of") as e:
        cert.check(loaded.task, c, limits=cert.CheckLimits(1.0, None, time.perf_counter() - 5.0))
    assert e.value.code == 12
    # too little memory for the file's states: undecided from the header, before decoding
    monkeypatch.setattr(cert, "rss_mb", lambda: 100.0)
    need = n * cert.BYTES_PER_STATE / 2**20
    with pytest.raises(cert.CheckUndecided, match=f"its {n:,} states need about"):
        cert.read(str(path), cert.CheckLimits(None, 100.0 + need / 2))
    assert len(cert.read(str(path), cert.CheckLimits(None, 100.0 + need * 2)).keys) == n
    # the resident memory passes the limit while states are checked: stopped at the next look
    looks = iter([0.0] + [1e9] * 10)
    monkeypatch.setattr(cert, "rss_mb", lambda: next(looks))
    with pytest.raises(cert.CheckUndecided, match=r"memory limit \(5000 MiB; resident 1,000,000,000 MiB\) "
                                                   r"after 0 of"):
        cert.check_file(loaded.task, str(path), limits=cert.CheckLimits(None, 5000.0))
    monkeypatch.undo()
    # the command line: one line, exit 12; --json says valid null and why
    base = ["check-certificate", "sliding", files["sliding"], path]
    code, out, _ = run_cli([*base, "--max-memory", max(1.0, cert.rss_mb() * 0.5)], capsys)
    assert code == 12 and out.count("\n") == 1 and "check undecided" in out, out
    code, out, _ = run_cli([*base, "--json", "--time-limit", 1e-6], capsys)
    doc = json.loads(out)
    assert code == 12 and doc["valid"] is None and "time limit" in doc["undecided"], doc
    code, out, _ = run_cli([*base, "--time-limit", 600, "--max-memory", 100_000], capsys)
    assert code == 0 and "certificate valid" in out, out


def test_the_cross_check_thins_out_on_large_files(sliding_cert, monkeypatch):
    """Every 64th state is also expanded by the reference, until that would pass REFERENCE_STATES
    states; then they spread evenly over S (the reference's cost grows with S, a bug shows on a
    sample)."""
    loaded, _, c = sliding_cert
    n = len(c.keys)
    assert cert.check(loaded.task, c).reference_states == -(-n // 64)
    monkeypatch.setattr(cert, "REFERENCE_STATES", 10)
    every = n // 10
    assert every > 64
    assert cert.check(loaded.task, c).reference_states == -(-n // every)


# ----------------------------------------------------------------------------- the fast paths
def test_transcription_dispatch_agrees_with_the_reference(files):
    """One successor function per value of the variable most guards pin (the player's square),
    the unpinned actions in every one: the answers equal the reference's, states sampled by
    random walks, on tasks with a pinned variable and without one (the sliding puzzle's moves
    each pin another cell to the blank)."""
    micro = f"{ROOT}/instances/sokoban/microban.xsb"
    cases = [("sliding", str(files["sliding"]), [], False),
             ("sokoban", micro, ["level=3", "metric=pushes", "prune=none"], True),
             ("sokoban", micro, ["level=3", "metric=moves", "prune=none"], True),
             ("kwirk", f"{ROOT}/instances/kwirk/going-up/06_1-6.txt", ["prune=none"], None),
             (str(MODELS_DIR / "jugs.py"), str(files["jugs"]), ["cost=litres"], False)]
    for name, inst, options, pinned in cases:
        task = api.load_task(name, inst, options).task
        tr = cert._Transcription(task)
        if pinned is not None:
            assert (tr.pin_var is not None) == pinned, name
        v, by_value, rest = cert._dispatch(task)
        listed = sorted(rest + [k for ks in by_value.values() for k in ks])
        assert listed == list(range(len(task.actions)))          # every action in exactly one list
        for c, ks in by_value.items():                           # and pinned where it says
            assert all(cert._pin(task.actions[k].guard) == (v, c) for k in ks)
        for s in sample_states(task, seed=11, n_walks=8, length=80):
            for room in (1, 3, float("inf")):
                assert tr.fn(s, room) == cert._reference_successors(task, s, room), (name, options, s, room)


def test_key_table_answers_as_a_dict():
    """The compact table (sorted keys, bucket index, bisection) against a dict, on seeded random
    key sets: one-word keys in an array, clustered and spread, and multi-word Python ints."""
    from array import array

    rng = random.Random(7)
    for n, bits, clustered, as_array in ((0, 64, False, True), (1, 64, False, True), (5, 8, False, True),
                                         (3000, 64, False, True), (3000, 64, True, True),
                                         (2000, 40, False, True), (1500, 150, False, False)):
        if clustered:   # a few dense runs far apart: most buckets empty, a few full
            pool = {base + rng.randrange(500) for base in (0, 2**40, 2**63) for _ in range(n // 3)}
        else:
            pool = {rng.randrange(2**bits) for _ in range(n)}
        keys = sorted(pool)
        gs = [rng.randrange(200) for _ in keys]
        table = cert.KeyTable(array("Q", keys) if as_array else keys, array("B", gs))
        want = dict(zip(keys, gs))
        probes = keys + [rng.randrange(2**bits) for _ in range(500)] + [k + 1 for k in keys[:200]] + \
            [k - 1 for k in keys[:200] if k]
        if keys:
            probes += [keys[0] - 1, keys[-1] + 1, 0]
        for k in probes:
            if k >= 0:
                assert table.get(k) == want.get(k), (n, bits, k)


@pytest.mark.skipif(not cert._CAN_FORK, reason="needs fork")
def test_parallel_check_gives_the_serial_verdict(sliding_cert, files, tmp_path, capsys):
    """``jobs`` forked workers over slices of S: the same verdict, transitions and cross-checked
    states as one process on a valid certificate; every corruption rejected either way, with the
    same reason."""
    loaded, _, c = sliding_cert
    task = loaded.task
    one = cert.check(task, c)
    for jobs in (2, 3, 7):
        many = cert.check(task, c, jobs=jobs)
        assert (many.states, many.transitions, many.reference_states) == \
            (one.states, one.transitions, one.reference_states)
    rng = random.Random(3)
    n = len(c.keys)
    for i in rng.sample(range(1, n), 6):
        for bad in (_without(c, i), _with_g(c, i, max(0, c.g[i] - 1))):
            try:
                cert.check(task, bad)
                serial = None
            except cert.CertificateRejected as e:
                serial = e.message
            if serial is None:
                continue        # a lower g can still be consistent; nothing to compare
            with pytest.raises(cert.CertificateRejected) as e:
                cert.check(task, bad, jobs=2)
            assert e.value.message == serial
    # the command line
    path = tmp_path / "p.cert"
    write_certificate(loaded, api.solve(loaded, "bfs", Limits(), kernel="numpy"), str(path), kernel="numpy")
    code, out, _ = run_cli(["check-certificate", "sliding", files["sliding"], path, "--jobs", 2, "--json"],
                           capsys)
    doc = json.loads(out)
    assert code == 0 and doc["valid"] and doc["transitions"] == one.transitions
    # limits are the parent's: a deadline already passed leaves it undecided
    import time

    with pytest.raises(cert.CheckUndecided, match="time limit"):
        cert.check(task, c, limits=cert.CheckLimits(1.0, None, time.perf_counter() - 5.0), jobs=2)
    with pytest.raises(cert.CheckUndecided, match=r"memory limit \(1 MiB; resident"):
        cert.check(task, c, limits=cert.CheckLimits(None, 1.0), jobs=2)
    import os

    together = cert.pss_mb([os.getpid()])      # this process alone: its PSS, at most its RSS
    assert 0 < together <= cert.rss_mb() + 1


def test_the_writer_lays_out_the_same_bytes_as_encode():
    """The writer builds the file from numpy arrays (no Python int a word, the differences of
    one-word keys taken in place, chunk by chunk from the end); the bytes equal ``encode``'s from
    lists, on seeded random sorted keys of one to three words, over several chunks too."""
    import numpy as np

    from puzzleplan.certificate import CHUNK, file_parts

    rng = np.random.default_rng(5)
    cases = ((1, 0, 1), (1, 1, 3), (1, 5000, 200), (1, 3000, 70000), (1, 2 * CHUNK + 7, 300),
             (1, CHUNK + 1, 2), (2, 4000, 9), (3, 50, 300))
    for words, n, gmax in cases:
        raw = rng.integers(0, 2**63, size=(n, words), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        # ascending as integers, word 0 lowest
        ints = sorted({sum(int(w) << (64 * j) for j, w in enumerate(row)) for row in raw})
        keys = np.array([[(k >> (64 * j)) & (2**64 - 1) for j in range(words)] for k in ints],
                        dtype=np.uint64).reshape(-1, words)
        gs = rng.integers(0, gmax, size=keys.shape[0], dtype=np.int64)
        header = {"format": cert.FORMAT, "version": cert.VERSION, "kind": "optimum",
                  "layout": {"words": words, "vars": []}}
        want = cert.encode(header, keys.ravel().tolist(), gs.tolist())
        assert b"".join(file_parts(header, keys, gs)) == want, (words, n)


def test_the_pass_refuses_a_finish_over_its_memory_budget(files, tmp_path, monkeypatch):
    """Sorting and writing S takes memory after the last expansion; the pass estimates its peak
    (``finish_peak``) against the run's budget and writes nothing when it would not fit, instead
    of running past ``--max-memory``."""
    import puzzleplan.certificate as writer

    loaded = api.load_task("sliding", str(files["sliding"]))
    result = api.solve(loaded, "bfs", Limits(), kernel="numpy")
    path = tmp_path / "m.cert"
    assert writer.write_certificate(loaded, result, str(path), kernel="numpy", limits=Limits(max_mb=4000))
    path.unlink()
    monkeypatch.setattr(writer, "finish_peak", lambda *sizes: 2**40)
    with pytest.raises(writer.CertificateLimit, match="certificate pass: sorting and writing"):
        writer.write_certificate(loaded, result, str(path), kernel="numpy", limits=Limits(max_mb=4000))
    assert not path.exists()


def test_the_pass_refuses_to_grow_its_table_past_the_memory_budget(files, tmp_path):
    """The table doubles in one step (keys, slots, g and the done flags, the old arrays beside the
    new): the pass estimates that step before it takes it, so a budget that the table fits before
    the last doubling but not through it stops the pass there, not past ``--max-memory``."""
    from puzzleplan.certificate import CertificateLimit
    from puzzleplan.solvers.visited import capacity_for

    loaded = api.load_task("sliding", f"{ROOT}/instances/sliding/eight.txt#eight-hardest-a")
    result = api.solve(loaded, "bfs", Limits(), kernel="numpy")
    states = len(collect(loaded.kernel("numpy"), result.cost)[0])
    cap = capacity_for(states, 1 << 12)        # at least; a large batch can double it once more
    assert cap >= 1 << 16                      # the table grew several times
    per_slot = 8 + 8 + 4 + 1                   # key, two int32 slots, int32 g, the done flag
    before = (cap // 2) * per_slot             # the table just before its last doubling
    path = tmp_path / "g.cert"
    # room for the table before the last doubling, not for the doubling itself
    with pytest.raises(CertificateLimit, match="growing to .* states needs about"):
        write_certificate(loaded, result, str(path), kernel="numpy",
                          limits=Limits(max_mb=(before * 2.2) / 2**20))
    assert not path.exists()
    info = write_certificate(loaded, result, str(path), kernel="numpy",
                             limits=Limits(max_mb=(cap * per_slot * 8) / 2**20))
    assert info["states"] == states and cert.check(loaded.task, cert.read(str(path))).states == states
