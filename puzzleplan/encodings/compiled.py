"""Compiled successor kernel: the IR turned into numba source, compiled once, cached on disk.

Why: per-layer numpy overhead dominates puzzles with narrow frontiers over
hundreds of layers (Hua Rong Dao), and a per-state loop in compiled code
evaluates a guard in nanoseconds.  The generated module is written to a
cache directory keyed by a hash of its source, so numba's on-disk cache
makes every later run of the same task start in a fraction of a second.

The generated code follows the numpy kernel's semantics exactly (total
table/element lookups, effects read the pre-state, later conditional
writes win, out-of-domain successors are refused); tests compare both
with the plain-Python reference on random states.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from ..ir.task import Task
from ..lang.expr import BOOL, Expr, bounds, walk

def _salt() -> str:
    """Changes whenever the generator or its helpers change, so stale numba caches are never reused."""
    here = Path(__file__).parent
    h = hashlib.sha1()
    for f in ("compiled.py", "jitlib.py"):
        h.update((here / f).read_bytes())
    return h.hexdigest()[:12]


_SALT = _salt()

_CMP_SYM = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_ARITH_SYM = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%"}


class _Gen:
    """Emits one function body; shared sub-expressions become locals computed once per state."""

    def __init__(self, roots: list[Expr], tables: "_Tables", var_bounds: list[tuple[int, int]]):
        self.tables = tables
        self.var_bounds = var_bounds
        nodes = walk(roots)
        uses: dict[int, int] = {}
        for r in roots:
            uses[id(r)] = uses.get(id(r), 0) + 1
        for n in nodes:
            for a in n.args:
                uses[id(a)] = uses.get(id(a), 0) + 1
        self.local: dict[int, str] = {}
        self.lines: list[str] = []
        self.vars = sorted({int(n.val) for n in nodes if n.op == "var"})  # type: ignore[arg-type]
        self.buffers: dict[tuple[int, ...], str] = {}
        for n in nodes:
            shared = uses.get(id(n), 0) >= 2 and n.op not in ("const", "var")
            if n.op == "element":
                key = tuple(id(a) for a in n.args[2:])
                if key not in self.buffers:
                    buf = f"BUF{len(self.buffers)}"
                    self.buffers[key] = buf
                    self.buffer_sizes = getattr(self, "buffer_sizes", {})
                    self.buffer_sizes[buf] = len(n.args) - 2
                    for j, item in enumerate(n.args[2:]):
                        self.lines.append(f"{buf}[{j}] = np.int64({self.expr(item)})")
            if shared:
                name = f"t{len(self.local)}"
                self.lines.append(f"{name} = {self.expr(n)}")
                self.local[id(n)] = name


    def expr(self, n: Expr) -> str:
        if id(n) in self.local:
            return self.local[id(n)]
        op = n.op
        a = n.args
        if op == "const":
            return ("True" if n.val else "False") if n.kind == BOOL else str(n.val)
        if op == "var":
            return f"x{n.val}"
        if op == "add":
            return "(" + " + ".join(self.expr(x) for x in a) + ")"
        if op in _ARITH_SYM:
            return f"({self.expr(a[0])} {_ARITH_SYM[op]} {self.expr(a[1])})"
        if op in _CMP_SYM:
            return f"({self.expr(a[0])} {_CMP_SYM[op]} {self.expr(a[1])})"
        # bitwise on booleans: branch-free code compiles much faster than short-circuit chains
        if op == "and":
            return "(" + " & ".join(self.expr(x) for x in a) + ")"
        if op == "or":
            return "(" + " | ".join(self.expr(x) for x in a) + ")"
        if op == "not":
            return f"(not {self.expr(a[0])})"
        if op in ("ite_int", "ite_bool"):
            return f"({self.expr(a[1])} if {self.expr(a[0])} else {self.expr(a[2])})"
        if op == "abs":
            return f"abs({self.expr(a[0])})"
        if op in ("min", "max"):
            return f"{op}(" + ", ".join(self.expr(x) for x in a) + ")"
        if op == "toint":
            return f"np.int64({self.expr(a[0])})"
        if op == "table":
            off = self.tables.offset(n)
            size = len(n.val)  # type: ignore[arg-type]
            if self._inside(a[0], size):
                return f"TABS[{off} + {self.expr(a[0])}]"
            return f"_tab(TABS, {off}, {size}, {self.expr(a[0])}, {self.expr(a[1])})"
        if op == "element":
            buf = self.buffers[tuple(id(x) for x in a[2:])]
            if self._inside(a[0], len(a) - 2):
                got = f"{buf}[{self.expr(a[0])}]"
            else:
                got = f"_tab({buf}, 0, {len(a) - 2}, {self.expr(a[0])}, np.int64({self.expr(a[1])}))"
            return f"({got} != 0)" if n.kind == BOOL else got
        raise ValueError(f"compiled kernel: unknown op {op}")

    def _inside(self, index: Expr, size: int) -> bool:
        """Can the index provably not leave 0..size-1?  Then no bounds test is emitted."""
        lo, hi = bounds(index, self.var_bounds)
        return lo >= 0 and hi < size

    def prologue(self, indent: str, row: str) -> list[str]:
        out = [f"{indent}x{v} = {row}, {v}]" for v in self.vars]
        out += [indent + ln for ln in self.lines]
        return out

    def buffer_decls(self, indent: str) -> list[str]:
        sizes = getattr(self, "buffer_sizes", {})
        return [f"{indent}{b} = np.empty({sz}, dtype=np.int64)" for b, sz in sizes.items()]


class _Tables:
    """Constant tables, laid end to end in one array passed at call time.

    Keeping table *contents* out of the generated source means two
    instances of one puzzle with the same structure (same pieces, other
    positions or other goal tables) share one compiled kernel.
    """

    def __init__(self) -> None:
        self.slots: dict[int, int] = {}
        self.values: list[int] = []

    def offset(self, node: Expr) -> int:
        if id(node) not in self.slots:
            self.slots[id(node)] = len(self.values)
            self.values.extend(node.val)  # type: ignore[arg-type]
        return self.slots[id(node)]


def generate(task: Task) -> tuple[str, list[int]]:
    """The kernel module's source and the constant table array it is called with."""
    consts = _Tables()
    roots: list[Expr] = []
    for a in task.actions:
        roots.append(a.guard)
        for e in a.effects:
            roots.append(e.value)
            if e.cond is not None:
                roots.append(e.cond)
    g = _Gen(roots, consts, task.var_bounds)
    body: list[str] = []
    ind = " " * 8
    for k, a in enumerate(task.actions):
        body.append(f"{ind}if {g.expr(a.guard)}:")
        i2 = ind + "    "
        body.append(f"{i2}_copy_row(S, i, OUT, m)")
        for e in a.effects:
            val = g.expr(e.value)
            if e.cond is None:
                body.append(f"{i2}OUT[m, {e.var}] = {val}")
            else:
                body.append(f"{i2}if {g.expr(e.cond)}:")
                body.append(f"{i2}    OUT[m, {e.var}] = {val}")
        for v in sorted({e.var for e in a.effects}):
            info = task.variables[v]
            body.append(f"{i2}if OUT[m, {v}] < {info.lo} or OUT[m, {v}] > {info.hi}:")
            body.append(f"{i2}    PAR[m] = i")
            body.append(f"{i2}    ACT[m] = {k}")
            body.append(f"{i2}    return -1 - m, i")
        body.append(f"{i2}PAR[m] = i")
        body.append(f"{i2}ACT[m] = {k}")
        body.append(f"{i2}m += 1")

    n_act = max(1, len(task.actions))
    src = [
        f"# generated by puzzleplan.encodings.compiled -- do not edit ({_SALT})",
        "import numpy as np",
        "from numba import njit",
        "from puzzleplan.encodings.jitlib import _copy_row, _tab",
        "",
        f"N_ACTIONS = {n_act}",
        "",
        "@njit(cache=True)",
        "def expand(S, start, OUT, PAR, ACT, TABS):",
        "    N = S.shape[0]",
        "    V = S.shape[1]",
        "    cap = OUT.shape[0]",
        "    m = 0",
        *g.buffer_decls("    "),
        "    for i in range(start, N):",
        f"        if m + {n_act} > cap:",
        "            return m, i",
        *g.prologue(ind, "S[i"),
        *body,
        "    return m, N",
        "",
    ]
    for fname, root, kind in (("goal", task.goal, "bool"), ("heuristic", task.heuristic, "int")):
        if root is None:
            src += ["@njit(cache=True)", f"def {fname}(S, OUT, TABS):",
                    "    for i in range(S.shape[0]):", "        OUT[i] = 0", ""]
            continue
        gg = _Gen([root], consts, task.var_bounds)
        src += [
            "@njit(cache=True)",
            f"def {fname}(S, OUT, TABS):",
            *gg.buffer_decls("    "),
            "    for i in range(S.shape[0]):",
            *gg.prologue(ind, "S[i"),
            f"        OUT[i] = {gg.expr(root)}",
            "",
        ]
    return "\n".join(src) + "\n", consts.values or [0]


def cache_dir() -> Path:
    root = os.environ.get("PUZZLEPLAN_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "puzzleplan"
    d = base / "kernels"
    try:
        d.mkdir(parents=True, exist_ok=True)
        probe = d / ".write-test"
        probe.write_text("")
        probe.unlink()
        return d
    except OSError:
        d = Path(tempfile.gettempdir()) / "puzzleplan-kernels"
        d.mkdir(parents=True, exist_ok=True)
        return d


def load_module(task: Task) -> tuple[ModuleType, list[int]]:
    """Generate, write (once) and import the kernel module for ``task``; also return its tables."""
    src, tables = generate(task)
    digest = hashlib.sha1(src.encode()).hexdigest()[:20]
    name = f"pp_kernel_{digest}"
    if name in sys.modules:
        return sys.modules[name], tables
    path = cache_dir() / f"{name}.py"
    if not path.exists() or path.read_text() != src:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(src)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod, tables
