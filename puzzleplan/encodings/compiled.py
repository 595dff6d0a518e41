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
import re
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

import numpy as np

from ..ir.task import Task
from ..lang.errors import EXIT_UNSAFE_CACHE
from ..lang.expr import BOOL, Expr, TableData, bounds, walk
from . import drivers
from .npkernel import _index_keys, table_array


def _salt() -> str:
    """Changes whenever the generator or its helpers change, so stale numba caches are never reused."""
    here = Path(__file__).parent
    h = hashlib.sha1()
    for f in [here / "compiled.py", here / "jitlib.py", here / "hashset.py", *drivers.files()]:
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


_SALT = _salt()

_CMP_SYM = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_ARITH_SYM = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%"}


def bit_tables(items: tuple[Expr, ...], var_bounds: list[tuple[int, int]]
               ) -> tuple[int, list[tuple[int, int, list[int]]]] | None:
    """Bit-parallel evaluation of a list of "some variable's table lookup equals c" disjunctions.

    The pattern is what a derived occupancy view compiles to: item i = Or_j (T_ij[x_j] == c_ij).
    Per variable x, one combined table B_x[v] holds bit i for every item that x alone makes
    true at value v; the whole list is then OR_x B_x[x]: one lookup per variable instead of one
    per (item, variable).  Used only when every item has that shape and there are <= 62 items
    (else ``None``).  Returns the bits of the constant items and, per variable in order, ``(x, its
    lowest value, B_x from that value up)``; both kernels (this one and ``flat``) lay them out.
    """
    if len(items) > 62 or any(it.kind != BOOL for it in items):
        return None
    per_var: dict[int, list[tuple[int, tuple[int, ...], int, int]]] = {}
    const_bits = 0
    for i, it in enumerate(items):
        if it.op == "const":
            const_bits |= int(bool(it.val)) << i
            continue
        for t in (it.args if it.op == "or" else (it,)):
            if not (t.op == "eq" and t.args[0].op == "table" and t.args[1].op == "const"
                    and t.args[0].args[0].op == "var" and t.args[0].args[1].op == "const"):
                return None
            tab = t.args[0]
            per_var.setdefault(int(tab.args[0].val), []).append(  # type: ignore[arg-type]
                (i, tab.val, int(tab.args[1].val), int(t.args[1].val)))  # type: ignore[arg-type]
    out = []
    for v, terms in sorted(per_var.items()):
        lo, hi = var_bounds[v]
        if hi - lo > 4096:
            return None
        combined = []
        for value in range(lo, hi + 1):
            b = 0
            for i, vals, default, c in terms:
                if (vals[value] if 0 <= value < len(vals) else default) == c:
                    b |= 1 << i
            combined.append(b)
        out.append((v, lo, combined))
    return const_bits, out


