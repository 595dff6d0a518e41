"""`puzzleplan bench` sub-command (suites of instances x engines -> JSON)."""

from __future__ import annotations

import argparse
from typing import Any


def add_bench_parser(sub: Any) -> None:
    b = sub.add_parser("bench", help="run a benchmark suite and write JSON")
    b.add_argument("suite", help="suite name or file")
    b.add_argument("-o", "--output", default=None, help="JSON output file")


def run_bench(args: argparse.Namespace) -> int:
    raise NotImplementedError
