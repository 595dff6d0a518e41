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

from .errors import InstanceError, echo

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

    def int_field(self, text: str, what: str, line: int | None = None, lo: int | None = None,
                  hi: int | None = None) -> int:
        """``text`` as an integer in ``lo..hi`` (see :func:`to_int`), else an InstanceError at ``line``
        naming ``what``: the one way the bundled models read numbers."""
        v = to_int(text, lo, hi)
        if v is None:
            span = ("" if lo is None and hi is None else f" in {'' if lo is None else lo}.."
                    f"{'' if hi is None else hi}")
            raise self.error(f"{what}: expected an integer{span}, got {echo(text)}", line)
        return v


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


def read_text(path: str | Path) -> str:
    """An instance file as text: UTF-8, a leading byte-order mark dropped (editors on Windows write
    one); any failure is an InstanceError naming the file.  Models that read their file as raw
    text (Sokoban, Kwirk, ZPG) use this too, so every model reads the same files."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InstanceError("no such instance file", str(path)) from None
    except IsADirectoryError:
        raise InstanceError("is a directory, not an instance file", str(path)) from None
    except UnicodeDecodeError as e:
        line = p.read_bytes()[:e.start].count(b"\n") + 1
        raise InstanceError(f"not UTF-8 text ({e.reason})", str(path), line) from None
    except (OSError, ValueError) as e:
        raise InstanceError(f"cannot read: {getattr(e, 'strerror', None) or e}", str(path)) from None
    if "\x00" in text:
        raise InstanceError("binary data (a NUL byte) in a text file", str(path),
                            text[:text.index("\x00")].count("\n") + 1)
    return text


def text_lines(text: str) -> list[str]:
    """Lines split at ``\\r\\n``, ``\\n`` or ``\\r`` only, so line numbers match an editor's even when
    a line holds a form feed or U+2028, which ``str.splitlines`` would also split at."""
    lines = _EOL.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


_EOL = re.compile(r"\r\n|\r|\n")


_INT = re.compile(r"[+-]?[0-9]+")
MAX_DIGITS = 18     # every count and size in an instance fits in int64 with room to spare


def to_int(text: str, lo: int | None = None, hi: int | None = None) -> int | None:
    """``text`` as an integer if it is one in ASCII decimal (``-12``, ``+3``, ``007``) within
    ``lo..hi``, else None.  Why not ``int()`` or ``str.isdigit()``: ``'²'.isdigit()`` is true and
    ``int('²')`` fails, ``int('٣')`` is 3, and ``int`` of 5,000 digits raises."""
    t = text.strip()
    if not _INT.fullmatch(t) or len(t.lstrip("+-")) > MAX_DIGITS:
        return None
    v = int(t)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        return None
    return v


def is_uint(text: str) -> bool:
    """ASCII digits only (a strict ``str.isdigit``), at most MAX_DIGITS of them."""
    return text.isascii() and text.isdigit() and len(text) <= MAX_DIGITS


def read_records(path: str | Path, comment: str = "#") -> list[Record]:
    text = read_text(path)
    blocks: list[list[tuple[int, str]]] = []
    cur: list[tuple[int, str]] = []
    for no, raw in enumerate(text_lines(text), start=1):
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
    k = to_int(record_id, 1, len(records)) if is_uint(record_id) else None
    if k is not None and all(r.id is None for r in records):
        return records[k - 1]
    raise InstanceError(f"no record with id {echo(record_id)} in this file", path)
