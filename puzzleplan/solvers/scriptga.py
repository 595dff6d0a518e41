"""Engine ``ga`` on transition models: a genetic algorithm over move scripts (indirect encoding).

Why a separate engine from :mod:`.ga`: a transition model has no assignment to
evolve, only plans; a plan is found by *simulating* a genome.  Following
Coldridge & Amos ("Genetic algorithms and the art of Zen", 2010), a genome is a
script of ``m`` clauses of integer genes, and decoding it needs two facts that
the model declares with :func:`puzzleplan.lang.script` and
:func:`puzzleplan.lang.progress` (``task.info["script"]``):

* which ground actions a clause's genes choose among -- a clause opens with an
  *opening* decision and goes on with *inner* decisions until opening actions
  are offered again; a decision reads an option gene (gene mod the number of
  applicable options, in the model's declared order) and a variant gene
  (mod the applicable variants of that option);
* how much work is left (``remaining``; AreaFitness = remaining / remaining at
  the start).

Genome layout, per clause: ``[o_0, v_0, o_1, v_1, ..., o_S, v_S]`` -- the
opening decision, then ``S`` (``steps``) inner decisions; an excursion with
more inner decisions than ``S`` reuses the clause's inner genes cyclically.
Gene ranges: opening option 0..(opening options - 1), inner option
0..(inner_options - 1), variant 0..(most variants - 1).

Decoding is vectorised over the whole population: every step expands all
running individuals at once with the successor kernel (numpy or compiled),
picks each one's action with array operations, and moves on.  An individual
stops when its state is a goal (solved), when no declared action applies
(stuck: the paper's deadlock), when it needs a clause beyond ``m`` (partial),
or after ``max_steps`` decisions (partial; guards against zero-cost cycles in
models where inner decisions could go on forever).  ``evaluations`` counts
decoded individuals.

``preset=paper`` -- the paper's GA (Section IV-D, V):

* m = 20 clauses, population 1,000, 100 generations (generation 0, the random
  initial population, counts as the first: at most 100,000 evaluations);
* fitness exactly as printed: ``(m - Moves) * (200 / m)`` plus, if
  ``AreaFitness > 0``, ``(1 - AreaFitness) * 200``; else, if the goal holds,
  ``300``; else (everything done but the state is no goal: stuck at the end)
  the whole fitness is 0.  Moves = clauses opened; AreaFitness is read in the
  state the script stopped in, stuck or not (the pseudo-code tests no other
  deadlock; the prose's "zero on deadlock" is its last branch);
* rank-based selection keeping 95 %: parents are drawn with probability
  linear in their rank; the next population is the best 95 % of parents and
  children together, plus 5 % drawn uniformly from the rest (our reading of
  JGAP's best-chromosome selector with a 0.95 rate; the paper gives no more);
* one-point crossover (cut uniform over the genome), each pair giving two
  children; mutation rate 0.07 per gene (a uniform new value in its range);
  each generation makes ``population`` children, so it costs ``population``
  evaluations.

``preset=improved`` (the default) -- the same budget (20 clauses, 1,000 x 100 evaluations) with
changes aimed at the paper's weak points:

* fitness lexicographic: every plan beats every partial script, cheaper plans
  beat dearer ones, partial scripts are ranked by the work done (the paper's
  formula can rank a one-clause partial script above a 20-clause plan);
* binary tournaments; one-point crossover with the cut between clauses;
* mutation where it matters: one clause that the parent actually used is
  redrawn whole, plus 0.01 per gene (0.07 per gene mostly hits genes no
  decoding ever reads, and breaks the few it does read);
* survivors: the best 1,000 distinct scripts of parents and children.

The result is the cheapest goal-reaching script seen in the run, its plan in
ground actions (replayed by the reference checker); a GA proves nothing, so
the status is ``solved`` (never ``optimal``), ``unknown`` when no script reached
the goal, ``limit`` when the time limit ended the run (best plan so far kept).
``target=K`` stops a run as soon as a plan of cost <= K is found (benchmarks
that know the optimum; the paper's "evaluations until the optimum is found").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..encodings.kernel import Kernel
from ..encodings.npkernel import evaluate
from ..lang.errors import ModelError, OptionError
from ..lang.scripting import ScriptSpec, spec_of
from .result import Clock, Limits, Result

PAPER = {"clauses": 20, "population": 1000, "generations": 100, "keep": 0.95, "mutation": 0.07}
IMPROVED = {"clauses": 20, "population": 1000, "generations": 100, "keep": 1.0, "mutation": 0.01}
PRESETS = ("paper", "improved")

RUNNING, SOLVED, STUCK, PARTIAL = 0, 1, 2, 3


class ScriptDecoder:
    """Maps ground actions to (role, option, variant) and decodes whole populations of scripts."""

    def __init__(self, kernel: Kernel, spec: ScriptSpec, clauses: int, max_steps: int = 0):
        task = kernel.task
        self.kernel = kernel
        self.spec = spec
        self.m = clauses
        self.steps = spec.steps
        self.G = 2 + 2 * spec.steps                    # genes per clause
        self.L = clauses * self.G
        n = len(task.actions)
        self.role = np.full(n, -1, dtype=np.int64)
        self.opt = np.zeros(n, dtype=np.int64)
        self.var = np.zeros(n, dtype=np.int64)
        offset, first = 0, {}
        for ch in spec.opening:
            first[ch.schema] = (0, offset, ch)
            offset += len(ch.options)
        for ch in spec.inner:
            first[ch.schema] = (1, 0, ch)
        for k, a in enumerate(task.actions):
            if a.name not in first:
                continue
            role, base, ch = first[a.name]
            p = dict(a.params)
            self.role[k] = role
            self.opt[k] = base + ch.options.index(p[ch.option])
            self.var[k] = ch.variants.index(p[ch.variant]) if ch.variant else 0
        if not (self.role == 0).any() or not (self.role == 1).any():
            raise ModelError("script(): no ground action belongs to the declared opening/inner schemas")
        self.costs = kernel.costs
        hi = np.empty(self.G, dtype=np.int64)
        hi[0] = spec.opening_options
        hi[2::2] = spec.inner_options
        hi[1::2] = spec.variant_range
        self.gene_hi = np.tile(hi, clauses)             # exclusive upper bound per gene
        self.max_steps = max_steps or clauses * (4 * spec.steps + 1)
        init = np.array([task.init], dtype=np.int64)
        self.remaining0 = self._remaining(init)[0] if spec.progress is not None else 1

    def _remaining(self, S: np.ndarray) -> np.ndarray:
        assert self.spec.progress is not None
        return np.asarray(evaluate(self.spec.progress, np.asarray(S, dtype=np.int64)), dtype=np.int64)

    def random(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return (rng.random((n, self.L)) * self.gene_hi).astype(np.int64)

    def decode(self, genomes: np.ndarray) -> dict[str, np.ndarray | list[np.ndarray]]:
        """Simulate every script: final states, status, moves (clauses opened), actions taken per step."""
        P = genomes.shape[0]
        k = self.kernel
        S = np.repeat(k.init_state(), P, axis=0)
        status = np.zeros(P, dtype=np.int64)
        clause = np.zeros(P, dtype=np.int64)
        inner = np.zeros(P, dtype=np.int64)
        taken: list[np.ndarray] = []
        rows = np.arange(P)
        for _ in range(self.max_steps):
            live = rows[status == RUNNING]
            if live.size == 0:
                break
            g = k.goal(S[live])
            status[live[g]] = SOLVED
            live = live[~g]
            if live.size == 0:
                break
            succ, par, act = k.expand(S[live])
            r = self.role[act]
            n = live.size
            has = np.zeros((2, n), dtype=bool)
            has[1, par[r == 1]] = True
            has[0, par[r == 0]] = True
            kind = np.where(has[1], 1, np.where(has[0], 0, -1))
            status[live[kind < 0]] = STUCK
            over = (kind == 0) & (clause[live] >= self.m)
            status[live[over]] = PARTIAL
            kind[over] = -1
            keep = (r >= 0) & (r == kind[par])
            if not keep.any():
                continue
            p, a = par[keep], act[keep]
            o, v = self.opt[a], self.var[a]
            order = np.lexsort((v, o, p))
            p, a, o, v = p[order], a[order], o[order], v[order]
            rowsel = np.flatnonzero(keep)[order]
            ind = live[p]
            kd = kind[p]
            # gene positions of each candidate's individual
            base = np.where(kd == 0, clause[ind] * self.G,
                            (clause[ind] - 1) * self.G + 2 + 2 * (inner[ind] % self.steps))
            go = genomes[ind, base]
            gv = genomes[ind, base + 1]
            m = p.size
            idx = np.arange(m)
            new_p = np.ones(m, dtype=bool)
            new_p[1:] = p[1:] != p[:-1]
            new_o = new_p.copy()
            new_o[1:] |= o[1:] != o[:-1]
            pstart = np.maximum.accumulate(np.where(new_p, idx, 0))
            cum = np.cumsum(new_o)
            orank = cum - cum[pstart]
            last = np.ones(m, dtype=bool)
            last[:-1] = new_p[1:]
            n_opts = np.zeros(n, dtype=np.int64)
            n_opts[p[last]] = orank[last] + 1
            pick_o = orank == go % n_opts[p]
            ostart = np.maximum.accumulate(np.where(new_o, idx, 0))
            vrank = idx - ostart
            blk = np.zeros(m, dtype=np.int64)             # size of each (parent, option) block
            np.add.at(blk, ostart, 1)
            pick = pick_o & (vrank == gv % np.maximum(blk[ostart], 1))
            chosen_par, chosen_row, chosen_act = p[pick], rowsel[pick], a[pick]
            who = live[chosen_par]
            S[who] = succ[chosen_row]
            opened = self.role[chosen_act] == 0
            clause[who[opened]] += 1
            inner[who[opened]] = 0
            inner[who[~opened]] += 1
            step = np.full(P, -1, dtype=np.int64)
            step[who] = chosen_act
            taken.append(step)
        status[status == RUNNING] = PARTIAL
        return {"S": S, "status": status, "moves": clause, "taken": taken}

    def improved_fitness(self, out: dict[str, Any], costs: np.ndarray) -> np.ndarray:
        """Lexicographic: any plan beats any partial script, a cheaper plan beats a dearer one; partial
        scripts are ranked by the work done (the paper's fitness can rank a 1-clause partial script
        above a 20-clause plan)."""
        area = self._remaining(out["S"]) / max(self.remaining0, 1)
        solved = out["status"] == SOLVED
        return np.where(solved, 1000.0 - 10.0 * costs, (1.0 - area) * 300.0)

    def plan_of(self, taken: list[np.ndarray], i: int) -> list[int]:
        return [int(t[i]) for t in taken if t[i] >= 0]

    def paper_fitness(self, out: dict[str, Any]) -> np.ndarray:
        """The paper's fitness function, as printed (module docstring)."""
        if self.spec.progress is None:
            raise ModelError("engine ga on a transition model needs progress() declared by the model")
        area = self._remaining(out["S"]) / max(self.remaining0, 1)
        moves = out["moves"]
        fit = (self.m - moves) * (200.0 / self.m)
        solved = out["status"] == SOLVED
        return np.where(area > 0, fit + (1.0 - area) * 200.0, np.where(solved, fit + 300.0, 0.0))


