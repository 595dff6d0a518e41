"""The few messages between the ``puzzleplan`` entry point and ``puzzleplan serve``: length-prefixed
JSON over a Unix socket, with file descriptors passed alongside (``SCM_RIGHTS``).  Standard library
only: the entry point imports this before it knows whether it will need anything heavier.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys
import time

HEADER = struct.Struct("!I")


def process_age() -> float | None:
    """Seconds since this process started (None where ``/proc`` does not say): ``--time-limit``
    counts interpreter start-up and imports, in a local run and in a served one alike."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])   # field 22: starttime
        return time.clock_gettime(time.CLOCK_BOOTTIME) - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def socket_path() -> str:
    """``$PUZZLEPLAN_SERVER`` when it names a path, else ``server.sock`` in the cache base directory
    (``$PUZZLEPLAN_CACHE`` or ``~/.cache/puzzleplan``, the directory of the kernel cache)."""
    named = os.environ.get("PUZZLEPLAN_SERVER", "")
    if named and named not in ("on", "auto"):
        return named
    root = os.environ.get("PUZZLEPLAN_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "puzzleplan")
    return os.path.join(root, "server.sock")


def settings() -> dict[str, str]:
    """What must be the same in the client and the server for a served run to be this run: the
    interpreter, the package, and the environment variables that steer imports and caches."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = {k: v for k, v in os.environ.items()
           if k.startswith(("PUZZLEPLAN_", "NUMBA_")) or k in ("PYTHONPATH", "PYTHONHASHSEED", "HOME")}
    for k in ("PUZZLEPLAN_SERVER", "PUZZLEPLAN_SERVER_REQUIRED"):
        env.pop(k, None)
    return {"python": sys.executable, "package": here, **{f"env:{k}": v for k, v in sorted(env.items())}}


def send(conn: socket.socket, doc: dict, fds: list[int] | None = None) -> None:
    body = json.dumps(doc).encode()
    data = HEADER.pack(len(body)) + body
    if fds:
        conn.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack(f"{len(fds)}i", *fds))])
    else:
        conn.sendall(data)


def receive(conn: socket.socket, with_fds: int = 0) -> tuple[dict | None, list[int]]:
    """One message (None at end of stream) and the descriptors that came with it."""
    fds: list[int] = []
    head = b""
    while len(head) < HEADER.size:
        if with_fds and not fds:
            chunk, anc, _, _ = conn.recvmsg(HEADER.size - len(head), socket.CMSG_SPACE(with_fds * 4))
            for level, kind, payload in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.extend(struct.unpack(f"{len(payload) // 4}i", payload[: len(payload) // 4 * 4]))
        else:
            chunk = conn.recv(HEADER.size - len(head))
        if not chunk:
            return None, fds
        head += chunk
    (size,) = HEADER.unpack(head)
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            return None, fds
        body += chunk
    return json.loads(body), fds


__all__ = ["process_age", "receive", "send", "settings", "socket_path"]
