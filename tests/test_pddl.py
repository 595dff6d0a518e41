"""PDDL export: the written domain has the task's semantics, state by state.

Differential, without any planner: a small reader for the exporter's own output
(ground actions, atoms, membership and derived propositions) applies the PDDL
actions to the fact set of a state and decodes the successors; they must be the
reference checker's successors (same ground action, same state), on states of
random walks, for every bundled transition model.  The goal is checked the same
way.  With interchangeable objects written anonymously the decoded state is the
labelled values plus each group's value set, and the successors must be the
reference successors read the same way.  Fast Downward's side (it parses and
solves the files) is tests/test_fd.py.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import helpers
import pytest
from helpers import run_cli, write_klotski

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
        # variable index -> its value predicate (anonymous objects have none)
        self.preds = {int(m.group(2)): m.group(1)
                      for m in re.finditer(r"\((v(\d+)-[a-z0-9_]+) \?x\)", domain)}

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


def _val(text: str) -> int:
    return int(text[1:]) * (1 if text[0] == "n" else -1)


def _decode(sx: Strips, facts: set[str], n_vars: int, p=None) -> list[int] | tuple:
    """The labelled state of a fact set; with anonymous groups (``p``) the pair (labelled values with
    the groups' variables as None, each group's value set), checked against its free atoms."""
    state = [None] * n_vars
    by_name = {name: v for v, name in sx.preds.items()}
    for a in facts:
        parts = a.split()
        if len(parts) == 2 and parts[0] in by_name:
            v = by_name[parts[0]]
            assert state[v] is None, f"two values for variable {v}: {a}"
            state[v] = _val(parts[1])
    if p is None or not p.groups:
        assert None not in state, "a variable lost its value"
        return state
    held = []
    for prefix, objs in p.groups.values():
        at = {_val(a.split()[1]) for a in facts if a.split()[0] == f"{prefix}-at"}
        free = {_val(a.split()[1]) for a in facts if a.split()[0] == f"{prefix}-free"}
        assert len(at) == len(objs), f"group {prefix} holds {sorted(at)}, {len(objs)} objects"
        assert not at & free and len(at | free) == len(range(*_bounds(p, objs[0])))
        held.append(frozenset(at))
    grouped = {v for _, objs in p.groups.values() for v in objs}
    assert all(x is not None for v, x in enumerate(state) if v not in grouped), "a variable lost its value"
    return tuple(state), tuple(held)


def _bounds(p, v: int) -> tuple[int, int]:
    info = p.task.variables[v]
    return info.lo, info.hi + 1


def _anonymous(p, state) -> tuple:
    """``state`` as the symmetric export sees it (labelled values, each group's value set)."""
    grouped = {v for _, objs in p.groups.values() for v in objs}
    return (tuple(None if v in grouped else x for v, x in enumerate(state)),
            tuple(frozenset(state[v] for v in objs) for _, objs in p.groups.values()))


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
    """The fact set of ``state``: value atoms plus the membership propositions that hold in it (and,
    for anonymous groups, which values some object holds and which none does)."""
    facts = {f"{sx.preds[v]} {_num(k)}" for v, k in enumerate(state) if v in sx.preds}
    facts |= {name for name, (v, allowed) in p.membership.items() if state[v] in allowed}
    for prefix, objs in p.groups.values():
        held = {state[v] for v in objs}
        facts |= {f"{prefix}-{'at' if k in held else 'free'} {_num(k)}" for k in range(*_bounds(p, objs[0]))}
    if "pp-play" in sx.init:
        facts.add("pp-play")
    return facts


def _relabel(p, anon: tuple) -> list[int]:
    """Some labelled state with the anonymous state ``anon`` (the groups' values in sorted order)."""
    state = list(anon[0])
    for (_, objs), held in zip(p.groups.values(), anon[1]):
        for v, x in zip(objs, sorted(held)):
            state[v] = x
    return state


SYMMETRIC = [(key, sym) for key in sorted(TASKS) for sym in (False, True)
             if not sym or TASKS[key][0] in ("klotski", "sokoban")]


@pytest.mark.parametrize("key,symmetric", SYMMETRIC)
def test_pddl_successors_equal_the_reference(key: str, symmetric: bool):
    """Labelled: the same ground actions and states.  Anonymous: the same successor states read
    anonymously, at the same costs, from every labelling of the state."""
    loaded, p = _load(key, symmetric=symmetric)
    task = loaded.task
    sx = Strips(p.domain, p.problem)
    assert p.strips and not sx.derived
    assert bool(p.groups) == symmetric
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
                k = p.actions[name]
                if symmetric:
                    anon = _decode(sx, new, task.n_vars, p)
                    assert new == _facts_of(p, sx, _relabel(p, anon)), f"{name}: propositions out of date"
                    got.append((anon, cost))
                    continue
                s2 = _decode(sx, new, task.n_vars)
                assert new == _facts_of(p, sx, s2), f"{name}: membership propositions out of date"
                assert cost == task.actions[k].cost
                got.append((k, tuple(s2)))
            if symmetric:
                want = {(_anonymous(p, s), c) for _, s, c in ref.successors(task, state)}
                assert set(got) == want, f"state {state}"
            else:
                want = sorted((k, tuple(s)) for k, s, _ in ref.successors(task, state))
                assert sorted(set(got)) == sorted(set(want)), f"state {state}"
            assert sx.goal_reachable(facts) == ref.is_goal(task, state)
            checked += 1
    assert checked >= 30


def test_goal_states_are_recognised():
    """Sokoban's goal (every goal square holds some box) is a conjunct over several variables:
    the finish/achiever phase must accept exactly the goal states."""
    loaded, p = _load("sokoban-pushes", symmetric=False)
    sx = Strips(p.domain, p.problem)
    assert any(n.startswith("pp-goal") for n in p.actions)
    r = api.solve(loaded, "bfs", kernel="numpy")
    state = list(loaded.task.init)
    for k in r.plan:
        state = ref.apply(loaded.task, loaded.task.actions[k], state)
    facts = {f"{sx.preds[v]} {_num(x)}" for v, x in enumerate(state)} | {"pp-play"}
    assert sx.goal_reachable(facts)
    facts0 = {f"{sx.preds[v]} {_num(x)}" for v, x in enumerate(loaded.task.init)} | {"pp-play"}
    assert not sx.goal_reachable(facts0)
    # anonymous boxes: "some box on goal square g" is one atom each, no achiever phase
    _, q = _load("sokoban-pushes")
    assert q.groups and not any(n.startswith("pp-") for n in q.actions)
    sq = Strips(q.domain, q.problem)
    assert sq.goal_reachable(_facts_of(q, sq, state))
    assert not sq.goal_reachable(_facts_of(q, sq, loaded.task.init))


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
    assert rows[0].split("\t") == ["pddl_action", "ground_action", "label", "stands_for"] and len(rows) > 10
    # the two boxes are anonymous: a push is written once and stands for pushing either box
    assert "are anonymous" in dom and any(len(r.split("\t")[3].split(",")) == 2 for r in rows[1:])
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


# ---------------------------------------------------------------------------------------------------
# interchangeable objects written anonymously

def _reachable(sx: Strips) -> int:
    """How many fact sets the exported task reaches: the state space a blind planner searches."""
    start = frozenset(sx.init)
    seen = {start}
    todo = [start]
    while todo:
        facts = todo.pop()
        for name, new, _ in sx.successors(set(facts)):
            nf = frozenset(new)
            if not name.startswith("pp-") and nf not in seen:
                seen.add(nf)
                todo.append(nf)
    return len(seen)


def _dijkstra(sx: Strips) -> tuple[int | None, list[str], int]:
    """(optimal cost, a plan as PDDL action names, fact sets settled) of the exported task, searched
    by the reader above: a planner that shares nothing with our engines but these files."""
    import heapq

    start = frozenset(sx.init)
    best = {start: 0}
    parent: dict[frozenset, tuple[frozenset, str]] = {}
    heap = [(0, 0, start)]
    tie = 0
    settled = 0
    while heap:
        g, _, facts = heapq.heappop(heap)
        if g > best[facts]:
            continue
        settled += 1
        if sx.goal_reachable(set(facts)):
            plan = []
            while facts in parent:
                facts, name = parent[facts]
                plan.append(name)
            return g, plan[::-1], settled
        for name, new, cost in sx.successors(set(facts)):
            if name.startswith("pp-"):
                continue
            nf = frozenset(new)
            if g + cost < best.get(nf, 1 << 60):
                best[nf] = g + cost
                parent[nf] = (facts, name)
                tie += 1
                heapq.heappush(heap, (g + cost, tie, nf))
    return None, [], settled


@pytest.mark.parametrize("metric", ["steps", "moves"])
def test_anonymous_plan_maps_back_and_the_state_space_shrinks(tmp_path: Path, metric: str):
    """Three 1x1 soldiers on a 3x3 board: the anonymous export's optimum is the engines' optimum, its
    plan maps back to labelled pieces and passes the reference checker, and it settles the canonical
    states where the labelled export reaches up to 3! copies of each."""
    path = write_klotski(tmp_path / "soldiers.txt", ["AB.", "C..", "D.."], (3, 3), (2, 2))
    loaded = api.load_task("klotski", str(path), [f"metric={metric}"])
    task = loaded.task
    assert [len(g) for g in task.groups] == [3]
    best = api.solve(loaded, "bfs", kernel="numpy")
    assert best.status == "optimal"
    anon = export(task, name=task.name)
    flat = export(task, name=task.name, symmetric=False)
    assert anon.groups and not flat.groups and anon.stats["pddl_actions"] < flat.stats["pddl_actions"]
    assert "are anonymous" in anon.domain
    sa, sf = Strips(anon.domain, anon.problem), Strips(flat.domain, flat.problem)
    cost_a, plan_a, _ = _dijkstra(sa)
    cost_f, _, _ = _dijkstra(sf)
    assert cost_a == cost_f == best.cost
    # reachable: the canonical states (anonymous), and each of them with its 3 soldiers in 3! orders
    # (labelled; no two soldiers ever share a cell)
    configs = {ref.canonical(task, s) for s in helpers.reference_reachable(task)}
    if metric == "steps":
        assert _reachable(sa) == len(configs) and _reachable(sf) == 6 * len(configs)
    # the plan names anonymous moves; replay picks the labelled piece that makes each of them
    ground = anon.plan_from_names(f"({n})" for n in plan_a)
    check = ref.check_plan(task, ground)
    assert check.ok and check.cost == best.cost, check.message
    # a step no labelled piece can make from the replayed state is a one-line error
    stuck = next(n for n in anon.actions if n not in {x for x, *_ in sa.successors(set(sa.init))})
    with pytest.raises(PddlError, match="no ground action does it"):
        anon.plan_from_names([f"({stuck})"])


def test_a_group_that_can_share_a_value_stays_labelled():
    """Two tokens on a line may stand on one square: a value set cannot say that, so the group is
    labelled (and the header says why), and that export is still exact."""
    from puzzleplan.ir.task import ground
    from puzzleplan.lang import Act, And, Model

    m = Model("tokens")
    tok = [m.var(f"tok[{k}]", 0, 3, k) for k in range(2)]

    @m.action("right", k=range(2))
    def right(k: int) -> Act:
        return Act(guard=tok[k] < 3, effects={tok[k]: tok[k] + 1}, cost=1)

    m.goal(And(tok[0] == 3, tok[1] == 3))
    m.interchangeable([(t,) for t in tok])
    task = ground(m)
    p = export(task, name="tokens")
    assert not p.groups and p.stats["labelled_groups"] == 1
    assert "labelled: action" in p.domain and "another object may hold" in p.domain
    sx = Strips(p.domain, p.problem)
    cost, plan, _ = _dijkstra(sx)
    assert cost == 5 and ref.check_plan(task, p.plan_from_names(plan)).ok   # 3 + 2 steps
