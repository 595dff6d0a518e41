"""Pattern databases computed from the model (``Model.pattern``): build, check, cache, attach.

A pattern is a *domain abstraction*: on its variables the kept values stay distinct and every
other value becomes one "other" value (the smallest collapsed one).  The abstract task has the
same actions, read on abstract states; its reachable states are enumerated forward from the
abstract initial state with the numpy kernel, and exact costs-to-go come from a backward 0-1
breadth-first search over the recorded transitions, each charged the action's cost only when it
changes where the pattern's *charged* values (kept, not free) lie.  The table is indexed by a
perfect mixed-radix rank of the kept values' positions and stored as bytes (255: no path to the
goal, or never reached, both sound to prune).

Why it is admissible, and when patterns may be added, is argued in docs/heuristics.md; the
conditions are checked here, generically, and a model that breaks them is refused with a model
error naming its pattern declaration.  Nothing here knows a puzzle: the heuristic that comes out
is an ordinary expression (``Table(pdb)[rank]``), so engines and kernels need no change.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path

import numpy as np

from ..encodings.npkernel import NumpyKernel, evaluate
from ..ir.task import Task
from ..lang.errors import ModelError
from ..lang.expr import Add, And, Expr, Max, Table, TableData, bounds, var, walk
from ..lang.model import Pattern, VarInfo

FORMAT = 1                 # bump when the table's meaning or the key changes
UNREACHED = 255            # a table entry with no known path to the goal
MAX_ENTRIES = 1 << 28      # the largest table (bytes) a pattern may ask for
BATCH = 100_000            # abstract states expanded per numpy call

_MEMO: dict[str, np.ndarray] = {}     # this process's tables, by cache key


@dataclasses.dataclass
class Abstraction:
    """A pattern resolved against a task: its group, collapsed values, representative, radix."""

    pattern: Pattern
    vars: tuple[int, ...]
    lo: int
    hi: int
    collapsed: frozenset[int]
    rep: int | None               # the value every collapsed value becomes (None: nothing collapses)
    n_pos: int                    # radix of the rank: the number of variables in the group

    @property
    def size(self) -> int:
        return self.n_pos ** len(self.pattern.keep)

    def alpha(self, S: np.ndarray) -> np.ndarray:
        """Abstract states of the concrete states ``S`` (rows)."""
        A = np.array(S, dtype=np.int64, copy=True)
        if self.rep is not None:
            g = A[:, list(self.vars)]
            g[np.isin(g, list(self.collapsed))] = self.rep
            A[:, list(self.vars)] = g
        return A

    def rank_matrix(self) -> np.ndarray:
        """``R[c, v - lo]``: what variable ``c`` of the group adds to the rank when it holds ``v``."""
        R = np.zeros((self.n_pos, self.hi - self.lo + 1), dtype=np.int64)
        for i, v in enumerate(self.pattern.keep):
            R[:, v - self.lo] = np.arange(self.n_pos, dtype=np.int64) * self.n_pos ** i
        return R

    def rank(self, S: np.ndarray, charged_only: bool = False) -> np.ndarray:
        """Rank of each row; ``charged_only``: the part of it that says where the charged values lie
        (two states differ there iff a charged value changed place)."""
        R = self.rank_matrix()
        if charged_only:
            R[:, [v - self.lo for v in self.pattern.free]] = 0
        out = np.zeros(S.shape[0], dtype=np.int64)
        for c, x in enumerate(self.vars):
            out += R[c][S[:, x] - self.lo]
        return out

    def rank_expr(self) -> Expr:
        """The rank as an expression over the task's variables: one small lookup per variable."""
        R = self.rank_matrix()
        terms = [Table(R[c].tolist())[var(x) - self.lo] for c, x in enumerate(self.vars)]
        return Add(*terms)


def _err(p: Pattern, model: str, message: str) -> ModelError:
    """A model error naming the model and the pattern, at the model file's ``m.pattern`` line."""
    return ModelError(f"model {model}, pattern {p.name!r}: {message}", *p.origin)


