"""A task's expressions and actions as one flat int64 program, for the interpreter (``interp``).

Why: the compiled kernel generates and compiles Python source per task (seconds to minutes per
new structure).  Here the task becomes *data*: a register-machine program that one interpreter,
compiled once per installation, runs for any task.

The program (one int64 array ``P``, so the interpreter's signatures never depend on the task):

* a header (``H_*`` slots) of counts and offsets;
* instructions of :data:`WIDTH` words ``[op, dst, a, b, c, d, e, f]`` in three streams: successor
  generation, goal, heuristic;
* operand lists, constant tables, dispatch tables, bit-view terms, the packing layout and the
  symmetry groups, each at an absolute offset into ``P`` that the instructions carry.

Registers: ``0..V-1`` hold the state's variables, then one register per constant (loaded once per
call), then one per expression node.  Every node of the expression DAG is one instruction, in
children-first order.  A node referenced more than once (a shared sub-expression) is a subroutine,
emitted once and reached by a ``CALL`` that is skipped when the node was already computed for this
state (its register's stamp), so the DAG is evaluated at most once per state however many guards
share it, and never where no guard that is tried needs it: guards are tested conjunct by
conjunct and an action stops at the first false one.  Actions whose guard tests ``expression ==
constant`` on a common expression (an agent's cell) are reached through a ``DISPATCH`` jump table
on that expression's value, the successor-generator idea of the numpy kernel
(``npkernel._index_keys``), so a state pays only for the actions that can apply there.  Element
lists of the "occupied cell" shape are read through bit views, as in the compiled kernel
(``compiled.bit_tables``).

Semantics are those of the numpy kernel: total table and element lookups, effects read the
pre-state, and later (conditional) writes win.  Every operator is total, so short-circuit
evaluation gives the same values as the vectorised kernels' full evaluation: an ``and``/``or``
node over computed children is a chain of conditional jumps (a goal that is a conjunction of
``cell == k`` tests costs one test on most states), and a guard conjunct ``x == k`` is one
``JNEK``.  The interpreter's time is mostly per instruction dispatched, so the common shapes are
single instructions: consecutive actions whose guards are settled (by a dispatch, or true) and
whose effects are unconditional are one ``EMITSET``, a conjunction of ``var == k`` tests (a goal
configuration) is one ``ALLEQK``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..ir.task import Task
from ..lang.expr import Expr, TableData, conjuncts
from .compiled import bit_tables
from .npkernel import _index_keys, table_array
from .packing import group_arrays, layout_for

WIDTH = 8   # words per instruction: op, dst, a, b, c, d, e, f
# Builder offsets from here up name a large table's place after the tail (fixed up in ``build``).
BIG_TABLE = 1 << 50

# opcodes -- control
OP_CALL, OP_JFALSE, OP_JUMP, OP_DISPATCH, OP_EMIT, OP_SET, OP_SETIF, OP_NEXT, OP_RET, OP_JTRUE = range(1, 11)
# superinstructions: an action's emit, unconditional writes and next in one; ``var == k`` and a
# conditional jump in one; the end of a stream (no bound test per instruction)
OP_EMITSET, OP_JNEK, OP_JEQK, OP_HALT = range(11, 15)
JUMP_OPS = (OP_JFALSE, OP_JTRUE, OP_JUMP, OP_JNEK, OP_JEQK)   # word 3: the target
# opcodes -- values (every one writes register dst; a subroutine's RET stamps its register)
(OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_EQK, OP_TABLE, OP_TABEQK, OP_ELEMBIT, OP_BITVIEW,
 OP_NOT, OP_AND2, OP_ANDN, OP_OR2, OP_ORN, OP_ADD2, OP_ADDK, OP_ADDN, OP_SUB, OP_MUL, OP_FLOORDIV,
 OP_MOD, OP_ABS, OP_NEG, OP_MIN2, OP_MAX2, OP_MINN, OP_MAXN, OP_COPY, OP_ITE, OP_ELEM,
 OP_ASSIGN, OP_ELEMBITT, OP_LOADK, OP_ALLEQK) = range(16, 52)
FIRST_VALUE_OP = OP_EQ

# header slots
(H_NV, H_NACT, H_NREG, H_NCONST, H_CONST_OFF, H_INS_OFF, H_EXP_START, H_EXP_END, H_GOAL_START,
 H_GOAL_END, H_GOAL_REG, H_HEUR_START, H_HEUR_END, H_HEUR_REG, H_NWORDS, H_LAY_OFF, H_NGROUPS,
 H_GRP_OFF, H_NOBJ, H_GWIDTH, H_SCRATCH, H_NSUB) = range(22)
HEADER = 24

_CMP = {"eq": OP_EQ, "ne": OP_NE, "lt": OP_LT, "le": OP_LE, "gt": OP_GT, "ge": OP_GE}
_BIN = {"sub": OP_SUB, "mul": OP_MUL, "floordiv": OP_FLOORDIV, "mod": OP_MOD}


@dataclass
class Program:
    """The flat program and a few counts (for progress lines and tests)."""

    P: np.ndarray
    n_actions: int
    n_instructions: int
    n_registers: int


class _Builder:
    def __init__(self, task: Task):
        self.task = task
        self.V = task.n_vars
        self.data: list[int] = []   # everything after the instructions (offsets made absolute later)
        self.code: list[list[int]] = []
        self.const_reg: dict[int, int] = {}
        self.consts: list[int] = []
        self.node_reg: dict[int, int] = {}
        self.n_reg = 0                     # computed registers, numbered after the constants (fixed up)
        self.bitviews: dict[tuple[int, ...], tuple[int, list[tuple[int, int, int]], int] | None] = {}
        self.bv_reg: dict[tuple[int, ...], int] = {}
        self.uses: dict[int, int] = {}
        self.seen: set[int] = set()
        self.tables: dict[int, int] = {}     # table node id -> offset of its values in data
        self.big: list[np.ndarray] = []       # large tables (TableData), laid after everything else
        self.big_size = 0
        self.subs: dict[int | tuple[int, ...], tuple[int, list[list[int]]]] = {}  # key -> (id, body)
        self.sub_bvs: dict[int | tuple[int, ...], set[tuple[int, ...]]] = {}  # bit views a sub reads
        self.bv_used: list[set[tuple[int, ...]]] = [set()]
        self.bv_data: dict[tuple[int, ...], int] = {}

    def table(self, n: Expr) -> int:
        if id(n) not in self.tables:
            self.tables[id(n)] = self.put(n.val)  # type: ignore[arg-type]
        return self.tables[id(n)]

    def call(self, key: int | tuple[int, ...], r: int, body: Callable[[], None]) -> None:
        """A CALL of the subroutine computing register ``r`` (emitted on first use)."""
        if key not in self.subs:
            outer = self.code
            self.code = []
            self.subs[key] = (len(self.subs), self.code)
            self.bv_used.append(set())
            body()
            self.sub_bvs[key] = self.bv_used.pop()
            self.code.append([OP_RET, 0, r, 0, 0, 0])   # stamps r: only calls read stamps
            self.code = outer
        self.bv_used[-1] |= self.sub_bvs[key]
        self.code.append([OP_CALL, 0, r, self.subs[key][0], 0, 0])

    # ---------------------------------------------------------------- registers
    def const(self, v: int) -> int:
        v = int(v)
        if v not in self.const_reg:
            self.const_reg[v] = len(self.consts)
            self.consts.append(v)
        return -1 - self.const_reg[v]        # constants: negative until fixed up

    def reg(self, n: Expr) -> int:
        if n.op == "var":
            return int(n.val)  # type: ignore[arg-type]
        if n.op == "const":
            return self.const(int(n.val))  # type: ignore[arg-type]
        if id(n) not in self.node_reg:
            self.node_reg[id(n)] = self.V + 1_000_000 + self.n_reg   # computed: fixed up later
            self.n_reg += 1
        return self.node_reg[id(n)]

    def bitview(self, items: tuple[Expr, ...]) -> tuple[int, list[tuple[int, int, int]], int] | None:
        """``compiled.bit_tables``'s pattern: (const bits, [(var, table offset in data, lo)], n items)."""
        key = tuple(id(a) for a in items)
        if key in self.bitviews:
            return self.bitviews[key]
        out = self._bitview(items)
        self.bitviews[key] = out
        return out

    def _bitview(self, items: tuple[Expr, ...]) -> tuple[int, list[tuple[int, int, int]], int] | None:
        found = bit_tables(items, self.task.var_bounds)
        if found is None:
            return None
        const_bits, per_var = found
        return const_bits, [(v, self.put(combined), lo) for v, lo, combined in per_var], len(items)

    def put(self, values: list[int] | tuple[int, ...] | TableData) -> int:
        if isinstance(values, TableData):   # millions of entries: an array, not a list of ints
            self.big.append(table_array(values).astype(np.int64))
            self.big_size += len(values)
            return BIG_TABLE + self.big_size - len(values)
        off = len(self.data)
        self.data.extend(int(x) for x in values)
        return off

    # ---------------------------------------------------------------- use counts
    def children(self, n: Expr) -> list[Expr | tuple[int, ...]]:
        """What ``n``'s instruction reads: argument nodes, or for a bit-view element the view's key."""
        if n.op == "element":
            bv = self.bitview(n.args[2:])
            if bv is not None:
                return [n.args[0], n.args[1], tuple(id(a) for a in n.args[2:])]
        return list(n.args)

    def count(self, root: Expr) -> None:
        """One more reference to ``root``; its sub-DAG's references are counted once (on first visit)."""
        stack: list[Expr | tuple[int, ...]] = [root]
        while stack:
            n = stack.pop()
            key = n if isinstance(n, tuple) else id(n)
            self.uses[key] = self.uses.get(key, 0) + 1   # type: ignore[index]
            if key in self.seen:
                continue
            self.seen.add(key)  # type: ignore[arg-type]
            if isinstance(n, Expr) and n.op not in ("const", "var"):
                stack.extend(self.children(n))

    def shared(self, key: int | tuple[int, ...]) -> bool:
        return self.uses.get(key, 0) >= 2   # type: ignore[call-overload]

    # ---------------------------------------------------------------- emission
    def emit(self, n: Expr) -> int:
        """Code computing ``n`` (unless a var or constant); returns its register."""
        if n.op in ("const", "var"):
            return self.reg(n)
        r = self.reg(n)
        if self.shared(id(n)) and not self.cheap(n):
            self.call(id(n), r, lambda: self._compute(n, r))
        else:
            self._compute(n, r)
        return r

    def cheap(self, n: Expr) -> bool:
        """One instruction that reads only variables, constants and bit views: recomputing it where
        it is used costs no more than the call that would look it up."""
        def leaf(x: Expr) -> bool:
            return x.op in ("var", "const")
        a = n.args
        if n.op == "element" and self.bitview(a[2:]) is not None:
            ix = a[0]
            fused = ix.op == "table" and leaf(ix.args[0]) and leaf(ix.args[1]) and not self.shared(id(ix))
            return leaf(a[1]) and (leaf(ix) or fused)
        if n.op in ("element", "assign", "and", "or", "add", "min", "max"):
            return len(a) <= 2 and all(leaf(x) for x in a)
        if n.op == "eq" and a[0].op == "table" and leaf(a[1]):    # TABEQK
            return leaf(a[0].args[0]) and leaf(a[0].args[1])
        return all(leaf(x) for x in a)

    def _emit_bitview(self, items: tuple[Expr, ...]) -> int:
        key = tuple(id(a) for a in items)
        if key not in self.bv_reg:
            self.bv_reg[key] = self.V + 1_000_000 + self.n_reg
            self.n_reg += 1
        self.bv_used[-1].add(key)
        return self.bv_reg[key]

    def bitview_code(self, keys: set[tuple[int, ...]]) -> list[list[int]]:
        """The BITVIEW instructions of a stream's prologue: bit views are computed for every state
        (one lookup per variable), so an element read through one needs no call."""
        out = []
        for key in sorted(keys, key=lambda k: self.bv_reg[k]):
            bv = self.bitviews[key]
            assert bv is not None
            const_bits, terms, _ = bv
            if key not in self.bv_data:
                self.bv_data[key] = self.put([x for t in terms for x in t])
            out.append([OP_BITVIEW, self.bv_reg[key], self.bv_data[key], len(terms), const_bits, 0])
        return out

    def stream(self, body: Callable[[], None]) -> int:
        """Emit a stream: ``body``'s code and a HALT, with the bit views it reads computed first
        (a prologue placed after the HALT, reached by a jump, so that the body's jump targets
        stay put).  Returns where the stream starts (past the jump when there is no prologue)."""
        code = self.code
        at = len(code)
        code.append([OP_JUMP, 0, 0, 0, 0, 0])
        self.bv_used.append(set())
        body()
        keys = self.bv_used.pop()
        code.append([OP_HALT, 0, 0, 0, 0, 0])
        if not keys:
            code[at][3] = at + 1
            return at + 1
        code[at][3] = len(code)
        code.extend(self.bitview_code(keys))
        code.append([OP_JUMP, 0, 0, at + 1, 0, 0])
        return at

    def branch(self, c: Expr, when: bool, pending: list[int]) -> None:
        """Code that jumps when ``c``'s truth is ``when`` (its target, word 3, is left to fill in:
        its index goes to ``pending``).  ``x == k`` computed here is fused with the jump into one
        ``JNEK``/``JEQK``: its register is read by this jump alone (a node read elsewhere is
        either a subroutine, whose code ends in a CALL, or recomputed where it is read)."""
        code = self.code
        before = len(code)
        x = self.emit(c)
        last = code[-1] if len(code) > before else None
        if last is not None and last[0] == OP_EQK and last[1] == x:
            code[-1] = [OP_JEQK if when else OP_JNEK, 0, last[2], -1, last[3], 0]
            pending.append(len(code) - 1)
            return
        pending.append(len(code))
        code.append([OP_JTRUE if when else OP_JFALSE, 0, x, -1, 0, 0])

    def short_circuit(self, op: str, args: tuple[Expr, ...], r: int) -> None:
        """``and``/``or`` as jumps: r gets the value that ends the chain first, the other one if
        no child ends it (children are total, so skipping them changes no value; a skipped
        subroutine is simply not stamped, and runs where it is read next)."""
        code = self.code
        stop = op == "or"            # the children's truth that decides the result
        code.append([OP_LOADK, r, int(stop), 0, 0, 0])
        pending: list[int] = []
        for c in args:
            self.branch(c, stop, pending)
        code.append([OP_LOADK, r, int(not stop), 0, 0, 0])
        for at in pending:
            code[at][3] = len(code)

    def _list(self, regs: list[int]) -> int:
        return self.put(regs)   # register numbers, fixed up with the rest (see _fix)

    def _compute(self, n: Expr, r: int) -> None:
        op, a = n.op, n.args
        code = self.code
        if op in _CMP:
            if op == "eq" and a[1].op == "const" and a[0].op == "table" and a[0].args[1].op == "const":
                i = self.emit(a[0].args[0])
                vals = a[0].val
                code.append([OP_TABEQK, r, i, self.table(a[0]), len(vals),   # type: ignore[arg-type]
                             _pair(int(a[0].args[1].val), int(a[1].val))])  # type: ignore[arg-type]
                return
            x = self.emit(a[0])
            if op == "eq" and a[1].op == "const":
                code.append([OP_EQK, r, x, int(a[1].val), 0, 0])  # type: ignore[arg-type]
                return
            y = self.emit(a[1])
            code.append([_CMP[op], r, x, y, 0, 0])
            return
        if op == "table":
            i, d = self.emit(a[0]), self.emit(a[1])
            vals = n.val
            code.append([OP_TABLE, r, i, d, self.table(n), len(vals)])  # type: ignore[arg-type]
            return
        if op == "element":
            bv = self.bitview(a[2:])
            ix = a[0]
            if (bv is not None and ix.op == "table" and not self.shared(id(ix))
                    and ix.args[0].op == "var" and len(ix.val) < (1 << 31)):  # type: ignore[arg-type]
                # items[T[x]]: one instruction (the lookup of a cell's index, then its bit)
                x, td, d = self.emit(ix.args[0]), self.emit(ix.args[1]), self.emit(a[1])
                b = self._emit_bitview(a[2:])
                sizes = (len(ix.val) << 32) | (len(a) - 2)  # type: ignore[arg-type]
                code.append([OP_ELEMBITT, r, x, self.table(ix), sizes, td, b, d])
                return
            i, d = self.emit(ix), self.emit(a[1])
            if bv is not None:
                b = self._emit_bitview(a[2:])
                code.append([OP_ELEMBIT, r, i, d, b, len(a) - 2])
                return
            items = [self.emit(x) for x in a[2:]]
            code.append([OP_ELEM, r, i, d, self._list(items), len(items)])
            return
        if op == "assign":
            items = [self.emit(x) for x in a]
            code.append([OP_ASSIGN, r, self._list(items), int(n.val), 0, 0])  # type: ignore[arg-type]
            return
        if op in ("and", "or", "add", "min", "max"):
            if op == "and" and len(a) >= 2 and all(x.op == "eq" and x.args[0].op == "var"
                                                   and x.args[1].op == "const" for x in a):
                pairs = [w for x in a for w in (self.reg(x.args[0]), int(x.args[1].val))]  # type: ignore[arg-type]
                code.append([OP_ALLEQK, r, self.put(pairs), len(a), 0, 0])
                return
            if op in ("and", "or") and not all(x.op in ("var", "const") for x in a):
                self.short_circuit(op, a, r)
                return
            if op == "add" and len(a) == 2 and a[1].op == "const":
                code.append([OP_ADDK, r, self.emit(a[0]), int(a[1].val), 0, 0])  # type: ignore[arg-type]
                return
            regs = [self.emit(x) for x in a]
            two = {"and": OP_AND2, "or": OP_OR2, "add": OP_ADD2, "min": OP_MIN2, "max": OP_MAX2}[op]
            many = {"and": OP_ANDN, "or": OP_ORN, "add": OP_ADDN, "min": OP_MINN, "max": OP_MAXN}[op]
            if len(regs) == 2:
                code.append([two, r, regs[0], regs[1], 0, 0])
            else:
                code.append([many, r, self._list(regs), len(regs), 0, 0])
            return
        if op in _BIN:
            x, y = self.emit(a[0]), self.emit(a[1])
            code.append([_BIN[op], r, x, y, 0, 0])
            return
        if op in ("abs", "neg", "not", "toint"):
            x = self.emit(a[0])
            code.append([{"abs": OP_ABS, "neg": OP_NEG, "not": OP_NOT, "toint": OP_COPY}[op], r, x, 0, 0, 0])
            return
        if op in ("ite_int", "ite_bool"):
            c, x, y = self.emit(a[0]), self.emit(a[1]), self.emit(a[2])
            code.append([OP_ITE, r, c, x, y, 0])
            return
        raise ValueError(f"interpreted kernel: unknown op {op}")


