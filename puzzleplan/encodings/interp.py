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

import functools
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
    H_EXP_START,
    H_GOAL_REG,
    H_GOAL_START,
    H_GRP_OFF,
    H_GWIDTH,
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
    H_SCRATCH,
    OP_ABS,
    OP_ADD2,
    OP_ADDK,
    OP_ADDN,
    OP_ALLEQK,
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
    OP_EMITSET,
    OP_EQ,
    OP_EQK,
    OP_FLOORDIV,
    OP_GE,
    OP_GT,
    OP_HALT,
    OP_ITE,
    OP_JEQK,
    OP_JFALSE,
    OP_JNEK,
    OP_JTRUE,
    OP_JUMP,
    OP_LE,
    OP_LOADK,
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

# Indices into the program, the registers and the output are never negative: cast to unsigned,
# numba drops the wrap-around of negative indices (a select per access), which made the
# interpreter's hot loop about a fifth slower.  For indices only, never in arithmetic (numba
# mixes uint64 and int64 into float64).
U = np.uint64


@nb.njit(cache=True, nogil=True)
def _run(P, S, start, OUT, PAR, ACT, VALS, pc0, reg, values):  # pragma: no cover - compiled
    """Run the stream from ``pc0`` to its HALT (and the subroutines it calls) for each row from
    ``start``.

    Successor mode (``values`` false): applicable actions' successors go to OUT/PAR/ACT; stops
    early, returning ``(m, row)``, when OUT could overflow.  Value mode: ``VALS[i] = R[reg]``.
    One call per batch, the state loop inside: a call per state would pay the arrays' reference
    counting per state.  One ``if`` chain on the opcode, hottest first; value instructions write
    their register and nothing else (only a subroutine's register is stamped, by its RET).
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
            R[U(v)] = S[U(i), U(v)]
        cur = i + 1
        pc = pc0
        sp = 0
        while True:
            base = ins + pc * WIDTH
            op = P[U(base)]
            a = P[U(base + 2)]
            b = P[U(base + 3)]
            pc += 1
            if op == OP_DISPATCH:       # the first entry hit: (register, low, size, table)
                pc = P[U(base + 1)]
                for e in range(a, a + 4 * b, 4):
                    x = R[U(P[U(e)])] - P[U(e + 1)]
                    if 0 <= x < P[U(e + 2)]:
                        t = P[U(P[U(e + 3)] + x)]
                        if t >= 0:
                            pc = t
                            break
                        if t < -1:      # the value's actions: one EMITSET, run here
                            q = ins + (-2 - t) * WIDTH
                            m = _emitset(P, R, OUT, PAR, ACT, m, i, V, P[U(q + 2)], P[U(q + 3)])
                if pc < 0:              # no hit left, and nothing after the groups
                    break
                continue
            if op == OP_EMITSET:
                m = _emitset(P, R, OUT, PAR, ACT, m, i, V, a, b)
                continue
            if op == OP_JNEK:
                if R[U(a)] != P[U(base + 4)]:
                    pc = b
                continue
            if op == OP_JEQK:
                if R[U(a)] == P[U(base + 4)]:
                    pc = b
                continue
            if op == OP_JFALSE:
                if R[U(a)] == 0:
                    pc = b
                continue
            if op == OP_JTRUE:
                if R[U(a)] != 0:
                    pc = b
                continue
            if op == OP_JUMP:
                pc = b
                continue
            if op == OP_HALT:
                break
            if op == OP_CALL:
                if ST[U(a)] != cur:
                    RS[U(sp)] = pc
                    sp += 1
                    pc = b
                continue
            if op == OP_RET:
                ST[U(a)] = cur
                sp -= 1
                pc = RS[U(sp)]
                continue
            if op == OP_ELEMBITT:       # items[T[x]] through a bit view
                x = R[U(a)]
                sizes = P[U(base + 4)]
                if 0 <= x < (sizes >> 32):
                    x = P[U(b + x)]
                else:
                    x = R[U(P[U(base + 5)])]
                if 0 <= x < (sizes & 0xFFFFFFFF):
                    val = (R[U(P[U(base + 6)])] >> x) & 1
                else:
                    val = R[U(P[U(base + 7)])]
            elif op == OP_LOADK:
                val = a
            elif op == OP_ALLEQK:
                val = 1
                for q in range(a, a + 2 * b, 2):
                    if R[U(P[U(q)])] != P[U(q + 1)]:
                        val = 0
                        break
            elif op == OP_TABEQK:
                x = R[U(a)]
                pair = P[U(base + 5)]
                if 0 <= x < P[U(base + 4)]:
                    got = P[U(b + x)]
                else:
                    got = pair >> 32
                val = np.int64(1) if got == ((pair << 32) >> 32) else np.int64(0)
            elif op == OP_TABLE:
                x = R[U(a)]
                if 0 <= x < P[U(base + 5)]:
                    val = P[U(P[U(base + 4)] + x)]
                else:
                    val = R[U(b)]
            elif op == OP_ELEMBIT:
                x = R[U(a)]
                if 0 <= x < P[U(base + 5)]:
                    val = (R[U(P[U(base + 4)])] >> x) & 1
                else:
                    val = R[U(b)]
            elif op == OP_NOT:
                val = 1 - R[U(a)]
            elif op == OP_EQK:
                val = np.int64(1) if R[U(a)] == b else np.int64(0)
            elif op == OP_EMIT:
                for j in range(V):
                    OUT[U(m), U(j)] = R[U(j)]
                PAR[U(m)] = i
                ACT[U(m)] = a
                continue
            elif op == OP_SET:
                OUT[U(m), U(a)] = R[U(b)]
                continue
            elif op == OP_NEXT:
                m += 1
                continue
            elif op == OP_SETIF:
                if R[U(P[U(base + 4)])] != 0:
                    OUT[U(m), U(a)] = R[U(b)]
                continue
            elif op == OP_BITVIEW:
                val = P[U(base + 4)]
                for t in range(b):
                    q = a + 3 * t
                    val |= P[P[U(q + 1)] + R[U(P[U(q)])] - P[U(q + 2)]]   # signed: a state off its domain
            elif op == OP_AND2:
                val = R[U(a)] & R[U(b)]
            elif op == OP_OR2:
                val = R[U(a)] | R[U(b)]
            elif op == OP_ADDK:
                val = R[U(a)] + b
            elif op == OP_ADD2:
                val = R[U(a)] + R[U(b)]
            elif op == OP_EQ:
                val = np.int64(1) if R[U(a)] == R[U(b)] else np.int64(0)
            elif op == OP_NE:
                val = np.int64(1) if R[U(a)] != R[U(b)] else np.int64(0)
            elif op == OP_LT:
                val = np.int64(1) if R[U(a)] < R[U(b)] else np.int64(0)
            elif op == OP_LE:
                val = np.int64(1) if R[U(a)] <= R[U(b)] else np.int64(0)
            elif op == OP_GT:
                val = np.int64(1) if R[U(a)] > R[U(b)] else np.int64(0)
            elif op == OP_GE:
                val = np.int64(1) if R[U(a)] >= R[U(b)] else np.int64(0)
            elif op == OP_ITE:
                val = R[U(b)] if R[U(a)] != 0 else R[U(P[U(base + 4)])]
            elif op == OP_COPY:
                val = R[U(a)]
            elif op == OP_ANDN:
                val = 1
                for t in range(b):
                    if R[U(P[U(a + t)])] == 0:
                        val = 0
                        break
            elif op == OP_ORN:
                val = 0
                for t in range(b):
                    if R[U(P[U(a + t)])] != 0:
                        val = 1
                        break
            elif op == OP_ADDN:
                val = 0
                for t in range(b):
                    val += R[U(P[U(a + t)])]
            elif op == OP_SUB:
                val = R[U(a)] - R[U(b)]
            elif op == OP_MUL:
                val = R[U(a)] * R[U(b)]
            elif op == OP_FLOORDIV:
                val = R[U(a)] // R[U(b)]
            elif op == OP_MOD:
                val = R[U(a)] % R[U(b)]
            elif op == OP_ABS:
                val = abs(R[U(a)])
            elif op == OP_NEG:
                val = -R[U(a)]
            elif op == OP_MIN2:
                val = min(R[U(a)], R[U(b)])
            elif op == OP_MAX2:
                val = max(R[U(a)], R[U(b)])
            elif op == OP_MINN:
                val = R[U(P[U(a)])]
                for t in range(1, b):
                    val = min(val, R[U(P[U(a + t)])])
            elif op == OP_MAXN:
                val = R[U(P[U(a)])]
                for t in range(1, b):
                    val = max(val, R[U(P[U(a + t)])])
            elif op == OP_ELEM:
                x = R[U(a)]
                if 0 <= x < P[U(base + 5)]:
                    val = R[U(P[U(P[U(base + 4)] + x)])]
                else:
                    val = R[U(b)]
            elif op == OP_ASSIGN:
                for t in range(b * b):
                    SCR[U(t)] = R[U(P[U(a + t)])]
                val = _assign(SCR, b)
            else:
                raise ValueError("interpreted kernel: bad opcode")
            R[U(P[U(base + 1)])] = val
        if values:
            VALS[U(i)] = R[U(reg)]
    return m, N


@nb.njit(cache=True, nogil=True, inline="always")
def _emitset(P, R, OUT, PAR, ACT, m, i, V, q, n):  # pragma: no cover - compiled
    """EMITSET: n actions' successor rows of state i from row m: per action its number, its
    write count, then (variable, register) pairs.  Returns the next row."""
    for _ in range(n):
        for j in range(V):
            OUT[U(m), U(j)] = R[U(j)]
        PAR[U(m)] = i
        ACT[U(m)] = P[U(q)]
        n_set = P[U(q + 1)]
        q += 2
        for _t in range(n_set):
            OUT[U(m), U(P[U(q)])] = R[U(P[U(q + 1)])]
            q += 2
        m += 1
    return m


@nb.njit(cache=True, nogil=True)
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


@nb.njit(cache=True, nogil=True)
def expand(S, start, OUT, PAR, ACT, P, LO, HI):  # pragma: no cover - compiled
    """Successors of rows ``start..``: the compiled kernel's ``expand`` contract (``(m, next row)``;
    ``m < 0``: row ``-1 - m`` of OUT lies outside the domains)."""
    none = np.empty(0, dtype=np.int64)
    m, nxt = _run(P, S, start, OUT, PAR, ACT, none, P[H_EXP_START], 0, False)
    bad = _first_outside(OUT, m, LO, HI)
    if bad >= 0:
        return -1 - bad, nxt
    return m, nxt


@nb.njit(cache=True, nogil=True)
def _values(S, P, pc0, reg):  # pragma: no cover - compiled
    out = np.empty(S.shape[0], dtype=np.int64)
    none2 = np.empty((0, S.shape[1]), dtype=np.int64)
    none1 = np.empty(0, dtype=np.int64)
    _run(P, S, 0, none2, none1, none1, out, pc0, reg, True)
    return out


@nb.njit(cache=True, nogil=True)
def goal(S, OUT, P):  # pragma: no cover - compiled
    """The goal of each row.  A goal that is one configuration (``ALLEQK`` over variables, then
    HALT: the common shape) is tested on the rows directly, without the interpreter's per-state
    set-up, which cost more than the test."""
    base = P[H_INS_OFF] + P[H_GOAL_START] * WIDTH
    if P[base] == OP_ALLEQK and P[base + WIDTH] == OP_HALT and P[base + 1] == P[H_GOAL_REG]:
        a, b = P[base + 2], P[base + 3]
        for i in range(S.shape[0]):
            ok = True
            for q in range(a, a + 2 * b, 2):
                if S[i, U(P[U(q)])] != P[U(q + 1)]:   # ALLEQK's registers are variables: S's columns
                    ok = False
                    break
            OUT[i] = ok
        return
    vals = _values(S, P, P[H_GOAL_START], P[H_GOAL_REG])
    for i in range(S.shape[0]):
        OUT[i] = vals[i] != 0


@nb.njit(cache=True, nogil=True)
def heuristic(S, OUT, P):  # pragma: no cover - compiled
    vals = _values(S, P, P[H_HEUR_START], P[H_HEUR_REG])
    for i in range(S.shape[0]):
        OUT[i] = vals[i]


@nb.njit(cache=True, nogil=True)
def n_actions(P):  # pragma: no cover - compiled
    return P[H_NACT]


@nb.njit(cache=True, nogil=True)
def canon_pack(P, S, K):  # pragma: no cover - compiled
    """Canonicalise (sort the interchangeable groups) and pack each row: the generated
    ``canon_pack`` of a compiled kernel, with the layout and groups read from the program.

    Each object's value tuple is one mixed-radix key; a group's keys are sorted (insertion sort:
    groups are small) with the objects they came from, and the tuples are written back in order.
    """
    V = P[H_NV]
    lay = P[H_LAY_OFF]
    ng = P[H_NGROUPS]
    lov, word, shift = _layout(P, V, lay)   # copies: reads of P itself were 3x slower here
    if ng == 0 and K.shape[1] == 1:      # nothing to sort, one word: the loop the compiler unrolls
        for i in range(S.shape[0]):
            acc = np.uint64(0)
            for j in range(V):
                acc |= np.uint64(S[i, j] - lov[j]) << shift[j]
            K[i, 0] = acc
        return
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
        if ng == 0:                      # nothing to sort: pack the row as it is
            _pack_row(S[i], K, i, V, lov, word, shift)
            continue
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
        _pack_row(X, K, i, V, lov, word, shift)


@nb.njit(cache=True, nogil=True, inline="always")
def _pack_row(X, K, i, V, lov, word, shift):  # pragma: no cover - compiled
    """Row ``i`` of K from the values X.  A word is built in a local and stored once:
    ``layout_for`` packs the variables in order, so a word's variables are consecutive (a store
    per variable, into an array the compiler cannot tell from the layout's, made ``canon_pack``
    several times slower than the generated one)."""
    acc = np.uint64(0)
    if K.shape[1] == 1:                  # one word: no word switch in the loop
        for j in range(V):
            acc |= np.uint64(X[j] - lov[j]) << shift[j]
        K[i, 0] = acc
        return
    w = 0
    for j in range(V):
        if word[j] != w:
            K[i, w] = acc
            w = word[j]
            acc = np.uint64(0)
        acc |= np.uint64(X[j] - lov[j]) << shift[j]
    K[i, w] = acc


@nb.njit(cache=True, nogil=True)
def _layout(P, V, lay):  # pragma: no cover - compiled
    """The packing layout's lows, words and shifts, copied out of the program once per call."""
    lov = np.empty(V, dtype=np.int64)
    word = np.empty(V, dtype=np.int64)
    shift = np.empty(V, dtype=np.uint64)
    for j in range(V):
        lov[j] = P[lay + j]
        word[j] = P[lay + V + j]
        shift[j] = np.uint64(P[lay + 2 * V + j])
    return lov, word, shift


