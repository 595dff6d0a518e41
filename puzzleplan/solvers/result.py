"""The one result type every engine returns, and the limits every engine honours."""

from __future__ import annotations

import os
import resource
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .progress import Progress

STATUSES = ("optimal", "solved", "unsolvable", "unknown", "limit")


# Counts above this mean "no limit": engines keep counters and limits in int64 arrays and numba
# locals, where 10**23 overflows (a traceback), so larger values are clamped here, far above any
# count a search can reach.
MAX_COUNT = 2**62
# Seconds (and megabytes) above this mean "no limit" too: a timer set to 1e23 s overflows the
# platform's time_t, and 10**9 s is 32 years.
MAX_FLOAT = 1e9
# An admissible bound this high proves there is no plan (a state an engine need never queue): past
# any cost g + h can hold, with room for their sum in int64.
NO_PLAN = (2**63 - 1) // 8


def positive(kind: type) -> Callable[[str], Any]:
    """A command-line type for a limit: a finite number of ``kind`` that must be > 0.

    ``nan`` and ``inf`` are refused (``nan <= 0`` is false, so they used to pass and disable the
    limit silently).  Integers may be written as ``1e6``.  Values above :data:`MAX_COUNT` (ints)
    or :data:`MAX_FLOAT` (floats) are clamped there: no search reaches them.
    """

    def convert(text: str) -> Any:
        import argparse
        import math

        try:
            v = kind(text)
        except ValueError:
            v = None
            if kind is int:   # "1e6": an integral float is an integer
                try:
                    f = float(text)
                    if math.isfinite(f) and f == int(f):
                        v = int(f)
                except (ValueError, OverflowError):
                    pass
            if v is None:
                raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a valid {kind.__name__}") from None
        if isinstance(v, float) and not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"{text[:40]!r} must be a finite number")
        if v <= 0:
            raise argparse.ArgumentTypeError(f"{text[:40]!r} must be > 0")
        return min(v, MAX_COUNT if kind is int else kind(MAX_FLOAT))

    convert.__name__ = f"positive_{kind.__name__}"
    return convert


@dataclass
class Limits:
    time_s: float | None = None
    max_states: int | None = None
    # where engines report progress (``solvers/progress.py``); None = nobody is listening
    progress: Progress | None = None
    # the engine's own estimate of its memory (visited set, per-state arrays, open lists), in MiB;
    # over it the search ends like at a state limit: status "limit", the best bound so far
    max_mb: float | None = None
    # the whole process's resident memory (``--max-memory``), in MiB: the engine's data budget is
    # what the process does not use yet when the search starts, and the RSS itself is watched too
    max_rss_mb: float | None = None
    # ``time.perf_counter()`` when the run began (the CLI: process start): the time limit counts
    # from here, so loading, grounding and compiling spend the same budget as the search
    started: float | None = None

    # with ``started`` (the whole run), engines stop this much before the limit, to leave time
    # for what follows the search: the plan check, the output and the interpreter's exit
    EXIT_RESERVE = 0.3

    def deadline(self, start: float) -> float | None:
        if self.time_s is None:
            return None
        if self.started is None:
            return start + self.time_s
        return self.started + self.time_s - min(self.EXIT_RESERVE, 0.1 * self.time_s)


@dataclass
class Result:
    status: str
    engine: str
    cost: int | None = None
    plan: list[int] | None = None          # ground-action indices, replayable from the initial state
    stats: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    proof: str = ""                          # how optimality (or unsolvability) was established

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status}")

    @property
    def optimal(self) -> bool:
        return self.status == "optimal"


class OutOfTime(Exception):
    """Raised from inside a long batch (``Clock.check``) so that an engine ends at its deadline
    rather than at the end of the batch; the engine catches it and reports status ``limit``."""


