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


# ------------------------------------------------------------------------------------------
# table specs: the paper-style Markdown tables of a suite, declared in its ``[[table]]`` sections
#
# Why a spec instead of a script per table: every paper table is a group-by over the suite's
# records (rows: instance, depth, engine...) with a few aggregates per column, optionally
# repeated per engine or option set (``pivot``).  Declaring it next to the suite keeps the
# figures reproducible from one file and lets ``bench table RESULTS.json`` re-render them
# from a finished run without running anything.

AGGREGATES = ("first", "last", "min", "max", "mean", "median", "sum", "std", "count", "pct", "distinct",
              "present", "list")
TABLE_KEYS = {"title", "where", "rows", "pivot", "pick", "columns", "footer_label", "note"}
COLUMN_KEYS = {"header", "key", "field", "agg", "where", "format", "scale", "relative_to", "equals",
               "pivot", "ratio", "lookup", "inner", "footer", "missing", "map", "count_of"}


class TableSpecError(ValueError):
    """A malformed ``[[table]]`` section (the suite loader turns it into a SuiteError)."""


def check_spec(spec: Any, where: str = "table") -> dict[str, Any]:
    """Validate one ``[[table]]`` section early, so a typo fails at load time and not after a run."""
    if not isinstance(spec, dict):
        raise TableSpecError(f"{where}: must be a table")
    bad = set(spec) - TABLE_KEYS
    if bad:
        raise TableSpecError(f"{where}: unknown keys {', '.join(sorted(bad))}")
    cols = spec.get("columns")
    if not isinstance(cols, list) or not cols or not all(isinstance(c, dict) for c in cols):
        raise TableSpecError(f"{where}: columns must be a non-empty list of tables")
    rows = spec.get("rows", [])
    if not isinstance(rows, list) or not all(
            isinstance(r, str) or (isinstance(r, dict) and set(r) == {"field", "pattern"}) for r in rows):
        raise TableSpecError(f"{where}: rows must be a list of record fields (or {{ field, pattern }})")
    for i, c in enumerate(cols):
        w = f"{where}, column {i + 1}"
        bad = set(c) - COLUMN_KEYS
        if bad:
            raise TableSpecError(f"{w}: unknown keys {', '.join(sorted(bad))}")
        if not any(k in c for k in ("field", "ratio", "lookup")) and c.get("agg") != "count":
            raise TableSpecError(f"{w}: needs field, ratio, lookup or agg = \"count\"")
        for k in ("agg", "footer"):
            if k in c and c[k] not in AGGREGATES:
                raise TableSpecError(f"{w}: {k} must be one of {', '.join(AGGREGATES)}, not {c[k]!r}")
        inner = c.get("inner")
        if inner is not None and not (isinstance(inner, dict) and set(inner) == {"by", "agg"}
                                      and inner["agg"] in AGGREGATES):
            raise TableSpecError(f"{w}: inner must be {{ by = FIELD, agg = AGGREGATE }}")
        if "map" in c and not isinstance(c["map"], dict):
            raise TableSpecError(f"{w}: map must be a table {{ value = \"text\" }}")
        r = c.get("ratio")
        if r is not None and not (isinstance(r, list) and len(r) == 2):
            raise TableSpecError(f"{w}: ratio must name two column keys")
        if "format" in c:
            try:
                format(1.5, c["format"])
            except (ValueError, TypeError):
                raise TableSpecError(f"{w}: bad format {c['format']!r}") from None
    return spec


def _get(rec: dict[str, Any], field: Any) -> Any:
    """A record field; ``a.b`` reads into a nested dict (``options.metric``); ``{ field = F,
    pattern = RE }`` is the first group of RE in the field's text (``(\\d+)x\\d+``: a size)."""
    if isinstance(field, dict):
        import re

        m = re.search(str(field["pattern"]), str(_get(rec, field["field"])))
        if not m:
            return None
        v = m.group(1) if m.groups() else m.group(0)
        return int(v) if v.isdigit() else v
    x: Any = rec
    for part in str(field).split("."):
        if not isinstance(x, dict):
            return None
        x = x.get(part)
    return x


