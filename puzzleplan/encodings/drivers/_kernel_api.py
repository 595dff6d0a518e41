"""Stand-ins for the functions a kernel module defines, so the drivers beside this file are real
Python that ruff and type checkers can read.

A driver is never run from its own module: the generators copy its source into a kernel module
(``compiled.generate``, ``interp.driver_source``) and drop the import of this module, so these
names then mean the task's generated (or the interpreter's) functions.  The signatures are the
compiled kernel's; ``TABS`` is the constant table array (the interpreter's program).  Calling a
stand-in is a mistake, hence ``NotImplementedError``.
"""

from __future__ import annotations

from typing import Any

N_ACTIONS: int = 1
"""The task's number of ground actions (the most successors one state can have)."""


def _stub(name: str) -> NotImplementedError:
    return NotImplementedError(f"{name} is defined by a generated kernel module; a driver runs only there")


def expand(S: Any, start: int, OUT: Any, PAR: Any, ACT: Any, TABS: Any, LO: Any, HI: Any) -> tuple[int, int]:
    """Successors of rows ``start..`` into OUT/PAR/ACT: ``(m, next row)``; ``m < 0``: row ``-1 - m``
    of OUT lies outside a variable's domain."""
    raise _stub("expand")  # pragma: no cover - never called


def goal(S: Any, OUT: Any, TABS: Any) -> None:
    """``OUT[i]`` = whether row i is a goal state."""
    raise _stub("goal")  # pragma: no cover - never called


def heuristic(S: Any, OUT: Any, TABS: Any) -> None:
    """``OUT[i]`` = the heuristic of row i (0 without one)."""
    raise _stub("heuristic")  # pragma: no cover - never called


def canon_pack(S: Any, K: Any) -> None:
    """Canonicalise each row (sort the interchangeable groups) and pack it into ``K``'s key words."""
    raise _stub("canon_pack")  # pragma: no cover - never called


def unpack_rows(KEYS: Any, ids: Any, S: Any) -> None:
    """Decode the stored keys of the state ids ``ids`` into the rows of ``S``."""
    raise _stub("unpack_rows")  # pragma: no cover - never called


def dbfs_expand(KW: Any, TABS: Any, LO: Any, HI: Any, COSTS: Any, n_shards: int, find_goal: bool,
                stop_at_goal: bool, rows: int, info: Any) -> tuple[Any, Any, Any, Any, Any]:
    """The driver of ``dbfs_expand.py``, which the kernel module holds beside the driver calling it."""
    raise _stub("dbfs_expand")  # pragma: no cover - never called