class _Gen:
    """Emits one function body; shared sub-expressions become locals computed once per state."""

    def __init__(self, roots: list[Expr], tables: _Tables, var_bounds: list[tuple[int, int]]):
        self.tables = tables
        self.var_bounds = var_bounds
        nodes = walk(roots)
        self.local: dict[int, str] = {}
        self.boolean: set[str] = set()  # shared locals holding a boolean
        self.lines: list[str] = []
        self.vars = sorted({int(n.val) for n in nodes if n.op == "var"})  # type: ignore[arg-type]
        self.buffers: dict[tuple[int, ...], str] = {}
        self.buffer_sizes: dict[str, int] = {}
        self.bitviews: dict[tuple[int, ...], str] = {}
        bit_exprs: dict[tuple[int, ...], str | None] = {}
        for n in nodes:
            if n.op == "element":
                key = tuple(id(a) for a in n.args[2:])
                if key not in bit_exprs:
                    bit_exprs[key] = self._bitview(n.args[2:])
        uses: dict[int, int] = {}
        for r in roots:
            uses[id(r)] = uses.get(id(r), 0) + 1
        for n in nodes:
            args = n.args
            if n.op == "element" and bit_exprs[tuple(id(a) for a in n.args[2:])] is not None:
                args = n.args[:2]  # items are read through the bit set, never one by one
            for a in args:
                uses[id(a)] = uses.get(id(a), 0) + 1
        for n in nodes:
            shared = uses.get(id(n), 0) >= 2 and n.op not in ("const", "var")
            if n.op == "element":
                key = tuple(id(a) for a in n.args[2:])
                bits = bit_exprs[key]
                if bits is not None and key not in self.bitviews:
                    name = f"bv{len(self.bitviews)}"
                    self.bitviews[key] = name
                    self.lines.append(f"{name} = {bits}")
                elif bits is None and key not in self.buffers:
                    self._buffer(key, n.args[2:])
            if n.op == "assign" and tuple(id(a) for a in n.args) not in self.buffers:
                self._buffer(tuple(id(a) for a in n.args), n.args)
            if shared:
                name = f"t{len(self.local)}"
                self.lines.append(f"{name} = {self.expr(n)}")
                self.local[id(n)] = name
                if n.kind == BOOL:
                    self.boolean.add(name)

    def _buffer(self, key: tuple[int, ...], items: tuple[Expr, ...]) -> None:
        """Evaluate an element list into a buffer once per state (when no bit set applies)."""
        buf = f"BUF{len(self.buffers)}"
        self.buffers[key] = buf
        self.buffer_sizes[buf] = len(items)
        for j, item in enumerate(items):
            self.lines.append(f"{buf}[{j}] = {self._int(item)}")

    def _bitview(self, items: tuple[Expr, ...]) -> str | None:
        """The bit set of an element list (see :func:`bit_tables`) as an expression: OR_x B_x[x]."""
        found = bit_tables(items, self.var_bounds)
        if found is None:
            return None
        const_bits, per_var = found
        parts = [str(const_bits)] if const_bits else []
        for v, lo, combined in per_var:
            off = self.tables.add(combined)
            parts.append(f"TABS[{off} + x{v} - {lo}]" if lo else f"TABS[{off} + x{v}]")
        return " | ".join(parts) if parts else "0"

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
            inner = self.expr(a[0])
            if inner.endswith(" != 0)") and id(a[0]) not in self.local:
                return inner[:-len(" != 0)")] + " == 0)"
            return f"(not {inner})"
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
            if id(n) in self.tables.packed:
                return f"_tab8(TABS, {off}, {size}, {self.expr(a[0])}, {self.expr(a[1])})"
            if self._inside(a[0], size):
                return f"TABS[{off} + {self.expr(a[0])}]"
            return f"_tab(TABS, {off}, {size}, {self.expr(a[0])}, {self.expr(a[1])})"
        if op == "element":
            key, size, idx = tuple(id(x) for x in a[2:]), len(a) - 2, self.expr(a[0])
            inside = self._inside(a[0], size)
            if key in self.bitviews:  # read through the bit set
                bv = self.bitviews[key]
                got = f"(({bv} >> {idx}) & 1)" if inside else f"_bit({bv}, {size}, {idx}, {self._int(a[1])})"
            else:
                buf = self.buffers[key]
                got = f"{buf}[{idx}]" if inside else f"_tab({buf}, 0, {size}, {idx}, {self._int(a[1])})"
            return f"({got} != 0)" if n.kind == BOOL else got
        if op == "assign":
            return f"_assign({self.buffers[tuple(id(x) for x in a)]}, {int(n.val)})"  # type: ignore[arg-type]
        raise ValueError(f"compiled kernel: unknown op {op}")

    def _int(self, n: Expr) -> str:
        if n.op == "const":
            return str(int(n.val))  # type: ignore[arg-type]
        return f"np.int64({self.expr(n)})"

    def _inside(self, index: Expr, size: int) -> bool:
        """Can the index provably not leave 0..size-1?  Then no bounds test is emitted."""
        lo, hi = bounds(index, self.var_bounds)
        return lo >= 0 and hi < size

    def prologue(self, indent: str, row: str) -> list[str]:
        out = [f"{indent}x{v} = {row}, {v}]" for v in self.vars]
        out += [indent + ln for ln in self.lines]
        return out

    def buffer_decls(self, indent: str) -> list[str]:
        return [f"{indent}{b} = np.empty({sz}, dtype=np.int64)" for b, sz in self.buffer_sizes.items()]


