"""Test-only model: every operator of the language in guards, effects, costs, goal and heuristic.

Glossary
    x, y, z   three small integer variables; every state of their domains is a valid state.

Effects are clamped with Min/Max so that no action can leave a domain: the compiled kernel,
the numpy kernel and the reference checker are compared on *every* state.
"""

from __future__ import annotations

from puzzleplan.lang import (
    Abs,
    Act,
    And,
    Count,
    Element,
    If,
    Implies,
    Max,
    Member,
    Min,
    MinAssignment,
    Model,
    Not,
    Or,
    Record,
    Sum,
    Table,
    ToInt,
    When,
    split_headers,
)

NAME = "ops"
OPTIONS: list = []

X = (-3, 5)
Y = (0, 4)
Z = (0, 1)


def parse(rec: Record) -> dict:
    split_headers(rec)
    out = {}
    for key, (lo, hi) in (("x", X), ("y", Y), ("z", Z)):
        text = rec.header(key, str(lo))
        try:
            v = int(text)
        except ValueError:
            raise rec.error(f"{key}: not an integer", rec.header_line(key)) from None
        if not lo <= v <= hi:
            raise rec.error(f"{key}: outside {lo}..{hi}", rec.header_line(key))
        out[key] = v
    return out


def clamp(e, lo: int, hi: int):
    return Min(Max(e, lo), hi)


def build(d: dict) -> Model:
    m = Model("ops")
    x = m.var("x", *X, d["x"])
    y = m.var("y", *Y, d["y"])
    z = m.var("z", *Z, d["z"])
    t = Table([3, -1, 4, 1, 5], default=-2)            # indexed by x: out of range for x < 0
    flags = [x > 0, y == 2, Not(z == 1)]
    pick = Element(flags, y - 1, default=True)        # boolean element, index -1..3
    items = [x * 2, y - x, Abs(x - y)]
    val = Element(items, x + 1, default=y * 3 - 1)    # int element with a state-dependent default

    @m.action("shift", k=(-1, 1))
    def shift(k):
        return Act(guard=And(Or(x % 3 != 2, z == 1), Abs(x) <= 4),
                   effects={x: clamp(x + k + t[x] // 2, *X)},
                   cost=If(pick, 0, 1), label=f"shift {k}")

    @m.action("mix")
    def mix():
        return Act(guard=Implies(z == 1, y >= 1) & Not(Member(y, [0, 3], range(5))),
                   effects={y: clamp(val, *Y), z: 1 - z},
                   when=[When(x >= 2, {y: clamp(y + 1, *Y)}),
                         When(x == 4, {y: 0})],                 # later conditional write wins
                   cost=Count([x < 0, y > 1, z == 0]) + 1, label="mix")

    @m.action("fold")
    def fold():
        return Act(guard=If(z == 0, y < 4, x > -3),
                   effects={x: clamp(-(x * y) + Sum([x, y, z]) - Max(y, z) * 2, *X),
                            y: clamp(ToInt(x > y) + (x + 3) // 2 % 5, *Y)},
                   cost=2, label="fold")

    m.goal(And(x == 5, Member(y, [1, 4], range(5))))
    cheapest = MinAssignment([[x + 3, y, 2], [Abs(x - y), z * 4, 1], [y, t[x], x * y]])   # negatives too
    m.heuristic(Min(Abs(5 - x), 3) + ToInt(pick) + Element([0, 1, 2], z + y, default=1) + cheapest,
                admissible=False)
    return m
