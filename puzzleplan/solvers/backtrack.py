"""Engine ``backtrack``: depth-first search with propagation driven by the task's constraint objects.

Domains are Python integer bit sets (bit ``value - base``).  After every
decision the constraints whose variables changed are revised until nothing
changes (an AC-3 style queue, Mackworth 1977), each by the rule of its kind:

* ``alldiff``: a fixed variable's value leaves the other domains; if the
  scope must be a permutation of its values (as many values as variables),
  a value that fits only one variable is given to it ("hidden single"); a
  scope whose domains together hold fewer values than variables fails
  (pigeonhole) -- the cheap part of Régin's filtering;
* ``records``: generalised arc consistency for the constraint alone by
  dynamic programming over the line -- forward, the record counts reachable
  for each (position, running maximum); backward, the counts the rest of
  the line can add; a value survives if some running maximum before it and
  some completion after it give exactly ``k`` records.  When an
  all-different constraint makes the same scope a permutation, the line must
  also end with its largest value as running maximum (it is placed somewhere);
* plain expressions: forward checking -- when at most one of its variables
  is unfixed, that variable keeps only the values under which the
  expression holds (plain-Python evaluation), and a fully fixed one is
  checked.

Branching: the variable with the fewest values left per unit of failure
weight of its constraints ("dom/wdeg", Boussemart, Hemery, Lecoutre & Sais,
ECAI 2004: a constraint's weight counts the wipe-outs it caused), values in
increasing order.  With ``count`` > 1 the search
continues after a solution, so ``count=2`` settles uniqueness; exhausting
the tree proves unsolvability.  No puzzle knowledge: everything comes from
the constraint kinds.
"""

from __future__ import annotations

from ..ir.csp import CspConstraint, CspTask
from ..lang.expr import variables_of
from ..lang.ops import evaluate
from .csp import CspResult, _finish
from .result import Clock, Limits


class _Fail(Exception):
    pass


class Propagator:
    def __init__(self, task: CspTask):
        self.task = task
        self.base = min(v.lo for v in task.variables)
        self.cons: list[CspConstraint] = list(task.constraints)
        self.scopes: list[tuple[int, ...]] = []
        self.perm: list[bool] = []
        for c in self.cons:
            if c.kind == "expr":
                self.scopes.append(tuple(sorted(variables_of(c.expr))))  # type: ignore[arg-type]
            else:
                self.scopes.append(c.scope)
            union = set()
            for v in self.scopes[-1]:
                union.update(range(task.variables[v].lo, task.variables[v].hi + 1))
            self.perm.append(c.kind == "alldiff" and len(union) == len(self.scopes[-1]))
        # records scopes that some all-different makes a permutation: their largest value
        self.top: dict[tuple[int, ...], int | None] = {}
        perm_sets = [frozenset(s) for s, p in zip(self.scopes, self.perm) if p]
        for c, s in zip(self.cons, self.scopes):
            if c.kind == "records":
                self.top[s] = max(task.variables[v].hi for v in s) if frozenset(s) in perm_sets else None
        self.weight = [1] * len(self.cons)   # failures per constraint (dom/wdeg branching)
        self.watch: list[list[int]] = [[] for _ in task.variables]
        for ci, s in enumerate(self.scopes):
            for v in s:
                self.watch[v].append(ci)

    def initial(self) -> list[int]:
        b = self.base
        return [((1 << (v.hi - v.lo + 1)) - 1) << (v.lo - b) for v in self.task.variables]

    def values(self, mask: int) -> list[int]:
        out, b, i = [], self.base, 0
        while mask:
            if mask & 1:
                out.append(i + b)
            mask >>= 1
            i += 1
        return out

    def propagate(self, dom: list[int], changed: list[int] | None) -> None:
        """Revise constraints to a fixpoint (in place); raise ``_Fail`` on a wipe-out."""
        queue = list(range(len(self.cons))) if changed is None else \
            sorted({ci for v in changed for ci in self.watch[v]})
        inq = set(queue)
        while queue:
            ci = queue.pop()
            inq.discard(ci)
            before = [dom[v] for v in self.scopes[ci]]
            try:
                self._revise(ci, dom)
            except _Fail:
                self.weight[ci] += 1
                raise
            for v, old in zip(self.scopes[ci], before):
                if dom[v] != old:
                    if not dom[v]:
                        raise _Fail
                    for cj in self.watch[v]:
                        if cj != ci and cj not in inq:
                            inq.add(cj)
                            queue.append(cj)

    def _revise(self, ci: int, dom: list[int]) -> None:
        c = self.cons[ci]
        scope = self.scopes[ci]
        if c.kind == "alldiff":
            self._alldiff(scope, dom, self.perm[ci])
        elif c.kind == "records":
            self._records(scope, c.k, dom)
        else:
            self._expr(c, scope, dom)

    @staticmethod
    def _alldiff(scope: tuple[int, ...], dom: list[int], perm: bool) -> None:
        changed = True
        while changed:
            changed = False
            fixed = 0
            for v in scope:
                d = dom[v]
                if d & (d - 1) == 0:
                    if d & fixed:
                        raise _Fail
                    fixed |= d
            for v in scope:
                d = dom[v]
                if d & (d - 1) and d & fixed:
                    d &= ~fixed
                    if not d:
                        raise _Fail
                    dom[v] = d
                    changed = changed or d & (d - 1) == 0
            union = 0
            for v in scope:
                union |= dom[v]
            if bin(union).count("1") < len(scope):
                raise _Fail
            if perm:
                once, twice = 0, 0
                for v in scope:
                    twice |= once & dom[v]
                    once |= dom[v]
                single = once & ~twice & ~fixed
                while single:
                    bit = single & -single
                    single ^= bit
                    for v in scope:
                        if dom[v] & bit and dom[v] != bit:
                            dom[v] = bit
                            changed = True

    def _records(self, scope: tuple[int, ...], k: int, dom: list[int]) -> None:
        n = len(scope)
        vals = [self.values(dom[v]) for v in scope]
        low = self.base - 1
        fwd: list[dict[int, int]] = [{low: 1}]
        for i in range(n):
            nxt: dict[int, int] = {}
            for m, cm in fwd[i].items():
                for a in vals[i]:
                    if a > m:
                        nxt[a] = nxt.get(a, 0) | (cm << 1)
                    else:
                        nxt[m] = nxt.get(m, 0) | cm
            fwd.append(nxt)
        bwd: list[dict[int, int]] = [{} for _ in range(n + 1)]

        top = self.top[scope]

        def back(i: int, m: int) -> int:
            if i == n:  # a permutation scope ends at its largest value
                return 1 if top is None or m == top else 0
            got = bwd[i].get(m)
            if got is not None:
                return got
            r = 0
            for a in vals[i]:
                r |= back(i + 1, a) << 1 if a > m else back(i + 1, m)
            bwd[i][m] = r
            return r

        want = 1 << k
        for i in range(n):
            keep = 0
            for a in vals[i]:
                ok = False
                for m, cm in fwd[i].items():
                    if a > m:
                        tail, add = back(i + 1, a), 1
                    else:
                        tail, add = back(i + 1, m), 0
                    # some c in cm and t in tail with c + add + t == k
                    t = tail
                    c_shift = cm << add
                    while t:
                        bit = t & -t
                        t ^= bit
                        if (c_shift * bit) & want:
                            ok = True
                            break
                    if ok:
                        break
                if ok:
                    keep |= 1 << (a - self.base)
            v = scope[i]
            if keep != dom[v]:
                if not keep:
                    raise _Fail
                dom[v] = keep

    def _expr(self, c: CspConstraint, scope: tuple[int, ...], dom: list[int]) -> None:
        free = [v for v in scope if dom[v] & (dom[v] - 1)]
        if len(free) > 1:
            return
        state = [0] * len(dom)
        for v in scope:
            if dom[v] & (dom[v] - 1) == 0:
                state[v] = dom[v].bit_length() - 1 + self.base
        if not free:
            if not evaluate(c.expr, state, {}):  # type: ignore[arg-type]
                raise _Fail
            return
        v = free[0]
        keep = 0
        for a in self.values(dom[v]):
            state[v] = a
            if evaluate(c.expr, state, {}):  # type: ignore[arg-type]
                keep |= 1 << (a - self.base)
        if not keep:
            raise _Fail
        dom[v] = keep