@nb.njit(cache=True, nogil=True)
def unpack_rows(P, KEYS, ids, S):  # pragma: no cover - compiled
    """Decode the keys of the given state ids (the generated ``unpack_rows``)."""
    V = P[H_NV]
    lay = P[H_LAY_OFF]
    lov, word, shift = _layout(P, V, lay)
    mask = np.empty(V, dtype=np.uint64)
    for j in range(V):
        mask[j] = np.uint64(P[lay + 3 * V + j])
    if V == 0:
        return
    if KEYS.shape[1] == 1:               # one word: a loop the compiler unrolls (no word switch)
        for r in range(ids.shape[0]):
            k = KEYS[U(ids[r]), 0]
            for j in range(V):
                S[r, j] = np.int64((k >> shift[j]) & mask[j]) + lov[j]
        return
    for r in range(ids.shape[0]):
        q = ids[r]
        w = word[0]
        k = KEYS[q, w]
        for j in range(V):
            if word[j] != w:
                w = word[j]
                k = KEYS[q, w]
            S[r, j] = np.int64((k >> shift[j]) & mask[j]) + lov[j]


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


@functools.cache
def _driver_name() -> str:
    """The drivers' module name (a hash of its source); computed once per process: the source is
    read from the package's files and edited by regular expressions, about 4 ms, which every
    ``api.solve`` paid through ``warm_marker`` (``puzzleplan serve``: every request)."""
    src, _ = driver_source()
    return f"pp_interp_{hashlib.sha1(src.encode()).hexdigest()[:20]}"


def warm_marker(variant: str = "") -> Path:
    """A file that says: an engine ran on the interpreter with this cache, so numba's disk cache holds
    the interpreter and its drivers (a run with a time limit compiles them in a child otherwise);
    ``variant``: an engine's run that compiles more (``registry.Mode.warm_variant``)."""
    from .compiled import cache_dir

    return cache_dir() / (f"{_driver_name()}.{variant}.warm" if variant else f"{_driver_name()}.warm")


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