def resolve(task: Task, p: Pattern) -> Abstraction:
    """The pattern's group and values, checked against the task's variables."""
    if any(not 0 <= x < task.n_vars for x in p.vars):
        raise _err(p, task.name, "refers to a variable the task does not have")
    doms = {(task.variables[x].lo, task.variables[x].hi) for x in p.vars}
    if len(doms) != 1:
        raise _err(p, task.name, "its variables must share one domain")
    (lo, hi), = doms
    if any(not lo <= v <= hi for v in p.keep):
        raise _err(p, task.name, f"keeps values outside its variables' domain {lo}..{hi}")
    collapsed = frozenset(range(lo, hi + 1)) - set(p.keep)
    ab = Abstraction(p, tuple(p.vars), lo, hi, collapsed, min(collapsed) if collapsed else None, len(p.vars))
    if ab.size > MAX_ENTRIES:
        raise _err(p, task.name,
                   f"its table would have {ab.size:,} entries ({ab.n_pos} positions ^ "
                   f"{len(p.keep)} kept values); at most {MAX_ENTRIES:,}: keep fewer values")
    return ab


# ------------------------------------------------------------------ the homomorphism check
def _invariant(n: Expr, x: int, ab: Abstraction, nv: int) -> bool:
    """Does ``n``, a function of group variable ``x`` alone, take one value on all collapsed values?"""
    vals = sorted(ab.collapsed)
    S = np.zeros((len(vals), nv), dtype=np.int64)
    S[:, x] = vals
    out = evaluate(n, S)
    return bool((out == out[0]).all())


def _fine_nodes(roots: list[Expr], ab: Abstraction,
                nv: int) -> tuple[dict[int, bool], dict[int, frozenset[int]]]:
    """Per node: is it a function of abstract states (reads the group only through tests that give
    every collapsed value the same answer)?  And which variables it reads."""
    group = set(ab.vars)
    fine: dict[int, bool] = {}
    reads: dict[int, frozenset[int]] = {}
    for n in walk(roots):
        if n.op == "var":
            reads[id(n)] = frozenset((int(n.val),))  # type: ignore[arg-type]
            fine[id(n)] = int(n.val) not in group or ab.rep is None  # type: ignore[arg-type]
            continue
        r: frozenset[int] = frozenset().union(*(reads[id(a)] for a in n.args)) if n.args else frozenset()
        reads[id(n)] = r
        if all(fine[id(a)] for a in n.args):
            fine[id(n)] = True
        elif len(r) == 1 and next(iter(r)) in group:
            fine[id(n)] = _invariant(n, next(iter(r)), ab, nv)
        else:
            fine[id(n)] = False
    return fine, reads