def search(prop: Propagator, dom: list[int], count: int, clock: Clock | None = None,
           max_nodes: int = 0) -> tuple[list[list[int]], bool, int, int]:
    """Depth-first search from domains ``dom``: (solutions, complete, nodes, failures).

    ``complete``: the tree was exhausted (so fewer than ``count`` solutions exist).  Stops at
    ``count`` solutions, at the clock's deadline or after ``max_nodes`` decisions (if > 0).
    """
    found: list[list[int]] = []
    nodes = fails = 0
    try:
        prop.propagate(dom, None)
    except _Fail:
        return found, True, 0, 1
    stack: list[tuple[list[int], int, list[int]]] = []  # (domains, variable, values left)
    weight, watch = prop.weight, prop.watch

    def branch(d: list[int]) -> None:
        best, score = -1, float("inf")
        for v, m in enumerate(d):
            if m & (m - 1):
                s = bin(m).count("1") / (1 + sum(weight[ci] for ci in watch[v]))
                if s < score:
                    best, score = v, s
        if best < 0:
            found.append([x.bit_length() - 1 + prop.base for x in d])
            return
        stack.append((d, best, prop.values(d[best])))

    branch(dom)
    while stack and len(found) < count:
        if nodes & 255 == 0 and clock is not None and clock.out_of_time():
            return found, False, nodes, fails
        if max_nodes and nodes >= max_nodes:
            return found, False, nodes, fails
        d, v, left = stack[-1]
        if not left:
            stack.pop()
            continue
        a = left.pop(0)
        nodes += 1
        child = list(d)
        child[v] = 1 << (a - prop.base)
        try:
            prop.propagate(child, [v])
        except _Fail:
            fails += 1
            continue
        branch(child)
    return found, not stack, nodes, fails


def solve(task: CspTask, limits: Limits, count: int = 1) -> CspResult:
    clock = Clock(limits)
    prop = Propagator(task)
    found, complete, nodes, fails = search(prop, prop.initial(), count, clock)
    return _finish("backtrack", clock, found, complete, count,
                   proof="search tree exhausted" if complete and not found else "",
                   nodes=nodes, failures=fails)


__all__ = ["Propagator", "search", "solve"]
