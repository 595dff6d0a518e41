"""``puzzleplan compile``: the bounded-horizon encodings written to files for external solvers.

Users who study solvers want to run their own SAT solver or CP-SAT build on
exactly the formula our engines solve.  The exported formula says "a plan of
at most ``T`` steps reaches the goal" (noops only at the end), optionally with
"and costs at most ``C``"; it is satisfiable exactly when such a plan exists.

* CNF: DIMACS, with a comment header naming the model, instance, options and
  horizon, and one ``c var N key`` line per variable giving its meaning
  (the structured keys of :class:`puzzleplan.encodings.sat.CnfPlan`, with
  variable and action names spelled out), so a model found by any solver can
  be decoded by hand or by a script.
* CP-SAT: the ``CpModelProto`` of :class:`puzzleplan.encodings.cpsat.CpPlan`
  with the total cost as objective -- text format, or binary when the file
  name ends in ``.pb``.
* PDDL: not a bounded formula but the whole task for classical planners
  (:mod:`puzzleplan.encodings.pddl`): ``domain.pddl``, ``problem.pddl`` and
  ``actions.tsv`` (PDDL action name -> ground action index and label) in a
  directory, so a plan from any planner maps back to our actions.

Lives in the top layer (beside ``api``): it writes files and knows the CLI's
error conventions; the encoders stay pure.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from .api import Loaded
from .lang.errors import EXIT_BAD_OPTION, EXIT_OUTPUT, PuzzleError

FORMATS = ("cnf", "cpsat", "pddl")
# The longest horizon written.  The formula grows linearly in it (the 8-puzzle: 60,000 variables and
# 13 s at 1,000 steps), so a typo such as 10**20 would run until memory ran out; no SAT or CP-SAT
# run proves anything at 10,000 steps.
MAX_HORIZON = 10_000


@contextmanager
def _open_for_writing(path: str) -> Iterator[TextIO]:
    """The file to write, where a failure to open, write or close it (a full disk, ``/proc/version``
    refusing data only at close) is one line and exit 35, not a traceback."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            yield f
    except OSError as e:
        raise PuzzleError(f"cannot write {path}: {e.strerror or e}", code=EXIT_OUTPUT) from None


def _describe(loaded: Loaded) -> list[str]:
    """Header lines for comments (CNF ``c``, PDDL ``;``): a newline or other control character in
    the instance path or an option would end the comment and corrupt the file, so they are escaped."""
    from .encodings.pddl import comment_text

    opts = ",".join(f"{k}={v}" for k, v in loaded.options.items()) or "defaults"
    return [comment_text(line) for line in (f"model {getattr(loaded.model, 'NAME', loaded.task.name)}",
                                            f"instance {loaded.instance}", f"options {opts}")]


def _key_text(key: tuple, names: list[str], labels: list[str]) -> str:
    """A pool key with variable and action indices replaced by their names."""
    kind = key[0]
    if kind in ("x", "y") and len(key) == 4:
        return f"{kind} {names[key[1]]} = {key[2]} at step {key[3]}"
    if kind == "a":
        return f"action {key[1]} ({labels[key[1]]}) at step {key[2]}"
    if kind == "noop":
        return f"noop at step {key[1]}"
    if kind == "g" and len(key) == 2:
        return f"goal holds at step {key[1]}"
    if kind == "cost" and len(key) == 3:
        return f"step {key[1]} costs at least {key[2]}"
    if kind == "f":
        return f"effect {key[2]} of action {labels[key[1]]} fires at step {key[3]}"
    return " ".join(str(k) for k in key)[:120]


def export_cnf(loaded: Loaded, horizon: int, out: str, max_cost: int | None = None,
               invariants: bool = True) -> dict[str, int]:
    """Write the DIMACS CNF; returns its size."""
    from pysat.card import CardEnc, EncType

    from .encodings.invariants import mutex_invariants
    from .encodings.sat import TOP, CnfPlan

    task = loaded.task
    enc = CnfPlan(task, invariants=mutex_invariants(task) if invariants else None)
    for _ in range(horizon):
        enc.extend()
    enc.add([enc.goal(horizon)])
    if max_cost is not None:
        lits = [q for t in range(horizon) for q in enc.cost_inputs(t)]
        if lits:
            card = CardEnc.atmost(lits, max_cost, vpool=enc.pool, encoding=EncType.seqcounter)
            for c in card.clauses:
                enc.add(list(c))
    clauses = enc.drain()
    names = task.names
    labels = [a.label or a.name for a in task.actions]
    n_vars = enc.pool.top
    with _open_for_writing(out) as f:
        f.write("c puzzleplan compile --to cnf\n")
        for line in _describe(loaded):
            f.write(f"c {line}\n")
        f.write(f"c horizon {horizon}: satisfiable iff a plan of at most {horizon} steps reaches the goal"
                + (f" with cost <= {max_cost}" if max_cost is not None else "") + "\n")
        f.write(f"c variable {TOP} is the constant true; 'action K (LABEL)' is ground action K of "
                "`puzzleplan dump`\n")
        if enc.groups:
            f.write("c interchangeable objects are kept sorted in every state (canonical states): a plan "
                    "read off a model moves the canonical objects\n")
        for key, vid in sorted(enc.pool.obj2id.items(), key=lambda kv: kv[1]):
            if isinstance(key, tuple) and not (len(key) > 1 and key[-1] == "done"):
                f.write(f"c var {vid} {_key_text(key, names, labels)}\n")
        f.write(f"p cnf {n_vars} {len(clauses)}\n")
        for c in clauses:
            f.write(" ".join(map(str, c)) + " 0\n")
    return {"variables": n_vars, "clauses": len(clauses)}