class _Tables:
    """Constant tables, laid end to end in one array passed at call time.

    Keeping table *contents* out of the generated source means two
    instances of one puzzle with the same structure (same pieces, other
    positions or other goal tables) share one compiled kernel.
    """

    def __init__(self) -> None:
        self.slots: dict[int, int] = {}
        self.chunks: list[list[int] | np.ndarray] = []
        self.size = 0
        self.packed: set[int] = set()    # table nodes stored 8 bytes to a word (see offset)

    def offset(self, node: Expr) -> int:
        """Where the node's values start; a large table of bytes (a pattern database) is packed 8
        entries to an int64 word, so 16.7 M entries take 16.7 MB, not 134 MB of ``TABS``."""
        if id(node) not in self.slots:
            val = node.val
            if isinstance(val, TableData) and val.dtype == "uint8":
                arr = table_array(val)
                pad = np.zeros(-len(arr) % 8, dtype=np.uint8)
                words = np.concatenate([arr, pad]).view("<i8").astype(np.int64)   # entry i: byte i % 8
                self.packed.add(id(node))
                self.slots[id(node)] = self.add(words)
            else:
                self.slots[id(node)] = self.add(val)  # type: ignore[arg-type]
        return self.slots[id(node)]

    def add(self, values: list[int] | tuple[int, ...] | TableData | np.ndarray) -> int:
        off = self.size
        if isinstance(values, TableData):
            values = table_array(values).astype(np.int64)
        self.chunks.append(values if isinstance(values, np.ndarray) else list(values))
        self.size += len(values)
        return off

    @property
    def values(self) -> np.ndarray:
        """Every table end to end (one zero when there is none): the ``TABS`` argument."""
        if not self.chunks:
            return np.zeros(1, dtype=np.int64)
        return np.concatenate([np.asarray(c, dtype=np.int64) for c in self.chunks])


def _action_blocks(task: Task, g: _Gen, actions: Iterable[int], ind: str) -> list[list[str]]:
    """Per action, in order: its guard test and, inside it, its successor row."""
    blocks: list[list[str]] = []
    for k in actions:
        a = task.actions[k]
        block = [f"{ind}if {g.expr(a.guard)}:"]
        i2 = ind + "    "
        block.append(f"{i2}_emit(S, i, OUT, PAR, ACT, m, {k})")
        for e in a.effects:
            val = g.expr(e.value)
            if e.cond is None:
                block.append(f"{i2}OUT[m, {e.var}] = {val}")
            else:
                block.append(f"{i2}if {g.expr(e.cond)}:")
                block.append(f"{i2}    OUT[m, {e.var}] = {val}")
        block.append(f"{i2}m += 1")
        blocks.append(block)
    return blocks


DISPATCH_MIN_VALUES = 4      # a dispatch over fewer values than this saves too little
DISPATCH_MAX_SHARED = 64     # actions without the dispatch test, copied into every value's function


def dispatch_plan(task: Task) -> tuple[int, dict[int, list[int]], list[int]] | None:
    """The compiled kernel's successor generator: the variable that most actions are indexed by
    (``npkernel._index_keys``, a guard conjunct ``var == const``; the numpy kernel and the
    interpreter index by the same choice), each value's actions, and the other actions; None when
    no variable splits the actions usefully.

    Why: a kernel that evaluates every guard on every row costs what all the actions cost, and a
    grid board with an agent can have 1,700 ground actions, of which the 4 at the agent's cell can
    apply.  Dispatching on the agent's cell evaluates only those (Fast Downward's successor
    generator, one level deep).
    """
    nodes, key_of = _index_keys(task)
    tested: dict[int, int] = {}
    for key in key_of:
        if key is not None and nodes[key[0]].op == "var":
            tested[key[0]] = tested.get(key[0], 0) + 1
    if not tested:
        return None
    kid = max(tested, key=lambda n: tested[n])
    values: dict[int, list[int]] = {}
    for k, key in enumerate(key_of):
        if key is not None and key[0] == kid:
            values.setdefault(key[1], []).append(k)
    rest = [k for k, key in enumerate(key_of) if key is None or key[0] != kid]
    if len(values) < DISPATCH_MIN_VALUES or len(rest) > DISPATCH_MAX_SHARED:
        return None
    return int(nodes[kid].val), values, rest  # type: ignore[arg-type]


