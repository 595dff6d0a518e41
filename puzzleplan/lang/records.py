"""Reading instance files: records, header lines and line numbers for errors.

Many puzzle collections keep several levels in one file.  The convention
here: blocks are separated by blank lines; when some block starts with an
``id:`` header, each such block begins a record (blocks without one belong
to the record before); otherwise the whole file is one record.  Lines
starting with ``#`` are comments, unless the model declares another marker
(``COMMENT = ";"`` in a model file, for formats where ``#`` is a wall).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InstanceError

_HEADER = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$")


@dataclass
class Record:
    source: str
    lines: list[tuple[int, str]]          # (1-based line number, text without newline)
    id: str | None = None
    headers: dict[str, tuple[str, int]] = field(default_factory=dict)
    body: list[tuple[int, str]] = field(default_factory=list)

    @property
    def first_line(self) -> int:
        return self.lines[0][0] if self.lines else 1

    def error(self, message: str, line: int | None = None) -> InstanceError:
        return InstanceError(message, self.source, line if line is not None else self.first_line)

    def header(self, key: str, default: str | None = None) -> str | None:
        return self.headers[key][0] if key in self.headers else default

    def header_line(self, key: str) -> int:
        return self.headers[key][1] if key in self.headers else self.first_line


def split_headers(rec: Record, stop_keys: tuple[str, ...] = ()) -> None:
    """Peel leading ``key: value`` lines into ``rec.headers``; the rest is the body.

    A key in ``stop_keys`` ends the header block (e.g. a ``goal:`` section that
    is followed by grid rows).
    """
    body_start = 0
    for i, (no, text) in enumerate(rec.lines):
        m = _HEADER.match(text.strip())
        if not m:
            break
        key, value = m.group(1).lower(), m.group(2).strip()
        if key in rec.headers:
            raise InstanceError(f"header {key!r} given twice", rec.source, no)
        rec.headers[key] = (value, no)
        body_start = i + 1
        if key in stop_keys:
            break
    rec.body = rec.lines[body_start:]
    if "id" in rec.headers:
        rec.id = rec.headers["id"][0]


def read_records(path: str | Path, comment: str = "#") -> list[Record]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InstanceError("no such instance file", str(path)) from None
    except IsADirectoryError:
        raise InstanceError("is a directory, not an instance file", str(path)) from None
    except UnicodeDecodeError as e:
        raise InstanceError(f"not UTF-8 text ({e.reason})", str(path)) from None
    except OSError as e:
        raise InstanceError(f"cannot read: {e.strerror}", str(path)) from None
    blocks: list[list[tuple[int, str]]] = []
    cur: list[tuple[int, str]] = []
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not line.strip():
            if cur:
                blocks.append(cur)
                cur = []
            continue
        if comment and line.lstrip().startswith(comment):
            continue
        cur.append((no, line))
    if cur:
        blocks.append(cur)
    if not blocks:
        raise InstanceError("empty instance file", str(path), 1)

    def starts_record(b: list[tuple[int, str]]) -> bool:
        m = _HEADER.match(b[0][1].strip())
        return bool(m and m.group(1).lower() == "id")

    records: list[Record] = []
    if any(starts_record(b) for b in blocks):
        for b in blocks:
            if starts_record(b) or not records:
                records.append(Record(str(path), list(b)))
            else:
                records[-1].lines.extend(b)
    else:
        records.append(Record(str(path), [ln for b in blocks for ln in b]))
    for r in records:
        if r.lines:
            m = _HEADER.match(r.lines[0][1].strip())
            if m and m.group(1).lower() == "id":
                r.id = m.group(2).strip()
    return records


def select_record(path: str, record_id: str | None, comment: str = "#") -> Record:
    """``FILE`` (must hold one record, or the first is taken) or ``FILE#ID``."""
    records = read_records(path, comment)
    if record_id is None:
        return records[0]
    for r in records:
        if r.id == record_id:
            return r
    if record_id.isdigit() and 1 <= int(record_id) <= len(records) and all(r.id is None for r in records):
        return records[int(record_id) - 1]
    raise InstanceError(f"no record with id {record_id!r} in this file", path)