class Interrupted(BaseException):
    """A signal (or the time limit) while no engine polls the clock: loading, grounding, compiling.

    A ``BaseException``, like ``KeyboardInterrupt``, so that the ``except Exception`` that turns a
    model file's own errors into one-line messages does not swallow it; ``cli.main`` reports it."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


SIGNAL_EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}   # 128 + the signal number, as shells report


class Stop:
    """A request to stop, made by a signal; engines see it through ``Clock.out_of_time``.

    Why a flag and not an exception: an exception raised inside an engine loses its best plan and
    bound, and one raised inside numba's compiler or a solver's C code ends in a traceback.  So
    the handlers that ``catch_signals`` installs only set ``signum`` (and call the hooks that stop
    a solver running in C: CP-SAT's ``stop_search``) while an engine runs; every engine then ends
    as at a limit, with its bound.  Before an engine runs (``raising``), nothing polls the flag,
    and the handler raises :class:`Interrupted` instead.
    """

    def __init__(self) -> None:
        self.signum: int | None = None
        self.handled = 0                     # signals the Python handler has seen
        self.raising = False
        self.installed = False
        self._fd: int | None = None          # read end of the signal wakeup pipe
        self._hooks: list[Callable[[], None]] = []
        self._held = False

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum is not None else ""

    def request(self, signum: int) -> None:
        first = self.signum is None
        self.signum = signum
        if first:
            for hook in list(self._hooks):
                try:
                    hook()
                except Exception:   # a solver already deleted: nothing left to stop
                    pass

    def drain(self) -> bool:
        """Read signals from the wakeup pipe: the C-level handler writes there at once, even while
        the main thread (which runs the Python handlers) is inside a long solver call."""
        if self._fd is not None:
            try:
                data = os.read(self._fd, 64)
            except (BlockingIOError, OSError):
                data = b""
            for b in data:
                if b in SIGNAL_EXIT:
                    self.request(b)
        return self.signum is not None

    @contextmanager
    def hook(self, fn: Callable[[], None]) -> Iterator[None]:
        """Call ``fn`` when a stop is requested while inside the block."""
        self._hooks.append(fn)
        try:
            yield
        finally:
            self._hooks.remove(fn)

    @contextmanager
    def held(self) -> Iterator[None]:
        """Inside: SIGINT and SIGTERM stay pending (blocked) and are read with ``sigpending``.

        Why: pysat's C code installs its own SIGINT handler around its calls (CaDiCaL, CardEnc,
        ITotalizer) and a signal landing there aborted the process (SIGABRT, no output) or raised its
        own error.  Held, a signal waits until the engine polls ``Clock.out_of_time`` between two
        solver calls; on leaving, it is delivered to our handler as usual.
        """
        if not self.installed or self._held or threading.current_thread() is not threading.main_thread():
            yield       # (already held: the outer hold delivers on leaving)
            return
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
        self._held = True
        try:
            yield
        finally:
            self._held = False
            # pysat swaps the C-level SIGINT handler and may leave its own behind (it jumps into a
            # stack frame long gone): put Python's back before a held signal is delivered
            for sig in _HELD:
                signal.signal(sig, signal.getsignal(sig))
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def pending(self) -> bool:
        """A held signal is waiting: note it as a stop request (without delivering it)."""
        if self._held:
            for s in sorted(signal.sigpending() & _HELD):
                self.request(int(s))
        return self.signum is not None

    @contextmanager
    def polled(self) -> Iterator[None]:
        """Inside: something polls ``signum`` (an engine), so a handler sets it and does not raise."""
        before, self.raising = self.raising, False
        try:
            yield
        finally:
            self.raising = before


STOP = Stop()
_HELD = {signal.SIGINT, signal.SIGTERM}


def _on_signal(signum: int, frame: Any) -> None:
    if signum == signal.SIGALRM:            # the time limit passed: engines see it on their own
        if STOP.raising:
            raise Interrupted(signum)
        return
    STOP.handled += 1
    STOP.request(signum)
    if STOP.raising or STOP.handled > 1:    # nobody polls, or a second signal: stop right here
        raise Interrupted(signum)


@contextmanager
def catch_signals(deadline: float | None = None) -> Iterator[Stop]:
    """SIGINT and SIGTERM end the run as a limit does (``Stop``); with ``deadline`` (a
    ``perf_counter`` time) a SIGALRM then ends a run still loading or compiling.  Handlers, the
    wakeup pipe and the timer are restored on exit, so ``cli.main`` can run inside a test."""
    if threading.current_thread() is not threading.main_thread():
        yield STOP
        return
    sigs = (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)
    old = {s: signal.getsignal(s) for s in sigs}
    r, w = os.pipe()
    os.set_blocking(r, False)
    os.set_blocking(w, False)
    STOP.signum, STOP.handled, STOP.raising, STOP.installed, STOP._fd = None, 0, True, True, r
    old_fd = -1
    try:
        old_fd = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        for s in sigs:
            signal.signal(s, _on_signal)
        if deadline is not None:
            signal.setitimer(signal.ITIMER_REAL, max(deadline - time.perf_counter(), 0.001))
        yield STOP
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        for s, h in old.items():
            signal.signal(s, h)
        signal.set_wakeup_fd(old_fd)
        os.close(r)
        os.close(w)
        STOP.signum, STOP.raising, STOP.installed, STOP._fd = None, False, False, None


def rss_bytes() -> int:
    """Resident memory now (Linux /proc), else the peak so far (getrusage)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class Clock:
    """Search time and limit checks.  ``time_s`` in stats is the search alone; the deadline counts
    from ``Limits.started`` when given (the whole run), else from the search's start."""

    RSS_EVERY = 0.02    # seconds between two reads of the process's resident memory
    DATA_SHARE = 0.8    # of the memory left under --max-memory, what the engine's own data may use

    def __init__(self, limits: Limits):
        self.start = time.perf_counter()
        self.deadline = limits.deadline(self.start)
        self.max_states = limits.max_states
        self.max_rss = None if limits.max_rss_mb is None else limits.max_rss_mb * 2**20
        caps = [] if limits.max_mb is None else [limits.max_mb * 2**20]
        if self.max_rss is not None:
            # the data budget: what the process does not hold yet, less a fifth for the arrays an
            # engine does not account (batch buffers, the frontier, copies in flight)
            caps.append(max(self.DATA_SHARE * (self.max_rss - rss_bytes()), 0))
        self.max_bytes = min(caps) if caps else None
        self.peak_bytes = 0
        self.rss_hit = False
        self.memory_refused = False   # an engine declined a growth that would pass the memory budget
        self._next_rss = 0.0
        self.progress = limits.progress
        self._next_report = self.start + (limits.progress.every if limits.progress is not None else 0.0)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def interrupted(self) -> bool:
        return STOP.signum is not None

    def left(self) -> float | None:
        """Seconds to the deadline (None: no time limit)."""
        return None if self.deadline is None else self.deadline - time.perf_counter()

    def out_of_time(self) -> bool:
        """True when the search must end now: a signal, the deadline, or the resident memory
        past ``--max-memory``."""
        if STOP.signum is not None or STOP.pending():
            return True
        now = time.perf_counter()
        if self.deadline is not None and now > self.deadline:
            return True
        return self.max_rss is not None and self._rss_over(now)

    def _rss_over(self, now: float) -> bool:
        if not self.rss_hit and now >= self._next_rss:
            self._next_rss = now + self.RSS_EVERY
            self.rss_hit = rss_bytes() > self.max_rss   # type: ignore[operator]
        return self.rss_hit

    def check(self) -> None:
        """``OutOfTime`` past the deadline: for loops deep inside one expansion step."""
        if self.out_of_time():
            raise OutOfTime

    def too_many(self, n_states: int) -> bool:
        """Over the state limit, or over the memory limit by the engine's last note_bytes."""
        return (self.max_states is not None and n_states > self.max_states) or \
            (self.max_bytes is not None and self.peak_bytes > self.max_bytes) or \
            (self.max_rss is not None and self._rss_over(time.perf_counter()))

    def room(self, n_states: int, extra: int) -> bool:
        """Whether ``extra`` more stored states keep the count within ``--max-states``: engines ask
        before they store, so the limit is exact."""
        return self.max_states is None or n_states + extra <= self.max_states

    def reason(self) -> str:
        """Why the search ended early, for a result's message."""
        if STOP.signum is not None:
            return f"interrupted ({STOP.name})"
        if self.deadline is not None and time.perf_counter() > self.deadline:
            return "time limit"
        if self.rss_hit or self.memory_refused or \
                (self.max_bytes is not None and self.peak_bytes > self.max_bytes):
            return "memory limit"
        return "limit reached"

    def bounded(self, stats: dict[str, Any], bound: int, how: str) -> str:
        """Record a sound lower bound in ``stats["lower_bound"]``; the message that states it."""
        stats["lower_bound"] = int(bound)
        return f"{self.reason()}; no plan costs less than {int(bound)} ({how})"

    @contextmanager
    def watch(self, stop: Callable[[], None], period: float = 0.02,
              tick: Callable[[], None] | None = None) -> Iterator[None]:
        """Call ``stop`` from a thread when a signal arrives, the deadline passes or the memory
        limit is hit, while the main thread sits in a solver call that releases the GIL (CP-SAT):
        Python's own signal handlers wait for that call to return.  ``tick`` is called from the
        same thread every ``period`` (progress reports during a long solver call)."""
        done = threading.Event()

        def run() -> None:
            while not done.wait(period):
                if STOP.drain() or self.out_of_time():
                    stop()
                    return
                if tick is not None:
                    tick()

        t = threading.Thread(target=run, name="puzzleplan-watch", daemon=True)
        t.start()
        try:
            yield
        finally:
            done.set()
            t.join()

    def report(self, **figures: Any) -> None:
        """Tell the progress listener the engine's figures (depth, frontier, ...), at most every
        ``progress.every`` seconds.  Engines call it where they already read the clock, so with no
        listener it costs one attribute test."""
        if self.progress is None:
            return
        now = time.perf_counter()
        if now < self._next_report:
            return
        self._next_report = now + self.progress.every
        self.progress.update({"elapsed_s": round(now - self.start, 3), **figures})

    def note_bytes(self, n: int) -> None:
        self.peak_bytes = max(self.peak_bytes, n)

    def stats(self, **extra: Any) -> dict[str, Any]:
        rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return {
            "time_s": round(self.elapsed(), 6),
            "peak_mb": round(self.peak_bytes / 2**20, 3),
            "rss_peak_mb": round(rss_kb / 1024, 1),
            **extra,
        }
