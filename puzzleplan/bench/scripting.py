"""Shared pieces of the scripts in bench/ that a suite cannot replace (fresh processes, signals,
Fast Downward, ``verify`` sweeps): their argument parser, JSON and JSON-lines files, Markdown.

Why here: each script used to carry its own copy; a fix to, say, how a partial sweep is resumed
now reaches all of them, and the scripts keep only what they measure.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .table import markdown

__all__ = ["parser", "write_json", "append_jsonl", "read_jsonl", "markdown", "uptime"]


def parser(doc: str | None, out_default: str | None = None) -> argparse.ArgumentParser:
    """A script's parser: its docstring's first line as description, ``-o/--out FILE`` if asked."""
    ap = argparse.ArgumentParser(description=(doc or "").strip().splitlines()[0] if doc else None)
    if out_default is not None:
        ap.add_argument("-o", "--out", "--output", dest="out", default=out_default, metavar="FILE",
                        help=f"result file (default {out_default})")
    return ap


def write_json(path: str | Path, doc: Any) -> Path:
    """Write (or rewrite: scripts save after every instance, so a cut-off run keeps its figures)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return p


def append_jsonl(path: str | Path, row: dict[str, Any]) -> None:
    """One line per finished unit: a partial sweep is still a usable record, and a rerun resumes."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("a", encoding="utf-8") as f:
        f.write(json.dumps(row, ensure_ascii=False) + "\n")


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    p = Path(path)
    if not p.exists():
        return []
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


def uptime() -> str:
    """The machine's load, recorded beside timings (on a shared machine they are upper bounds)."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return "unknown"


def done_keys(rows: Iterable[dict[str, Any]], key: str) -> set[Any]:
    return {r[key] for r in rows if key in r}
