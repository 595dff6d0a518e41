"""PDDL export: the written domain has the task's semantics, state by state.

Differential, without any planner: a small reader for the exporter's own output
(ground actions, atoms, membership and derived propositions) applies the PDDL
actions to the fact set of a state and decodes the successors; they must be the
reference checker's successors (same ground action, same state), on states of
random walks, for every bundled transition model.  The goal is checked the same
way.  Fast Downward's side (it parses and solves the files) is tests/test_fd.py.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from helpers import run_cli

from puzzleplan import api
from puzzleplan.encodings.pddl import PddlError, export, read_plan
from puzzleplan.verify import reference as ref

ROOT = Path(__file__).resolve().parent.parent
MICROBAN = str(ROOT / "instances/sokoban/microban.xsb")

TASKS = {
    "sliding-8": ("sliding", "instances/sliding/eight-depths.txt", []),
    "klotski-moves": ("klotski", "instances/klotski/fayaa.txt#fayaa-058", []),
    "klotski-steps": ("klotski", "instances/klotski/fayaa.txt#fayaa-058", ["metric=steps"]),
    "sokoban-pushes": ("sokoban", MICROBAN, ["level=3"]),
    "sokoban-moves": ("sokoban", MICROBAN, ["level=4", "metric=moves"]),
    "zpg-3x3": ("zpg", "instances/zpg/waikato-3x3-a.txt", []),
}

_ATOM = re.compile(r"\((not )?\(([^()]+)\)\)|\(([^()]+)\)")


def _atoms(text: str) -> list[tuple[bool, str]]:
    """(positive?, atom) for every literal in a flat ``(and ...)`` body."""
    text = re.sub(r"\((increase|=) \(total-cost\) \d+\)", "", text)
    out = []
    for m in _ATOM.finditer(text):
        if m.group(2) is not None:
            out.append((False, m.group(2).strip()))
        elif not m.group(3).startswith(("and", "increase", "or")):
            out.append((True, m.group(3).strip()))
    return out


class Strips:
    """The exporter's output read back: enough PDDL for what it writes, nothing more."""

    def __init__(self, domain: str, problem: str):
        self.actions = []
        for block in domain.split("(:action ")[1:]:
            name = block.split()[0]
            pre = block.split(":precondition", 1)[1].split(":effect", 1)[0]
            eff = block.split(":effect", 1)[1]
            cost = int(re.search(r"\(increase \(total-cost\) (\d+)\)", eff).group(1))
            self.actions.append((name, [a for pos, a in _atoms(pre) if pos], _atoms(eff), cost))
        self.derived = {}
        for m in re.finditer(r"\(:derived \((ok\d+)\) (.*)\)\n", domain):
            body = m.group(2)
            terms = re.findall(r"\(and ((?:\([^()]+\) ?)+)\)", body) or [body]
            self.derived[m.group(1)] = [[a for _, a in _atoms(t)] for t in terms]
        init = problem.split("(:init", 1)[1].split("(:goal", 1)[0]
        self.init = {a for pos, a in _atoms(init) if pos}
        goal = problem.split("(:goal", 1)[1].split("(:metric", 1)[0]
        self.goal = [a for _, a in _atoms(goal)]
        self.preds = re.findall(r"\((v\d+-[a-z0-9_]+) \?x\)", domain)

    def closure(self, facts: set[str]) -> set[str]:
        out = set(facts)
        for name, terms in self.derived.items():
            if any(all(a in facts for a in t) for t in terms):
                out.add(name)
        return out

    def successors(self, facts: set[str]) -> list[tuple[str, set[str], int]]:
        full = self.closure(facts)
        out = []
        for name, pre, eff, cost in self.actions:
            if all(a in full for a in pre):
                new = set(facts) - {a for pos, a in eff if not pos}
                new |= {a for pos, a in eff if pos}
                out.append((name, new, cost))
        return out

    def goal_reachable(self, facts: set[str]) -> bool:
        """The goal, through the finish/achiever phase where the export has one."""
        facts = self.closure(facts)
        if all(a in facts for a in self.goal):
            return True
        if "pp-play" not in facts:
            return False
        facts = (facts - {"pp-play"}) | {"pp-done"}
        changed = True
        while changed:  # achievers only add goal propositions: apply them to a fixpoint
            changed = False
            for name, pre, eff, _ in self.actions:
                if name.startswith("pp-goal") and all(a in facts for a in pre):
                    add = {a for pos, a in eff if pos} - facts
                    if add:
                        facts |= add
                        changed = True
        return all(a in facts for a in self.goal)


