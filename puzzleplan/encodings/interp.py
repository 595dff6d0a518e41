"""The interpreted kernel: one compiled interpreter runs any task's flat program (``flat``).

Why: the compiled kernel costs a numba compile per new model structure (15-160 s), and the numpy
kernel pays a numpy call per expression node per batch, which dominates narrow frontiers.  The
interpreter is compiled once per installation (``cache=True``, task-independent signatures: the
program is an argument) and evaluates states one at a time like the compiled kernel, so a new
task starts at once and still runs at a good fraction of the compiled kernel's speed.

Its functions have the compiled kernel's signatures (``expand(S, start, OUT, PAR, ACT, TABS, LO,
HI)``, ``goal(S, OUT, TABS)``, ``heuristic(S, OUT, TABS)``) with the program in place of the
constant tables, so the engines' compiled drivers (``encodings/drivers/``: bfs, idastar)
run on it unchanged: they are compiled once into a small module over these functions
(:func:`driver_module`), which is what lets :class:`InterpretedKernel` be a ``CompiledKernel``.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path
from types import ModuleType

import numba as nb
import numpy as np

from ..ir.task import Task
from . import drivers
from .flat import (
    H_CONST_OFF,
    H_EXP_END,
    H_EXP_START,
    H_GOAL_END,
    H_GOAL_REG,
    H_GOAL_START,
    H_GRP_OFF,
    H_GWIDTH,
    H_HEUR_END,
    H_HEUR_REG,
    H_HEUR_START,
    H_INS_OFF,
    H_LAY_OFF,
    H_NACT,
    H_NCONST,
    H_NGROUPS,
    H_NOBJ,
    H_NREG,
    H_NSUB,
    H_NV,
    H_NWORDS,
    H_SCRATCH,
    OP_ABS,
    OP_ADD2,
    OP_ADDK,
    OP_ADDN,
    OP_AND2,
    OP_ANDN,
    OP_ASSIGN,
    OP_BITVIEW,
    OP_CALL,
    OP_COPY,
    OP_DISPATCH,
    OP_ELEM,
    OP_ELEMBIT,
    OP_ELEMBITT,
    OP_EMIT,
    OP_EQ,
    OP_EQK,
    OP_FLOORDIV,
    OP_GE,
    OP_GT,
    OP_ITE,
    OP_JFALSE,
    OP_JTRUE,
    OP_JUMP,
    OP_LE,
    OP_LT,
    OP_MAX2,
    OP_MAXN,
    OP_MIN2,
    OP_MINN,
    OP_MOD,
    OP_MUL,
    OP_NE,
    OP_NEG,
    OP_NEXT,
    OP_NOT,
    OP_OR2,
    OP_ORN,
    OP_RET,
    OP_SET,
    OP_SETIF,
    OP_SUB,
    OP_TABEQK,
    OP_TABLE,
    WIDTH,
    Program,
    build,
)
from .jitlib import _assign, _first_outside
from .kernel import CompiledKernel, Kernel
from .packing import object_key

# ----------------------------------------------------------------------------- the interpreter


@nb.njit(cache=True)
def _run(P, S, start, OUT, PAR, ACT, VALS, pc0, end, reg, values):  # pragma: no cover - compiled
    """Run instructions ``pc0..end-1`` (and the subroutines they call) for each row from ``start``.

    Successor mode (``values`` false): applicable actions' successors go to OUT/PAR/ACT; stops
    early, returning ``(m, row)``, when OUT could overflow.  Value mode: ``VALS[i] = R[reg]``.
    One call per batch, the state loop inside: a call per state would pay the arrays' reference
    counting per state.
    """
    N = S.shape[0]
    V = S.shape[1]
    cap = OUT.shape[0]
    n_act = P[H_NACT]
    ins = P[H_INS_OFF]
    R, ST, SCR, RS = _registers(P)
    m = 0
    for i in range(start, N):
        if not values and m + n_act > cap:
            return m, i
        for v in range(V):
            R[v] = S[i, v]
        cur = i + 1
        pc = pc0
        sp = 0
        while pc < end or sp > 0:
            base = ins + pc * WIDTH
            op = P[base]
            pc += 1
            if op == OP_CALL:
                if ST[P[base + 2]] != cur:
                    RS[sp] = pc
                    sp += 1
                    pc = P[base + 3]
                continue
            if op == OP_RET:
                sp -= 1
                pc = RS[sp]
                continue
            if op == OP_JFALSE:
                if R[P[base + 2]] == 0:
                    pc = P[base + 3]
                continue
            if op == OP_JTRUE:
                if R[P[base + 2]] != 0:
                    pc = P[base + 3]
                continue
            a = P[base + 2]
            b = P[base + 3]
            if op == OP_ELEMBITT:       # items[T[x]] through a bit view
                x = R[a]
                sizes = P[base + 4]
                if 0 <= x < (sizes >> 32):
                    x = P[b + x]
                else:
                    x = R[P[base + 5]]
                if 0 <= x < (sizes & 0xFFFFFFFF):
                    val = (R[P[base + 6]] >> x) & 1
                else:
                    val = R[P[base + 7]]
                dst = P[base + 1]
                R[dst] = val
                ST[dst] = cur
                continue
            if op == OP_TABEQK:
                x = R[a]
                pair = P[base + 5]
                if 0 <= x < P[base + 4]:
                    got = P[b + x]
                else:
                    got = pair >> 32
                val = np.int64(1) if got == ((pair << 32) >> 32) else np.int64(0)
            elif op == OP_TABLE:
                x = R[a]
                if 0 <= x < P[base + 5]:
                    val = P[P[base + 4] + x]
                else:
                    val = R[b]
            elif op == OP_ELEMBIT:
                x = R[a]
                if 0 <= x < P[base + 5]:
                    val = (R[P[base + 4]] >> x) & 1
                else:
                    val = R[b]
            elif op == OP_NOT:
                val = 1 - R[a]
            elif op == OP_EQK:
                val = np.int64(1) if R[a] == b else np.int64(0)
            elif op == OP_DISPATCH:
                x = R[a] - P[base + 4]
                if 0 <= x < P[base + 5]:
                    pc = P[b + x]
                else:
                    pc = P[base + 1]
                continue
            elif op == OP_EMIT:
                for j in range(V):
                    OUT[m, j] = S[i, j]
                PAR[m] = i
                ACT[m] = a
                continue
            elif op == OP_SET:
                OUT[m, a] = R[b]
                continue
            elif op == OP_NEXT:
                m += 1
                continue
            elif op == OP_JUMP:
                pc = b
                continue
            elif op == OP_SETIF:
                if R[P[base + 4]] != 0:
                    OUT[m, a] = R[b]
                continue
            elif op == OP_BITVIEW:
                val = P[base + 4]
                for t in range(b):
                    q = a + 3 * t
                    val |= P[P[q + 1] + R[P[q]] - P[q + 2]]
            elif op == OP_AND2:
                val = R[a] & R[b]
            elif op == OP_OR2:
                val = R[a] | R[b]
            elif op == OP_ADDK:
                val = R[a] + b
            elif op == OP_ADD2:
                val = R[a] + R[b]
            elif op == OP_EQ:
                val = np.int64(1) if R[a] == R[b] else np.int64(0)
            elif op == OP_NE:
                val = np.int64(1) if R[a] != R[b] else np.int64(0)
            elif op == OP_LT:
                val = np.int64(1) if R[a] < R[b] else np.int64(0)
            elif op == OP_LE:
                val = np.int64(1) if R[a] <= R[b] else np.int64(0)
            elif op == OP_GT:
                val = np.int64(1) if R[a] > R[b] else np.int64(0)
            elif op == OP_GE:
                val = np.int64(1) if R[a] >= R[b] else np.int64(0)
            elif op == OP_ITE:
                val = R[b] if R[a] != 0 else R[P[base + 4]]
            elif op == OP_COPY:
                val = R[a]
            elif op == OP_ANDN:
                val = 1
                for t in range(b):
                    if R[P[a + t]] == 0:
                        val = 0
                        break
            elif op == OP_ORN:
                val = 0
                for t in range(b):
                    if R[P[a + t]] != 0:
                        val = 1
                        break
            elif op == OP_ADDN:
                val = 0
                for t in range(b):
                    val += R[P[a + t]]
            elif op == OP_SUB:
                val = R[a] - R[b]
            elif op == OP_MUL:
                val = R[a] * R[b]
            elif op == OP_FLOORDIV:
                val = R[a] // R[b]
            elif op == OP_MOD:
                val = R[a] % R[b]
            elif op == OP_ABS:
                val = abs(R[a])
            elif op == OP_NEG:
                val = -R[a]
            elif op == OP_MIN2:
                val = min(R[a], R[b])
            elif op == OP_MAX2:
                val = max(R[a], R[b])
            elif op == OP_MINN:
                val = R[P[a]]
                for t in range(1, b):
                    val = min(val, R[P[a + t]])
            elif op == OP_MAXN:
                val = R[P[a]]
                for t in range(1, b):
                    val = max(val, R[P[a + t]])
            elif op == OP_ELEM:
                x = R[a]
                if 0 <= x < P[base + 5]:
                    val = R[P[P[base + 4] + x]]
                else:
                    val = R[b]
            elif op == OP_ASSIGN:
                for t in range(b * b):
                    SCR[t] = R[P[a + t]]
                val = _assign(SCR, b)
            else:
                raise ValueError("interpreted kernel: bad opcode")
            dst = P[base + 1]
            R[dst] = val
            ST[dst] = cur
        if values:
            VALS[i] = R[reg]
    return m, N


@nb.njit(cache=True)
def _registers(P):  # pragma: no cover - compiled
    """Registers with the constants loaded, their stamps, and (MinAssignment's scratch buffer,
    the return stack of the subroutine calls)."""
    V = P[H_NV]
    R = np.zeros(P[H_NREG], dtype=np.int64)
    off = P[H_CONST_OFF]
    for j in range(P[H_NCONST]):
        R[V + j] = P[off + j]
    ST = np.zeros(P[H_NREG], dtype=np.int64)
    return R, ST, np.zeros(P[H_SCRATCH], dtype=np.int64), np.zeros(P[H_NSUB], dtype=np.int64)


@nb.njit(cache=True)
def expand(S, start, OUT, PAR, ACT, P, LO, HI):  # pragma: no cover - compiled
    """Successors of rows ``start..``: the compiled kernel's ``expand`` contract (``(m, next row)``;
    ``m < 0``: row ``-1 - m`` of OUT lies outside the domains)."""
    none = np.empty(0, dtype=np.int64)
    m, nxt = _run(P, S, start, OUT, PAR, ACT, none, P[H_EXP_START], P[H_EXP_END], 0, False)
    bad = _first_outside(OUT, m, LO, HI)
    if bad >= 0:
        return -1 - bad, nxt
    return m, nxt


@nb.njit(cache=True)
def _values(S, P, lo, hi, reg):  # pragma: no cover - compiled
    out = np.empty(S.shape[0], dtype=np.int64)
    none2 = np.empty((0, S.shape[1]), dtype=np.int64)
    none1 = np.empty(0, dtype=np.int64)
    _run(P, S, 0, none2, none1, none1, out, lo, hi, reg, True)
    return out


@nb.njit(cache=True)
def goal(S, OUT, P):  # pragma: no cover - compiled
    vals = _values(S, P, P[H_GOAL_START], P[H_GOAL_END], P[H_GOAL_REG])
    for i in range(S.shape[0]):
        OUT[i] = vals[i] != 0


@nb.njit(cache=True)
def heuristic(S, OUT, P):  # pragma: no cover - compiled
    vals = _values(S, P, P[H_HEUR_START], P[H_HEUR_END], P[H_HEUR_REG])
    for i in range(S.shape[0]):
        OUT[i] = vals[i]


@nb.njit(cache=True)
def n_actions(P):  # pragma: no cover - compiled
    return P[H_NACT]


@nb.njit(cache=True)
def canon_pack(P, S, K):  # pragma: no cover - compiled
    """Canonicalise (sort the interchangeable groups) and pack each row: the generated
    ``canon_pack`` of a compiled kernel, with the layout and groups read from the program.

    Each object's value tuple is one mixed-radix key; a group's keys are sorted (insertion sort:
    groups are small) with the objects they came from, and the tuples are written back in order.
    """
    V = P[H_NV]
    W = P[H_NWORDS]
    lay = P[H_LAY_OFF]
    ng = P[H_NGROUPS]
    g = P[H_GRP_OFF]
    nobj, width = P[H_NOBJ], P[H_GWIDTH]
    obj_vars = P[g:g + nobj * width].reshape((nobj, width))
    grp_start = P[g + nobj * width:g + nobj * width + ng + 1]
    arity = P[g + nobj * width + ng + 1:g + nobj * width + 2 * ng + 1]
    lo = P[g + nobj * width + 2 * ng + 1:g + nobj * width + 2 * ng + 1 + V]
    span = P[g + nobj * width + 2 * ng + 1 + V:g + nobj * width + 2 * ng + 1 + 2 * V]
    X = np.empty(V, dtype=np.int64)
    keys = np.empty(max(nobj, 1), dtype=np.int64)
    perm = np.empty(max(nobj, 1), dtype=np.int64)
    Y = np.empty(V, dtype=np.int64)
    for i in range(S.shape[0]):
        for j in range(V):
            X[j] = S[i, j]
        for gi in range(ng):
            a, b = grp_start[gi], grp_start[gi + 1]
            ar = arity[gi]
            for o in range(a, b):
                k = object_key(X, obj_vars, o, ar, lo, span)
                p = o - 1
                while p >= a and keys[p - a] > k:
                    keys[p + 1 - a] = keys[p - a]
                    perm[p + 1 - a] = perm[p - a]
                    p -= 1
                keys[p + 1 - a] = k
                perm[p + 1 - a] = o
            for o in range(a, b):        # object o takes the o-th smallest tuple (no division)
                q = perm[o - a]
                for t in range(ar):
                    Y[obj_vars[o, t]] = X[obj_vars[q, t]]
            for o in range(a, b):
                for t in range(ar):
                    X[obj_vars[o, t]] = Y[obj_vars[o, t]]
        for w in range(W):
            K[i, w] = np.uint64(0)
        for j in range(V):
            K[i, P[lay + V + j]] |= np.uint64(X[j] - P[lay + j]) << np.uint64(P[lay + 2 * V + j])


@nb.njit(cache=True)
def unpack_rows(P, KEYS, ids, S):  # pragma: no cover - compiled
    """Decode the keys of the given state ids (the generated ``unpack_rows``)."""
    V = P[H_NV]
    lay = P[H_LAY_OFF]
    for r in range(ids.shape[0]):
        q = ids[r]
        for j in range(V):
            word = KEYS[q, P[lay + V + j]] >> np.uint64(P[lay + 2 * V + j])
            S[r, j] = np.int64(word & np.uint64(P[lay + 3 * V + j])) + P[lay + j]


# ----------------------------------------------------------------------------- engine drivers

_CALLS = re.compile(r"\b(canon_pack|unpack_rows)\(")


def _salt() -> str:
    """Changes with the interpreter and the helpers it is compiled with (as ``compiled._salt``)."""
    here = Path(__file__).parent
    h = hashlib.sha1()
    for f in ("interp.py", "flat.py", "jitlib.py", "hashset.py", "packing.py"):
        h.update((here / f).read_bytes())
    for path in drivers.files():
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def driver_source() -> tuple[str, list[str]]:
    """The module of every engine driver over the interpreter, and the drivers' names.

    The drivers are the compiled kernel's (``encodings/drivers/``, task-independent source); the
    only differences are that the program is passed to ``canon_pack`` and ``unpack_rows`` (the
    ``TABS`` argument every driver has) and ``N_ACTIONS`` is read from it.
    """
    names = []
    src = [f"# generated by puzzleplan.encodings.interp -- do not edit ({_salt()})",
           "import numpy as np",
           "from numba import njit",
           "from puzzleplan.encodings.interp import (canon_pack, expand, goal, heuristic, n_actions,",
           "                                         unpack_rows)",
           "from puzzleplan.encodings.hashset import insert_one, visit_config",
           ""]
    for name, body in drivers.sources():
        if "TABS" not in drivers.parameters(name):   # a driver without the program cannot run here
            continue
        body = _CALLS.sub(r"\1(TABS, ", body)
        body = re.sub(r"\bN_ACTIONS\b", "n_actions(TABS)", body)
        src += body.splitlines() + [""]
        names.append(name)
    return "\n".join(src) + "\n", names


_DRIVER_MOD: list[ModuleType] = []


def _driver_name() -> str:
    src, _ = driver_source()
    return f"pp_interp_{hashlib.sha1(src.encode()).hexdigest()[:20]}"


def warm_marker() -> Path:
    """A file that says: an engine ran on the interpreter with this cache, so numba's disk cache holds
    the interpreter and its drivers (a run with a time limit compiles them in a child otherwise)."""
    from .compiled import cache_dir

    return cache_dir() / f"{_driver_name()}.warm"


def driver_module() -> ModuleType:
    """Import (writing it once into the kernel cache) the drivers' module; numba caches it on disk,
    so its compile is paid once per installation, not per task."""
    if _DRIVER_MOD:
        return _DRIVER_MOD[0]
    from .compiled import import_source

    src, _ = driver_source()
    name = _driver_name()
    if name in sys.modules:
        mod = sys.modules[name]
    else:
        mod = import_source(name, src)
    _DRIVER_MOD.append(mod)
    return mod


class _Functions:
    """What the engines read as ``kernel._mod``: the interpreter's functions, and the drivers
    (imported on first use: a search that needs none of them never loads their module)."""

    def __init__(self, n_actions: int):
        self.N_ACTIONS = n_actions
        self.expand, self.goal, self.heuristic = expand, goal, heuristic

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(driver_module(), name)


# ----------------------------------------------------------------------------- the kernel


class InterpretedKernel(CompiledKernel):
    """The compiled kernel's interface and engine paths, with the task as data (no per-task compile)."""

    backend = "interpreted"

    def __init__(self, task: Task, program: Program | None = None):
        Kernel.__init__(self, task)

        self.program = program if program is not None else build(task)
        self._tabs = self.program.P
        self._mod = _Functions(max(1, len(task.actions)))
        self._bind_arrays()
        s0 = self.init_state()    # load the interpreter from numba's cache now, not inside the search
        self.expand(s0)
        self.goal(s0)
        self.heuristic(s0)
        self.unpack(self.canon_pack(s0))

    def canon_pack(self, S: np.ndarray) -> np.ndarray:
        S = np.ascontiguousarray(S, dtype=np.int64)
        K = np.empty((S.shape[0], self.n_words), dtype=np.uint64)
        canon_pack(self._tabs, S, K)
        return K


__all__ = ["InterpretedKernel", "driver_module", "driver_source"]