def solve(kernel: Kernel, limits: Limits, preset: str = "improved", seed: int = 0, population: int = 0,
          generations: int = 0, clauses: int = 0, mutation: float = -1.0, keep: float = -1.0,
          target: int = -1) -> Result:
    """Run one script GA (module docstring); zero/negative option values mean "the preset's value"."""
    if preset not in PRESETS:
        raise OptionError(f"engine ga: preset {preset!r} is not one of {', '.join(PRESETS)}")
    spec = spec_of(kernel.task.info)
    if spec is None or not spec.opening or spec.progress is None:
        raise OptionError(f"engine ga works on constraint models only, or on transition models that declare "
                          f"script() and progress(); {kernel.task.name} declares no script")
    base = PAPER if preset == "paper" else IMPROVED
    P = population or base["population"]
    Gn = generations or base["generations"]
    m = clauses or base["clauses"]
    mu = base["mutation"] if mutation < 0 else mutation
    kp = base["keep"] if keep < 0 else keep
    if P < 2 or not 0 <= mu <= 1 or not 0 < kp <= 1:
        raise OptionError("engine ga: population >= 2, 0 <= mutation <= 1, 0 < keep <= 1")
    rng = np.random.default_rng(seed)
    clock = Clock(limits)
    dec = ScriptDecoder(kernel, spec, m)
    pop = dec.random(rng, P)
    evals = 0
    best_cost: int | None = None
    best_plan: list[int] | None = None
    evals_to_best = 0
    trace_cost: list[int | None] = []
    trace_best: list[float] = []
    trace_mean: list[float] = []
    limited = False

    moves = np.zeros(P, dtype=np.int64)

    def score(genomes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        nonlocal evals, best_cost, best_plan, evals_to_best
        out = dec.decode(genomes)
        evals += genomes.shape[0]
        T = np.stack(out["taken"]) if out["taken"] else np.full((1, genomes.shape[0]), -1)
        costs = np.where(T >= 0, dec.costs[np.maximum(T, 0)], 0).sum(axis=0)
        fit = dec.paper_fitness(out) if preset == "paper" else dec.improved_fitness(out, costs)
        solved = np.flatnonzero(out["status"] == SOLVED)
        if solved.size:
            j = int(solved[np.argmin(costs[solved])])
            if best_cost is None or costs[j] < best_cost:
                best_cost = int(costs[j])
                best_plan = dec.plan_of(out["taken"], j)
                evals_to_best = evals
        return fit, out["moves"]

    fit, moves = score(pop)
    gen = 1
    while True:
        trace_cost.append(best_cost)
        trace_best.append(round(float(fit.max()), 3))
        trace_mean.append(round(float(fit.mean()), 3))
        clock.report(generation=gen, evaluations=evals, best_cost=best_cost)
        if gen >= Gn or (target >= 0 and best_cost is not None and best_cost <= target):
            break
        if clock.out_of_time():
            limited = True
            break
        if preset == "paper":
            # rank-based parent selection: probability linear in rank (best = P, worst = 1)
            order = np.argsort(-fit, kind="stable")
            weight = np.empty(P)
            weight[order] = np.arange(P, 0, -1, dtype=float)
            weight /= weight.sum()
            parents = rng.choice(P, size=(P + 1) // 2 * 2, p=weight)
            cut = rng.integers(1, dec.L, size=parents.size // 2)[:, None]
        else:
            # binary tournaments; cuts between clauses (a clause's genes stay together)
            duel = rng.integers(0, P, size=(2, (P + 1) // 2 * 2))
            parents = np.where(fit[duel[0]] >= fit[duel[1]], duel[0], duel[1])
            cut = dec.G * rng.integers(1, m, size=parents.size // 2)[:, None] if m > 1 else \
                np.full((parents.size // 2, 1), dec.L)
        a, b = pop[parents[0::2]], pop[parents[1::2]]
        left = np.arange(dec.L)[None, :] < cut
        kids = np.concatenate([np.where(left, a, b), np.where(left, b, a)])[:P]
        mut = rng.random(kids.shape) < mu
        if preset != "paper":
            # clause mutation: one clause the first parent really used is redrawn whole
            used = np.concatenate([moves[parents[0::2]], moves[parents[1::2]]])[:P]
            c = (rng.random(P) * np.maximum(used, 1)).astype(np.int64)
            cols = c[:, None] * dec.G + np.arange(dec.G)[None, :]
            mut[np.arange(P)[:, None], np.minimum(cols, dec.L - 1)] = True
        if mut.any():
            hi = np.broadcast_to(dec.gene_hi, kids.shape)[mut]
            kids[mut] = (rng.random(hi.size) * hi).astype(np.int64)
        kfit, kmoves = score(kids)
        # survivors: the best `keep` share of parents + children, the rest drawn from the others
        allpop = np.concatenate([pop, kids])
        allfit = np.concatenate([fit, kfit])
        allmoves = np.concatenate([moves, kmoves])
        if preset != "paper":
            # identical scripts count once: without this the elite floods the population
            _, first = np.unique(allpop, axis=0, return_index=True)
            dup = np.ones(allfit.size, dtype=bool)
            dup[first] = False
            allfit = np.where(dup, -1e9, allfit)
        rank = np.argsort(-allfit, kind="stable")
        n_keep = int(round(kp * P))
        rest = rng.choice(rank[n_keep:], size=P - n_keep, replace=False) if P > n_keep else rank[:0]
        sel = np.concatenate([rank[:n_keep], rest])
        pop, fit, moves = allpop[sel], allfit[sel], allmoves[sel]
        gen += 1
    stats: dict[str, Any] = {
        "preset": preset, "seed": seed, "evaluations": evals, "generations": gen, "population": P,
        "clauses": m, "evaluations_to_best": evals_to_best if best_cost is not None else None,
        "best_cost_by_generation": trace_cost, "best_fitness_by_generation": trace_best,
        "mean_fitness_by_generation": trace_mean,
    }
    status = "limit" if limited else ("solved" if best_cost is not None else "unknown")
    msg = "" if best_cost is not None else "no script reached the goal"
    return Result(status, "ga", cost=best_cost, plan=best_plan, stats=clock.stats(**stats), message=msg)
