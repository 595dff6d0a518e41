"""Test-only model: an admissible heuristic that is not consistent, on the only path to the goal.

Glossary
    x   the node of a chain 0 -> 1 -> 2 -> 3 (goal), unit costs.
h = (0, 2, 0, 0): at most the true distance everywhere (3, 2, 1, 0), but it drops by 2 over the
edge 1 -> 2 of cost 1.  astar (re-opening) is exact with it; layers by f = g + h are not exact in
general, and dbfs with order=astar must refuse to go on when it expands such an edge.
"""

from __future__ import annotations

from puzzleplan.lang import Act, Model, Record, Table, split_headers

NAME = "bump"


def parse(rec: Record) -> None:
    split_headers(rec)


def build(data: None) -> Model:
    m = Model("bump")
    x = m.var("x", 0, 3, 0)

    @m.action("step", i=range(3))
    def step(i):
        return Act(guard=x == i, effects={x: i + 1}, label=f"{i}->{i + 1}")

    m.goal(x == 3)
    m.heuristic(Table([0, 2, 0, 0])[x], admissible=True)
    return m