def _dispatched(task: Task, consts: _Tables, budget: int) -> tuple[list[str], list[str], list[str]] | None:
    """``expand``'s per-state code as a dispatch (:func:`dispatch_plan`): one small function per
    value of the variable, holding that value's actions and the untested ones in action order, so
    a row's successors come out in the plain kernel's order.  Returns the functions, the
    declarations and the per-state lines; None where the plan does not apply, or where a value's
    function would need scratch buffers or pass the size budget (then the plain kernel)."""
    plan = dispatch_plan(task)
    if plan is None:
        return None
    v, values, rest = plan
    fns: list[str] = []
    names: dict[int | None, str] = {}
    groups: list[tuple[int | None, list[int]]] = [(c, sorted(ks + rest)) for c, ks in sorted(values.items())]
    if rest:
        groups.append((None, rest))
    for j, (c, actions) in enumerate(groups):
        g = _Gen(task.action_roots(actions), consts, task.var_bounds)
        body = _action_blocks(task, g, actions, "    ")
        if g.buffer_sizes or _size(g.lines) + sum(_size(b) for b in body) > budget:
            return None
        names[c] = f"_dv{j}"
        fns += ["@njit(cache=True, nogil=True)", f"def _dv{j}(S, i, OUT, PAR, ACT, TABS, m):",
                *g.prologue("    ", "S[i"), *(ln for b in body for ln in b), "    return m", ""]
    per_state = [f"        d = S[i, {v}]", *_dispatch_tree(sorted(values), names, " " * 8)]
    return fns, [], per_state


def _dispatch_tree(keys: list[int], names: dict[int | None, str], ind: str) -> list[str]:
    """A binary search over the sorted dispatch values (about log2 of their number tests per row);
    a value no action tests runs the untested actions alone (``names[None]``), if there are any."""
    call = "(S, i, OUT, PAR, ACT, TABS, m)"
    if len(keys) <= 2:
        out = []
        for j, k in enumerate(keys):
            out += [f"{ind}{'if' if j == 0 else 'elif'} d == {k}:", f"{ind}    m = {names[k]}{call}"]
        if None in names:
            out += [f"{ind}else:", f"{ind}    m = {names[None]}{call}"]
        return out
    mid = len(keys) // 2
    return [f"{ind}if d < {keys[mid]}:", *_dispatch_tree(keys[:mid], names, ind + "    "),
            f"{ind}else:", *_dispatch_tree(keys[mid:], names, ind + "    ")]


