"""``puzzleplan verify``: run several engines on one task and say what independent paradigms proved.

Lives beside ``api`` (top layer) rather than in ``verify/``: the checker in
``verify/`` must stay independent of every engine, while this module drives
them all.

Why paradigms: two engines that share their machinery (bfs and astar run on
the same kernels) can be fooled by the same bug, so their agreement proves
no more than one of them.  Engines are grouped by the paradigm the engine
registry records (explicit-state, symbolic, external, constraint search),
and the verdict is

* ``confirmed``: at least two paradigms each proved the same answer (the same
  optimum, the same unsolvability, the same solution count);
* ``unconfirmed``: one paradigm proved it, the others ended without a verdict;
* ``disagree``: two proofs differ, or a bound or a plan contradicts a proof;
* ``unknown``: no engine proved anything.

Every plan or assignment is replayed by the reference checker (a rejected one
is exit 21 whatever the verdict).  An engine that stopped at a limit is listed
with the bounds it did establish: its plan's cost (an upper bound) and the
lower bound it records (refuted horizons, a closed f-bound or BFS layer).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from . import api
from .lang.errors import EXIT_BAD_OPTION, PuzzleError
from .solvers import Limits, Result, registry

EXIT_UNCONFIRMED = 11

# seconds per engine when verify is given no --time-limit: printed in the header, changed with --time-limit
DEFAULT_TIME_LIMIT = 20.0

CONFIRMED, UNCONFIRMED, DISAGREE, UNKNOWN = "confirmed", "unconfirmed", "disagree", "unknown"

_SHORT = {registry.EXPLICIT: "explicit", registry.SYMBOLIC: "symbolic", registry.EXTERNAL: "external",
          registry.CONSTRAINT_SEARCH: "search", registry.HEURISTIC: "heuristic"}


@dataclass
class Verdict:
    verdict: str
    claim: str | None                       # what was proven, in words ("optimum 18", "unsolvable", ...)
    optimum: int | None
    results: dict[str, Result] = field(default_factory=dict)
    paradigms: dict[str, str] = field(default_factory=dict)     # engine -> paradigm
    provers: dict[str, list[str]] = field(default_factory=dict)  # paradigm -> engines that proved the claim
    problems: list[str] = field(default_factory=list)
    plan_rejected: bool = False

    @property
    def agree(self) -> bool:
        """No proof, bound or plan contradicts another (kept for scripts written against the old verdict)."""
        return self.verdict != DISAGREE

    def to_json(self, loaded: api.Loaded) -> dict[str, Any]:
        engines = {}
        for name, r in self.results.items():
            st = r.stats
            lo, hi = bounds(r)
            engines[name] = {
                "paradigm": self.paradigms.get(name), "status": r.status, "cost": r.cost,
                "optimal": r.optimal, "proved": proven_claim(r)[1], "lower_bound": lo, "upper_bound": hi,
                "proof": r.proof, "time": st.get("time_s"), "expanded": st.get("expanded"),
                "conflicts": st.get("conflicts"), "horizon": st.get("horizon"),
                "solutions": getattr(r, "solutions", None), "verified": st.get("verified"),
                "message": r.message, "steps": len(r.plan) if r.plan is not None else None,
            }
        return {"verdict": self.verdict, "claim": self.claim, "agree": self.agree, "optimum": self.optimum,
                "confirmed_by": self.provers, "engines": engines, "problems": self.problems,
                "model": getattr(loaded.model, "NAME", loaded.task.name), "instance": loaded.instance,
                "options": dict(loaded.options)}


def parse_engines(text: str) -> list[str]:
    names = [e.strip() for e in text.split(",") if e.strip()]
    if not names:
        raise PuzzleError("--engines needs at least one engine name", code=EXIT_BAD_OPTION)
    for n in names:
        api.check_engine(n)
    return list(dict.fromkeys(names))


def _fd_installed(extra: str) -> bool:
    import importlib.util

    return extra != "fd" or importlib.util.find_spec("up_fast_downward") is not None


def default_engines(loaded: api.Loaded, kernel: str = "auto") -> list[str]:
    """Every exact engine that applies to this model (kind, cost kind, declared heuristic): the registry's."""
    task = loaded.task
    kind = api.model_kind(task)
    cost_kind = getattr(task, "cost_kind", None) if kind == registry.TRANSITION else None
    has_h = getattr(task, "heuristic", None) is not None and bool(getattr(task, "heuristic_admissible", 0))
    names = registry.defaults_for_verify(kind, cost_kind, has_h, _fd_installed)
    if kernel == "numpy":   # engines that need a compiled or interpreted kernel are left out, not failed
        names = [n for n in names if getattr(registry.get(n).mode(kind), "kernel", "") != "compiled"]
    return names


