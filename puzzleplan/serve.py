"""``puzzleplan serve``: one warm process that forks a child for each ``puzzleplan`` run.

Why: a warm run (kernels in numba's cache) still spends about 0.45 s importing numba and
initialising its compiler target before the first state is expanded; searches that take
milliseconds wait for it every time.  The server does that once, and a small task run through the
interpreted kernel loads the interpreter's and the bfs driver's compiled code.  Each run is then a
``fork`` of that process: the child takes the client's stdin/stdout/stderr descriptors, working
directory, environment and command line, runs the ordinary command-line code, and sends back the
exit code.  Nothing a run does reaches the server or another run.

The server answers "fallback" (the client then runs the command itself) when the client's
interpreter, package directory or cache-related environment (``PUZZLEPLAN_*``, ``NUMBA_*``,
``PYTHONPATH``, ``HOME``) differ from its own, and it stops when its package's source files
changed since it started (an edited checkout) or after ``--idle`` minutes without a run.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
import types
from pathlib import Path

from .wire import receive, send, settings, socket_path


def _source_stamp() -> float:
    """The newest modification time among the package's Python files."""
    root = Path(__file__).resolve().parent
    return max((p.stat().st_mtime for p in root.rglob("*.py")), default=0.0)


def _warm_up() -> None:
    """Import what every run imports and load the interpreter's compiled code by solving a tiny
    task with it (two values, one action): numba's target is initialised here once."""
    from . import api, cli  # noqa: F401  (imported for its side effect: the modules are loaded)
    from .lang import Act, Model

    def parse(rec: object) -> None:
        return None

    def build(data: object) -> Model:
        m = Model("warm-up")
        x = m.var("x", 0, 1, 0)

        @m.action("set")
        def set_():
            return Act(guard=x == 0, effects={x: 1})

        m.goal(x == 1)
        return m

    mod = types.ModuleType("puzzleplan_serve_warm_up")
    mod.NAME, mod.parse, mod.build = "warm-up", parse, build   # type: ignore[attr-defined]
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write("name: warm-up\n")
        f.flush()
        loaded = api.load_task(mod, f.name)
        api.solve(loaded, "bfs", kernel="interpreted")


def _child(conn: socket.socket, mine: dict[str, str], stamp: float) -> int:
    """One request, in a forked child: a run (returns the exit code sent to the client), a stop or a
    fallback (0)."""
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
        signal.signal(s, signal.SIG_DFL)
    req, fds = receive(conn, with_fds=3)
    if req is not None and req.get("stop"):   # a stop needs no descriptors (stop_server sends none)
        for fd in fds:
            os.close(fd)
        os.kill(os.getppid(), signal.SIGTERM)
        send(conn, {"stopped": True})
        return 0
    if req is None or len(fds) != 3:
        return 0
    why = ""
    if req.get("settings") != mine:
        why = "other settings"
    elif _source_stamp() != stamp:
        why = "package changed"
        os.kill(os.getppid(), signal.SIGTERM)    # a stale server: the next run starts a fresh one
    if why:
        send(conn, {"fallback": why})
        return 0
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    sys.argv = ["puzzleplan", *req["argv"]]
    send(conn, {"pid": os.getpid()})
    from . import cli

    # --time-limit counts from the client's start, as a local run counts from its own
    started = time.perf_counter() - float(req.get("age", 0.0)) - max(0.0, time.time() - float(req["sent"]))
    try:
        code = cli.main(req["argv"], started=started)
    except SystemExit as e:      # --help, --version and argparse's own exits
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        pass
    send(conn, {"exit": int(code)})
    return int(code)


def serve(path: str | None = None, idle_minutes: float = 30.0) -> int:
    """Listen on ``path`` (default :func:`puzzleplan.launch.socket_path`) until idle, stale or
    signalled; returns the exit code of ``puzzleplan serve``."""
    path = path or socket_path()
    Path(path).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    _warm_up()
    stamp = _source_stamp()
    mine = settings()
    if os.path.exists(path):
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)
            print(f"puzzleplan: a server is already listening on {path}", file=sys.stderr)
            return 1
        except OSError:
            os.unlink(path)          # left by a server that did not stop cleanly
        finally:
            probe.close()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)            # the socket: this user only
    try:
        listener.bind(path)
    finally:
        os.umask(old)
    listener.listen(64)
    listener.settimeout(60.0 * idle_minutes if idle_minutes > 0 else None)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)          # children are reaped by the kernel
    stopping: list[int] = []

    def stop(signum: int, frame: object) -> None:
        stopping.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    print(f"puzzleplan: serving on {path} (pid {os.getpid()}; idle stop after {idle_minutes:g} min)",
          file=sys.stderr, flush=True)
    try:
        while True:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                break
            if os.fork() == 0:
                listener.close()
                try:
                    _child(conn, mine, stamp)
                except BaseException:   # a bug: its traceback goes to the client's stderr
                    import traceback

                    traceback.print_exc()
                    try:
                        send(conn, {"exit": 1})
                    except OSError:
                        pass
                finally:
                    os._exit(0)
            conn.close()
    except KeyboardInterrupt:
        pass
    finally:
        listener.close()
        try:
            os.unlink(path)
        except OSError:
            pass
    return 0


def main(argv: list[str]) -> int:
    """``puzzleplan serve [--socket PATH] [--idle MIN] [--stop]``: the options of the command line's
    ``serve`` parser (cli.py, where ``--help`` and the reference list them)."""
    from .cli import _error_line, build_parser
    from .lang.errors import EXIT_OUTPUT, PuzzleError

    args = build_parser().parse_args(["serve", *argv])     # a usage mistake: one line, exit 31
    try:
        return stop_server(args.socket) if args.stop else serve(args.socket, args.idle)
    except PuzzleError as e:
        print(_error_line(str(e)), file=sys.stderr)
        return e.code
    except OSError as e:      # a socket path too long, in a directory that cannot be written ...
        where = args.socket or socket_path()
        print(_error_line(f"cannot listen on {where}: {e.strerror or e}"), file=sys.stderr)
        return EXIT_OUTPUT


def stop_server(path: str | None = None) -> int:
    """``puzzleplan serve --stop``: ask the server on ``path`` to stop (exit 0), or say none runs (1)."""
    path = path or socket_path()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        send(conn, {"stop": True})   # no descriptors: the caller's 0-2 may be closed (a daemon, a test)
        reply, _ = receive(conn)
    except OSError:
        print(f"puzzleplan: no server on {path}", file=sys.stderr)
        return 1
    finally:
        conn.close()
    return 0 if reply is not None else 1


__all__ = ["main", "serve", "stop_server"]