def generate(task: Task, budget: int | None = None) -> tuple[str, np.ndarray]:
    """The kernel module's source and the constant table array it is called with.

    ``budget``: the largest size (statements plus branches) one generated function may have
    before the kernel is split into many (see :class:`_Split`); ``None`` = :data:`SPLIT_SIZE`.
    """
    budget = SPLIT_SIZE if budget is None else budget
    n_act = max(1, len(task.actions))
    ind = " " * 8
    consts = _Tables()
    dispatched = _dispatched(task, consts, budget)
    if dispatched is not None:
        helpers, decls, per_state = dispatched
    else:
        consts = _Tables()     # the tables an abandoned dispatch laid out are not passed
        g = _Gen(task.action_roots(), consts, task.var_bounds)
        blocks = _action_blocks(task, g, range(len(task.actions)), ind)
        if _size(g.lines) + sum(_size(b) for b in blocks) > budget:
            sp = _Split(g, "e", budget)
            helpers = sp.functions(blocks)
            decls = sp.decls()
            per_state = [ind + c for c in sp.calls]
        else:
            helpers = []
            decls = g.buffer_decls("    ")
            per_state = [*g.prologue(ind, "S[i"), *(ln for b in blocks for ln in b)]
    src = [
        f"# generated by puzzleplan.encodings.compiled -- do not edit ({_SALT})",
        "import numpy as np",
        "from numba import njit",
        "from puzzleplan.encodings.jitlib import _assign, _bit, _emit, _first_outside, _tab, _tab8",
        "from puzzleplan.encodings.hashset import insert_one, visit_config",
        "",
        f"N_ACTIONS = {n_act}",
        "",
        *helpers,
        "@njit(cache=True, nogil=True)",
        "def expand(S, start, OUT, PAR, ACT, TABS, LO, HI):",
        "    N = S.shape[0]",
        "    V = S.shape[1]",
        "    cap = OUT.shape[0]",
        "    m = 0",
        *decls,
        "    for i in range(start, N):",
        f"        if m + {n_act} > cap:",
        "            bad = _first_outside(OUT, m, LO, HI)",
        "            if bad >= 0:",
        "                return -1 - bad, i",
        "            return m, i",
        *per_state,
        "    bad = _first_outside(OUT, m, LO, HI)",
        "    if bad >= 0:",
        "        return -1 - bad, N",
        "    return m, N",
        "",
    ]
    for fname, root in (("goal", task.goal), ("heuristic", task.heuristic)):
        if root is None:
            src += ["@njit(cache=True, nogil=True)", f"def {fname}(S, OUT, TABS):",
                    "    for i in range(S.shape[0]):", "        OUT[i] = 0", ""]
            continue
        gg = _Gen([root], consts, task.var_bounds)
        value = gg.expr(root)
        if _size(gg.lines) + _size([value]) > budget:
            sp = _Split(gg, fname[0], budget)
            src += sp.functions([[f"{ind}return {value}"]], value_fn=True)
            src += [
                "@njit(cache=True, nogil=True)",
                f"def {fname}(S, OUT, TABS):",
                *sp.decls(),
                "    for i in range(S.shape[0]):",
                *(ind + c for c in sp.calls[:-1]),
                f"{ind}OUT[i] = {sp.calls[-1]}",
                "",
            ]
            continue
        src += [
            "@njit(cache=True, nogil=True)",
            f"def {fname}(S, OUT, TABS):",
            *gg.buffer_decls("    "),
            "    for i in range(S.shape[0]):",
            *gg.prologue(ind, "S[i"),
            f"        OUT[i] = {value}",
            "",
        ]
    src += _canon_pack_source(task)
    src += _unpack_source(task)
    for _name, driver in drivers.sources():   # the engines' search loops (encodings/drivers/)
        src += driver.splitlines() + [""]
    return "\n".join(src) + "\n", consts.values


# Above this size (statements plus branches: ``if`` statements and conditional expressions) in
# one function, numba's compile time grows much faster than the source, and its SSA pass
# overflows the recursion limit near a few thousand branches (the 10 x 12 Zen garden), so the
# kernel is split into functions of at most this size.
SPLIT_SIZE = 1500

_NAME = re.compile(r"\b(x\d+|t\d+|bv\d+|BUF\d+)\b")


def _size(lines: list[str]) -> int:
    return sum(1 + ln.count(" if ") + ln.lstrip().startswith("if ") for ln in lines)


