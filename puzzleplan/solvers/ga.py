"""Engine ``ga``: genetic algorithms over whole populations of assignments (numpy, no per-individual loop).

Fitness is minus the total violation (:mod:`puzzleplan.lang.csp` defines the
measure: repeated values per all-different scope, one per broken plain or
records constraint), computed for the whole population at once by
:class:`puzzleplan.encodings.csp_numpy.CspEvaluator`.  A run stops at fitness
0 (a solution, re-checked by the plain-Python checker) or when its budget is
spent.  ``evaluations`` counts every individual ever scored.

``preset=paper`` -- the configuration of Yaghoubi, "AI-Based Puzzle Game
Solver" (Table II: population 380, 4,500 generations, tournament size 10,
crossover rate 0.9, mutation rate 0.09), implemented as the paper describes it:

* genes: one integer per cell, uniform in its domain (givens stay fixed);
* selection: tournaments of 10 drawn with replacement from the population
  (Algorithm 2), two parents per pair of children, no elitism (Algorithm 1);
* crossover: single point on *rows* (the grid's rows; a task without a grid
  shape counts each variable as a row), point uniform in ``0..rows-1``,
  rows above it from one parent, the rest from the other (Algorithm 5).  Text
  and pseudo-code disagree on what happens when the random number exceeds the
  rate: the text says "two new individuals are created without any inheritance"
  (random ones), Algorithm 5 returns the parents.  Default: the text
  (``no_crossover=random``); ``-E no_crossover=copy`` follows the pseudo-code;
* mutation: each gene independently with probability 0.09 set to a uniform
  random value of its domain (Algorithm 6);
* fitness: minus the broken rules (Algorithms 3 and 4: repeated values per row
  and column, one per violated clue) -- the measure above.

``preset=improved`` (default) -- a memetic algorithm that uses what the model
declares, within the same budget of 380 x 4,500 = 1,710,000 evaluations (every
scored individual counts; every decision of the repair search counts as one):

* propagation first (``propagate``): the backtracker's propagators run once on
  the empty assignment; variables they fix become givens, values they exclude
  are penalised (one per cell holding one) in the search fitness;
* permutation genes: an all-different scope with as many values as variables
  is kept a permutation of its free values (givens fixed), so that constraint
  can never be violated and the search space shrinks from n^n to n! per row;
* conflict-directed swap moves over a population of 64: per individual and
  step, ``moves`` candidate swaps inside one permutation scope, the first cell
  drawn by the number of violated constraints it is in; the best candidate is
  taken if it is not worse (sideways moves cross plateaus), and anyway with
  probability ``noise``.  With ``graded`` the search counts a records
  constraint off by d as d (a finer landscape with the same zeros); the
  reported fitness is always the measure above;
* crossover: uniform over permutation scopes (each scope taken whole from one
  parent, so children stay permutations), replacing the worst quarter every
  ``cross_every`` steps from tournament-selected parents;
* repair (``repair`` decisions, 0 = off): every ``cross_every`` steps a
  large-neighbourhood step on the best individual -- ``free_groups``
  permutation scopes, drawn by their conflicts, are freed, the rest kept, and
  the propagators with a bounded depth-first search try to complete it;
* restarts: an individual that has not improved for ``patience`` steps is
  re-drawn; the whole population when its best has not improved for
  ``restart`` steps.

Counting solutions is not a GA's business: ``--count`` is refused (exit 31).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..encodings.csp_numpy import CspEvaluator
from ..ir.csp import CspTask
from ..lang.errors import OptionError
from .csp import CspResult
from .result import Clock, Limits

PAPER = {"population": 380, "generations": 4500, "tournament": 10, "crossover": 0.9, "mutation": 0.09}
BUDGET = PAPER["population"] * PAPER["generations"]


def solve(task: CspTask, limits: Limits, preset: str = "improved", seed: int = 0, population: int = 0,
          generations: int = 0, evaluations: int = 0, tournament: int = 0, crossover: float = -1.0,
          mutation: float = -1.0, no_crossover: str = "random", moves: int = 8, noise: float = 0.25,
          patience: int = 300, cross_every: int = 10, propagate: bool = True, repair: int = 200,
          free_groups: int = 2, restart: int = 150, graded: bool = True,
          history: bool = False) -> CspResult:
    """Run one GA; zero/negative option values mean "the preset's default"."""
    if preset not in ("paper", "improved"):
        raise OptionError(f"engine ga: preset {preset!r} is not one of paper, improved")
    if no_crossover not in ("random", "copy"):
        raise OptionError(f"engine ga: no_crossover {no_crossover!r} is not one of random, copy")
    rng = np.random.default_rng(seed)
    clock = Clock(limits)
    ev = CspEvaluator(task)
    lo = np.array([v.lo for v in task.variables], dtype=np.int64)
    hi = np.array([v.hi for v in task.variables], dtype=np.int64)
    if preset == "paper":
        out = _paper(task, ev, rng, clock, lo, hi, population or PAPER["population"],
                     generations or PAPER["generations"], tournament or PAPER["tournament"],
                     PAPER["crossover"] if crossover < 0 else crossover,
                     PAPER["mutation"] if mutation < 0 else mutation, no_crossover, evaluations, history)
    else:
        allowed = None
        prop = None
        if propagate or repair:
            from .backtrack import Propagator

            prop = Propagator(task)
        if propagate and prop is not None:
            from .backtrack import _Fail

            dom = prop.initial()
            try:
                prop.propagate(dom, None)
                allowed = [prop.values(d) for d in dom]
            except _Fail:
                allowed = None
        out = _improved(task, ev, rng, clock, lo, hi, population or 64, evaluations or BUDGET,
                        tournament or 3, moves, noise, patience, cross_every, history, allowed,
                        prop if repair else None, repair, free_groups, restart, graded)
    best, gen, hist, timed_out = out
    fit = -int(ev.violations(best[None, :])[0])
    ev.evaluations -= 1  # the final re-score is bookkeeping, not search
    values = [int(x) for x in best]
    solved = fit == 0
    stats: dict[str, Any] = {"preset": preset, "seed": seed, "evaluations": ev.evaluations,
                             "generations": gen, "best_fitness": fit}
    if history:
        stats["history"] = hist
    res = CspResult("solved" if solved else "limit", "ga", cost=0 if solved else None,
                    stats=clock.stats(**stats), assignment=values if solved else None,
                    message="" if solved else
                    f"no solution within the budget (best fitness {fit}"
                    f"{', time limit' if timed_out else ''})")
    if not solved:
        res.stats["best_assignment"] = values
    return res


# ----------------------------------------------------------------------------------- paper preset
def _rows_of(task: CspTask) -> np.ndarray:
    """Row number of every variable: the grid's rows, or one row per variable."""
    if task.shape is not None:
        return np.arange(task.n_vars) // task.shape[1]
    return np.arange(task.n_vars)


