"""``puzzleplan generate``: random instances whose optimum, proven by an exact engine, lies in a range.

Why: a puzzle collection needs boards of known difficulty (Coldridge & Amos
ask "is it possible to automatically generate hard and easy instances?").
Random boards are cheap; the expensive and trustworthy part is the proof of
their optimum, which any exact engine of this project gives.  So the command
is generic: the model file supplies ``generate(rng, width, height, **params)
-> str`` (the text of one instance file), and this module draws boards, solves
each with an exact engine, and keeps the first one whose proven optimum is in
``[min_moves, max_moves]``.  The text printed carries the optimum and the
engine that proved it as ``#`` comment lines.
"""

from __future__ import annotations

import math
import random
import tempfile
from pathlib import Path
from typing import Any

from . import api
from .lang.errors import EXIT_OUTPUT, ModelError, OptionError, PuzzleError
from .solvers import Limits

EXIT_NOT_FOUND = 12   # like a search limit: nothing found within the tries
# The largest board side ``--size`` accepts.  A model's generate() builds the whole board as text
# before its parser can refuse it, and the search limit does not cover that, so 99999x99999 grew to
# 11.6 GB; no exact engine proves an optimum on a board near this size anyway (zpg stops at 400 cells).
MAX_SIDE = 64


def parse_size(text: str) -> tuple[int, int]:
    """``"6x5"`` -> (width 6, height 5), each side between 1 and :data:`MAX_SIDE`."""
    parts = text.lower().replace("×", "x").split("x")
    if len(parts) != 2 or not all(p.strip().isascii() and p.strip().isdigit() and len(p) < 20 for p in parts):
        raise OptionError(f"--size must look like 6x5 (width x height), got {text[:40]!r}")
    width, height = (int(p) for p in parts)
    if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE):
        raise OptionError(f"--size {width}x{height}: each side must be between 1 and {MAX_SIDE}")
    return width, height


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """``-G key=value`` pairs for the model's generator: ints, then floats, else strings."""
    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise OptionError(f"generator parameter {pair!r} must look like key=value")
        key, text = (x.strip() for x in pair.split("=", 1))
        value: Any = text
        for conv in (int, float):
            try:
                value = conv(text)
                break
            except ValueError:
                continue
        if isinstance(value, float) and not math.isfinite(value):
            raise OptionError(f"generator parameter {key[:40]!r} must be a finite number, got {text[:40]!r}")
        out[key] = value
    return out


def check_output(path: str) -> None:
    """Refuse an ``--out`` that cannot be written before boards are drawn and solved, not after."""
    out = Path(path)
    if out.is_dir():
        raise PuzzleError("cannot write output: it is a directory", path, code=EXIT_OUTPUT)
    if not out.parent.is_dir():
        raise PuzzleError("cannot write output: no such directory", path, code=EXIT_OUTPUT)


def write_output(path: str, text: str) -> None:
    """Write the instance; a full disk or an unwritable path is exit 35, one line."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise PuzzleError(f"cannot write output: {e.strerror or e}", path, code=EXIT_OUTPUT) from None


def generate(model: str, width: int, height: int, min_moves: int, max_moves: int | None = None,
             seed: int = 0, tries: int = 200, engine: str = "bfs", options: list[str] | None = None,
             params: dict[str, Any] | None = None, time_limit: float | None = 60.0,
             kernel: str = "numpy") -> tuple[str, Any]:
    """The first random instance whose proven optimum is in range: (instance text, engine result)."""
    mod = api.load_model(model)
    gen = getattr(mod, "generate", None)
    if not callable(gen):
        raise ModelError(f"model {getattr(mod, 'NAME', model)} has no generate() function")
    api.check_engine(engine)
    if max_moves is not None and max_moves < min_moves:
        raise OptionError(f"--max-moves {max_moves} is below --min-moves {min_moves}: no board can qualify")
    hi = max_moves if max_moves is not None else 10**9
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="puzzleplan-gen-") as tmp:
        path = Path(tmp) / "candidate.txt"
        for attempt in range(1, tries + 1):
            try:
                text = gen(rng, width, height, **(params or {}))
            except (TypeError, ValueError, ArithmeticError) as e:
                raise OptionError(f"generator parameters rejected: {str(e)[:200]}") from None
            if not isinstance(text, str):
                raise ModelError(f"generate() of model {getattr(mod, 'NAME', model)} returned "
                                 f"{type(text).__name__}, not the text of an instance")
            path.write_text(text, encoding="utf-8")
            loaded = api.load_task(mod, str(path), options or [])
            result = api.solve(loaded, engine, Limits(time_limit), kernel=kernel)
            if result.status == "optimal" and min_moves <= (result.cost or 0) <= hi:
                head = [
                    f"# source: puzzleplan generate {getattr(mod, 'NAME', model)} --size {width}x{height} "
                    f"--seed {seed} (attempt {attempt})",
                    f"# optimum: {result.cost}",
                    f"# proved-by: {engine} ({result.proof}; {result.stats.get('expanded', 0):,} states "
                    f"expanded, {result.stats.get('time_s', 0):.1f} s), plan replayed by the checker",
                    "# witness: " + " | ".join(api.plan_moves(loaded.task, result.plan or [])),
                ]
                return "\n".join(head) + "\n" + text, result
    raise PuzzleError(f"no board with a proven optimum in {min_moves}..{max_moves or 'any'} within {tries} "
                      f"tries (seed {seed})", code=EXIT_NOT_FOUND)