class _Split:
    """A kernel body spread over many small compiled functions.

    Why: numba compiles one huge function super-linearly (and fails on the largest), while
    many small ones compile in time proportional to their total size.  The shared locals of
    ``_Gen`` (``t``, ``bv``) are passed between the pieces in one int64 array ``T``, the element
    buffers live at offsets of one array ``B``; every piece reloads the state variables it
    reads.  The per-state cost is a few calls and array reads; the semantics are the one-function
    kernel's (tests compare both with the numpy kernel).
    """

    def __init__(self, gen: _Gen, prefix: str, budget: int):
        self.gen, self.prefix, self.budget = gen, prefix, max(1, budget)
        self.slot: dict[str, int] = {}
        self.offset: dict[str, int] = {}
        self.b_size = 0
        for buf, size in gen.buffer_sizes.items():
            self.offset[buf] = self.b_size
            self.b_size += size
        self.calls: list[str] = []

    def decls(self) -> list[str]:
        """The caller's allocation of ``T`` and ``B``, once per call (after :meth:`functions`)."""
        return [f"    T = np.zeros({max(1, len(self.slot))}, dtype=np.int64)",
                f"    B = np.zeros({max(1, self.b_size)}, dtype=np.int64)"]

    def _chunks(self, blocks: list[list[str]]) -> list[list[str]]:
        out: list[list[str]] = []
        cur: list[str] = []
        used = 0
        for b in blocks:
            n = _size(b)
            if cur and used + n > self.budget:
                out.append(cur)
                cur, used = [], 0
            cur += b
            used += n
        if cur:
            out.append(cur)
        return out

    def _loads(self, lines: list[str], defined: set[str], indent: str) -> list[str]:
        names = sorted({n for ln in lines for n in _NAME.findall(ln)} - defined,
                       key=lambda n: (n[0], int(n.lstrip("xtbvBUF"))))
        out = []
        for n in names:
            if n.startswith("x"):
                out.append(f"{indent}{n} = S[i, {n[1:]}]")
            elif n.startswith("BUF"):
                o = self.offset[n]
                out.append(f"{indent}{n} = B[{o}:{o + self.gen.buffer_sizes[n]}]")
            elif n in self.gen.boolean:
                out.append(f"{indent}{n} = T[{self.slot[n]}] != 0")
            else:
                out.append(f"{indent}{n} = T[{self.slot[n]}]")
        return out

    def functions(self, blocks: list[list[str]], value_fn: bool = False) -> list[str]:
        """Source of the pieces; ``self.calls`` gets the per-state call of each, in order.

        ``blocks``: the action blocks (8-space indent; a piece returns ``m``), or with
        ``value_fn`` one block ``return EXPR`` whose call is the last of ``self.calls``.
        """
        src: list[str] = []
        p = self.prefix
        for j, piece in enumerate(self._chunks([[ln] for ln in self.gen.lines])):
            defined = {ln.split(" = ", 1)[0] for ln in piece if not ln.startswith("BUF")}
            for n in sorted(defined):
                self.slot[n] = len(self.slot)
            body = ["    " + ln for ln in piece]
            body += [f"    T[{self.slot[n]}] = {n}" for n in sorted(defined)]
            src += ["@njit(cache=True, nogil=True)", f"def _{p}pre{j}(S, i, T, B, TABS):",
                    *self._loads(piece, defined, "    "), *body, ""]
            self.calls.append(f"_{p}pre{j}(S, i, T, B, TABS)")
        if value_fn:
            body = [ln[4:] for ln in blocks[0]]
            src += ["@njit(cache=True, nogil=True)", f"def _{p}val(S, i, T, B, TABS):",
                    *self._loads(body, set(), "    "), *body, ""]
            self.calls.append(f"_{p}val(S, i, T, B, TABS)")
            return src
        for j, piece in enumerate(self._chunks(blocks)):
            body = [ln[4:] for ln in piece]
            src += ["@njit(cache=True, nogil=True)", f"def _{p}act{j}(S, i, OUT, PAR, ACT, TABS, T, B, m):",
                    *self._loads(body, set(), "    "), *body, "    return m", ""]
            self.calls.append(f"m = _{p}act{j}(S, i, OUT, PAR, ACT, TABS, T, B, m)")
        return src


def _unpack_source(task: Task) -> list[str]:
    """``unpack_rows(KEYS, ids, S)``: decode the keys of the given state ids, shifts and masks inlined."""
    from .packing import layout_for

    lay = layout_for(task)
    out = ["@njit(cache=True, nogil=True)", "def unpack_rows(KEYS, ids, S):",
           "    for r in range(ids.shape[0]):", "        q = ids[r]"]
    out += [f"        k{w} = KEYS[q, {w}]" for w in range(lay.n_words)]
    for v in range(task.n_vars):
        out.append(f"        S[r, {v}] = np.int64((k{int(lay.word[v])} >> np.uint64({int(lay.shift[v])})) "
                   f"& np.uint64({int(lay.mask[v])})) + {int(lay.lo[v])}")
    return out + [""]