def abstract_task(task: Task, ab: Abstraction) -> Task:
    """The task on abstract states, or a model error where an action tells collapsed values apart.

    Sound when every guard, effect condition and effect value is a function of the abstract state
    (checked per node, see :func:`_fine_nodes`), an effect on a group variable either copies a
    group variable or writes a value that is not collapsed (or is the representative), and no
    action writes a variable outside the group (the rank would not determine the abstract state).
    Goal conjuncts that are not functions of the abstract state are dropped: the abstract goal
    then holds in more states, which only lowers distances.
    """
    p = ab.pattern
    group = set(ab.vars)
    roots = task.action_roots()
    fine, _ = _fine_nodes(roots, ab, task.n_vars)
    names = task.names
    bad_values = ab.collapsed - {ab.rep}
    for a in task.actions:
        if not fine[id(a.guard)]:
            raise _err(p, task.name,
                       f"the guard of action {a.label} tells collapsed values apart (it compares a "
                       f"pattern variable with a value the pattern does not keep, or two pattern "
                       f"variables); keep those values or drop the pattern")
        for e in a.effects:
            if e.var not in group:
                raise _err(p, task.name,
                           f"action {a.label} writes {names[e.var]}, a variable outside the pattern; "
                           f"patterns need every written variable inside them")
            if e.cond is not None and not fine[id(e.cond)]:
                raise _err(p, task.name,
                           f"an effect condition of action {a.label} tells collapsed values apart")
            v = e.value
            if v.op == "var" and int(v.val) in group:  # type: ignore[arg-type]
                continue                                   # a copy: moves a value, abstract or not
            if not fine[id(v)]:
                raise _err(p, task.name,
                           f"the value action {a.label} writes to {names[e.var]} tells collapsed "
                           f"values apart")
            lo, hi = bounds(v, task.var_bounds)
            if any(lo <= c <= hi for c in bad_values):
                raise _err(p, task.name,
                           f"action {a.label} may write a value the pattern collapses into "
                           f"{names[e.var]} ({lo}..{hi}); keep the values it writes")
    conj = task.goal.args if task.goal.op == "and" else (task.goal,)
    gfine, _ = _fine_nodes(list(conj), ab, task.n_vars)
    goal = And(*[c for c in conj if gfine[id(c)]])
    init = ab.alpha(np.array([task.init], dtype=np.int64))[0].tolist()
    variables = [VarInfo(v.name, v.lo, v.hi, int(init[i]), v.aux) for i, v in enumerate(task.variables)]
    actions = list(task.actions)   # the same ground actions, read on abstract states
    return Task(f"{task.name}/{p.name}", variables, actions, goal)


def check_additive(task: Task, abs_: list[Abstraction]) -> None:
    """Refuse an additive group when some action may move charged values of two patterns at once.

    Per action, each effect on a pattern variable carries one value: a copied variable's (pinned
    by the guard's ``y == k`` if there is one, else any value of its domain), a constant, or any
    value in the effect's interval bounds.  A source touches a pattern when it may carry one of
    its charged values.  A transition moves charged values of at most one pattern when at most
    one source touches any pattern and it carries a single value, or when all touching sources
    touch the same single pattern.
    """
    if len(abs_) < 2:
        return
    for a in task.actions:
        pinned: dict[int, int] = {}
        for c in (a.guard.args if a.guard.op == "and" else (a.guard,)):
            if c.op == "eq" and c.args[0].op == "var" and c.args[1].op == "const":
                pinned[int(c.args[0].val)] = int(c.args[1].val)  # type: ignore[arg-type]
        sources: dict[object, set[int]] = {}
        for e in a.effects:
            v = e.value
            if v.op == "var":
                y = int(v.val)  # type: ignore[arg-type]
                key: object = ("var", y)
                if y in pinned:
                    vals = {pinned[y]}
                else:
                    lo, hi = task.var_bounds[y]
                    vals = set(range(lo, hi + 1))
            else:
                lo, hi = bounds(v, task.var_bounds)
                key, vals = ("expr", id(v)), set(range(lo, hi + 1)) if hi - lo < 1 << 16 else None
            touched = {i for i, ab in enumerate(abs_)
                       if (e.var in ab.vars or (v.op == "var" and int(v.val) in ab.vars))  # type: ignore[arg-type]
                       and (vals is None or vals & set(ab.pattern.charged))}
            if touched:
                sources.setdefault(key, set()).update(touched)
        allp = set().union(*sources.values()) if sources else set()
        if len(allp) <= 1 or len(sources) == 1:
            continue
        two = sorted(allp)[:2]
        raise _err(abs_[two[1]].pattern, task.name,
                   f"declared additive with {abs_[two[0]].pattern.name!r}, but action {a.label} may move "
                   f"charged values of both at once; declare them apart (combined by max) or make "
                   f"their charged values disjoint in every move")


