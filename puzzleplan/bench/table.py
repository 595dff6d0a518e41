"""Tables for bench output: plain text (files, pipes, tests) or rich box tables on a terminal.

The plain form is the default so that output captured by scripts is stable; ``bench`` switches to
rich when stdout is a terminal (``use_rich``), where column alignment and borders help reading.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def fmt(x: Any, digits: int = 3) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "NO"
    if isinstance(x, float):
        if x != x:  # nan
            return "-"
        if abs(x) >= 1000:
            return f"{x:,.0f}"
        return f"{x:.{digits}f}"
    if isinstance(x, int):
        return f"{x:,}"
    return str(x)


RICH = False


def use_rich(on: bool) -> None:
    global RICH
    RICH = on


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> str:
    """Columns right-aligned when every cell is a number, left-aligned otherwise."""
    cells = [[fmt(c) for c in row] for row in rows]
    n = len(headers)
    numeric = [all(isinstance(r[i], (int, float)) or r[i] is None for r in rows) and bool(rows)
               for i in range(n)]
    if RICH:
        return _rich(headers, cells, numeric, title)
    widths = [len(h) for h in headers]
    for row in cells:
        for i, c in enumerate(row[:n]):
            widths[i] = max(widths[i], len(c))

    def line(values: Sequence[str]) -> str:
        parts = [v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)]
        return "  ".join(parts).rstrip()

    out = []
    if title:
        out.append(title)
    out.append(line(list(headers)))
    out.append("  ".join("-" * w for w in widths))
    out.extend(line(r) for r in cells)
    return "\n".join(out)


def _rich(headers: Sequence[str], cells: list[list[str]], numeric: list[bool], title: str | None) -> str:
    import io
    import shutil

    from rich.console import Console
    from rich.table import Table

    t = Table(title=title, title_justify="left", header_style="bold")
    for h, num in zip(headers, numeric):
        t.add_column(h, justify="right" if num else "left")
    for row in cells:
        t.add_row(*row[:len(headers)])
    buf = io.StringIO()
    Console(file=buf, width=max(shutil.get_terminal_size().columns, 80), force_terminal=True).print(t)
    return buf.getvalue().rstrip("\n")
