"""Test-only model for the compiled kernel's successor generator (``compiled.dispatch_plan``).

A walker on a ring of ``n`` cells (``n: N`` header, default 8) carrying a counter: ``step[c]``
moves it from cell c to the next one and ``back[c]`` to the previous one, each guarded by
``pos == c`` (the dispatch test); ``tick`` and ``reset`` test no cell (the actions every
dispatched function must also hold, in action order).
"""

from __future__ import annotations

from puzzleplan.lang import Act, Model, Record, split_headers

NAME = "walker"


def parse(rec: Record) -> int:
    split_headers(rec)
    return int(rec.header("n", "8"))


def build(n: int) -> Model:
    m = Model("walker")
    pos = m.var("pos", 0, n - 1, 0)
    count = m.var("count", 0, 3, 0)

    @m.action("tick")
    def tick():
        return Act(guard=count < 3, effects={count: count + 1}, label="tick")

    @m.action("step", c=range(n))
    def step(c: int):
        return Act(guard=(pos == c) & (count > 0), effects={pos: (c + 1) % n}, label=f"step{c}")

    @m.action("back", c=range(n))
    def back(c: int):
        return Act(guard=pos == c, effects={pos: (c - 1) % n, count: 0}, label=f"back{c}")

    @m.action("reset")
    def reset():
        return Act(guard=count == 3, effects={count: 0}, label="reset")

    m.goal((pos == n // 2) & (count == 3))
    return m