def _random(rng: np.random.Generator, n: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return rng.integers(lo, hi + 1, size=(n, lo.size))


def _tournament(rng: np.random.Generator, fit: np.ndarray, n: int, k: int) -> np.ndarray:
    """``n`` winners of tournaments of ``k`` drawn with replacement (ties: the first drawn)."""
    cand = rng.integers(0, fit.size, size=(n, k))
    return cand[np.arange(n), np.argmax(fit[cand], axis=1)]


def _paper(task: CspTask, ev: CspEvaluator, rng: np.random.Generator, clock: Clock, lo: np.ndarray,
           hi: np.ndarray, P: int, G: int, k: int, cr: float, mr: float, no_cross: str, max_evals: int,
           history: bool) -> tuple[np.ndarray, int, list[int], bool]:
    rows = _rows_of(task)
    n_rows = int(rows.max()) + 1
    half = (P + 1) // 2
    pop = _random(rng, P, lo, hi)
    fit = -ev.violations(pop)
    hist = [int(fit.max())]
    gen = 0
    timed_out = False
    while fit.max() < 0 and gen < G and not (max_evals and ev.evaluations >= max_evals):
        if clock.out_of_time():
            timed_out = True
            break
        gen += 1
        parents = _tournament(rng, fit, 2 * half, k)
        p1, p2 = pop[parents[:half]], pop[parents[half:]]
        cp = rng.integers(0, n_rows, size=half)
        top = rows[None, :] < cp[:, None]
        c1 = np.where(top, p1, p2)
        c2 = np.where(top, p2, p1)
        skip = rng.random(half) > cr
        if skip.any():
            if no_cross == "random":
                c1[skip] = _random(rng, int(skip.sum()), lo, hi)
                c2[skip] = _random(rng, int(skip.sum()), lo, hi)
            else:
                c1[skip], c2[skip] = p1[skip], p2[skip]
        pop = np.concatenate([c1, c2])[:P]
        hit = rng.random(pop.shape) < mr
        pop = np.where(hit, _random(rng, P, lo, hi), pop)
        fit = -ev.violations(pop)
        if history:
            hist.append(int(fit.max()))
        clock.report(generation=gen, best_fitness=int(fit.max()), evaluations=ev.evaluations)
    return pop[int(np.argmax(fit))].copy(), gen, hist, timed_out


# ----------------------------------------------------------------------------------- improved GA
class _Genome:
    """Permutation scopes (free cells only) and the free variables outside them."""

    def __init__(self, task: CspTask, lo: np.ndarray, hi: np.ndarray,
                 allowed: list[list[int]] | None = None):
        base = int(lo.min())
        self.base = base
        self.ok = np.zeros((lo.size, int(hi.max()) - base + 1), dtype=bool)   # value allowed per cell
        for v in range(lo.size):
            vals = allowed[v] if allowed is not None else range(int(lo[v]), int(hi[v]) + 1)
            self.ok[v, np.array(list(vals), dtype=np.int64) - base] = True
        self.groups: list[tuple[np.ndarray, np.ndarray]] = []   # (free cells, their values)
        covered: set[int] = set()
        for scope in task.permutation_groups():
            covered.update(scope)
            fixed = {int(lo[v]) for v in scope if lo[v] == hi[v]}
            cells = np.array([v for v in scope if lo[v] != hi[v]], dtype=np.int64)
            vals = sorted(set().union(*(range(int(lo[v]), int(hi[v]) + 1) for v in scope)) - fixed)
            if cells.size >= 2:
                self.groups.append((cells, np.array(vals, dtype=np.int64)))
            elif cells.size == 1:
                covered.discard(int(cells[0]))
        self.loose = np.array([v for v in range(lo.size) if v not in covered and lo[v] != hi[v]],
                              dtype=np.int64)
        self.lo, self.hi = lo, hi
        # for move sampling: per variable, the group it belongs to (-1: loose or fixed)
        self.group_of = np.full(lo.size, -1, dtype=np.int64)
        for g, (cells, _) in enumerate(self.groups):
            self.group_of[cells] = g
        # cells and sizes stacked (padded) for vectorised sampling of a partner in the same group
        width = max((c.size for c, _ in self.groups), default=1)
        self.table = np.zeros((max(len(self.groups), 1), width), dtype=np.int64)
        self.size = np.ones(max(len(self.groups), 1), dtype=np.int64)
        for g, (cells, _) in enumerate(self.groups):
            self.table[g, :cells.size] = cells
            self.size[g] = cells.size
        self.movable = np.concatenate([c for c, _ in self.groups] + [self.loose]) \
            if self.groups or self.loose.size else np.zeros(0, dtype=np.int64)

    def random(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Random individuals: each permutation scope a random permutation that respects the
        allowed values where a greedy random draw can (cells in random order, each taking a
        random allowed value still unused; a cell left without one takes any unused value)."""
        pop = _random(rng, n, self.lo, self.hi)
        for cells, vals in self.groups:
            for i in range(n):
                left = list(vals)
                for pos in rng.permutation(cells.size):
                    cell = cells[pos]
                    good = [x for x in left if self.ok[cell, x - self.base]]
                    pick = good[rng.integers(len(good))] if good else left[rng.integers(len(left))]
                    left.remove(pick)
                    pop[i, cell] = pick
        return pop

    def outside(self, pop: np.ndarray) -> np.ndarray:
        """Per individual: how many cells hold a value the propagators ruled out."""
        return (~self.ok[np.arange(pop.shape[-1]), pop - self.base]).sum(axis=-1)


def _improved(task: CspTask, ev: CspEvaluator, rng: np.random.Generator, clock: Clock, lo: np.ndarray,
              hi: np.ndarray, P: int, budget: int, k: int, S: int, noise: float, patience: int,
              cross_every: int, history: bool, allowed: list[list[int]] | None = None,
              prop: Any = None, repair: int = 0, free_groups: int = 2, restart: int = 150,
              graded: bool = True,
              ) -> tuple[np.ndarray, int, list[int], bool]:
    if allowed is not None:  # cells the propagators fixed become givens; the rest keep a mask
        lo = lo.copy()
        hi = hi.copy()
        for v, vals in enumerate(allowed):
            if len(vals) == 1:
                lo[v] = hi[v] = vals[0]
    gen = _Genome(task, lo, hi, allowed)
    inc = np.zeros((len(task.constraints), task.n_vars), dtype=np.int64)   # constraint x variable
    for ci, c in enumerate(task.constraints):
        scope = c.scope if c.kind != "expr" else _expr_vars(c.expr)
        inc[ci, list(scope)] = 1
    pop = gen.random(rng, P)
    per = ev.per_constraint(pop, graded)
    fit = -per.sum(axis=1) - gen.outside(pop)
    best_fit = fit.copy()
    stale = np.zeros(P, dtype=np.int64)
    g_best = pop[int(np.argmax(fit))].copy()
    g_fit = int(fit.max())
    g_true = -int(ev.violations(g_best[None, :])[0])
    ev.evaluations -= 1
    hist = [g_true]
    steps = 0
    timed_out = False
    rows = np.arange(P)
    run_best, run_since, restarts = int(fit.max()), 0, 0
    if gen.movable.size == 0:
        return g_best, 0, hist, False
    while g_fit < 0 and ev.evaluations < budget:
        if steps % 16 == 0 and clock.out_of_time():
            timed_out = True
            break
        steps += 1
        # conflict weight of every variable: how many violated constraints it is in
        w = (per > 0).astype(np.int64) @ inc
        w = w[:, gen.movable] + 0.05
        w /= w.sum(axis=1, keepdims=True)
        # S candidate moves per individual: a first cell by conflict weight, a partner in its group
        u = rng.random((P, S))
        first = gen.movable[(w.cumsum(axis=1)[:, None, :] < u[:, :, None]).sum(axis=2)
                            .clip(0, gen.movable.size - 1)]
        grp = gen.group_of[first]
        in_grp = grp >= 0
        gsafe = np.where(in_grp, grp, 0)
        pick = (rng.random((P, S)) * gen.size[gsafe]).astype(np.int64)
        second = gen.table[gsafe, pick]
        cand = np.repeat(pop[:, None, :], S, axis=1)
        ii, jj = np.nonzero(np.ones((P, S), dtype=bool))
        a, b = first.ravel(), second.ravel()
        va, vb = cand[ii, jj, a].copy(), cand[ii, jj, b].copy()
        swap = in_grp.ravel()
        cand[ii[swap], jj[swap], a[swap]] = vb[swap]
        cand[ii[swap], jj[swap], b[swap]] = va[swap]
        loose = ~swap  # a variable outside permutations: a new random value
        if loose.any():
            cand[ii[loose], jj[loose], a[loose]] = rng.integers(lo[a[loose]], hi[a[loose]] + 1)
        flat = cand.reshape(P * S, -1)
        cper = ev.per_constraint(flat, graded).reshape(P, S, -1)
        cfit = -cper.sum(axis=2) - gen.outside(cand)
        j = np.argmax(cfit + rng.random((P, S)) * 0.5, axis=1)   # best candidate, ties at random
        take = cfit[rows, j] >= fit
        take |= rng.random(P) < noise
        pop[take] = cand[rows[take], j[take]]
        per[take] = cper[rows[take], j[take]]
        fit[take] = cfit[rows[take], j[take]]
        better = fit > best_fit
        best_fit = np.where(better, fit, best_fit)
        stale = np.where(better, 0, stale + 1)
        i = int(np.argmax(fit))
        if fit[i] > g_fit:
            g_fit, g_best = int(fit[i]), pop[i].copy()
            g_true = -int(ev.violations(g_best[None, :])[0])   # the reported (0/1 per clue) fitness
            ev.evaluations -= 1                                  # bookkeeping, not search
        if history:
            hist.append(g_true)
        clock.report(generation=steps, best_fitness=g_true, evaluations=ev.evaluations)
        if g_fit == 0:
            break
        if fit[i] > run_best:
            run_best, run_since = int(fit[i]), steps
        elif restart and steps - run_since > restart:  # the whole population is stuck: start afresh
            pop = gen.random(rng, P)
            per = ev.per_constraint(pop, graded)
            fit = -per.sum(axis=1) - gen.outside(pop)
            best_fit = fit.copy()
            stale[:] = 0
            run_best, run_since = int(fit.max()), steps
            restarts += 1
            continue
        if prop is not None and steps % cross_every == 0:
            # repair (large-neighbourhood search): free ``free_groups`` permutation scopes of the best
            # individual, drawn with weight 1 + their cells' conflicts, and every loose cell in a
            # violated constraint; keep the rest; the propagators and a depth-first search of at
            # most ``repair`` decisions complete it (each decision counts as one evaluation)
            i = int(np.argmax(fit))
            cw = (per[i] > 0) @ inc
            fixed = cw == 0
            if gen.groups:
                gw = np.array([cw[cells].sum() + 1.0 for cells, _ in gen.groups])
                pick = rng.choice(len(gen.groups), size=min(free_groups, len(gen.groups)), replace=False,
                                  p=gw / gw.sum())
                fixed[:] = True
                fixed[gen.loose[cw[gen.loose] > 0]] = False
                for g in pick:
                    fixed[gen.groups[g][0]] = False
            dom = prop.initial() if allowed is None else [
                sum(1 << (x - prop.base) for x in vals) for vals in allowed]
            for v in np.flatnonzero(fixed):
                bit = 1 << (int(pop[i, v]) - prop.base)
                if dom[v] & bit:
                    dom[v] = bit
            from .backtrack import search

            sols, _, nodes, _ = search(prop, dom, 1, None, repair)
            ev.evaluations += max(nodes, 1)
            if sols:
                g_best = np.array(sols[0], dtype=np.int64)
                g_fit = 0
                break
        if steps % cross_every == 0 and gen.groups:
            m = P // 4
            worst = np.argsort(fit)[:m]
            pa = _tournament(rng, fit, m, k)
            pb = _tournament(rng, fit, m, k)
            kids = pop[pa].copy()
            for cells, _ in gen.groups:
                other = rng.random(m) < 0.5
                kids[np.ix_(other, cells)] = pop[pb[other]][:, cells]
            pop[worst] = kids
            per[worst] = ev.per_constraint(kids, graded)
            fit[worst] = -per[worst].sum(axis=1) - gen.outside(kids)
            best_fit[worst] = fit[worst]
            stale[worst] = 0
        dead = stale > patience
        if dead.any():
            pop[dead] = gen.random(rng, int(dead.sum()))
            per[dead] = ev.per_constraint(pop[dead], graded)
            fit[dead] = -per[dead].sum(axis=1) - gen.outside(pop[dead])
            best_fit[dead] = fit[dead]
            stale[dead] = 0
    return g_best, steps, hist, timed_out


def _expr_vars(e: Any) -> list[int]:
    from ..lang.expr import variables_of

    return sorted(variables_of(e))


__all__ = ["BUDGET", "PAPER", "solve"]
