"""``puzzleplan serve`` and the entry point that hands runs to it (puzzleplan/launch.py, serve.py).

A served run must be the same run: the same output and exit code as the run made in the client's
own process, its signals forwarded, and the client must fall back to running the command itself
whenever the server's settings differ.  ``PUZZLEPLAN_SERVER_REQUIRED=1`` turns a fallback into an
error, which is how these tests know a run was (or was not) served.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import FAYAA, ROOT

EIGHT = str(ROOT / "instances/sliding/eight.txt")
CLIENT = [sys.executable, "-c", "from puzzleplan.launch import main; main()"]
pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the server forks")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    sock = tmp_path_factory.mktemp("srv") / "s.sock"
    env = {**os.environ, "PUZZLEPLAN_SERVER": str(sock)}
    proc = subprocess.Popen([*CLIENT, "serve", "--idle", "10"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)
    end = time.monotonic() + 300          # the warm-up may compile the interpreter (a cold cache)
    while not sock.exists():
        assert proc.poll() is None and time.monotonic() < end, proc.communicate()
        time.sleep(0.1)
    yield sock, env
    stop = subprocess.run([*CLIENT, "serve", "--stop"], env=env, timeout=60, capture_output=True, text=True)
    assert stop.returncode == 0, stop.stderr
    out, err = proc.communicate(timeout=60)     # reading its pipes: a full pipe never holds it up
    assert proc.returncode == 0, (out, err)
    assert not sock.exists()


def run(env: dict, *argv: str, required: bool = True, **kw) -> subprocess.CompletedProcess:
    env = {**env, "PUZZLEPLAN_SERVER_REQUIRED": "1" if required else "0"}
    return subprocess.run([*CLIENT, *argv], env=env, capture_output=True, text=True, cwd=ROOT,
                          timeout=300, **kw)


def test_a_served_run_is_the_local_run(server):
    sock, env = server
    argv = ["solve", "sliding", f"{EIGHT}#eight-easy", "--kernel", "numpy", "--json"]
    here = run({**env, "PUZZLEPLAN_SERVER": "off"}, *argv, required=False)
    there = run(env, *argv)
    assert here.returncode == there.returncode == 0, there.stderr
    a, b = json.loads(here.stdout), json.loads(there.stdout)
    assert (a["status"], a["cost"], a["plan"]) == (b["status"], b["cost"], b["plan"])
    assert a["status"] == "optimal"
    bad = run(env, "solve", "sliding", f"{EIGHT}#no-such-id")      # errors and exit codes too
    assert bad.returncode == 30 and "no record with id 'no-such-id'" in bad.stderr and bad.stdout == ""
    assert len(bad.stderr.strip().splitlines()) == 1


def test_other_settings_fall_back_to_a_local_run(server):
    sock, env = server
    other = {**env, "NUMBA_OPT": "2"}           # a numba setting the server did not start with
    refused = run(other, "models")
    assert refused.returncode == 31 and "no server took the run" in refused.stderr
    local = run(other, "models", required=False)
    assert local.returncode == 0 and "sliding" in local.stdout


def test_signals_reach_the_served_run(server):
    sock, env = server
    env = {**env, "PUZZLEPLAN_SERVER_REQUIRED": "1"}
    p = subprocess.Popen([*CLIENT, "solve", "klotski", f"{FAYAA}#fayaa-001", "-O", "metric=steps",
                          "-e", "sat", "--json"], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)     # 116 steps: sat is far from done after 2 s
    time.sleep(2.0)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    doc = json.loads(out)
    assert doc["status"] == "limit" and "SIGINT" in doc["message"] and "Traceback" not in err


def test_a_second_server_on_the_same_socket_is_refused(server):
    sock, env = server
    second = run(env, "serve", required=False)
    assert second.returncode == 1 and "already listening" in second.stderr
    assert Path(sock).exists()


def test_the_entry_point_imports_nothing_heavy():
    """The point of the server: the client must not pay the imports it saves (numpy, numba)."""
    code = ("import sys; import puzzleplan.launch; "
            "print(sorted(m for m in ('numpy', 'numba', 'ortools', 'pysat') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"