def _holds(rec: dict[str, Any], cond: dict[str, Any] | None) -> bool:
    """``{field = value}``: equal; ``[v1, v2]``: any of; ``{not = v}``: differs (or not any of)."""
    for field, want in (cond or {}).items():
        got = _get(rec, field)
        if isinstance(want, dict) and "not" in want:
            if _matches(got, want["not"]):
                return False
        elif not _matches(got, want):
            return False
    return True


def _matches(got: Any, want: Any) -> bool:
    if isinstance(want, list):
        return any(_matches(got, w) for w in want)
    return got == want or (got is not None and str(got) == str(want) and not isinstance(want, bool))


def aggregate(values: list[Any], agg: str) -> Any:
    """One figure from a column's values; None values are left out except by count and pct
    (``present``: how many are not None)."""
    if agg == "count":
        return len(values)
    if agg == "present":
        return sum(v is not None for v in values)
    if agg == "pct":
        return 100.0 * sum(bool(v) for v in values) / len(values) if values else None
    vals = [v for v in values if v is not None]
    if agg == "distinct":
        return len({repr(v) for v in vals})
    if agg == "list":         # the distinct values, comma-separated (the levels a run did not solve)
        return ", ".join(dict.fromkeys(fmt(v) for v in vals)) if vals else None
    if not vals:
        return None
    if agg == "first":
        return vals[0]
    if agg == "last":
        return vals[-1]
    import statistics

    nums = [int(v) if isinstance(v, bool) else v for v in vals if isinstance(v, (int, float))]
    if agg in ("min", "max"):
        return (min if agg == "min" else max)(nums) if nums else None
    if not nums:
        return None
    if agg == "sum":
        return sum(nums)
    if agg == "mean":
        return statistics.fmean(nums)
    if agg == "median":
        return statistics.median(nums)
    return statistics.stdev(nums) if len(nums) > 1 else 0.0     # std


def _column_value(col: dict[str, Any], recs: list[dict[str, Any]], row_key: tuple[Any, ...]) -> Any:
    if "lookup" in col:
        return col["lookup"].get(str(row_key[0]) if row_key else "")
    recs = [r for r in recs if _holds(r, col.get("where"))]
    agg = col.get("agg", "first")
    field = col.get("field")

    def value(r: dict[str, Any]) -> Any:
        if field is None:
            return 1
        v = _get(r, field)
        if "count_of" in col:     # occurrences of an item in a list or text field (plan labels: "S")
            v = list(v).count(col["count_of"]) if isinstance(v, (list, str)) else None
        if "equals" in col:
            return _matches(v, col["equals"])
        ref = col.get("relative_to")
        if ref is not None:
            base = _get(r, ref)
            if not isinstance(v, (int, float)) or not isinstance(base, (int, float)) or not base:
                return None
            return 100.0 * (v - base) / base
        return v

    inner = col.get("inner")
    if inner:
        groups: dict[Any, list[Any]] = {}
        for r in recs:
            groups.setdefault(repr(_get(r, inner["by"])), []).append(value(r))
        vals = [aggregate(vs, inner["agg"]) for vs in groups.values()]
    else:
        vals = [value(r) for r in recs]
    out = aggregate(vals, agg)
    if isinstance(out, (int, float)) and not isinstance(out, bool) and "scale" in col:
        out = out * col["scale"]
    return out


def _key(c: dict[str, Any]) -> str:
    if "key" in c:
        return str(c["key"])
    if "header" in c:
        return str(c["header"])
    return str(c.get("field", ""))


