"""Vectorised numpy semantics of the IR over a batch of states ``(N, V)``.

One numpy operation per expression node for the whole batch, memoised per
batch so shared nodes (views, common sub-guards) are computed once.  This is
the kernel for populations (GA), goal/heuristic evaluation of big batches,
and the readable vectorised reference the compiled kernel is tested against.
"""

from __future__ import annotations

import numpy as np

from ..ir.task import Task
from ..lang.errors import ModelError
from ..lang.expr import BOOL, Expr, TableData

STATE_DTYPE = np.int64


class DomainError(ModelError):
    """An action produced a value outside a variable's domain: a bug in the model, reported as one."""


def evaluate(e: Expr, S: np.ndarray, memo: dict[int, np.ndarray] | None = None) -> np.ndarray:
    """Value of ``e`` for every row of ``S``: int64 array, or bool array for boolean nodes."""
    if memo is None:
        memo = {}
    if id(e) in memo:
        return memo[id(e)]
    n = S.shape[0]
    # post-order over the nodes not yet in the memo: sub-expressions shared with earlier guards
    # are neither re-walked nor re-evaluated (a full walk per guard dominated on big models)
    stack: list[tuple[Expr, bool]] = [(e, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in memo:
            continue
        if ready:
            memo[id(node)] = _eval_node(node, [memo[id(a)] for a in node.args], S, n)
            continue
        stack.append((node, True))
        stack.extend((a, False) for a in node.args if id(a) not in memo)
    return memo[id(e)]


def _eval_node(node: Expr, a: list[np.ndarray], S: np.ndarray, n: int) -> np.ndarray:
    op = node.op
    if op == "const":
        if node.kind == BOOL:
            return np.full(n, bool(node.val))
        return np.full(n, node.val, dtype=np.int64)
    if op == "var":
        return S[:, node.val].astype(np.int64, copy=False)
    if op == "add":
        r = a[0].copy()
        for x in a[1:]:
            r += x
        return r
    if op == "sub":
        return a[0] - a[1]
    if op == "mul":
        return a[0] * a[1]
    if op == "floordiv":
        return np.floor_divide(a[0], a[1])
    if op == "mod":
        return np.mod(a[0], a[1])
    if op == "abs":
        return np.abs(a[0])
    if op == "min":
        return np.minimum.reduce(a)
    if op == "max":
        return np.maximum.reduce(a)
    if op == "toint":
        return a[0].astype(np.int64)
    if op in _CMP:
        return _CMP[op](a[0], a[1])
    if op == "and":
        return np.logical_and.reduce(a)
    if op == "or":
        return np.logical_or.reduce(a)
    if op == "not":
        return ~a[0]
    if op in ("ite_int", "ite_bool"):
        return np.where(a[0], a[1], a[2])
    if op == "table":
        vals = _table_values(node)
        i = a[0]
        inside = (i >= 0) & (i < len(vals))
        return np.where(inside, vals[np.clip(i, 0, len(vals) - 1)].astype(np.int64), a[1])
    if op == "element":
        i, default, items = a[0], a[1], a[2:]
        stacked = np.stack(items, axis=1)
        inside = (i >= 0) & (i < len(items))
        picked = np.take_along_axis(stacked, np.clip(i, 0, len(items) - 1)[:, None], axis=1)[:, 0]
        return np.where(inside, picked, default)
    if op == "assign":
        # the Hungarian method's loops depend on the data, so rows are solved by one compiled
        # helper (numba is a base dependency) rather than by masked numpy steps
        from .jitlib import assign_rows

        return assign_rows(np.stack(a, axis=1), int(node.val))  # type: ignore[arg-type]
    raise ValueError(f"numpy kernel: unknown op {op}")


def table_array(val: object) -> np.ndarray:
    """A table node's values as a numpy array: a large table's packed values viewed in place
    (read-only, no copy), a small table's tuple converted."""
    if isinstance(val, TableData):
        a = np.frombuffer(val.array, dtype=val.dtype)
        a.setflags(write=False)
        return a
    return np.asarray(val, dtype=np.int64)


def _table_values(node: Expr) -> np.ndarray:
    """A table node's values as an array: a large table's own (read-only, not copied per batch),
    a small one's converted once per node and kept."""
    got = _TABLE_ARRAYS.get(id(node))
    if got is None:
        got = _TABLE_ARRAYS[id(node)] = table_array(node.val)
    return got


# interned nodes live as long as the process (lang.expr._INTERN), so their ids are stable keys
_TABLE_ARRAYS: dict[int, np.ndarray] = {}

_CMP = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less,
    "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
}


class NumpyKernel:
    """Successors, goal test, heuristic and canonical form for batches of states."""

    def __init__(self, task: Task):
        self.task = task
        self.lo = np.array([v.lo for v in task.variables], dtype=np.int64)
        self.hi = np.array([v.hi for v in task.variables], dtype=np.int64)
        self.costs = np.array([a.cost for a in task.actions], dtype=np.int64)
        self.keys, self.key_of = _index_keys(task)

    # a batch at least this large is split by each action's key before its guard is evaluated
    INDEX_FROM = 256

    def successors(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """All (successor, parent row, action index, cost) for a batch, without a loop over states."""
        S = np.asarray(S, dtype=STATE_DTYPE)
        memo: dict[int, np.ndarray] = {}
        outs, parents, acts = [], [], []
        # the successor-generator trick (as in Fast Downward): an action whose guard requires
        # "expression == constant" is evaluated only on the rows where that holds, so a large
        # batch costs what its applicable actions cost rather than every action on every row
        parts: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, dict[int, np.ndarray]]] = {}
        index = S.shape[0] >= self.INDEX_FROM
        kvs: dict[int, np.ndarray] = {}
        for k, a in enumerate(self.task.actions):
            key = self.key_of[k] if index else None
            if key is not None:
                if key not in parts:
                    if key[0] not in kvs:
                        kvs[key[0]] = evaluate(self.keys[key[0]], S, memo)
                    rows = np.flatnonzero(kvs[key[0]] == key[1])
                    parts[key] = (rows, S[rows], {})
                rows, Sv, mv = parts[key]
                if rows.size == 0:
                    continue
            else:
                rows, Sv, mv = None, S, memo
            mask = evaluate(a.guard, Sv, mv)
            idx = np.flatnonzero(mask)
            if idx.size == 0:
                continue
            T = Sv[idx].copy()
            for eff in a.effects:
                val = evaluate(eff.value, Sv, mv)[idx]
                if eff.cond is None:
                    T[:, eff.var] = val
                else:
                    c = evaluate(eff.cond, Sv, mv)[idx]
                    T[:, eff.var] = np.where(c, val, T[:, eff.var])
            outs.append(T)
            parents.append(idx if rows is None else rows[idx])
            acts.append(np.full(idx.size, k, dtype=np.int64))
        if not outs:
            empty = np.zeros((0, S.shape[1]), dtype=STATE_DTYPE)
            z = np.zeros(0, dtype=np.int64)
            return empty, z, z.copy(), z.copy()
        succ = np.concatenate(outs)
        bad = (succ < self.lo) | (succ > self.hi)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            act = self.task.actions[int(np.concatenate(acts)[r])]
            raise DomainError(f"action {act.label} sets {self.task.variables[c].name} to {succ[r, c]}, "
                              f"outside its domain")
        action = np.concatenate(acts)
        return succ, np.concatenate(parents), action, self.costs[action]

    def goal(self, S: np.ndarray) -> np.ndarray:
        return evaluate(self.task.goal, np.asarray(S, dtype=STATE_DTYPE)).astype(bool)

    def heuristic(self, S: np.ndarray) -> np.ndarray:
        if self.task.heuristic is None:
            return np.zeros(len(S), dtype=np.int64)
        return evaluate(self.task.heuristic, np.asarray(S, dtype=STATE_DTYPE))

    def canonical(self, S: np.ndarray) -> np.ndarray:
        """Sort every interchangeable group's objects (lexicographically by value tuple)."""
        S = np.array(S, dtype=STATE_DTYPE, copy=True)
        for group in self.task.groups:
            objs = np.array(group, dtype=np.int64)           # (n_obj, arity)
            vals = S[:, objs]                                 # (N, n_obj, arity)
            key = np.zeros(vals.shape[:2], dtype=np.int64)
            for k in range(objs.shape[1]):
                span = int(self.hi[objs[0, k]] - self.lo[objs[0, k]] + 1)
                key = key * span + (vals[:, :, k] - self.lo[objs[0, k]])
            order = np.argsort(key, axis=1, kind="stable")
            S[:, objs] = np.take_along_axis(vals, order[:, :, None], axis=1)
        return S


def _index_keys(task: Task) -> tuple[dict[int, Expr], list[tuple[int, int] | None]]:
    """Per action, an equality conjunct ``expression == constant`` of its guard to index it by.

    Where a guard has several, the expression that most actions test wins (an agent's cell
    rather than one block's), so the rows are split once for many actions.
    """
    cands: list[list[tuple[int, int]]] = []
    nodes: dict[int, Expr] = {}
    count: dict[int, int] = {}
    for a in task.actions:
        mine = []
        for c in (a.guard.args if a.guard.op == "and" else (a.guard,)):
            if c.op == "eq" and c.args[1].op == "const" and c.args[0].op != "const":
                mine.append((id(c.args[0]), int(c.args[1].val)))  # type: ignore[arg-type]
                nodes[id(c.args[0])] = c.args[0]
        cands.append(mine)
        for n in {i for i, _ in mine}:
            count[n] = count.get(n, 0) + 1
    key_of = [max(m, key=lambda kv: count[kv[0]]) if m else None for m in cands]
    return nodes, key_of