def check_applicable(loaded: api.Loaded, engines: list[str], count: int = 1, kernel: str = "auto") -> None:
    """Refuse, before anything runs, an engine that cannot run on this model, kernel, or cannot count."""
    kind = api.model_kind(loaded.task)
    name = getattr(loaded.model, "NAME", "") or ""
    for e in engines:
        if registry.mode_for(e, kind, name).kernel == "compiled" and kernel == "numpy":
            raise PuzzleError(f"engine {e} needs a compiled loop (--kernel numba or interpreted)",
                              code=EXIT_BAD_OPTION)
    if count != 1:
        if kind != registry.CONSTRAINT:
            raise PuzzleError("--count works with constraint models only", code=EXIT_BAD_OPTION)
        for e in engines:
            api.constraint_engine_defaults(e, {}, count=count)


def _options(loaded: api.Loaded, engine: str, count: int) -> dict[str, Any]:
    if api.is_constraint_task(loaded.task):
        return api.constraint_engine_defaults(engine, {}, count=count)
    return {}


def _run_one(loaded: api.Loaded, engine: str, limits: Limits, kernel: str, count: int) -> Result:
    """One engine's result; an engine that refuses this task (Fast Downward's export of a condition
    too large for PDDL, a cost too large for unary SAT) is a row that proved nothing, not the end of
    the whole cross-check.  A model error (exit 32: an action leaving its domain) still ends it."""
    from .encodings.npkernel import DomainError

    try:
        return api.solve(loaded, engine, limits, kernel, **_options(loaded, engine, count))
    except PuzzleError as e:
        if isinstance(e, DomainError):
            raise
        return Result("unknown", engine, stats={"time_s": 0.0, "refused": True},
                      message=f"did not run: {e}")


_FORKED: dict[str, Any] = {}


def _run_forked(engine: str) -> Result:
    a = _FORKED
    return _run_one(a["loaded"], engine, a["limits"], a["kernel"], a["count"])


def stream(loaded: api.Loaded, engines: list[str], limits: Limits, kernel: str = "auto", count: int = 1,
           jobs: int = 1) -> Iterator[tuple[str, Result]]:
    """Each engine's result as soon as it finishes (in finishing order with ``jobs`` > 1).

    Parallel runs fork the process after the task is grounded, so each child inherits the task (and any
    compiled kernel) instead of rebuilding it; a failing engine's error ends the whole run, as in serial.
    """
    if jobs <= 1 or len(engines) <= 1:
        for e in engines:
            yield e, _run_one(loaded, e, limits, kernel, count)
        return
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    _FORKED.update(loaded=loaded, limits=Limits(limits.time_s, limits.max_states, None, limits.max_mb,
                                                limits.max_rss_mb),
                   kernel=kernel, count=count)
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=min(jobs, len(engines)), mp_context=ctx) as pool:
        pending = {pool.submit(_run_forked, e): e for e in engines}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                yield pending.pop(f), f.result()


def run(loaded: api.Loaded, engines: list[str], limits: Limits, kernel: str = "auto", count: int = 1,
        jobs: int = 1, on_result: Callable[[str, Result], None] | None = None) -> Verdict:
    check_applicable(loaded, engines, count, kernel)
    results: dict[str, Result] = {}
    for name, r in stream(loaded, engines, limits, kernel, count, jobs):
        results[name] = r
        if on_result is not None:
            on_result(name, r)
    ordered = {e: results[e] for e in engines}
    return judge(ordered, paradigms_of(loaded, engines))


def paradigms_of(loaded: api.Loaded, engines: list[str]) -> dict[str, str]:
    kind = api.model_kind(loaded.task)
    out = {}
    for e in engines:
        m = registry.get(e).mode(kind)
        out[e] = m.paradigm if m is not None else "?"
    return out


def bounds(r: Result) -> tuple[int | None, int | None]:
    """(lower, upper) bounds on the optimal cost this engine established, proven or not."""
    if _checked(r) and not r.stats.get("verified", False):
        return None, None          # a rejected plan establishes nothing
    if r.status == "optimal" and r.cost is not None:
        return r.cost, r.cost
    upper = r.cost if r.plan is not None and r.stats.get("verified") else None
    lower = r.stats.get("lower_bound")
    return (int(lower) if isinstance(lower, int | float) else None), upper


