"""Checking certificates of optimality and unsolvability with the plain-Python semantics.

An explicit engine's claim "the optimum is C" rests on its kernel having generated every
successor.  A certificate makes the claim checkable without that kernel.  It holds a set S of
canonical states, each with a cost-to-reach g(s), and a plan.  The checker accepts when

1. the initial state (canonicalised) is in S with g = 0, and every g in S is in 0..C-1;
2. S is closed below C: for every s in S and every action a applicable in s (reference
   semantics), either g(s) + cost(a) >= C, or t = canonical(apply(a, s)) is in S with
   g(t) <= g(s) + cost(a);
3. no state of S is a goal;
4. the plan replays (``reference.check_plan``) to a goal at cost exactly C.

Then, by induction along any plan of cost below C (costs are >= 0, so its prefixes cost below
C too), the canonical form of every state it passes is in S with g at most the prefix's cost,
and none is a goal: no plan costs less than C, and the replayed plan costs C.  For
unsolvability there is no C: every successor of every state of S must be in S.

A certificate *bounded by the heuristic* (``bound: "f"``, format version 2) holds only the states
reached with g + h < C, h the model's heuristic, and condition 2 also accepts a successor t
outside S when g(s) + cost(a) + h(t) >= C (h computed here, by the reference semantics); the
initial state may be missing only when h(init) >= C.  The induction is the same: on a plan of
cost c < C, a state t reached at cost g_t has h(t) <= c - g_t if h is admissible, so
g_t + h(t) < C and the excuse cannot apply to it.  The checker cannot check admissibility; it
refuses a model that does not declare it (``admissible=True``) and the claim then rests on the
model's proof, as a pruning option does.  No symmetry of h is needed: the task's symmetry maps a
plan through t onto a plan of the same cost through the canonical successor.

Canonical forms stand for states up to the task's interchangeable objects (``task.groups``).
That is sound only when swapping two objects of a group is a symmetry of the task: the
checker does not take the declared groups on trust but confirms, structurally, that the
swap maps the action set onto itself (guards, effects and costs, up to the order of
commutative arguments) and the goal onto itself (``check_symmetry``).

Nothing here imports ``encodings`` or ``solvers`` (tests/test_layers.py holds that), and no
numpy: keys are read with the standard ``array`` module.  Successors come from
``reference.successors``, or, by default, from a straight-line Python transcription of the
same rules (``_Transcription``) that is about ten times faster on big guards; every
``REFERENCE_EVERY``-th state (sparser on large files, so that about ``REFERENCE_STATES`` states
spread over all of S are cross-checked: on Sokoban the reference costs 50 times the
transcription, and at every 64th state it took 43 % of a check) is also expanded by
``reference.successors`` and the two must agree, and ``mode="reference"`` uses the reference
interpreter for every state.

The file format is documented in docs/certificates.md.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import time
import zlib
from array import array
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import accumulate, pairwise
from typing import Any

from ..ir.task import Task
from ..lang.errors import EXIT_BAD_INPUT, PuzzleError
from ..lang.expr import Expr, min_assignment, walk
from . import reference

MAGIC = b"PUZZLEPLAN-CERTIFICATE\n"
FORMAT = "puzzleplan-certificate"
VERSION = 2                      # the newest format this module writes and reads
READS = (1, 2)                   # 2 adds ``bound`` ("g" or "f"); a g-bounded file is still written as 1
EXIT_CERT_REJECTED = 22          # the certificate was read but does not prove its claim
EXIT_CHECK_LIMIT = 12            # the check stopped at its time or memory limit (solve's limit code)
REFERENCE_EVERY = 64             # fast mode: every 64th state is also expanded by the reference,
REFERENCE_STATES = 16384         # or every (|S| // 16,384)-th where that is sparser
LIMIT_EVERY = 1024               # states between two looks at the clock and the resident memory
BYTES_PER_STATE = 32             # one-word keys: the key and g arrays and the decoding (peak 21.5 measured)
BYTES_PER_WORD = 24              # several words: a Python int a key, 32 + 24 W in all (measured 73, 97)


class CertificateFormatError(PuzzleError):
    """The file is not a readable certificate (exit 30, like any malformed input file)."""

    code = EXIT_BAD_INPUT


class CertificateRejected(PuzzleError):
    """The certificate was read but does not prove what it claims (exit 22)."""

    code = EXIT_CERT_REJECTED


class CheckUndecided(PuzzleError):
    """The check reached its time or memory limit (exit 12): the certificate is neither accepted nor
    rejected, so nothing is claimed either way."""

    code = EXIT_CHECK_LIMIT


@dataclass
class CheckLimits:
    """What a check may spend.  A certificate's size is the writer's choice, so a checker without
    limits could be made to run for hours or fill the machine's memory; at a limit it stops undecided.

    ``seconds`` counts from ``start`` (on ``time.perf_counter``'s clock; default: when the check begins);
    ``max_mb`` bounds the resident memory, first by an estimate from the header's state count
    (``BYTES_PER_STATE``) before anything is decoded, then by the measured RSS while states are
    checked."""

    seconds: float | None = None
    max_mb: float | None = None
    start: float | None = None

    def begun(self) -> CheckLimits:
        """These limits with their clock started (now, unless ``start`` was given)."""
        return self if self.start is not None else replace(self, start=time.perf_counter())

    def over(self, done: int, total: int, mb: float | None = None) -> str | None:
        """The reason to stop now, or None (``start`` must be set: see ``begun``).  ``mb``: the
        memory in use when the caller measured it (several processes), else this one's RSS."""
        t = time.perf_counter() - (self.start or 0.0)
        if self.seconds is not None and t > self.seconds:
            return f"time limit ({self.seconds:g} s) after {done:,} of {total:,} states"
        if self.max_mb is not None:
            mb = rss_mb() if mb is None else mb
            if mb > self.max_mb:
                return (f"memory limit ({self.max_mb:g} MiB; resident {mb:,.0f} MiB) after {done:,} of "
                        f"{total:,} states")
        return None


def rss_mb(pid: int | str = "self") -> float:
    """Resident memory now (Linux /proc; elsewhere 0, so only the size estimate applies)."""
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


# ----------------------------------------------------------------------------- layout and keys
def var_layout(task: Task) -> list[tuple[int, int, int]]:
    """(word, shift, width) per variable: ``bit_length(hi - lo)`` bits, never straddling a 64-bit word.

    The same rule as the engines' packed keys, restated here so the checker reads keys without
    them; a certificate carries its layout and the checker compares it with this one.
    """
    out = []
    w = s = 0
    for v in task.variables:
        width = max(1, (v.hi - v.lo).bit_length())
        if width > 64:
            raise CertificateFormatError(f"variable {v.name}: domain too large to pack")
        if s + width > 64:
            w, s = w + 1, 0
        out.append((w, s, width))
        s += width
    return out


def n_words(layout: Sequence[tuple[int, int, int]]) -> int:
    return (max(w for w, _, _ in layout) + 1) if layout else 1


def fingerprint(task: Task) -> str:
    """sha256 of the task's JSON form: the certificate names the grounded task it was written for."""
    return "sha256:" + hashlib.sha256(task.to_json().encode("utf-8")).hexdigest()


# ----------------------------------------------------------------------------- the file
@dataclass
class Certificate:
    header: dict[str, Any]
    keys: Sequence[int]      # packed canonical states (word j at bit 64*j), ascending: array("Q") for
                             # one-word layouts, else a list of Python ints
    g: Sequence[int]         # cost-to-reach per key (an array of the file's width)
    path: str = ""


def g_bytes(max_g: int) -> int:
    for b in (1, 2, 4):
        if max_g < 1 << (8 * b):
            return b
    return 8


_TYPECODE = {1: "B", 2: "H", 4: "I", 8: "Q"}


def _to_le(a: array) -> bytes:
    if sys.byteorder == "big":
        a = array(a.typecode, a)
        a.byteswap()
    return a.tobytes()


def _from_le(code: str, data: bytes) -> array:
    a = array(code)
    if len(data) % a.itemsize:
        raise ValueError("section size is not a multiple of its item size")
    a.frombytes(data)
    if sys.byteorder == "big":
        a.byteswap()
    return a


def encode(header: dict[str, Any], words: Sequence[int], g: Sequence[int]) -> bytes:
    """The certificate file: magic line, one JSON header line, then two zlib sections.

    ``words``: the sorted keys as a flat row-major sequence of 64-bit words (``n_words`` per
    state); with one word per state they are stored as differences (the first key, then
    each key minus the one before), which compresses the sorted keys several times better.
    """
    W = int(header["layout"]["words"])
    n = len(g)
    wa = array("Q", words)
    if len(wa) != n * W:
        raise ValueError("keys and g values differ in number")
    if W == 1 and n:
        d = array("Q", [wa[0]])
        d.extend(b - a for a, b in zip(wa, wa[1:]))
        wa = d
    gb = g_bytes(max(g, default=0))
    return b"".join(encode_parts(header, n, _to_le(wa), gb, _to_le(array(_TYPECODE[gb], g))))


def encode_parts(header: dict[str, Any], n: int, keys_le: Any, gb: int, g_le: Any) -> list[bytes]:
    """The file as the parts a writer puts one after the other, from its two sections laid out
    already: ``keys_le`` the keys' little-endian words as ``encode`` describes them (differences
    with one word per key), ``g_le`` ``gb`` bytes a g.  A writer that holds the keys in arrays
    need not copy the whole file into one object."""
    W = int(header["layout"]["words"])
    encoding = "delta" if W == 1 else "raw"
    kz = zlib.compress(keys_le, 6)
    gz = zlib.compress(g_le, 6)
    head = dict(header)
    head.update(states=n, keys={"encoding": encoding, "zlib_bytes": len(kz)},
                g={"bytes": gb, "zlib_bytes": len(gz)})
    line = json.dumps(head, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return [MAGIC + line + b"\n", kz, gz]


def read(path: str, limits: CheckLimits | None = None) -> Certificate:
    """Parse a certificate file; a file that is not one raises ``CertificateFormatError`` (exit 30).

    ``limits.max_mb``: a file whose states would not fit (the header's count times
    ``BYTES_PER_STATE``) raises ``CheckUndecided`` before its body is decoded."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise CertificateFormatError(f"cannot read certificate: {e.strerror}", path) from None
    if not data.startswith(MAGIC):
        raise CertificateFormatError("not a puzzleplan certificate (bad first line)", path, 1)
    end = data.find(b"\n", len(MAGIC))
    if end < 0:
        raise CertificateFormatError("certificate header line is not terminated", path, 2)
    try:
        head = json.loads(data[len(MAGIC): end].decode("utf-8"))
        if head.get("format") != FORMAT:
            raise ValueError("format")
        if head.get("version") not in READS:
            raise CertificateFormatError(f"certificate format version {head.get('version')!r}; "
                                         f"this puzzleplan reads versions {', '.join(map(str, READS))}",
                                         path, 2)
        head.setdefault("bound", "g")
        if head["bound"] not in ("g", "f") or (head["bound"] == "f" and head.get("kind") != "optimum") \
                or (head["version"] == 1 and head["bound"] != "g"):
            raise ValueError("bound")
        n = int(head["states"])
        W = int(head["layout"]["words"])
        kz, gz = int(head["keys"]["zlib_bytes"]), int(head["g"]["zlib_bytes"])
        gb = int(head["g"]["bytes"])
        encoding = head["keys"]["encoding"]
        if gb not in _TYPECODE or encoding not in ("delta", "raw") or n < 0 or W < 1 \
                or (encoding == "delta" and W != 1) or head.get("kind") not in ("optimum", "unsolvable"):
            raise ValueError("header")
    except CertificateFormatError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
        raise CertificateFormatError("malformed certificate header", path, 2) from None
    if limits is not None and limits.max_mb is not None:
        need = rss_mb() + n * (BYTES_PER_STATE if W == 1 else 32 + BYTES_PER_WORD * W) / 2**20
        if need > limits.max_mb:
            raise CheckUndecided(f"check undecided: its {n:,} states need about {need:,.0f} MiB, over the "
                                 f"memory limit of {limits.max_mb:g} MiB", path)
    body = memoryview(data)[end + 1:]
    if len(body) != kz + gz:
        raise CertificateFormatError(f"certificate body holds {len(body)} bytes, the header says {kz + gz}",
                                     path)
    try:
        raw = zlib.decompress(body[:kz])
        ga = _from_le(_TYPECODE[gb], zlib.decompress(body[kz:]))
        if len(raw) % 8:
            raise ValueError("section size is not a multiple of its item size")
    except (zlib.error, ValueError) as e:
        raise CertificateFormatError(f"corrupt certificate body: {e}", path) from None
    del data, body
    if len(raw) != 8 * n * W or len(ga) != n:
        raise CertificateFormatError(f"certificate body holds {len(raw) // (8 * W)} keys and {len(ga)} g "
                                     f"values, the header says {n}", path)
    if W == 1:   # 8 bytes a key (see KeyTable)
        wa = _from_le("Q", raw)
        del raw
        keys: Sequence[int] = array("Q", (k & 0xFFFFFFFFFFFFFFFF for k in accumulate(wa))) \
            if encoding == "delta" else wa
    else:        # each key's W little-endian words, lowest first, are the key's little-endian bytes
        mv, step = memoryview(raw), 8 * W
        keys = [int.from_bytes(mv[i: i + step], "little") for i in range(0, len(raw), step)]
    return Certificate(head, keys, ga, path)


# ----------------------------------------------------------------------------- symmetry
COMMUTATIVE = frozenset({"and", "or", "add", "mul", "min", "max", "eq", "ne"})


class _Shapes:
    """Structural numbers of expressions: equal number = equal tree up to commutative argument order.

    Hash-consing of its own (not the language's interning), so a renamed copy of a guard gets
    the number of an existing guard exactly when the two trees agree."""

    def __init__(self) -> None:
        self.table: dict[tuple, int] = {}

    def numbers(self, roots: Sequence[Expr], perm: dict[int, int]) -> dict[int, int]:
        """id(node) -> structural number of the node with variables renamed by ``perm``."""
        memo: dict[int, int] = {}
        for n in walk(roots):
            if n.op == "var":
                key: tuple = ("var", (), perm.get(n.val, n.val), n.kind)  # type: ignore[call-overload]
            else:
                kids = [memo[id(a)] for a in n.args]
                if n.op in COMMUTATIVE:
                    kids.sort()
                key = (n.op, tuple(kids), n.val, n.kind)
            memo[id(n)] = self.table.setdefault(key, len(self.table))
        return memo


def _action_shape(a: Any, num: dict[int, int], perm: dict[int, int]) -> tuple:
    effects = sorted(((perm.get(e.var, e.var), num[id(e.value)], -1 if e.cond is None else num[id(e.cond)])
                      for e in a.effects), key=lambda t: t[0])   # stable: later writes still win
    return (num[id(a.guard)], tuple(effects), a.cost)


def check_symmetry(task: Task) -> str:
    """'' when every declared group is a symmetry of the task, else why not.

    Swapping objects 0 and j of a group (j = 1..n-1) generates every permutation of the group;
    each swap must map every action to an action of the task and the goal to the goal."""
    if not task.groups:
        return ""
    roots: list[Expr] = [task.goal]
    for a in task.actions:
        roots.append(a.guard)
        roots.extend(e.value for e in a.effects)
        roots.extend(e.cond for e in a.effects if e.cond is not None)
    shapes = _Shapes()
    base = shapes.numbers(roots, {})
    actions = {_action_shape(a, base, {}) for a in task.actions}
    used: set[int] = set()
    for gi, group in enumerate(task.groups):
        arity = len(group[0])
        for obj in group:
            if len(obj) != arity:
                return f"group {gi + 1}: objects differ in arity"
            for k, v in enumerate(obj):
                if v in used or not 0 <= v < task.n_vars:
                    return f"group {gi + 1}: variable {v} is in two objects or does not exist"
                used.add(v)
                ref = task.variables[group[0][k]]
                if (task.variables[v].lo, task.variables[v].hi) != (ref.lo, ref.hi):
                    return f"group {gi + 1}: objects have different domains"
        for j in range(1, len(group)):
            perm = {}
            for x, y in zip(group[0], group[j]):
                perm[x], perm[y] = y, x
            num = shapes.numbers(roots, perm)
            names = f"{task.variables[group[0][0]].name} <-> {task.variables[group[j][0]].name}"
            if num[id(task.goal)] != base[id(task.goal)]:
                return f"group {gi + 1}: swapping {names} changes the goal"
            for a in task.actions:
                if _action_shape(a, num, perm) not in actions:
                    return f"group {gi + 1}: swapping {names} maps action {a.label} to no action of the task"
    return ""


# ----------------------------------------------------------------------------- successors
class _Transcription:
    """The reference rules for one task written out as straight-line Python.

    Every node the goal or a guard reads is computed once per state, in topological order,
    with the same Python operation ``reference.evaluate`` applies (booleans as Python bools,
    which compare and index like the reference's 0/1); an action's effect values are
    computed inside its ``if guard:``.  Unlike the reference it evaluates both arms of an
    ``ite`` and every item of an ``element``: any exception is answered by redoing that state
    with ``reference.successors``.

    Most ground actions of a board puzzle are pinned by one guard conjunct ``x_v == c`` to one
    value of one variable (the player's square in Sokoban; the sliding puzzle's moves each pin
    another cell, so no variable qualifies there), and a state evaluates only
    the guards that can hold in it: one function per value ``c`` of the most-pinned variable,
    holding the actions pinned to ``c`` and the unpinned ones, in action order (so the answer
    is the same list).  An action pinned to ``c`` cannot fire in a state with ``x_v != c``, so
    leaving it out of the other functions changes nothing.  On a Microban level (412 actions,
    about 8 per player square) that is most of the check's time.
    """

    OPS = {"add": " + ", "sub": " - ", "mul": " * ", "floordiv": " // ", "mod": " % ",
           "eq": " == ", "ne": " != ", "lt": " < ", "le": " <= ", "gt": " > ", "ge": " >= "}

    def __init__(self, task: Task):
        self.task = task
        self.consts: dict[str, Any] = {"_ma": min_assignment}
        self.pin_var, by_value, rest = _dispatch(task)
        funcs = [self._function("_rest", rest)]
        for c, ks in sorted(by_value.items()):
            funcs.append(self._function(f"_on{c}", sorted(ks + rest)))
        if self.pin_var is None:
            funcs.append("def _succ(s, room):\n    return _rest(s, room)")
        else:
            table = ", ".join(f"{c}: _on{c}" for c in sorted(by_value))
            funcs.append(f"_BY = {{{table}}}\n"
                         f"def _succ(s, room):\n    return _BY.get(s[{self.pin_var}], _rest)(s, room)")
        self.source = "\n\n".join(funcs)

        def bad(k: int) -> None:
            raise reference.DomainViolation(f"action {task.actions[k].label} leaves a variable's domain")

        self.consts["_bad"] = bad
        ns = dict(self.consts)
        exec(compile(self.source, f"<certificate transcription of {task.name}>", "exec"), ns)
        self.fn: Callable[[Sequence[int], float], list[tuple[int, list[int]]] | None] = ns["_succ"]

    def heuristic(self) -> Callable[[Sequence[int]], int]:
        """``task.heuristic`` as straight-line Python, with the operations ``reference.heuristic``
        applies (for certificates bounded by g + h)."""
        task = self.task
        assert task.heuristic is not None
        names: dict[int, str] = {}
        items: dict[tuple[int, ...], str] = {}
        lines = ["def _h(s):", "    " + "".join(f"x{i}, " for i in range(task.n_vars)) + "= s"]
        for n in walk([task.heuristic]):
            lines.extend("    " + ln for ln in self._emit(n, names, items))
        lines.append(f"    return int({names[id(task.heuristic)]})")
        ns = dict(self.consts)
        exec(compile("\n".join(lines), f"<certificate heuristic of {task.name}>", "exec"), ns)
        return ns["_h"]

    def _function(self, fname: str, ks: Sequence[int]) -> str:
        """One successor function over the actions ``ks`` (ascending) and the goal."""
        task = self.task
        names: dict[int, str] = {}
        items: dict[tuple[int, ...], str] = {}
        lines = [f"def {fname}(s, room):"]
        lines.append("    " + "".join(f"x{i}, " for i in range(task.n_vars)) + "= s")
        body: list[str] = []
        for n in walk([task.goal] + [task.actions[k].guard for k in ks]):
            body.extend(self._emit(n, names, items))
        lines.extend("    " + ln for ln in body)
        lines.append(f"    if {names[id(task.goal)]}:\n        return None")
        lines.append("    out = []")
        for k in ks:
            a = task.actions[k]
            lines.append(f"    if {a.cost} < room and {names[id(a.guard)]}:")
            local, its = dict(names), dict(items)
            eroots = [e.value for e in a.effects] + [e.cond for e in a.effects if e.cond is not None]
            for n in walk(eroots):
                if id(n) not in local:
                    lines.extend("        " + ln for ln in self._emit(n, local, its, f"a{k}_"))
            lines.append("        t = list(s)")
            for e in a.effects:
                info = task.variables[e.var]
                set_ = f"t[{e.var}] = {local[id(e.value)]}"
                if e.cond is None:
                    lines.append(f"        {set_}")
                else:
                    lines.append(f"        if {local[id(e.cond)]}:\n            {set_}")
                lines.append(f"        if not {info.lo} <= t[{e.var}] <= {info.hi}:\n            _bad({k})")
            lines.append(f"        out.append(({k}, t))")
        lines.append("    return out")
        return "\n".join(lines)

    def _emit(self, n: Expr, names: dict[int, str], items: dict[tuple[int, ...], str],
              prefix: str = "") -> list[str]:
        name = f"{prefix}n{len(names)}"
        op = n.op
        a = [names[id(x)] for x in n.args]
        pre: list[str] = []
        if op == "const":
            names[id(n)] = repr(int(n.val))  # type: ignore[call-overload]
            return []
        if op == "var":
            names[id(n)] = f"x{n.val}"
            return []
        if op in ("and", "or"):
            r = "(" + f" {op} ".join(a) + ")" if a else ("True" if op == "and" else "False")
        elif op == "not":
            r = f"(not {a[0]})"
        elif op in ("ite_int", "ite_bool"):
            r = f"({a[1]} if {a[0]} else {a[2]})"
        elif op == "table":
            t = f"T{len(self.consts)}"
            self.consts[t] = tuple(n.val)  # type: ignore[arg-type]
            r = f"({t}[{a[0]}] if 0 <= {a[0]} < {len(n.val)} else {a[1]})"  # type: ignore[arg-type]
        elif op == "element":
            key = tuple(id(x) for x in n.args[2:])
            tup = items.get(key)
            if tup is None:
                tup = items[key] = f"{prefix}E{len(items)}"
                pre.append(f"{tup} = ({', '.join(a[2:])}{',' if len(a) == 3 else ''})")
            r = f"({tup}[{a[0]}] if 0 <= {a[0]} < {len(a) - 2} else {a[1]})"
        elif op == "assign":
            r = f"_ma([{', '.join(a)}], {int(n.val)})"  # type: ignore[call-overload]
        elif op in self.OPS:
            r = "(" + self.OPS[op].join(a) + ")"
        elif op == "abs":
            r = f"abs({a[0]})"
        elif op in ("min", "max"):
            r = f"{op}({', '.join(a)})" if len(a) > 1 else a[0]
        elif op == "toint":
            r = f"int({a[0]})"
        else:
            raise NotImplementedError(op)
        names[id(n)] = name
        return pre + [f"{name} = {r}"]


def _pin(guard: Expr) -> tuple[int, int] | None:
    """``(v, c)`` when one top-level conjunct of ``guard`` is ``x_v == c`` (a constant), else None."""
    for n in (guard.args if guard.op == "and" else (guard,)):
        if n.op == "eq" and len(n.args) == 2:
            a, b = n.args
            if a.op == "const":
                a, b = b, a
            if a.op == "var" and b.op == "const":
                return int(a.val), int(b.val)  # type: ignore[call-overload]
    return None


def _dispatch(task: Task) -> tuple[int | None, dict[int, list[int]], list[int]]:
    """The variable that pins the most actions, the actions pinned to each of its values, and
    the rest (every action when no variable pins at least half of them)."""
    pins = [_pin(a.guard) for a in task.actions]
    count: dict[int, int] = {}
    for p in pins:
        if p is not None:
            count[p[0]] = count.get(p[0], 0) + 1
    v = max(count, key=lambda x: (count[x], -x)) if count else None
    if v is None or 2 * count[v] < len(task.actions):
        return None, {}, list(range(len(task.actions)))
    by_value: dict[int, list[int]] = {}
    rest: list[int] = []
    for k, p in enumerate(pins):
        if p is not None and p[0] == v:
            by_value.setdefault(p[1], []).append(k)
        else:
            rest.append(k)
    return v, by_value, rest


def _reference_successors(task: Task, s: Sequence[int], room: float) -> list[tuple[int, list[int]]] | None:
    """The same answer as ``_Transcription.fn`` from ``reference``: None when s is a goal."""
    if reference.is_goal(task, s):
        return None
    memo: dict[int, int] = {}
    out = []
    for k, a in enumerate(task.actions):
        if a.cost < room and reference.applicable(a, s, memo):
            out.append((k, reference.apply(task, a, s)))
    return out


# ----------------------------------------------------------------------------- canonical keys
def _key_function(task: Task, layout: Sequence[tuple[int, int, int]]) -> Callable[[Sequence[int]], int]:
    """canonical form + packing as one generated function: sort each group's object tuples,
    then place each variable's ``value - lo`` at bit ``64*word + shift``."""
    lines = ["def _key(t):"]
    for gi, group in enumerate(task.groups):
        if len(group[0]) == 1:
            lines.append(f"    g{gi} = sorted(({', '.join(f't[{o[0]}]' for o in group)},))")
        else:
            objs = ", ".join("(" + ", ".join(f"t[{i}]" for i in o) + ",)" for o in group)
            lines.append(f"    g{gi} = sorted(({objs},))")
    src: dict[int, str] = {i: f"t[{i}]" for i in range(task.n_vars)}
    for gi, group in enumerate(task.groups):
        for oi, obj in enumerate(group):
            for pos, v in enumerate(obj):
                src[v] = f"g{gi}[{oi}]" if len(obj) == 1 else f"g{gi}[{oi}][{pos}]"
    terms = []
    for i, (w, s, _) in enumerate(layout):
        lo = task.variables[i].lo
        val = src[i] if lo == 0 else f"({src[i]} - {lo})"
        off = 64 * w + s
        terms.append(f"({val} << {off})" if off else val)
    lines.append("    return " + (" | ".join(terms) or "0"))
    ns: dict[str, Any] = {}
    exec(compile("\n".join(lines), "<certificate key>", "exec"), ns)
    return ns["_key"]


def _unpack_function(task: Task, layout: Sequence[tuple[int, int, int]]) -> Callable[[int], tuple[int, ...]]:
    parts = []
    for i, (w, s, width) in enumerate(layout):
        lo = task.variables[i].lo
        parts.append(f"((k >> {64 * w + s}) & {(1 << width) - 1}){f' + {lo}' if lo else ''}")
    ns: dict[str, Any] = {}
    exec(compile(f"def _unpack(k):\n    return ({', '.join(parts)},)", "<certificate unpack>", "exec"), ns)
    return ns["_unpack"]


# ----------------------------------------------------------------------------- the key table
class KeyTable:
    """g by key over the certificate's ascending keys, without a dict.

    A dict of Python ints costs about 110 bytes a state; the keys as one ``array('Q')`` (one-word
    layouts) and the g values as a small-int array cost 9-16, so a check of 300 M states fits in
    a few GiB.  A lookup finds the key's bucket (its offset from the smallest key, shifted so that
    about ``BUCKET`` keys share one) and searches the bucket by bisection.  Nothing is written
    after construction, so forked workers share the pages (``_in_parallel``)."""

    BUCKET = 32

    def __init__(self, keys: Sequence[int], g: Sequence[int]):
        self.keys, self.g = keys, g
        n = len(keys)
        self.lo = keys[0] if n else 0
        span = (keys[-1] - self.lo + 1) if n else 1
        want = max(1, n // self.BUCKET)
        self.shift = max(0, span.bit_length() - want.bit_length())
        nb = ((span - 1) >> self.shift) + 1
        self.nb = nb
        self.starts = array("Q" if n >= 1 << 32 else "I",
                            (bisect_left(keys, self.lo + (b << self.shift)) for b in range(nb)))
        self.starts.append(n)

    def get(self, k: int) -> int | None:
        """g of ``k``, or None when ``k`` is not a key."""
        b = (k - self.lo) >> self.shift
        if b < 0 or b >= self.nb:
            return None
        hi = self.starts[b + 1]
        i = bisect_left(self.keys, k, self.starts[b], hi)
        return self.g[i] if i < hi and self.keys[i] == k else None


_CAN_FORK = hasattr(os, "fork") and "fork" in multiprocessing.get_all_start_methods()
POLL_S = 0.5                     # the parent looks at its workers' progress, the clock and memory


def _in_parallel(scan: Callable[[int, int, Callable[[int], None]], tuple[int, int, int]], n: int, jobs: int,
                 limits: CheckLimits | None, where: str | None) -> tuple[int, int, int]:
    """``scan`` over ``jobs`` slices of ``0 .. n-1`` in forked processes; (transitions, cross-checked,
    excused), summed.

    The workers inherit the keys, the table and the successor functions by fork and write
    nothing into them.  A rejection in any slice rejects the certificate; the time and memory limits
    are watched here (memory: the proportional set sizes of all the processes, so shared pages
    count once), and a worker that dies without an answer leaves the check undecided.  A
    rejection names the first bad state of S, as one process would: the slices before the one
    that rejected are finished, those after it stopped."""
    ctx = multiprocessing.get_context("fork")
    cuts = [n * j // jobs for j in range(jobs + 1)]
    done = ctx.Array("q", jobs, lock=False)
    procs: list[Any] = []
    conns: dict[Any, int] = {}

    def work(j: int, conn: Any) -> None:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGINT, signal.SIG_IGN)        # the parent answers signals and stops us
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

        def tick(d: int) -> None:
            done[j] = d

        try:
            msg: tuple[str, Any] = ("ok", scan(cuts[j], cuts[j + 1], tick))
        except CertificateRejected as e:
            msg = ("rejected", e.message)
        except BaseException as e:   # noqa: BLE001 - reported to the parent, which decides
            msg = ("error", f"{type(e).__name__}: {e}")
        conn.send(msg)
        conn.close()
        os._exit(0)

    edges = n_ref = excused = 0
    rejected: dict[int, str] = {}
    try:
        for j in range(jobs):
            r, w = ctx.Pipe(duplex=False)
            p = ctx.Process(target=work, args=(j, w), daemon=True)
            p.start()
            w.close()
            procs.append(p)
            conns[r] = j
        while conns:
            if limits is not None:
                mb = pss_mb([os.getpid()] + [p.pid for p in procs if p.is_alive()])
                why = limits.over(sum(done), n, mb)
                if why:
                    raise CheckUndecided(f"check undecided: {why}", where)
            for r in multiprocessing.connection.wait(list(conns), timeout=POLL_S):
                if r not in conns:      # a later slice, stopped by a rejection in this round
                    continue
                j = conns.pop(r)
                try:
                    kind, val = r.recv()
                except (EOFError, OSError):
                    procs[j].join(1)
                    raise CheckUndecided(f"check undecided: worker {j + 1} of {jobs} stopped without an "
                                         f"answer (exit code {procs[j].exitcode})", where) from None
                if kind == "rejected":   # the first bad state of S, as one process names it: wait for the
                    rejected[j] = val    # slices before this one, stop those after it
                    for k in list(conns.values()):
                        if k > j:
                            procs[k].terminate()
                    conns = {r: k for r, k in conns.items() if k < j}
                    continue
                if kind == "error":
                    raise CheckUndecided(f"check undecided: worker {j + 1} of {jobs} failed: {val}", where)
                edges, n_ref, excused = edges + val[0], n_ref + val[1], excused + val[2]
                done[j] = cuts[j + 1] - cuts[j]
        if rejected:
            raise CertificateRejected(rejected[min(rejected)], where)
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join()
    return edges, n_ref, excused


def pss_mb(pids: Sequence[int]) -> float:
    """Memory of these processes together: the sum of their proportional set sizes (Linux
    ``smaps_rollup``: a page shared by k of them counts 1/k in each), else of their RSS."""
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as f:
                total += next(int(ln.split()[1]) for ln in f if ln.startswith("Pss:")) / 1024
        except (OSError, ValueError, IndexError, StopIteration):
            total += rss_mb(pid)
    return total


# ----------------------------------------------------------------------------- the check
@dataclass
class CheckReport:
    kind: str
    cost: int | None
    states: int
    transitions: int = 0
    seconds: float = 0.0
    mode: str = "fast"
    reference_states: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    bound: str = "g"            # "f": S bounded by g + h, the model's admissible heuristic trusted
    excused: int = 0            # successors outside S because g + h >= C

    def to_json(self) -> dict[str, Any]:
        return {"valid": True, "kind": self.kind, "cost": self.cost, "states": self.states,
                "transitions": self.transitions, "check_s": round(self.seconds, 3), "mode": self.mode,
                "reference_states": self.reference_states, "bound": self.bound, "excused": self.excused,
                "timings": {k: round(v, 3) for k, v in self.timings.items()}}


def check(task: Task, cert: Certificate, mode: str = "fast",
          limits: CheckLimits | None = None, jobs: int = 1) -> CheckReport:
    """Accept ``cert`` for ``task`` or raise ``CertificateRejected`` saying which condition fails.

    ``mode``: "fast" (the transcription, cross-checked on every ``REFERENCE_EVERY``-th state, or
    spread over S so that about ``REFERENCE_STATES`` are)
    or "reference" (``reference`` for every state).  ``limits``: at one, ``CheckUndecided``.
    ``jobs``: forked processes that check slices of S (``_in_parallel``; one where fork is missing)."""
    t0 = time.perf_counter()
    limits = limits.begun() if limits is not None else None
    head = cert.header
    where = cert.path or None

    def reject(msg: str) -> CertificateRejected:
        return CertificateRejected(f"certificate rejected: {msg}", where)

    fp = fingerprint(task)
    if head.get("fingerprint") != fp:
        opts = ",".join(f"{k}={v}" for k, v in (head.get("options") or {}).items())
        raise reject(f"it was written for another task ({head.get('model')} {head.get('instance')}"
                     f"{' -O ' + opts if opts else ''}): fingerprints differ")
    layout = var_layout(task)
    if [list(x) for x in layout] != head["layout"].get("vars") or head["layout"]["words"] != n_words(layout):
        raise reject("its key layout is not this task's")
    if any(not isinstance(a.cost, int) or a.cost < 0 for a in task.actions):
        raise reject("an action costs less than 0: a cost bound proves nothing then")
    why = check_symmetry(task)
    if why:
        raise reject(f"the declared interchangeable objects are not a symmetry of the task: {why}")
    t_sym = time.perf_counter()

    kind = head["kind"]
    C: int | None = head.get("cost") if kind == "optimum" else None
    if kind == "optimum" and (not isinstance(C, int) or C < 0):
        raise reject(f"optimum {C!r} is not a non-negative integer")
    room_all = float("inf") if C is None else C
    keys, gs = cert.keys, cert.g
    if any(b <= a for a, b in pairwise(keys)):
        raise reject("its keys are not strictly ascending (a state is listed twice or out of order)")
    table = KeyTable(keys, gs)
    key_of = _key_function(task, layout)
    unpack = _unpack_function(task, layout)
    # the plan first: cheap, and an optimum certificate without a replayable plan proves nothing
    plan = head.get("plan") or []
    if kind == "optimum":
        if not all(isinstance(k, int) for k in plan):
            raise reject("the plan is not a list of action indices")
        chk = reference.check_plan(task, plan)
        if not chk.ok:
            raise reject(f"the plan does not replay: {chk.message}")
        if chk.cost != C:
            raise reject(f"the plan costs {chk.cost}, the certificate claims {C}")
        labels = head.get("plan_labels")
        if labels is not None and labels != [task.actions[k].label for k in plan]:
            raise reject("the plan's labels do not match its actions")
    elif plan:
        raise reject("an unsolvability certificate carries a plan")
    by_h = head.get("bound", "g") == "f"
    if by_h and (task.heuristic is None or not task.heuristic_admissible):
        raise reject("it is bounded by g + h, but the model declares no admissible heuristic")

    def ref_h(t: Sequence[int]) -> int:
        try:
            return int(reference.heuristic(task, t))
        except Exception as e:   # noqa: BLE001 - a heuristic that fails excuses nothing
            raise reject(f"the heuristic cannot be evaluated at a state ({type(e).__name__}: {e})") from None
    init_key = key_of(task.init)
    if C == 0:
        if keys:
            raise reject("optimum 0 needs no states, yet the certificate lists some")
    elif table.get(init_key) != 0:
        g0 = table.get(init_key)
        if not (by_h and g0 is None and ref_h(task.init) >= C):  # type: ignore[operator]
            raise reject("the initial state is not in S with g = 0"
                         + ("" if g0 is None else f" (its g is {g0})")
                         + (" and its h is below the optimum" if by_h and g0 is None else ""))
    t_load = time.perf_counter()

    lo_hi = [(v.lo, v.hi) for v in task.variables]
    costs = [a.cost for a in task.actions]
    fast = None
    fast_h: Callable[[Sequence[int]], int] | None = None
    if mode == "fast":
        try:
            tr = _Transcription(task)
            fast = tr.fn
            fast_h = tr.heuristic() if by_h else None
        except (NotImplementedError, RecursionError, MemoryError, SyntaxError):
            fast = fast_h = None

    def h_of(t: Sequence[int], sample: bool) -> int:
        """h(t) by the transcription (the reference where it raises; on the first excuse of each
        slice and every ``every``-th after it, the two must agree), or by the reference alone."""
        ref = ref_h(t) if fast_h is None or sample else None
        if fast_h is None:
            return ref  # type: ignore[return-value]
        try:
            v = fast_h(t)
        except Exception:
            return ref_h(t)
        if ref is not None and ref != v:
            raise reject("the fast heuristic disagrees with the reference (a bug in the checker; "
                         "rerun with --reference)")
        return v
    every = max(REFERENCE_EVERY, len(keys) // REFERENCE_STATES)
    used_mode = "fast" if fast is not None else "reference"
    get = table.get

    def scan(lo: int, hi: int, tick: Callable[[int], None]) -> tuple[int, int, int]:
        """Conditions 1-3 for the states ``lo .. hi-1``: (transitions, states cross-checked,
        successors excused by g + h >= C)."""
        edges = 0
        n_ref = 0
        excused = 0
        for i in range(lo, hi):
            if (i - lo) % LIMIT_EVERY == 0:
                tick(i - lo)
            k, g = keys[i], gs[i]
            s = unpack(k)
            if any(not lo_ <= x <= hi_ for x, (lo_, hi_) in zip(s, lo_hi)):
                raise reject(f"state #{i} lies outside the variables' domains")
            if key_of(s) != k:
                raise reject(f"state #{i} is not in canonical form")
            if C is not None and not 0 <= g < C:
                raise reject(f"state #{i} has g = {g}, outside 0..{C - 1}")
            room = room_all - g
            try:
                if fast is None:
                    succ = _reference_successors(task, s, room)
                else:
                    try:
                        succ = fast(s, room)
                    except reference.DomainViolation:
                        raise
                    except Exception:
                        succ = _reference_successors(task, s, room)
                    if i % every == 0:
                        n_ref += 1
                        ref = _reference_successors(task, s, room)
                        if ref != succ:
                            raise reject(f"state #{i}: the fast successor function disagrees with the "
                                         "reference (a bug in the checker; rerun with --reference)")
            except reference.DomainViolation as e:
                raise reject(f"state #{i}: {e}") from None
            if succ is None:
                raise reject(f"state #{i} ({_show(task, s)}) is a goal state, at g = {g}")
            for a, t in succ:
                edges += 1
                gt = get(key_of(t))
                c = g + costs[a]
                if gt is None or gt > c:
                    if by_h and c + h_of(t, excused % every == 0) >= C:   # type: ignore[operator]
                        excused += 1
                        continue
                    what = "is missing from S" if gt is None else f"has g = {gt}, more than {g} + {costs[a]}"
                    raise reject(f"state #{i} ({_show(task, s)}): the successor by "
                                 f"{task.actions[a].label} at cost {c} {what}"
                                 + (" and g + h is below the optimum" if by_h else ""))
        return edges, n_ref, excused

    n = len(keys)
    jobs = max(1, min(jobs, n)) if _CAN_FORK else 1
    if jobs == 1:
        def tick(done: int) -> None:
            why = limits.over(done, n) if limits is not None else None
            if why:
                raise CheckUndecided(f"check undecided: {why}", where)

        edges, n_ref, excused = scan(0, n, tick)
    else:
        edges, n_ref, excused = _in_parallel(scan, n, jobs, limits, where)
    t_end = time.perf_counter()
    return CheckReport(kind, C, len(keys), edges, t_end - t0, used_mode, n_ref,
                       {"symmetry_s": t_sym - t0, "load_s": t_load - t_sym, "closure_s": t_end - t_load},
                       "f" if by_h else "g", excused)


def _show(task: Task, s: Sequence[int]) -> str:
    text = " ".join(f"{n}={v}" for n, v in zip(task.names, s))
    return text if len(text) <= 120 else text[:117] + "..."


def check_file(task: Task, path: str, mode: str = "fast", limits: CheckLimits | None = None,
               jobs: int = 1) -> CheckReport:
    limits = limits.begun() if limits is not None else None   # one clock for reading and checking
    return check(task, read(path, limits), mode, limits, jobs)
