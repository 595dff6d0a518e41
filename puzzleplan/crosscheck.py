"""``puzzleplan verify``: run several engines on one task and check that they agree.

Lives beside ``api`` (top layer) rather than in ``verify/``: the checker in
``verify/`` must stay independent of every engine, while this module drives
them all.  Rules: every returned plan must pass the reference checker;
engines that claim optimality must report the same cost; an engine that only
found a solution (limits, heuristic engines) is reported but counts against
agreement only if its cost is *below* a proven optimum; "unsolvable" from one
engine contradicts a plan from any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import api
from .lang.errors import EXIT_BAD_OPTION, PuzzleError
from .solvers import Limits, Result


@dataclass
class Verdict:
    agree: bool
    optimum: int | None
    results: dict[str, Result] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    plan_rejected: bool = False

    def to_json(self, loaded: api.Loaded) -> dict[str, Any]:
        engines = {}
        for name, r in self.results.items():
            st = r.stats
            engines[name] = {
                "status": r.status, "cost": r.cost, "optimal": r.optimal, "proof": r.proof,
                "time": st.get("time_s"), "expanded": st.get("expanded"), "conflicts": st.get("conflicts"),
                "verified": st.get("verified"), "message": r.message,
                "steps": len(r.plan) if r.plan is not None else None,
            }
        return {"agree": self.agree, "optimum": self.optimum, "engines": engines, "problems": self.problems,
                "model": getattr(loaded.model, "NAME", loaded.task.name), "instance": loaded.instance,
                "options": dict(loaded.options)}


def parse_engines(text: str) -> list[str]:
    names = [e.strip() for e in text.split(",") if e.strip()]
    if not names:
        raise PuzzleError("--engines needs at least one engine name", code=EXIT_BAD_OPTION)
    for n in names:
        api.check_engine(n)
    return names


def run(loaded: api.Loaded, engines: list[str], limits: Limits, kernel: str = "numba") -> Verdict:
    results = {name: api.solve(loaded, name, limits, kernel) for name in engines}
    return judge(results)


def judge(results: dict[str, Result]) -> Verdict:
    problems: list[str] = []
    rejected = False
    for name, r in results.items():
        if r.plan is not None and not r.stats.get("verified", False):
            rejected = True
            problems.append(f"{name}: {r.message or 'plan rejected by the reference checker'}")
    optimal = {name: r.cost for name, r in results.items() if r.status == "optimal" and r.cost is not None}
    optimum = None
    if optimal:
        costs = set(optimal.values())
        if len(costs) > 1:
            problems.append("engines claiming optimality disagree: "
                            + ", ".join(f"{n}={c}" for n, c in optimal.items()))
        optimum = min(costs)
    solved = {n: r.cost for n, r in results.items() if r.cost is not None and r.plan is not None}
    unsolvable = [n for n, r in results.items() if r.status == "unsolvable"]
    if unsolvable and solved:
        problems.append(f"{', '.join(unsolvable)} say unsolvable but {', '.join(solved)} found a plan")
    if optimum is not None:
        for n, c in solved.items():
            if c is not None and c < optimum:
                problems.append(f"{n} found cost {c}, below the proven optimum {optimum}")
    return Verdict(not problems, optimum, results, problems, rejected)


def exit_code(v: Verdict) -> int:
    if v.plan_rejected:
        return api.EXIT_PLAN_REJECTED
    if not v.agree:
        return api.EXIT_DISAGREE
    statuses = {r.status for r in v.results.values()}
    if statuses & {"optimal", "solved"}:
        return api.EXIT_OK
    if "unsolvable" in statuses:
        return api.EXIT_UNSOLVABLE
    return api.EXIT_LIMIT


def table(v: Verdict) -> str:
    head = ["engine", "status", "cost", "proof", "time s", "expanded/conflicts", "checked"]
    rows = []
    for name, r in v.results.items():
        st = r.stats
        work = st.get("expanded") if st.get("expanded") else st.get("conflicts", "")
        rows.append([name, r.status, "" if r.cost is None else str(r.cost), r.proof or r.message[:40],
                     f"{st.get('time_s', 0):.3f}", f"{work:,}" if isinstance(work, int) else str(work or ""),
                     "yes" if st.get("verified") else ("-" if r.plan is None else "NO")])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(head, widths)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(str(x).ljust(w) for x, w in zip(row, widths)) for row in rows]
    verdict = (f"agree: optimum {v.optimum}" if v.agree and v.optimum is not None
               else "agree" if v.agree else "DISAGREE: " + "; ".join(v.problems))
    return "\n".join(lines + [verdict])