def export_cpsat(loaded: Loaded, horizon: int, out: str, max_cost: int | None = None,
                 invariants: bool = True) -> dict[str, int]:
    """Write the CP-SAT model proto (text, or binary for ``*.pb``); returns its size."""
    from .encodings.cpsat import CpPlan
    from .encodings.invariants import mutex_invariants

    task = loaded.task
    plan = CpPlan(task, horizon, invariants=mutex_invariants(task) if invariants else None, max_cost=max_cost)
    with _open_for_writing(out):  # reports an unwritable path as a one-line error first
        pass
    if not plan.m.export_to_file(out):
        raise PuzzleError(f"cannot write {out}: CP-SAT export failed", code=EXIT_OUTPUT)
    return plan.size()


def export_pddl(loaded: Loaded, out: str, max_split: int | None = None,
                symmetric: bool = True) -> dict[str, int]:
    """Write ``domain.pddl``, ``problem.pddl`` and ``actions.tsv`` into directory ``out``; returns sizes.

    ``actions.tsv`` names, per PDDL action, one ground action and (``stands_for``) every ground action
    it was written for: an action on anonymous interchangeable objects moves *some* object, and which
    labelled one depends on the state, so a plan maps back by replay (``PddlTask.plan_from_names``).
    """
    from .encodings.pddl import DEFAULT_MAX_SPLIT, export

    d = Path(out)
    if d.exists() and not d.is_dir():
        raise PuzzleError(f"cannot write {out}: not a directory (--to pddl writes a directory)",
                          code=EXIT_OUTPUT)
    try:
        d.mkdir(parents=False, exist_ok=True)
    except OSError as e:
        raise PuzzleError(f"cannot write {out}: {e.strerror or e}", code=EXIT_OUTPUT) from None
    task = loaded.task
    p = export(task, name=task.name, max_split=max_split or DEFAULT_MAX_SPLIT, comment=_describe(loaded),
               symmetric=symmetric)
    for name, text in (("domain.pddl", p.domain), ("problem.pddl", p.problem)):
        with _open_for_writing(str(d / name)) as f:
            f.write(text)
    with _open_for_writing(str(d / "actions.tsv")) as f:
        f.write("pddl_action\tground_action\tlabel\tstands_for\n")
        for name, k in p.actions.items():
            every = p.steps[name].actions if name in p.steps else [k] if k >= 0 else []
            f.write(f"{name}\t{k}\t{task.actions[k].label if k >= 0 else '(bookkeeping)'}\t"
                    f"{','.join(map(str, every))}\n")
    return {"PDDL actions": p.stats["pddl_actions"], "ground actions": p.stats["ground_actions"],
            "derived predicates": p.stats["derived_predicates"],
            "anonymous groups": p.stats["anonymous_groups"]}


def compile_task(loaded: Loaded, to: str, horizon: int | None, out: str, max_cost: int | None = None,
                 invariants: bool = True) -> dict[str, int]:
    from .api import is_constraint_task

    if to not in FORMATS:
        raise PuzzleError(f"--to {to}: unknown format (known: {', '.join(FORMATS)})", code=EXIT_BAD_OPTION)
    if not out.strip():   # "" would be the current directory for pddl: files written where nobody asked
        raise PuzzleError("-o needs a file name (a directory for --to pddl)", code=EXIT_BAD_OPTION)
    if is_constraint_task(loaded.task):
        raise PuzzleError("compile exports transition models; this is a constraint model",
                          code=EXIT_BAD_OPTION)
    if to == "pddl":
        if horizon is not None or max_cost is not None:
            raise PuzzleError("--to pddl exports the whole task: --horizon and --max-cost do not apply",
                              code=EXIT_BAD_OPTION)
        if not Path(out).resolve().parent.exists():
            raise PuzzleError(f"cannot write {out}: no such directory {Path(out).parent}", code=EXIT_OUTPUT)
        return export_pddl(loaded, out)
    if horizon is None:
        raise PuzzleError(f"--to {to} needs --horizon T", code=EXIT_BAD_OPTION)
    if not 1 <= horizon <= MAX_HORIZON:
        raise PuzzleError(f"--horizon must be between 1 and {MAX_HORIZON:,}, got {str(horizon)[:30]}",
                          code=EXIT_BAD_OPTION)
    if max_cost is not None and max_cost < 0:
        raise PuzzleError(f"--max-cost must be >= 0, got {max_cost}", code=EXIT_BAD_OPTION)
    if max_cost is not None:   # a bound no plan of `horizon` steps can exceed is no bound: clamp it
        # there, where the solvers' integer types hold it (10**20 overflowed pysat and CP-SAT)
        max_cost = min(max_cost, horizon * max((a.cost for a in loaded.task.actions), default=0))
    if not Path(out).parent.exists():
        raise PuzzleError(f"cannot write {out}: no such directory {Path(out).parent}", code=EXIT_OUTPUT)
    if to == "cnf":
        return export_cnf(loaded, horizon, out, max_cost, invariants)
    return export_cpsat(loaded, horizon, out, max_cost, invariants)


__all__ = ["FORMATS", "MAX_HORIZON", "compile_task", "export_cnf", "export_cpsat", "export_pddl"]