def _network(n: int) -> list[tuple[int, int]]:
    """Compare-exchange pairs that sort n items (odd-even transposition: simple and branch-free)."""
    pairs = []
    for rnd in range(n):
        for i in range(rnd % 2, n - 1, 2):
            pairs.append((i, i + 1))
    return pairs


def _canon_pack_source(task: Task) -> list[str]:
    """``canon_pack(S, K)``: sort each interchangeable group, then pack, in one pass per row.

    Objects are compared by a mixed-radix key of their value tuple; keys are
    sorted with a sorting network on locals and decoded back, so no array is
    touched but the input row and the output key.
    """
    from .packing import layout_for

    lay = layout_for(task)
    V = task.n_vars
    ind = " " * 8
    out = ["@njit(cache=True, nogil=True)", "def canon_pack(S, K):", "    for i in range(S.shape[0]):"]
    out += [f"{ind}x{v} = S[i, {v}]" for v in range(V)]
    for gi, group in enumerate(task.groups):
        arity = len(group[0])
        spans = [task.variables[v].hi - task.variables[v].lo + 1 for v in group[0]]
        los = [task.variables[v].lo for v in group[0]]
        keys = []
        for oi, obj in enumerate(group):
            terms = "0"
            for t, v in enumerate(obj):
                terms = f"({terms}) * {spans[t]} + (x{v} - {los[t]})" if t else f"(x{v} - {los[t]})"
            out.append(f"{ind}k{gi}_{oi} = {terms}")
            keys.append(f"k{gi}_{oi}")
        if len(group) <= 16:
            for a, b in _network(len(group)):
                ka, kb = keys[a], keys[b]
                out.append(f"{ind}{ka}, {kb} = min({ka}, {kb}), max({ka}, {kb})")
        else:
            out.append(f"{ind}arr = np.array([{', '.join(keys)}])")
            out.append(f"{ind}arr.sort()")
            out += [f"{ind}{k} = arr[{j}]" for j, k in enumerate(keys)]
        for oi, obj in enumerate(group):
            rest = keys[oi]
            for t in range(arity - 1, -1, -1):
                if t == 0:
                    out.append(f"{ind}x{obj[t]} = {rest} + {los[t]}")
                else:
                    out.append(f"{ind}x{obj[t]} = {rest} % {spans[t]} + {los[t]}")
                    rest = f"({rest} // {spans[t]})"
    for w in range(lay.n_words):
        parts = [f"(np.uint64(x{v} - {int(lay.lo[v])}) << np.uint64({int(lay.shift[v])}))"
                 for v in range(V) if lay.word[v] == w]
        out.append(f"{ind}K[i, {w}] = " + " | ".join(parts))
    return out + [""]


def _check_private(d: Path) -> None:
    """Refuse a cache directory another user could write to: its modules are imported, and numba
    unpickles its index files, so whoever can write there runs code as us.

    It must be a directory owned by us and writable by nobody else (no group or world write bit).
    A link is judged by its target and by who owns the link.
    """
    from ..lang.errors import PuzzleError

    if not hasattr(os, "getuid"):   # no POSIX owners (Windows): nothing to check against
        return
    uid = os.getuid()
    try:
        link = os.lstat(d)
        st = os.stat(d)
    except OSError as e:
        raise PuzzleError(f"cannot use the kernel cache directory: {e.strerror or e}", str(d),
                          code=EXIT_UNSAFE_CACHE) from None
    import stat

    if not stat.S_ISDIR(st.st_mode):
        problem = "not a directory"
    elif st.st_uid != uid or link.st_uid != uid:
        problem = f"owned by uid {st.st_uid if st.st_uid != uid else link.st_uid}, not by this user ({uid})"
    elif st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        problem = f"writable by other users (mode {stat.S_IMODE(st.st_mode):04o})"
    else:
        return
    raise PuzzleError(f"unsafe kernel cache directory: {problem}; its code would be run. Fix it "
                      "(chmod 700) or set PUZZLEPLAN_CACHE to a private directory", str(d),
                      code=EXIT_UNSAFE_CACHE)