def proven_claim(r: Result) -> tuple[str | None, str | None]:
    """(kind, value) of what this result proves, or (None, None): an optimum, unsolvability, a count."""
    solutions = getattr(r, "solutions", None)
    if hasattr(r, "assignment"):                       # a constraint model's result
        if r.status == "unsolvable":
            return "count", "none"
        if r.status == "optimal" and r.cost is not None:
            return "optimum", str(r.cost)
        count = r.stats.get("count", 1)
        found = getattr(r, "assignment", None) is not None and r.stats.get("verified")
        if count <= 1:      # not asked to count: what all engines proved alike is that one exists
            return ("count", "some") if found else (None, None)
        if solutions is not None and solutions >= 2:
            return "count", "several"                  # two verified distinct assignments prove it
        if solutions == 1 and r.stats.get("complete"):
            return "count", "unique"
        return None, None
    if r.status == "optimal" and r.cost is not None:
        return "optimum", str(r.cost)
    if r.status == "unsolvable":
        return "optimum", "unsolvable"
    return None, None


def _claim_text(kind: str, value: str) -> str:
    if kind == "optimum":
        return "unsolvable" if value == "unsolvable" else f"optimum {value}"
    return {"none": "no solution", "unique": "unique solution", "several": "several solutions",
            "some": "a solution exists"}.get(value, value)


def judge(results: dict[str, Result], paradigms: dict[str, str] | None = None) -> Verdict:
    """The verdict from the engines' results; ``paradigms`` maps engine -> paradigm (default: each alone)."""
    paradigms = paradigms or {n: n for n in results}
    rejections = [f"{n}: {r.message or 'rejected by the reference checker'}" for n, r in results.items()
                  if _checked(r) and not r.stats.get("verified", False)]
    claims: dict[str, tuple[str, str]] = {}
    for name, r in results.items():
        kind, value = proven_claim(r)
        if _checked(r) and not r.stats.get("verified", False):
            continue   # a rejected plan discredits its engine's claim: reported as a rejection only
        if kind is not None and value is not None:
            claims[name] = (kind, value)
    values = set(claims.values())
    problems: list[str] = []
    if len(values) > 1:
        problems.append("proofs differ: " + ", ".join(f"{n}={_claim_text(*c)}" for n, c in claims.items()))
    opt_values = [int(v) for k, v in values if k == "optimum" and v != "unsolvable"]
    optimum = min(opt_values) if opt_values else None
    none = [n for n, c in claims.items() if c in (("optimum", "unsolvable"), ("count", "none"))]
    found = [n for n, r in results.items() if _checked(r) and r.stats.get("verified")]
    if none and found:
        problems.append(f"{', '.join(none)} proved no solution but {', '.join(found)} found one")
    if optimum is not None:
        for n, r in results.items():
            lo, hi = bounds(r)
            if hi is not None and hi < optimum:
                problems.append(f"{n} found cost {hi}, below the proven optimum {optimum}")
            if lo is not None and lo > optimum:
                problems.append(f"{n} proved a lower bound {lo}, above the proven optimum {optimum}")
    provers: dict[str, list[str]] = {}
    claim = None
    if len(values) == 1:
        claim = _claim_text(*next(iter(values)))
        for n in claims:
            provers.setdefault(paradigms.get(n, n), []).append(n)
    if problems:
        verdict = DISAGREE
    elif claim is None:
        verdict = UNKNOWN
    else:
        verdict = CONFIRMED if len(provers) >= 2 else UNCONFIRMED
    return Verdict(verdict, claim, optimum, dict(results), dict(paradigms), provers, problems + rejections,
                   bool(rejections))


def _checked(r: Result) -> bool:
    return r.plan is not None or getattr(r, "assignment", None) is not None


def exit_code(v: Verdict) -> int:
    if v.plan_rejected:
        return api.EXIT_PLAN_REJECTED
    if v.verdict == DISAGREE:
        return api.EXIT_DISAGREE
    if v.verdict == UNCONFIRMED:
        return EXIT_UNCONFIRMED
    if v.verdict == UNKNOWN:
        return api.EXIT_LIMIT
    if v.claim in ("unsolvable", "no solution"):
        return api.EXIT_UNSOLVABLE
    return api.EXIT_OK


# ----------------------------------------------------------------------------- text output (100 columns)
WIDTH = 100
_HEAD = ("engine", "paradigm", "status", "cost", "bounds", "time s", "work", "plan")