# ------------------------------------------------------------------ building the table
def _distinct(x: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """Positions of one occurrence of each value of ``x`` (values index ``scratch``): linear time,
    where ``np.unique`` sorts or hashes."""
    pos = np.arange(x.shape[0], dtype=scratch.dtype)
    scratch[x] = pos
    return np.flatnonzero(scratch[x] == pos)


def _check_once(S: np.ndarray, ab: Abstraction, model: str) -> None:
    G = S[:, list(ab.vars)]
    for v in ab.pattern.keep:
        cnt = (G == v).sum(axis=1)
        if (cnt != 1).any():
            raise _err(ab.pattern, model,
                       f"value {v} is not held by exactly one of its variables in every "
                       f"reachable state ({int(cnt[cnt != 1][0])} in one); a pattern's table "
                       f"is indexed by where each kept value lies")


def build_table(task: Task, ab: Abstraction, atask: Task) -> np.ndarray:
    """Forward enumeration of the abstract task, then backward 0-1 BFS from its goal states."""
    if task.cost_kind == "general":
        raise _err(ab.pattern, task.name, "pattern databases need action costs of 0 and 1")
    k = NumpyKernel(atask)
    size = ab.size
    seen = np.zeros(size, dtype=np.bool_)
    scratch = np.zeros(size, dtype=np.int32 if BATCH * 64 < 2**31 else np.int64)
    s0 = np.array([atask.init], dtype=np.int64)
    _check_once(s0, ab, task.name)
    seen[ab.rank(s0)] = True
    goals: list[np.ndarray] = []
    edges: list[np.ndarray] = []
    bits = max(1, int(size - 1).bit_length())
    frontier = s0
    while frontier.shape[0]:
        nxt: list[np.ndarray] = []
        for i in range(0, frontier.shape[0], BATCH):
            S = frontier[i:i + BATCH]
            rs = ab.rank(S)
            g = k.goal(S)
            if g.any():
                goals.append(rs[g])
            succ, par, _act, cost = k.successors(S)
            if succ.shape[0] == 0:
                continue
            rq = ab.rank(succ)
            rp = rs[par]
            c = np.where(ab.rank(succ, True) != ab.rank(S, True)[par], cost, 0)
            keep = rq != rp
            edges.append((rq[keep] << (bits + 1)) | (rp[keep] << 1) | c[keep])
            new = np.flatnonzero(~seen[rq])
            if new.size:
                new = new[_distinct(rq[new], scratch)]
                seen[rq[new]] = True
                fresh = succ[new]
                _check_once(fresh, ab, task.name)
                nxt.append(fresh)
        frontier = np.concatenate(nxt) if nxt else np.zeros((0, task.n_vars), dtype=np.int64)
    E = np.concatenate(edges) if edges else np.zeros(0, dtype=np.int64)
    del edges
    E.sort()
    dst = E >> (bits + 1)
    indptr = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=size), out=indptr[1:])
    del dst
    src = ((E >> 1) & ((1 << bits) - 1))
    zero = (E & 1) == 0
    del E
    goal_ranks = np.unique(np.concatenate(goals)) if goals else np.zeros(0, np.int64)
    return _backward(indptr, src, zero, goal_ranks, size, scratch)


def _preds(indptr: np.ndarray, F: np.ndarray) -> np.ndarray:
    """Indices of the edges into the nodes ``F`` (edges sorted by their target)."""
    starts = indptr[F]
    counts = indptr[F + 1] - starts
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offs = np.cumsum(counts) - counts
    return np.repeat(starts - offs, counts) + np.arange(total, dtype=np.int64)


def _backward(indptr: np.ndarray, src: np.ndarray, zero: np.ndarray, goals: np.ndarray, size: int,
              scratch: np.ndarray) -> np.ndarray:
    """Layered 0-1 BFS on reversed edges: each layer closed under zero-cost edges first."""
    dist = np.full(size, UNREACHED, dtype=np.uint8)
    cur = goals
    dist[cur] = 0
    d = 0

    def fresh(x: np.ndarray, value: int) -> np.ndarray:
        x = x[dist[x] == UNREACHED]
        x = x[_distinct(x, scratch)]
        dist[x] = value
        return x

    while cur.size:
        level = [cur]
        frontier = cur
        while frontier.size:
            e = _preds(indptr, frontier)
            frontier = fresh(src[e[zero[e]]], min(d, UNREACHED - 1))
            level.append(frontier)
        e = _preds(indptr, np.concatenate(level))
        d += 1
        cur = fresh(src[e[~zero[e]]], min(d, UNREACHED - 1))
    return dist