def _private_dir(d: Path, tighten: bool = False) -> Path:
    """``d`` created (mode 0700 where new) or found, then checked: see :func:`_check_private`.

    ``tighten`` (the ``kernels`` directory itself, ours alone): an existing one readable by others
    is made 0700, so nobody else can reach the files in it, whatever the umask made them; and a
    ``__pycache__`` in it (numba's index and machine code) is checked like the directory.
    """
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    _check_private(d)
    if tighten:
        if d.stat().st_mode & 0o077:
            d.chmod(0o700)
        if (d / "__pycache__").exists():
            _check_private(d / "__pycache__")
    return d


def cache_dir() -> Path:
    """The directory of generated kernel modules (and numba's cache of them, in its __pycache__).

    ``$PUZZLEPLAN_CACHE/kernels``, else ``~/.cache/puzzleplan/kernels``; if that cannot be written,
    ``puzzleplan-kernels-UID`` in the system temp directory.  Each directory on the way that exists
    or is created here (the base and ``kernels``) must be private to this user; one that is not is
    refused (exit 36) rather than used, since modules are imported from it; so is a
    ``NUMBA_CACHE_DIR`` that exists.
    """
    numba_dir = os.environ.get("NUMBA_CACHE_DIR")   # numba pickles its index of our kernels there
    if numba_dir and os.path.exists(numba_dir):
        _check_private(Path(numba_dir))
    root = os.environ.get("PUZZLEPLAN_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "puzzleplan"
    d = base / "kernels"
    try:
        _private_dir(base)
        _private_dir(d, tighten=True)
        probe = d / f".write-test-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
        return d
    except OSError:
        pass
    uid = os.getuid() if hasattr(os, "getuid") else 0
    fallback = Path(tempfile.gettempdir()) / f"puzzleplan-kernels-{uid}"
    try:
        return _private_dir(fallback, tighten=True)
    except OSError as e:
        from ..lang.errors import EXIT_OUTPUT, PuzzleError

        raise PuzzleError(f"cannot create the kernel cache directory: {e.strerror or e} (set "
                          "PUZZLEPLAN_CACHE to a writable directory)", str(fallback),
                          code=EXIT_OUTPUT) from None


_LAST: list[tuple[Task, int | None, str, np.ndarray]] = []   # the last task's generated source


def _generated(task: Task, budget: int | None) -> tuple[str, np.ndarray]:
    """``generate(task, budget)``, remembered for the last task: ``warm_marker`` and then
    ``load_module`` both need the source of the same task, and a big one takes a while to write."""
    if _LAST and _LAST[0][0] is task and _LAST[0][1] == budget:
        return _LAST[0][2], _LAST[0][3]
    src, tables = generate(task, budget)
    _LAST[:] = [(task, budget, src, tables)]
    return src, tables


def module_name(task: Task, budget: int | None = None) -> str:
    src, _ = _generated(task, budget)
    return f"pp_kernel_{hashlib.sha1(src.encode()).hexdigest()[:20]}"


def warm_marker(task: Task, key: str, budget: int | None = None) -> Path:
    """A file that says: an engine (``key``) already ran on this task's kernel, so numba's disk
    cache holds every function it calls.  With a time limit, a kernel without one is compiled in
    a child process that the deadline can stop (``kernel.compile_in_child``)."""
    return cache_dir() / f"{module_name(task, budget)}.{key}.warm"


def is_warm(task: Task, key: str, budget: int | None = None) -> bool:
    name = module_name(task, budget)
    marker = warm_marker(task, key, budget)
    return marker.exists() and any((marker.parent / "__pycache__").glob(f"{name}.*.nbi"))


def load_module(task: Task, budget: int | None = None) -> tuple[ModuleType, np.ndarray]:
    """Generate, write (once) and import the kernel module for ``task``; also return its tables."""
    src, tables = _generated(task, budget)
    name = module_name(task, budget)
    if name in sys.modules:
        return sys.modules[name], tables
    return import_source(name, src), tables


def import_source(name: str, src: str) -> ModuleType:
    """Write ``src`` as module ``name`` into the private cache (atomically, once) and import it from
    there, so numba's ``cache=True`` keeps the machine code beside it."""
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
    return mod