def _work(r: Result) -> str:
    st = r.stats
    for key, unit in (("expanded", ""), ("conflicts", " conf"), ("nodes", " nodes"),
                      ("evaluations", " eval")):
        v = st.get(key)
        if isinstance(v, int) and v:
            return _si(v) + unit
    return ""


def _si(n: int) -> str:
    for div, suffix in ((10**9, "G"), (10**6, "M"), (10**3, "k")):
        if n >= div:
            return f"{n / div:.1f}{suffix}"
    return str(n)


def _bounds_text(r: Result) -> str:
    if _checked(r) and not r.stats.get("verified", False):
        return "none"
    if proven_claim(r)[0] is not None:
        return "proved"
    lo, hi = bounds(r)
    if lo is None and hi is None:
        return "-"
    return f"{'-' if lo is None else lo}..{'-' if hi is None else hi}"


def row(name: str, r: Result, paradigm: str) -> list[str]:
    checked = _checked(r)
    solutions = getattr(r, "solutions", None)
    cost = "" if r.cost is None else str(r.cost)
    if solutions is not None and hasattr(r, "assignment"):
        cost = f"{solutions} sol"
    return [name, _SHORT.get(paradigm, paradigm), r.status, cost, _bounds_text(r),
            f"{r.stats.get('time_s', 0):.2f}", _work(r),
            "ok" if checked and r.stats.get("verified") else ("NO" if checked else "-")]


_WIDTHS = (10, 9, 9, 7, 9, 7, 11, 5)


def format_row(cells: list[str]) -> str:
    """One fixed-width row; the proof text (last) fills what is left of 100 columns."""
    head = "".join(c[:w - 1].ljust(w) if i < len(cells) - 1 else c[:w] for i, (c, w) in
                   enumerate(zip(cells, _WIDTHS)))
    return head.rstrip()


def header() -> str:
    return format_row(list(_HEAD)) + "  proof / note\n" + "-" * WIDTH


def line_for(name: str, r: Result, paradigm: str) -> str:
    left = format_row(row(name, r, paradigm)).ljust(sum(_WIDTHS))
    note = r.proof or r.message or ""
    room = WIDTH - len(left) - 2
    if len(note) > room:
        note = note[: max(room - 3, 0)] + "..."
    return (left + "  " + note).rstrip()


def verdict_line(v: Verdict) -> str:
    if v.verdict == CONFIRMED:
        by = "; ".join(f"{_SHORT.get(p, p)}: {', '.join(ns)}" for p, ns in v.provers.items())
        text = f"confirmed: {v.claim} (proved by {len(v.provers)} paradigms -- {by})"
    elif v.verdict == UNCONFIRMED:
        (p, ns), = v.provers.items()
        open_ = [n for n in v.results if n not in ns]
        text = (f"unconfirmed: {v.claim}, proved by one paradigm only ({_SHORT.get(p, p)}: {', '.join(ns)})"
                + (f"; no verdict from {', '.join(open_)}" if open_ else ""))
    elif v.verdict == DISAGREE:
        text = "DISAGREE: " + "; ".join(p for p in v.problems if p.split(":", 1)[0] not in v.results)
    else:
        text = "unknown: no engine proved an answer"
    if v.plan_rejected:
        text += "; REJECTED: " + "; ".join(p for p in v.problems if p.split(":", 1)[0] in v.results)
    return text


def table(v: Verdict) -> str:
    lines = [header()]
    lines += [line_for(n, r, v.paradigms.get(n, "?")) for n, r in v.results.items()]
    return "\n".join(lines + [_wrap(verdict_line(v))])


def print_stream(loaded: api.Loaded, engines: list[str], limits: Limits, kernel: str, count: int, jobs: int,
                 as_json: bool, default_limit: bool, out: Any = None, certificate_dir: str | None = None,
                 model: str | None = None, certificate_bound: str = "g") -> Verdict:
    """``verify``'s text mode: a header, each engine's row as it finishes, then the verdict line."""
    out = out or sys.stdout
    paradigms = paradigms_of(loaded, engines)
    if not as_json:
        lim = f"{limits.time_s:g} s per engine" + (" (default; --time-limit to change)" if default_limit
                                                     else "") if limits.time_s else "no time limit"
        print(_wrap(f"{loaded.instance}: {len(engines)} engines, {lim}"), file=out)
        print(header(), file=out, flush=True)

    def emit(name: str, r: Result) -> None:
        if not as_json:
            print(line_for(name, r, paradigms[name]), file=out, flush=True)

    v = run(loaded, engines, limits, kernel, count, jobs, on_result=emit)
    cert = None
    if certificate_dir is not None:
        cert = certify(loaded, v, certificate_dir, kernel, model, limits, jobs, certificate_bound)
    if as_json:
        doc = v.to_json(loaded)
        if certificate_dir is not None:
            doc["certificate"] = cert
        print(json.dumps(doc, ensure_ascii=False), file=out)
    else:
        print(_wrap(verdict_line(v)), file=out)
        if cert is not None:
            print(certificate_line(cert), file=out)
        elif certificate_dir is not None:
            print("certificate: none written (nothing was proven)", file=out)
    return v


