"""Plain-text tables (standard library only)."""

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


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> str:
    """Columns right-aligned when every cell is a number, left-aligned otherwise."""
    cells = [[fmt(c) for c in row] for row in rows]
    n = len(headers)
    widths = [len(h) for h in headers]
    for row in cells:
        for i, c in enumerate(row[:n]):
            widths[i] = max(widths[i], len(c))
    numeric = [all(isinstance(r[i], (int, float)) or r[i] is None for r in rows) and bool(rows)
               for i in range(n)]

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