def _pair(default: int, want: int) -> int:
    """TABEQK's last word: the table's default and the compared constant, 32 bits each."""
    if not (-(1 << 31) <= default < (1 << 31) and -(1 << 31) <= want < (1 << 31)):
        raise OverflowError
    return ((default & 0xFFFFFFFF) << 32) | (want & 0xFFFFFFFF)


def build(task: Task) -> Program:
    """The task's program (see the module docstring)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        try:
            return _build(task, tabeq=True)
        except OverflowError:   # a table default or constant beyond 32 bits: no fused lookups
            return _build(task, tabeq=False)
    finally:
        sys.setrecursionlimit(limit)


def _build(task: Task, tabeq: bool) -> Program:
    b = _Builder(task)
    if not tabeq:
        b._compute = _no_tabeq(b._compute)  # type: ignore[method-assign]
    nodes, key_of = _index_keys(task)
    # actions by dispatch key (expression id -> value -> actions); the rest are tried one by one
    groups: dict[int, dict[int, list[int]]] = {}
    for k, key in enumerate(key_of):
        if key is not None:
            groups.setdefault(key[0], {}).setdefault(key[1], []).append(k)
    for kid in list(groups):
        vals = groups[kid]
        n_act = sum(len(v) for v in vals.values())
        span = max(vals) - min(vals) + 1
        if n_act < 2 or span > max(4096, 8 * len(vals)):
            del groups[kid]
    keyed = {k: (kid, v) for kid, vals in groups.items() for v, ks in vals.items() for k in ks}

    def guard_parts(k: int) -> list[Expr]:
        a = task.actions[k]
        parts = conjuncts(a.guard)
        if k in keyed:
            kid, v = keyed[k]
            for j, c in enumerate(parts):
                if (c.op == "eq" and c.args[0] is nodes[kid] and c.args[1].op == "const"
                        and int(c.args[1].val) == v):  # type: ignore[arg-type]
                    del parts[j]
                    break
        return parts

    live = [k for k, a in enumerate(task.actions) if not (a.guard.op == "const" and not a.guard.val)]
    # reference counts over what will be emitted
    for kid in groups:
        b.count(nodes[kid])
    for k in live:
        a = task.actions[k]
        for c in guard_parts(k):
            if c.op != "const":
                b.count(c)
        for e in a.effects:
            b.count(e.value)
            if e.cond is not None:
                b.count(e.cond)
    for root in (task.goal, task.heuristic):
        if root is not None:
            b.count(root)

    code = b.code
    # EMITSET instructions (code index -> their [action, n, (var, register) * n, ...] list, laid in
    # data once complete) and the one the next action may join (None: a boundary since)
    sets: dict[int, list[int]] = {}
    absorb: list[int | None] = [None]

    def emit_action(k: int) -> None:
        a = task.actions[k]
        pending: list[int] = []
        for c in guard_parts(k):
            if c.op == "const":
                continue   # a true conjunct (a false guard is not live)
            if c.op == "not" and (not b.shared(id(c)) or b.cheap(c.args[0])):
                b.branch(c.args[0], True, pending)
                continue
            b.branch(c, False, pending)
        if any(e.cond is not None for e in a.effects):
            code.append([OP_EMIT, 0, k, 0, 0, 0])
            for e in a.effects:
                v = b.emit(e.value)
                if e.cond is None:
                    code.append([OP_SET, 0, e.var, v, 0, 0])
                else:
                    c = b.emit(e.cond)
                    code.append([OP_SETIF, 0, e.var, v, c, 0])
            code.append([OP_NEXT, 0, 0, 0, 0, 0])
            absorb[0] = None
        else:
            # the values first (they read only the pre-state), then one instruction writes the row;
            # a value two effects share is computed once (an effect's own node always runs)
            before = len(code)
            done: dict[int, int] = {}
            pairs: list[int] = [k, len(a.effects)]
            for e in a.effects:
                if id(e.value) not in done:
                    done[id(e.value)] = b.emit(e.value)
                pairs += [e.var, done[id(e.value)]]
            if not pending and len(code) == before and absorb[0] == len(code) - 1:
                # nothing jumps between the two: the previous EMITSET writes this row too
                sets[len(code) - 1] += pairs
                code[-1][3] += 1
            else:
                sets[len(code)] = pairs
                code.append([OP_EMITSET, 0, 0, 1, 0, 0])
            absorb[0] = len(code) - 1 if not pending else None
        for at in pending:
            code[at][3] = len(code)

    def expand_body() -> None:
        # The groups' keys first, then per group a DISPATCH that scans the entries (key register,
        # low value, size, jump table) of this group and the ones after it: the first hit jumps
        # to its value's actions, which end at the next group's DISPATCH; a state with no hit
        # left goes past the groups.  One scan (its loads independent of one another) in place of
        # a chain of dispatched instructions, each waiting on the one before: the interpreter's
        # time is mostly that chain.  A table entry -1 (no action for the value) or -2 - pc (the
        # value's actions are the one EMITSET at pc) lets the scan go on without a jump.
        keys = [b.emit(nodes[kid]) for kid in groups]
        entries: list[int] = []
        ats: list[int] = []
        for r, vals in zip(keys, groups.values()):
            absorb[0] = None
            lo = min(vals)
            size = max(vals) - lo + 1
            table = b.put([0] * size)
            entries += [r, lo, size, table]
            ats.append(len(code))
            code.append([OP_DISPATCH, 0, 0, 0, 0, 0])
            jumps = []
            targets: dict[int, int] = {}
            last = max(vals)
            for v, ks in sorted(vals.items()):
                targets[v] = len(code)
                absorb[0] = None
                for k in ks:
                    emit_action(k)
                if len(code) == targets[v] + 1 and code[-1][0] == OP_EMITSET:
                    targets[v] = -2 - targets[v]   # one EMITSET: the DISPATCH runs it and scans on
                if v != last:       # the last value's actions fall through to the end
                    jumps.append(len(code))
                    code.append([OP_JUMP, 0, 0, 0, 0, 0])
            end = len(code)
            for j in jumps:
                code[j][3] = end
            for i in range(size):           # -1: no action for this value, scan on
                b.data[table + i] = targets.get(lo + i, -1)
        if groups:
            off = b.put(entries)
            for g, at in enumerate(ats):
                code[at] = [OP_DISPATCH, len(code), off + 4 * g, len(ats) - g, 0, 0]
        absorb[0] = None
        for k in live:
            if k not in keyed:
                emit_action(k)

    regs: dict[str, int] = {}

    def value_body(name: str, root: Expr | None) -> Callable[[], None]:
        def body() -> None:
            regs[name] = b.emit(root) if root is not None else b.const(0)
        return body

    exp_start = b.stream(expand_body)
    exp_end = len(code)
    goal_start = b.stream(value_body("goal", task.goal))
    goal_end, goal_reg = len(code), regs["goal"]
    heur_start = b.stream(value_body("heuristic", task.heuristic))
    heur_end, heur_reg = len(code), regs["heuristic"]
    for at, pairs in sets.items():
        code[at][2] = b.put(pairs)
    for ins in code:                  # a dispatch that misses into a HALT stops there (-1)
        if ins[0] == OP_DISPATCH and code[ins[1]][0] == OP_HALT:
            ins[1] = -1
    # the subroutines, after the streams (their jumps' targets were relative to their bodies)
    sub_start = []
    for _, body in sorted(b.subs.values(), key=lambda x: x[0]):
        sub_start.append(len(code))
        for ins in body:
            if ins[0] in JUMP_OPS:
                ins[3] += sub_start[-1]
        code.extend(body)
    for ins in code:
        if ins[0] == OP_CALL:
            ins[3] = sub_start[ins[3]]

    # ---------------------------------------------------------------- layout of P
    n_const = len(b.consts)
    V = b.V

    def fix_reg(x: int) -> int:
        if x < 0:
            return V + (-1 - x)
        if x >= V + 1_000_000:
            return x - 1_000_000 + n_const
        return x

    # which words of which instructions are registers
    reg_words = {
        OP_CALL: (2,), OP_JFALSE: (2,), OP_JTRUE: (2,), OP_ELEMBITT: (1, 2, 5, 6, 7),
        OP_RET: (2,), OP_JNEK: (2,), OP_JEQK: (2,), OP_LOADK: (1,), OP_ALLEQK: (1,),
        OP_SET: (3,), OP_SETIF: (3, 4),
        OP_EQ: (1, 2, 3), OP_NE: (1, 2, 3), OP_LT: (1, 2, 3), OP_LE: (1, 2, 3), OP_GT: (1, 2, 3),
        OP_GE: (1, 2, 3), OP_EQK: (1, 2), OP_TABLE: (1, 2, 3), OP_TABEQK: (1, 2), OP_ELEMBIT: (1, 2, 3, 4),
        OP_BITVIEW: (1,), OP_NOT: (1, 2), OP_AND2: (1, 2, 3), OP_ANDN: (1,), OP_OR2: (1, 2, 3),
        OP_ORN: (1,), OP_ADD2: (1, 2, 3), OP_ADDK: (1, 2), OP_ADDN: (1,), OP_SUB: (1, 2, 3),
        OP_MUL: (1, 2, 3), OP_FLOORDIV: (1, 2, 3), OP_MOD: (1, 2, 3), OP_ABS: (1, 2), OP_NEG: (1, 2),
        OP_MIN2: (1, 2, 3), OP_MAX2: (1, 2, 3), OP_MINN: (1,), OP_MAXN: (1,), OP_COPY: (1, 2),
        OP_ITE: (1, 2, 3, 4), OP_ELEM: (1, 2, 3), OP_ASSIGN: (1,),
    }
    list_ops = {OP_ANDN: (2, 3), OP_ORN: (2, 3), OP_ADDN: (2, 3), OP_MINN: (2, 3), OP_MAXN: (2, 3),
                OP_ELEM: (4, 5), OP_ASSIGN: (2, None)}
    data_ops = {OP_ELEMBITT: 3, OP_DISPATCH: 2, OP_TABLE: 4, OP_TABEQK: 3, OP_BITVIEW: 2, OP_ANDN: 2,
                OP_ORN: 2, OP_ADDN: 2, OP_MINN: 2, OP_MAXN: 2, OP_ELEM: 4, OP_ASSIGN: 2, OP_EMITSET: 2,
                OP_ALLEQK: 2}
    n_ins = len(code)
    ins_off = HEADER
    data_off = ins_off + n_ins * WIDTH
    data = list(b.data)
    views_fixed: set[int] = set()
    entries_fixed: set[int] = set()
    for ins in code:
        op = ins[0]
        for w in reg_words.get(op, ()):
            ins[w] = fix_reg(ins[w])
        if op in list_ops:
            off_w, cnt_w = list_ops[op]
            off = ins[off_w]
            cnt = ins[cnt_w] if cnt_w is not None else ins[3] * ins[3]
            for j in range(off, off + cnt):
                data[j] = fix_reg(data[j])
        if op == OP_DISPATCH:                   # a group's entries are shared by the DISPATCHes before it
            for j in range(ins[2], ins[2] + 4 * ins[3], 4):
                if j not in entries_fixed:
                    entries_fixed.add(j)
                    data[j] = fix_reg(data[j])
                    data[j + 3] += data_off
        if op == OP_EMITSET:                 # per action: action, n, (var, register) * n
            j = ins[2]
            for _ in range(ins[3]):
                for t in range(j + 3, j + 2 + 2 * data[j + 1], 2):
                    data[t] = fix_reg(data[t])
                j += 2 + 2 * data[j + 1]
        if op == OP_ALLEQK:                  # (register, constant) pairs
            for t in range(ins[2], ins[2] + 2 * ins[3], 2):
                data[t] = fix_reg(data[t])
        if op == OP_BITVIEW and ins[2] not in views_fixed:   # streams share a view's terms
            views_fixed.add(ins[2])
            for j in range(ins[2], ins[2] + 3 * ins[3], 3):
                data[j + 1] += data_off                  # table offset -> absolute
        if op in data_ops:
            ins[data_ops[op]] += data_off
    lay = layout_for(task)
    obj_vars, grp_start, arity, lo_g, span = group_arrays(task)
    tail_off = data_off + len(data)
    lay_off = tail_off
    tail = [*lay.lo.tolist(), *lay.word.tolist(), *[int(x) for x in lay.shift],
            *[_signed(int(x)) for x in lay.mask]]
    grp_off = lay_off + len(tail)
    tail += [*obj_vars.ravel().tolist(), *grp_start.tolist(), *arity.tolist(), *lo_g.tolist(), *span.tolist()]
    const_off = lay_off + len(tail)
    tail += b.consts
    n_reg = V + n_const + b.n_reg
    header = [0] * HEADER
    header[H_NV] = V
    header[H_NACT] = max(1, len(task.actions))
    header[H_NREG] = n_reg
    header[H_NCONST] = n_const
    header[H_CONST_OFF] = const_off
    header[H_INS_OFF] = ins_off
    header[H_EXP_START], header[H_EXP_END] = exp_start, exp_end
    header[H_GOAL_START], header[H_GOAL_END], header[H_GOAL_REG] = goal_start, goal_end, fix_reg(goal_reg)
    header[H_HEUR_START], header[H_HEUR_END], header[H_HEUR_REG] = heur_start, heur_end, fix_reg(heur_reg)
    header[H_NWORDS] = lay.n_words
    header[H_LAY_OFF] = lay_off
    header[H_NGROUPS] = len(task.groups)
    header[H_GRP_OFF] = grp_off
    header[H_NOBJ] = obj_vars.shape[0]
    header[H_GWIDTH] = obj_vars.shape[1]
    header[H_NSUB] = len(b.subs) + 1
    header[H_SCRATCH] = max([int(ins[3]) ** 2 for ins in code if ins[0] == OP_ASSIGN] or [1])
    big_off = lay_off + len(tail)
    for ins in code:                      # large tables' offsets: after the tail
        if ins[0] in data_ops and ins[data_ops[ins[0]]] >= BIG_TABLE + data_off:
            ins[data_ops[ins[0]]] += big_off - BIG_TABLE - data_off
    words = [w for ins in code for w in (*ins, *[0] * (WIDTH - len(ins)))]
    P = np.array(header + words + data + tail, dtype=np.int64)
    if b.big:
        P = np.concatenate([P, *b.big])
    return Program(P, len(task.actions), n_ins, n_reg)


def _signed(u: int) -> int:
    return u - (1 << 64) if u >= 1 << 63 else u


def _no_tabeq(compute):  # noqa: ANN001, ANN202 - a method wrapper
    """``_compute`` without the fused table-equals-constant instruction (32-bit operands only)."""
    def wrapped(n: Expr, r: int) -> None:
        if n.op == "eq" and n.args[1].op == "const" and n.args[0].op == "table":
            b = compute.__self__
            x = b.emit(n.args[0])
            b.code.append([OP_EQK, r, x, int(n.args[1].val), 0, 0])
            return
        compute(n, r)
    return wrapped