def _wrap(text: str) -> str:
    """Long instance paths and verdicts fold at 100 columns, continuation lines indented."""
    import textwrap

    return textwrap.fill(text, WIDTH, subsequent_indent="    ", break_long_words=True,
                         break_on_hyphens=False)


def certify(loaded: api.Loaded, v: Verdict, directory: str, kernel: str = "numpy",
            model: str | None = None, limits: Limits | None = None, jobs: int = 1,
            by: str = "g") -> dict[str, Any] | None:
    """``verify --certificate DIR``: write the certificate of the proven answer and check it at once.

    The certificate comes from the first engine whose proof the verdict counts (its verified plan and
    the states below the optimum, collected anew); the check is ``verify/certificate.py``'s plain-Python
    one (no kernels, no solvers), so a valid one stands on its own, whatever the engines share.
    ``limits``: one engine's, kept by the pass that collects the states.  ``jobs``: the check's
    processes (``verify --jobs``, as many as the engines had).  ``by``: the certificate's bound,
    "g" or "f" (``write_certificate``).  Returns what was written
    and checked; with ``"not_written"`` (the reason) when that pass reached a limit; None when
    nothing was proven.
    """
    import re
    from pathlib import Path

    from .certificate import NoCertificate, write_certificate
    from .verify import certificate as cert

    if api.is_constraint_task(loaded.task):
        raise PuzzleError("--certificate works with transition models only", code=EXIT_BAD_OPTION)
    if not directory.strip():
        raise PuzzleError("--certificate needs a directory name", code=EXIT_BAD_OPTION)
    provers = [n for names in v.provers.values() for n in names]
    if v.verdict == DISAGREE or not provers:
        return None
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", loaded.instance.replace("#", "-")).strip("._") or "instance"
    opts = "".join(f"-{k}={val}" for k, val in sorted(loaded.options.items()))
    path = Path(directory) / (name + re.sub(r"[^A-Za-z0-9._=-]+", "_", opts) + (".f" if by == "f" else "")
                              + ".cert")
    try:
        Path(directory).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise PuzzleError(f"cannot create the certificate directory: {e.strerror}", directory,
                          code=35) from None
    try:
        written = write_certificate(loaded, v.results[provers[0]], str(path),
                                    api.concrete_kernel(loaded, provers[0], kernel), model=model,
                                    limits=limits, by=by)
    except NoCertificate as e:
        return {"path": None, "from": provers[0], "written": None, "check": None, "not_written": str(e)}
    bounds = None
    if limits is not None and (limits.time_s is not None or limits.max_rss_mb is not None):
        bounds = cert.CheckLimits(limits.time_s, limits.max_rss_mb)   # the engine's, afresh for the check
    try:
        report = cert.check_file(loaded.task, str(path), limits=bounds, jobs=jobs)
        checked: dict[str, Any] = report.to_json()
    except cert.CheckUndecided as e:
        checked = {"valid": None, "undecided": e.message}
    except cert.CertificateRejected as e:
        checked = {"valid": False, "reason": e.message}
    return {"path": str(path), "from": provers[0], "written": written, "check": checked}


def certificate_line(c: dict[str, Any]) -> str:
    if c.get("not_written"):
        return _wrap(f"certificate: none written (from {c['from']}): {c['not_written']}")
    chk = c["check"]
    w = c["written"]
    size = f"{w.get('states', 0):,} states, {w.get('bytes', 0):,} bytes"
    if chk.get("valid"):
        trust = (", trusting the model's admissible heuristic (bounded by g + h)"
                 if chk.get("bound") == "f" else "")
        return _wrap(f"certificate: {c['path']} (from {c['from']}; {size}) checked in plain Python, "
                     f"no kernels or solvers, in {chk['check_s']:.1f} s: valid{trust}")
    if chk.get("undecided"):
        return _wrap(f"certificate: {c['path']} (from {c['from']}; {size}) not confirmed: {chk['undecided']}")
    return _wrap(f"certificate: {c['path']} (from {c['from']}; {size}) REJECTED: {chk.get('reason')}")