def _num(k: int) -> str:
    return f"n{k}" if k >= 0 else f"m{-k}"


def _decode(sx: Strips, facts: set[str], n_vars: int) -> list[int]:
    state = [None] * n_vars
    for a in facts:
        parts = a.split()
        if len(parts) == 2 and parts[0].startswith("v") and parts[0] in sx.preds:
            v = int(parts[0].split("-")[0][1:])
            assert state[v] is None, f"two values for variable {v}: {a}"
            state[v] = int(parts[1][1:]) * (1 if parts[1][0] == "n" else -1)
    assert None not in state, "a variable lost its value"
    return state


def _load(key: str, **kw):
    model, inst, opts = TASKS[key]
    loaded = api.load_task(model, str(ROOT / inst) if not inst.startswith("/") else inst, opts)
    return loaded, export(loaded.task, name=loaded.task.name, **kw)


def _walk_states(task, steps: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    state = list(task.init)
    seen = [state]
    for _ in range(steps):
        succ = ref.successors(task, state)
        if not succ:
            break
        state = rng.choice(succ)[1]
        seen.append(state)
    return seen


def _facts_of(p, sx: Strips, state: list[int]) -> set[str]:
    """The fact set of ``state``: value atoms plus the membership propositions that hold in it."""
    facts = {f"{sx.preds[v]} {_num(k)}" for v, k in enumerate(state)}
    facts |= {name for name, (v, allowed) in p.membership.items() if state[v] in allowed}
    if "pp-play" in sx.init:
        facts.add("pp-play")
    return facts


@pytest.mark.parametrize("key", sorted(TASKS))
def test_pddl_successors_equal_the_reference(key: str):
    loaded, p = _load(key)
    task = loaded.task
    sx = Strips(p.domain, p.problem)
    assert p.strips and not sx.derived
    # the initial fact set is the initial state's
    assert sx.init == _facts_of(p, sx, task.init)
    checked = 0
    for seed in range(6):
        for state in _walk_states(task, 12, seed):
            facts = _facts_of(p, sx, state)
            got = []
            for name, new, cost in sx.successors(facts):
                if name.startswith("pp-"):
                    continue
                s2 = _decode(sx, new, task.n_vars)
                assert new == _facts_of(p, sx, s2), f"{name}: membership propositions out of date"
                k = p.actions[name]
                assert cost == task.actions[k].cost
                got.append((k, tuple(s2)))
            want = sorted((k, tuple(s)) for k, s, _ in ref.successors(task, state))
            assert sorted(set(got)) == sorted(set(want)), f"state {state}"
            assert sx.goal_reachable(facts) == ref.is_goal(task, state)
            checked += 1
    assert checked >= 30


def test_goal_states_are_recognised():
    """Sokoban's goal (every goal square holds some box) is a conjunct over several variables:
    the finish/achiever phase must accept exactly the goal states."""
    loaded, p = _load("sokoban-pushes")
    sx = Strips(p.domain, p.problem)
    assert any(n.startswith("pp-goal") for n in p.actions)
    r = api.solve(loaded, "bfs")
    state = list(loaded.task.init)
    for k in r.plan:
        state = ref.apply(loaded.task, loaded.task.actions[k], state)
    facts = {f"{sx.preds[v]} {_num(x)}" for v, x in enumerate(state)} | {"pp-play"}
    assert sx.goal_reachable(facts)
    facts0 = {f"{sx.preds[v]} {_num(x)}" for v, x in enumerate(loaded.task.init)} | {"pp-play"}
    assert not sx.goal_reachable(facts0)


def test_derived_predicates_when_the_split_budget_is_small():
    """With max_split=4 the Zen garden's dead-end test cannot be split: derived predicates, not STRIPS."""
    loaded, p = _load("zpg-3x3", max_split=4)
    assert not p.strips and p.stats["derived_predicates"] > 0
    assert ":derived-predicates" in p.domain
    sx = Strips(p.domain, p.problem)
    task = loaded.task
    big = export(task, name=task.name)
    assert big.strips
    # same successors as the reference on a walk (the derived propositions evaluated by closure)
    for state in _walk_states(task, 12, 1):
        facts = _facts_of(p, sx, state)
        got = {(p.actions[n], tuple(_decode(sx, new, task.n_vars))) for n, new, _ in sx.successors(facts)}
        want = {(k, tuple(s)) for k, s, _ in ref.successors(task, state)}
        assert got == want, f"state {state}"
        assert sx.goal_reachable(facts) == ref.is_goal(task, state)


def test_plan_names_map_back():
    loaded, p = _load("sliding-8")
    r = api.solve(loaded, "bfs")
    # a plan written by a planner: our names, any case, IPC format with a cost comment
    names = []
    for k in r.plan:
        cands = [n for n, kk in p.actions.items() if kk == k]
        names.append(f"({cands[0].upper()} )")
    text = "\n".join(names) + "\n; cost = 8 (unit cost)\n"
    plan = p.plan_from_names(read_plan(text))
    # each PDDL copy maps to its ground action; the plan replays to the goal
    assert plan == r.plan and ref.check_plan(loaded.task, plan).ok
    with pytest.raises(PddlError, match="does not have"):
        p.plan_from_names(["(no-such-action)"])


def test_split_limit_is_a_one_line_error():
    loaded = api.load_task("sliding", str(ROOT / "instances/sliding/eight-depths.txt"))
    with pytest.raises(PddlError, match="max_split=2"):
        export(loaded.task, max_split=2)


def test_compile_to_pddl_cli(tmp_path: Path, capsys):
    out = tmp_path / "soko"
    argv = ["compile", "sokoban", MICROBAN, "-O", "level=1", "--to", "pddl", "-o", out]
    code, _, err = run_cli(argv, capsys)
    assert code == 0, err
    assert {p.name for p in out.iterdir()} == {"domain.pddl", "problem.pddl", "actions.tsv"}
    dom = (out / "domain.pddl").read_text()
    assert "(:requirements :strips :action-costs)" in dom and "model sokoban" in dom
    rows = (out / "actions.tsv").read_text().splitlines()
    assert rows[0].split("\t") == ["pddl_action", "ground_action", "label"] and len(rows) > 10
    # malformed requests: one line, exit 3x
    bad = [
        (["compile", "sudoku", str(ROOT / "instances/sudoku/puzzles.txt"), "--to", "pddl", "-o",
          str(tmp_path / "s")], 31, "constraint model"),
        (["compile", "sliding", str(ROOT / "instances/sliding/eight.txt"), "--to", "pddl", "-T", "3", "-o",
          str(tmp_path / "t")], 31, "--horizon"),
        (["compile", "sliding", str(ROOT / "instances/sliding/eight.txt"), "--to", "pddl", "-o",
          str(tmp_path / "no" / "dir")], 35, "no such directory"),
        (["compile", "sliding", str(ROOT / "instances/sliding/eight.txt"), "--to", "pddl", "-o",
          str(out / "domain.pddl")], 35, "not a directory"),
        (["compile", "sliding", str(ROOT / "instances/sliding/eight.txt"), "--to", "cnf", "-o",
          str(tmp_path / "x.cnf")], 31, "needs --horizon"),
    ]
    for args, want, text in bad:
        code, _, err = run_cli(args, capsys)
        assert code == want, (args, code, err)
        assert text in err and len(err.strip().splitlines()) == 1, err
