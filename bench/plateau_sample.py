"""Why a search stalls: sample states astar expands late, then search each of them on its own.

Usage: python bench/plateau_sample.py MODEL INSTANCE [-O KEY=VALUE ...] [--time-limit S]
                                      [--sample N] [--each S] [-o results/plateau.json]

astar runs for ``--time-limit`` seconds; from the last 40 % of that time a few states of every
expanded batch are kept.  ``--sample`` of them, drawn with a fixed seed, are then each the start
of a fresh astar run of ``--each`` seconds.  Per state: the bound the stalled search had for it
(its heuristic), and what the fresh run proved: no plan (an undetected dead state), its exact
cost-to-go, or only a better bound.  A layer full of dead states asks for deadlock detection; one
full of states whose bound rises far above the heuristic asks for a stronger heuristic
(docs/models/sokoban.md, "Where the open levels stall").  Models with declared walks only (the
sample is taken from the macro kernel's expansions).
"""

from __future__ import annotations

import dataclasses
import sys
import time

import numpy as np

from puzzleplan import api
from puzzleplan.bench.scripting import parser, write_json
from puzzleplan.encodings.kernel import make_kernel
from puzzleplan.solvers import bestfirst
from puzzleplan.solvers import macro as macro_mod
from puzzleplan.solvers.result import Limits


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__, "results/plateau.json")
    ap.add_argument("model")
    ap.add_argument("instance")
    ap.add_argument("-O", dest="options", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--sample", type=int, default=30)
    ap.add_argument("--each", type=float, default=8.0)
    args = ap.parse_args(argv)
    task = api.load_task(args.model, args.instance, args.options).task
    if not task.walk_actions:
        print(f"{args.instance}: the model declares no walks; nothing to sample", file=sys.stderr)
        return 2
    kernel = make_kernel(task, "numpy")
    kept: list[tuple[np.ndarray, np.ndarray]] = []
    expand = macro_mod.MacroKernel.expand_costs
    t0 = time.perf_counter()

    def sampling(self: macro_mod.MacroKernel, S: np.ndarray):  # noqa: ANN202
        if S.shape[0] and time.perf_counter() - t0 > 0.6 * args.time_limit:
            pick = np.random.default_rng(len(kept)).choice(S.shape[0], size=min(5, S.shape[0]), replace=False)
            kept.append((S[pick].copy(), self.heuristic(S[pick])))
        return expand(self, S)

    macro_mod.MacroKernel.expand_costs = sampling   # type: ignore[method-assign]
    try:
        run = bestfirst.solve(kernel, Limits(time_s=args.time_limit), macro_backend="interpreted")
    finally:
        macro_mod.MacroKernel.expand_costs = expand  # type: ignore[method-assign]
    doc: dict = {"model": args.model, "instance": args.instance, "options": args.options,
                 "run": {"status": run.status, "lower_bound": run.stats.get("lower_bound"),
                         "expanded": run.stats.get("expanded")}, "states": []}
    if not kept:
        write_json(args.out, doc)
        print("no state expanded late enough to sample", file=sys.stderr)
        return 0
    rows = np.concatenate([s for s, _ in kept])
    hs = np.concatenate([h for _, h in kept])
    picks = np.random.default_rng(0).choice(rows.shape[0], size=min(args.sample, rows.shape[0]),
                                            replace=False)
    for i in picks.tolist():
        start = [int(x) for x in rows[i]]
        sub = dataclasses.replace(task, variables=[dataclasses.replace(v, init=x)
                                                   for v, x in zip(task.variables, start)])
        r = bestfirst.solve(make_kernel(sub, "numpy"), Limits(time_s=args.each), macro_backend="interpreted")
        doc["states"].append({"state": start, "h": int(hs[i]), "status": r.status, "cost": r.cost,
                              "lower_bound": r.stats.get("lower_bound"), "expanded": r.stats.get("expanded")})
        write_json(args.out, doc)
    verdicts = [s["status"] for s in doc["states"]]
    print(f"{args.instance}: stalled at bound {doc['run']['lower_bound']}; of {len(verdicts)} late states "
          f"{verdicts.count('unsolvable')} dead, {verdicts.count('optimal')} solved, "
          f"{verdicts.count('limit')} open after {args.each:g} s; {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
