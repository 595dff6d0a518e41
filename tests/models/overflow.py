"""Test-only model with a bug: ``up`` can set x past its domain (a model error found at run time).

Instance: a ``start: N`` header (0..3); the goal is unreachable on purpose (x == 3 and y == 1).
"""

from __future__ import annotations

from puzzleplan.lang import Act, Model, Record, split_headers

NAME = "overflow"


def parse(rec: Record) -> int:
    split_headers(rec)
    return int(rec.header("start", "0"))


def build(start: int) -> Model:
    m = Model("overflow")
    x = m.var("x", 0, 3, start)
    y = m.var("y", 0, 1, 0)

    @m.action("up")
    def up():
        return Act(guard=y == 0, effects={x: x + 1}, label="up")

    m.goal((x == 3) & (y == 1))
    return m
