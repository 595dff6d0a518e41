"""Test-only model with a lying heuristic: declared admissible, but it overestimates on the shortest path.

Glossary
    x   the node of a small graph: 0 start, 4 goal.
Edges (unit cost): 0-1, 1-4 (the shortest path, 2 steps) and 0-2, 2-3, 3-4 (3 steps).
The heuristic claims 10 at node 1, so astar goes the long way and reports 3 as "optimal";
a cross-check against bfs must notice.
"""

from __future__ import annotations

from puzzleplan.lang import Act, Model, Record, Table, split_headers

NAME = "liar"
EDGES = [(0, 1), (1, 4), (0, 2), (2, 3), (3, 4)]


def parse(rec: Record) -> None:
    split_headers(rec)


def build(data: None) -> Model:
    m = Model("liar")
    x = m.var("x", 0, 4, 0)

    @m.action("go", edge=range(len(EDGES)))
    def go(edge):
        a, b = EDGES[edge]
        return Act(guard=x == a, effects={x: b}, label=f"{a}->{b}")

    m.goal(x == 4)
    m.heuristic(Table([0, 10, 0, 0, 0])[x], admissible=True)
    return m
