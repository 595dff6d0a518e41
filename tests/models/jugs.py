"""Test-only model: two water jugs, with state-dependent (general, non 0/1) action costs.

Glossary
    a, b     capacities of jug 0 and jug 1 (instance headers)
    w[j]     the state: litres in jug j
    target   litres wanted in either jug
With ``-O cost=litres`` an action costs the litres it moves (0..max(a, b)), so the grounded
task has general integer costs: bfs must refuse it, ucs and astar must be exact.
"""

from __future__ import annotations

from puzzleplan.lang import Act, Min, Model, Option, Or, Record, split_headers

NAME = "jugs"
OPTIONS = [Option("cost", "moves", "what one unit of cost is", choices=("moves", "litres"))]


def parse(rec: Record) -> dict:
    split_headers(rec)
    out = {}
    for key in ("a", "b", "target"):
        text = rec.header(key)
        if text is None or not text.isdigit():
            raise rec.error(f"header {key}: needs a non-negative integer", rec.header_line(key))
        out[key] = int(text)
    return out


def build(data: dict, cost: str = "moves") -> Model:
    cap = (data["a"], data["b"])
    m = Model("jugs")
    w = [m.var(f"w[{j}]", 0, cap[j], 0) for j in range(2)]

    @m.action("fill", j=range(2))
    def fill(j):
        return Act(guard=w[j] < cap[j], effects={w[j]: cap[j]},
                   cost=(cap[j] - w[j]) if cost == "litres" else 1, label=f"fill {j}")

    @m.action("empty", j=range(2))
    def empty(j):
        return Act(guard=w[j] > 0, effects={w[j]: 0}, cost=w[j] if cost == "litres" else 1,
                   label=f"empty {j}")

    @m.action("pour", j=range(2))
    def pour(j):
        k = 1 - j
        amount = Min(w[j], cap[k] - w[k])
        return Act(guard=(w[j] > 0) & (w[k] < cap[k]), effects={w[j]: w[j] - amount, w[k]: w[k] + amount},
                   cost=amount if cost == "litres" else 1, label=f"pour {j}->{k}")

    m.goal(Or(w[0] == data["target"], w[1] == data["target"]))
    return m