# ------------------------------------------------------------------ cache
def cache_key(atask: Task, ab: Abstraction) -> str:
    """The abstract task's structure (actions, goal, domains, values of variables outside the
    group) and the pattern; not where the group's values start: a table built from another start
    serves any start it reached (:func:`table_for` checks that)."""
    doc = json.loads(atask.to_json())
    doc["name"] = None
    for x in ab.vars:
        doc["variables"][x]["init"] = None
    p = ab.pattern
    doc["pattern"] = {"vars": list(p.vars), "keep": list(p.keep), "free": list(p.free), "format": FORMAT}
    return hashlib.sha1(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:24]


def pdb_dir() -> Path:
    """Beside the kernel cache (``kernels`` -> ``pdb``), private to this user like it."""
    from ..encodings.compiled import _private_dir, cache_dir

    k = cache_dir()
    d = k.parent / "pdb" if k.name == "kernels" else k.with_name(k.name.replace("kernels", "pdb"))
    return _private_dir(d)


def table_for(task: Task, p: Pattern, use_cache: bool = True) -> tuple[np.ndarray, Abstraction]:
    """The pattern's table for this task: from this process, the disk cache, or built now."""
    ab = resolve(task, p)
    atask = abstract_task(task, ab)
    key = cache_key(atask, ab)
    r0 = int(ab.rank(np.array([atask.init], dtype=np.int64))[0])
    table = _MEMO.get(key)
    path = None
    if table is None and use_cache:
        path = pdb_dir() / f"pdb-{key}.npy"
        if path.exists():
            try:
                table = np.load(path, allow_pickle=False)
            except (OSError, ValueError):
                table = None
            if table is not None and (table.dtype != np.uint8 or table.shape != (ab.size,)):
                table = None
    if table is not None and table[r0] == UNREACHED:
        table = None          # built from a start that did not reach this one (or a dead start): rebuild
    if table is None:
        table = build_table(task, ab, atask)
        if use_cache:
            path = path or pdb_dir() / f"pdb-{key}.npy"
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            with open(tmp, "wb") as f:
                np.save(f, table, allow_pickle=False)
            os.replace(tmp, path)
    _MEMO[key] = table
    return table, ab


def heuristic_expr(task: Task, use_cache: bool = True) -> Expr | None:
    """Max over the additive groups' sums and the other patterns' lookups (None: no pattern)."""
    if not task.patterns:
        return None
    by_name = {p.name: p for p in task.patterns}
    looked: dict[str, Expr] = {}
    abs_: dict[str, Abstraction] = {}
    for p in task.patterns:
        table, ab = table_for(task, p, use_cache)
        abs_[p.name] = ab
        # a TableData whatever its size: kernels read it as data, symbolic encoders relax it
        looked[p.name] = Table(TableData(table))[ab.rank_expr()]   # the rank never leaves the table
    parts: list[Expr] = []
    grouped: set[str] = set()
    for names in task.additive_patterns:
        check_additive(task, [abs_[n] for n in names])
        parts.append(Add(*[looked[n] for n in names]))
        grouped.update(names)
    parts += [looked[n] for n in by_name if n not in grouped]
    return Max(*parts)


def attach(task: Task, use_cache: bool = True) -> Task:
    """The task with its patterns' estimate maxed into its heuristic (the task itself if none)."""
    h = heuristic_expr(task, use_cache)
    if h is None:
        return task
    admissible = task.heuristic is None or task.heuristic_admissible
    combined = h if task.heuristic is None else Max(task.heuristic, h)
    return dataclasses.replace(task, heuristic=combined, heuristic_admissible=admissible)