def _expand(spec: dict[str, Any], records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The columns with ``pivot = true`` repeated once per value of the table's pivot field; a run
    of consecutive pivot columns repeats as a block (``paper: success, time | improved: ...``)."""
    pivot = spec.get("pivot")
    values: list[Any] = []
    if pivot:
        for r in records:
            v = _get(r, pivot)
            if v not in values:
                values.append(v)
    out: list[dict[str, Any]] = []
    block: list[dict[str, Any]] = []

    def flush() -> None:
        for v in values:
            for i, c in enumerate(block):      # the value heads its block's first column only
                head = str(c.get("header", _key(c)))
                out.append({**c, "where": {**(c.get("where") or {}), pivot: v}, "key": f"{_key(c)}@{v}",
                            "header": f"{v}: {head}" if i == 0 else head})
        block.clear()

    for c in spec["columns"]:
        if pivot and c.get("pivot"):
            block.append(c)
            continue
        flush()
        out.append({**c, "key": _key(c), "header": str(c.get("header", _key(c)))})
    flush()
    return out


def _pick(recs: list[dict[str, Any]], fields: list[str]) -> dict[str, Any]:
    """The record with the largest (fields...) tuple; on a tie the later one (a later run wins)."""
    def key(r: dict[str, Any]) -> tuple[Any, ...]:
        out = []
        for f in fields:
            v = _get(r, f)
            out.append(float(v) if isinstance(v, (int, float)) else (0.0 if v is None else 1.0))
        return tuple(out)

    best = recs[0]
    for r in recs[1:]:
        if key(r) >= key(best):
            best = r
    return best


def _cell(col: dict[str, Any], v: Any) -> str:
    if v is None:
        return str(col.get("missing", "-"))
    if "map" in col and str(v) in col["map"]:      # { optimal = "**optimal**" }: a value's text
        return str(col["map"][str(v)])
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)) and "format" in col:
        return format(v, col["format"])
    return fmt(v, 2).replace("|", "\\|")


def table_rows(spec: dict[str, Any], records: list[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    """(headers, rows of raw values): one row per distinct ``rows`` tuple, in first-seen order."""
    recs = [r for r in records if _holds(r, spec.get("where"))]
    keys = list(spec.get("rows", []))
    groups: dict[tuple[str, ...], tuple[tuple[Any, ...], list[dict[str, Any]]]] = {}
    for r in recs:
        raw = tuple(_get(r, k) for k in keys)
        groups.setdefault(tuple(repr(x) for x in raw), (raw, []))[1].append(r)
    cols = _expand(spec, recs)
    pick = spec.get("pick")
    rows: list[list[Any]] = []
    for raw, rs in groups.values():
        if pick:
            rs = [_pick(rs, [str(f) for f in pick])]
        vals: dict[str, Any] = {}
        for c in cols:
            if "ratio" not in c:
                vals[c["key"]] = _column_value(c, rs, raw)
        for c in cols:
            if "ratio" in c:
                a, b = (vals.get(str(x)) for x in c["ratio"])
                ok = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b)) and b
                vals[c["key"]] = (a / b) * c.get("scale", 1) if ok else None   # type: ignore[operator]
        rows.append([vals[c["key"]] for c in cols])
    return [c["header"] for c in cols], rows


def render_spec(spec: dict[str, Any], records: list[dict[str, Any]]) -> str:
    """One spec as a Markdown table (title line, header, rows, optional footer row)."""
    cols = _expand(spec, [r for r in records if _holds(r, spec.get("where"))])
    headers, rows = table_rows(spec, records)
    lines = []
    if spec.get("title"):
        lines += [f"**{spec['title']}**", ""]
    lines.append("| " + " | ".join(headers) + " |")
    lines.append("|" + "---|" * len(headers))
    lines += ["| " + " | ".join(_cell(c, v) for c, v in zip(cols, row)) + " |" for row in rows]
    if any("footer" in c for c in cols) and rows:
        cells = []
        for i, c in enumerate(cols):
            if "footer" in c:
                cells.append(_cell(c, aggregate([row[i] for row in rows], c["footer"])))
            else:
                cells.append(str(spec.get("footer_label", "**all**")) if i == 0 else "")
        lines.append("| " + " | ".join(cells) + " |")
    if spec.get("note"):
        lines += ["", str(spec["note"])]
    return "\n".join(lines)


def render_specs(specs: Sequence[dict[str, Any]], records: list[dict[str, Any]]) -> str:
    return "\n\n".join(render_spec(s, records) for s in specs)


def markdown(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain Markdown table, for the scripts that build their rows themselves."""
    cells = [[fmt(c, 2).replace("|", "\\|") for c in row] for row in rows]
    return "\n".join(["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
                     + ["| " + " | ".join(r) + " |" for r in cells])
