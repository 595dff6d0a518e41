"""The engines' compiled search loops, kept as real modules that the kernel generators copy in.

Why copy: a loop that calls the task's ``expand``, ``goal``, ``canon_pack`` and ``unpack_rows``
for every slice must be compiled in the module that defines them, so numba calls them directly
(no dispatch per call) and caches the whole module on disk together.  Why real modules: ruff,
type checkers and readers see the loops as ordinary code, and the constants they share with their
engine in ``solvers`` (the slots of a state array, return codes) are one set of names.

Each driver ``NAME`` is the module ``NAME.py`` here that defines the compiled function ``NAME``.
It is written against the stand-ins of :mod:`._kernel_api`; :func:`source` drops that import (and
the module docstring), so the names then mean the kernel module's own functions.  What else a
driver imports must be absolute (the kernel module is imported from the cache directory), and its
top-level names must differ from the other drivers' and the kernel's (one module holds them all).
The kernel cache fingerprints (``compiled._salt``, ``interp._salt``) hash these files.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

NAMES = ("bfs_run", "idastar_dfs", "dbfs_expand", "dbfs_layer")
"""Every driver, in the order they go into a kernel module."""

_HERE = Path(__file__).parent
_STUBS = "puzzleplan.encodings.drivers._kernel_api"


def files() -> list[Path]:
    """The files whose bytes decide the drivers' compiled code (for the cache fingerprints)."""
    return sorted(_HERE.glob("*.py"))


def source(name: str) -> str:
    """Driver ``name``'s module as it goes into a kernel module: without its docstring (and the
    comments above it) and without the import of the kernel stand-ins."""
    text = (_HERE / f"{name}.py").read_text(encoding="utf-8")
    tree = ast.parse(text)
    drop: set[int] = set()
    for k, node in enumerate(tree.body):
        doc = k == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if isinstance(node, ast.ImportFrom) and node.level:
            raise ValueError(f"driver {name}: relative import on line {node.lineno}; a kernel module "
                             "is imported from the cache directory, so write it absolute")
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            raise ValueError(f"driver {name}: a __future__ import cannot stand inside a kernel module")
        if doc:   # and the comments above it, which speak of the file
            drop.update(range(1, (node.end_lineno or node.lineno) + 1))
        if isinstance(node, ast.ImportFrom) and node.module == _STUBS:
            drop.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    if not any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body):
        raise ValueError(f"driver {name}: its module defines no function {name}")
    lines = [ln for i, ln in enumerate(text.splitlines(), 1) if i not in drop]
    return "\n".join(lines).strip("\n") + "\n"


def parameters(name: str) -> list[str]:
    """The parameter names of driver ``name``'s function."""
    tree = ast.parse((_HERE / f"{name}.py").read_text(encoding="utf-8"))
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    return [a.arg for a in fn.args.args]


@cache
def sources() -> tuple[tuple[str, str], ...]:
    """``(name, source)`` of every driver, checked for top-level names two drivers would both define
    (read once per process: every kernel generated includes them)."""
    out: list[tuple[str, str]] = []
    owner: dict[str, str] = {}
    for name in NAMES:
        src = source(name)
        for node in ast.parse(src).body:
            targets: list[str] = []
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                targets = [node.name]
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    targets += [n.id for n in ast.walk(t) if isinstance(n, ast.Name)]
            for t in targets:
                if owner.setdefault(t, name) != name:
                    raise ValueError(f"drivers {owner[t]} and {name} both define {t}")
        out.append((name, src))
    return tuple(out)
