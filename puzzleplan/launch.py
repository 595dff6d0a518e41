"""The ``puzzleplan`` command's entry point: hand the run to a warm server when one is running.

A warm run spends most of its wall time before the search: importing numba and initialising its
compiler target take about 0.45 s on the development machine, whatever the search.  ``puzzleplan
serve`` keeps one process with all of that done; this entry point, which imports nothing heavy,
passes it the command line, the working directory, the environment and its own stdin, stdout and
stderr (the file descriptors themselves, so a terminal stays a terminal), and exits with the code
the served run returns.  The server forks a child per run, so runs never share state.

Without a server -- no socket, a refused connection, ``PUZZLEPLAN_SERVER=off``, or a server that
answers "fallback" (another interpreter, package or cache settings) -- the run happens here,
exactly as before; with ``PUZZLEPLAN_SERVER_REQUIRED=1`` that is an error instead (exit 31).
Signals (Ctrl-C, SIGTERM, SIGHUP) are forwarded to the served child, which ends its engine as a
limit, as a local run does.  docs/cli.md, "puzzleplan serve".
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import time

from .wire import process_age, receive, send, settings, socket_path

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

def served(argv: list[str]) -> int | None:
    """Run ``argv`` on the server; its exit code, or None to run here instead."""
    if os.environ.get("PUZZLEPLAN_SERVER", "") in ("off", "0", "no") or argv[:1] == ["serve"]:
        return None
    path = socket_path()
    if not os.path.exists(path):
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        send(conn, {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "settings": settings(),
                    "age": process_age() or 0.0, "sent": time.time()}, [0, 1, 2])
        first, _ = receive(conn)
    except OSError:
        conn.close()
        return None
    if first is None or "pid" not in first:     # "fallback" (other settings) or a server going away
        conn.close()
        return None
    pid = int(first["pid"])

    def forward(signum: int, frame: object) -> None:
        try:
            os.kill(pid, signum)
        except OSError:
            pass

    for s in FORWARDED:
        signal.signal(s, forward)
    try:
        last, _ = receive(conn)      # a forwarded signal's handler returns: the read resumes (PEP 475)
    except OSError:
        last = None
    conn.close()
    if last is None or "exit" not in last:
        print("puzzleplan: the server's run ended without an exit code (killed?)", file=sys.stderr)
        return 1
    return int(last["exit"])


def main() -> None:
    if sys.argv[1:2] == ["serve"]:     # the server itself: this entry point's own command
        from .serve import main as serve_main

        sys.exit(serve_main(sys.argv[2:]))
    code = served(sys.argv[1:])
    if code is None and os.environ.get("PUZZLEPLAN_SERVER_REQUIRED") == "1" and sys.argv[1:2] != ["serve"]:
        print(f"puzzleplan: error: PUZZLEPLAN_SERVER_REQUIRED=1, but no server took the run (none on "
              f"{socket_path()}, or another interpreter, package or cache settings)", file=sys.stderr)
        sys.exit(31)     # EXIT_BAD_OPTION (lang/errors.py: not imported here, it is not light)
    if code is None:
        from .cli import main as run_here

        code = run_here()
    sys.exit(code)


__all__ = ["main", "served"]


if __name__ == "__main__":
    main()
