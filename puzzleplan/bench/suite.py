"""Benchmark suites: TOML files naming instances, a model, engines, options and limits.

A suite is found by name in the project's ``bench/`` directory (``klotski`` ->
``bench/klotski.toml``; ``-`` and ``_`` are interchangeable) or given as a path.
Paths inside a suite are relative to the suite file.  Format (bench/README.md):

    name = "klotski"
    description = "..."
    kind = "solve"                 # or "speed" (see speed.py)
    repetitions = 1
    warmup = 0                     # untimed runs per (instance, engine) first (JIT compilation)
    time_limit = 300               # seconds of search per run
    max_states = 20_000_000        # optional
    max_memory_mb = 20480          # optional: the engine's own search data, MiB (Limits.max_mb)
    isolate = false                # true: every (instance, option set) in a fresh process
    keep_plan = false              # true: records carry the plan's action labels ("plan")
    model = "klotski"
    engines = ["bfs"]
    kernel = "numba"               # or "numpy"
    options = [["metric=moves"]]   # one -O list per option set
    expected = "published_min_moves"   # header that holds the expected optimum
    zero_means_unsolvable = true   # a published 0 (or "unsolvable") marks "no solution" unless
                                   # the start already satisfies the goal
    instances = [
        "../instances/klotski/fayaa.txt#fayaa-001",        # FILE#ID
        "../instances/klotski/*.txt",                       # every record of every matching file
        { glob = "../instances/klotski/*.txt", header = "published_min_moves" },
        { file = "x.txt", ids = ["a", "b"], expected = 31 },
        { file = "microban.xsb", option = "level", from = 1, to = 155 },   # one instance per -O level=N
        { glob = "going-up/*.txt", expected_from = { file = "known_optima.csv", key = "file",
          value = "step_optimum", fields = { best_known = "best_known_steps" } } },
    ]
    seeds = [0, 1, 2]              # or { first = 0, count = 50 }: one run per seed (replaces
                                   # repetitions), the seed given to engines that take one (ga, cpsat)
    [[set]]                        # optional: several sets, each overriding the keys above
    give_up = 2                    # per engine: skip the set's later instances after 2 runs in a
                                   # row that did not prove the expected answer (a "largest proven"
                                   # sweep, in order; a plan of the expected cost is no proof)
    engine_options = { ga = { target = "@expected" } }   # "@expected": the instance's expected value
    [quick]                        # what --quick changes: max_instances, repetitions, time_limit
    [[table]]                      # paper-style Markdown tables of the records (table.py: check_spec)

An expected value is an integer optimum or ``unsolvable``.

``expected_from`` reads expected values (and any other reference figures, ``fields``) from a
CSV file or a Markdown table (by the file's suffix): the row whose ``key`` column holds the
instance's key -- the option value for ``option`` entries, else the instance file's path
relative to the reference file's directory; ``match = REGEX`` takes the key from the cell's
first group (``"Microban (\\d+)"``).  ``part = N`` takes the N-th number of a cell written
``a / b``; ``weights = [W, 1]`` combines them (a tie-broken cost ``a * W + b``).  The ``fields``
land in each record under ``ref`` (table field ``ref.best_known``).
"""

from __future__ import annotations

import csv
import glob as globmod
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from ..lang.errors import EXIT_BAD_OPTION, PuzzleError
from ..lang.records import Record, read_records, split_headers
from .table import TableSpecError, check_spec

BENCH_DIR = Path(__file__).resolve().parent.parent.parent / "bench"

SET_KEYS = {"model", "engines", "kernel", "options", "expected", "zero_means_unsolvable", "instances",
            "repetitions", "warmup", "time_limit", "max_states", "label", "engine_options", "seeds",
            "give_up", "max_memory_mb", "isolate", "keep_plan"}
ENTRY_KEYS = {"glob", "file", "ids", "header", "expected", "option", "from", "to", "values", "expected_from"}
REF_KEYS = {"file", "key", "match", "value", "part", "weights", "fields"}
TOP_KEYS = SET_KEYS | {"name", "description", "kind", "set", "quick", "speed", "enumerate", "table"}


class SuiteError(PuzzleError):
    code = EXIT_BAD_OPTION


@dataclass
class Instance:
    """One record to run: ``spec`` is what ``api.load_task`` takes (``FILE`` or ``FILE#ID``)."""

    spec: str
    id: str
    file: str
    record: Record
    expected_raw: Any = None          # what the suite/file says, before interpretation
    options: list[str] = field(default_factory=list)   # -O pairs of this instance (``option`` entries)
    ref: dict[str, Any] = field(default_factory=dict)  # reference figures (``expected_from`` fields)


@dataclass
class RunSet:
    label: str
    model: str
    engines: list[str]
    kernel: str
    options: list[list[str]]
    instances: list[Instance]
    repetitions: int
    time_limit: float | None
    max_states: int | None
    zero_means_unsolvable: bool
    engine_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    warmup: int = 0                   # untimed runs per (instance, engine) before the repetitions
    seeds: list[int] | None = None    # one run per seed (instead of ``repetitions``), passed to engines
                                      # that take a seed (ga, cpsat); None: engines' default seed
    give_up: int | None = None        # per engine: no more instances after this many unproven in a row
    max_memory_mb: float | None = None   # the engine's own data budget (Limits.max_mb)
    isolate: bool = False             # each unit in a fresh process: its own peak RSS, a crash ends one unit
    keep_plan: bool = False           # records carry the plan's action labels

    @property
    def reps(self) -> int:
        return len(self.seeds) if self.seeds is not None else self.repetitions

    def seed_of(self, rep: int) -> int | None:
        return self.seeds[rep] if self.seeds is not None else None


@dataclass
class Suite:
    name: str
    path: Path
    kind: str
    description: str
    data: dict[str, Any]
    sets: list[RunSet] = field(default_factory=list)
    quick: dict[str, Any] = field(default_factory=dict)
    tables: list[dict[str, Any]] = field(default_factory=list)


def bench_dirs() -> list[Path]:
    dirs = []
    for d in (Path.cwd() / "bench", BENCH_DIR):
        if d.is_dir() and d.resolve() not in [x.resolve() for x in dirs]:
            dirs.append(d)
    return dirs


def available() -> list[str]:
    names: set[str] = set()
    for d in bench_dirs():
        names.update(p.stem for p in d.glob("*.toml"))
    return sorted(names)


def find_suite(name_or_path: str) -> Path:
    p = Path(name_or_path)
    if p.suffix == ".toml" or os.sep in name_or_path or "/" in name_or_path:
        if not p.is_file():
            raise SuiteError("no such suite file", name_or_path)
        return p
    for d in bench_dirs():
        for stem in {name_or_path, name_or_path.replace("-", "_"), name_or_path.replace("_", "-")}:
            cand = d / f"{stem}.toml"
            if cand.is_file():
                return cand
    known = ", ".join(available()) or "none found"
    raise SuiteError(f"unknown suite {name_or_path!r} (known: {known}; or give a path to a .toml file)")


def load_suite(name_or_path: str) -> Suite:
    path = find_suite(name_or_path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise SuiteError(f"not a valid TOML suite: {e}", str(path)) from None
    unknown = set(data) - TOP_KEYS
    if unknown:
        raise SuiteError(f"unknown suite keys: {', '.join(sorted(unknown))}", str(path))
    kind = data.get("kind", "solve")
    if kind not in ("solve", "speed"):
        raise SuiteError(f"kind must be 'solve' or 'speed', not {kind!r}", str(path))
    suite = Suite(str(data.get("name", path.stem)), path, kind, str(data.get("description", "")), data,
                  quick=dict(data.get("quick", {})))
    suite.tables = check_tables(data.get("table", []), str(path))
    if kind == "solve":
        raw_sets = data.get("set") or [{}]
        defaults = {k: v for k, v in data.items() if k in SET_KEYS}
        for i, raw in enumerate(raw_sets):
            bad = set(raw) - SET_KEYS
            if bad:
                raise SuiteError(f"set {i + 1}: unknown keys {', '.join(sorted(bad))}", str(path))
            suite.sets.append(_run_set({**defaults, **raw}, path, i))
    return suite


def check_tables(raw: Any, where: str) -> list[dict[str, Any]]:
    """The suite's ``[[table]]`` specs, checked (a bad spec is a suite error before anything runs)."""
    specs = raw if isinstance(raw, list) else [raw]
    try:
        return [check_spec(t, f"table {i + 1}") for i, t in enumerate(specs)]
    except TableSpecError as e:
        raise SuiteError(str(e), where) from None


def _as_list(x: Any) -> list[Any]:
    return x if isinstance(x, list) else [x]


def _run_set(d: dict[str, Any], path: Path, i: int) -> RunSet:
    where = f"set {i + 1}"
    if "model" not in d:
        raise SuiteError(f"{where}: no model", str(path))
    if "instances" not in d:
        raise SuiteError(f"{where}: no instances", str(path))
    options = d.get("options", [[]])
    if not isinstance(options, list) or not all(isinstance(o, list) for o in options):
        raise SuiteError(f"{where}: options must be a list of lists of 'key=value' strings", str(path))
    from .. import api

    comment = api.comment_marker(api.load_model(str(d["model"])))
    instances = expand_instances(d["instances"], path.parent, d.get("expected"), str(path), comment)
    if not instances:
        raise SuiteError(f"{where}: the instance patterns match no records", str(path))
    tl = d.get("time_limit")
    ms = d.get("max_states")
    seeds = d.get("seeds")
    if isinstance(seeds, dict) and set(seeds) == {"first", "count"}:   # seeds = { first = 0, count = 50 }
        seeds = list(range(int(seeds["first"]), int(seeds["first"]) + int(seeds["count"])))
    if seeds is not None and not (isinstance(seeds, list) and seeds
                                  and all(isinstance(x, int) for x in seeds)):
        raise SuiteError(f"{where}: seeds must be a non-empty list of integers or "
                         "{ first = N, count = K }", str(path))
    return RunSet(
        label=str(d.get("label", d["model"])),
        model=str(d["model"]),
        engines=[str(e) for e in _as_list(d.get("engines", ["bfs"]))],
        kernel=str(d.get("kernel", "numba")),
        options=[[str(x) for x in o] for o in options],
        instances=instances,
        repetitions=int(d.get("repetitions", 1)),
        time_limit=float(tl) if tl is not None else None,
        max_states=int(ms) if ms is not None else None,
        zero_means_unsolvable=bool(d.get("zero_means_unsolvable", False)),
        engine_options={str(k): dict(v) for k, v in d.get("engine_options", {}).items()},
        warmup=int(d.get("warmup", 0)),
        seeds=seeds,
        give_up=int(d["give_up"]) if d.get("give_up") is not None else None,
        max_memory_mb=float(d["max_memory_mb"]) if d.get("max_memory_mb") is not None else None,
        isolate=bool(d.get("isolate", False)),
        keep_plan=bool(d.get("keep_plan", False)),
    )


def _display_path(p: Path) -> str:
    try:
        return os.path.relpath(p)
    except ValueError:
        return str(p)


def expand_instances(entries: Any, base: Path, expected_header: Any, suite_file: str,
                     comment: str = "#") -> list[Instance]:
    """Turn the ``instances`` list into records, in order, without duplicates."""
    out: list[Instance] = []
    seen: set[tuple[str, str]] = set()
    for entry in _as_list(entries):
        if isinstance(entry, str):
            entry = {"glob": entry}
        if not isinstance(entry, dict):
            raise SuiteError(f"instance entry {entry!r} is neither a string nor a table", suite_file)
        pattern = entry.get("glob", entry.get("file"))
        if not isinstance(pattern, str):
            raise SuiteError(f"instance entry {entry!r} names no glob or file", suite_file)
        bad = set(entry) - ENTRY_KEYS
        if bad:
            raise SuiteError(f"instance entry {pattern!r}: unknown keys {', '.join(sorted(bad))}", suite_file)
        lookup = _reference(entry["expected_from"], base, suite_file) if "expected_from" in entry else None
        ids: list[str] | None = [str(x) for x in entry["ids"]] if "ids" in entry else None
        if "#" in pattern:
            pattern, rid = pattern.rsplit("#", 1)
            ids = (ids or []) + [rid]
        header = entry.get("header")
        if globmod.has_magic(pattern):
            files = sorted(globmod.glob(str(base / pattern)))
        else:
            files = [str(base / pattern)]
        if not files:
            raise SuiteError(f"no file matches {pattern!r}", suite_file)
        for f in files:
            fp = Path(f)
            records = read_records(fp, comment)
            for rec in records:
                split_headers(rec)
            if "option" in entry:
                # the instance is chosen by a model option (Sokoban's -O level=N), not a record
                if not records:
                    raise SuiteError(f"{fp}: no puzzle in the file", suite_file)
                opt = str(entry["option"])
                for v in _option_values(entry, suite_file):
                    key = (str(fp.resolve()), f"{opt}={v}")
                    if key in seen:
                        continue
                    seen.add(key)
                    exp, ref = entry.get("expected"), {}
                    if exp is None and lookup is not None:
                        exp, ref = lookup(str(v))
                    out.append(Instance(str(fp), f"{opt}={v}", _display_path(fp), records[0], exp,
                                        [f"{opt}={v}"], ref))
                continue
            wanted = records
            if ids is not None and not any(r.id for r in records) and all(x.isdigit() for x in ids):
                # a file without id headers (one puzzle per line, say): FILE#k is the k-th record as the
                # model counts them (api.load_task resolves it); the file's headers stand for each
                for x in ids:
                    key = (str(fp.resolve()), x)
                    if key not in seen:
                        seen.add(key)
                        out.append(Instance(f"{fp}#{x}", f"{fp.stem}#{x}", _display_path(fp), records[0],
                                            entry.get("expected")))
                continue
            if ids is not None:
                by_id = {r.id: r for r in records}
                missing = [x for x in ids if x not in by_id]
                if missing and globmod.has_magic(pattern):
                    wanted = [by_id[x] for x in ids if x in by_id]
                elif missing:
                    raise SuiteError(f"no record with id {missing[0]!r} in {fp}", suite_file)
                else:
                    wanted = [by_id[x] for x in ids]
            if header is not None:
                wanted = [r for r in wanted if header in r.headers]
            for rec in wanted:
                rid = rec.id or fp.stem
                disp = _display_path(fp)
                key = (str(fp.resolve()), rid)
                if key in seen:
                    continue
                seen.add(key)
                spec = f"{fp}#{rec.id}" if rec.id else str(fp)
                exp: Any = entry.get("expected")
                ref: dict[str, Any] = {}
                if exp is None and lookup is not None:
                    exp, ref = lookup(_relative_key(fp, entry["expected_from"], base))
                elif exp is None and isinstance(expected_header, str):
                    exp = rec.header(expected_header)
                elif exp is None and expected_header is not None:
                    exp = expected_header
                out.append(Instance(spec, rid, disp, rec, exp, [], ref))
    return out


def _option_values(entry: dict[str, Any], suite_file: str) -> list[Any]:
    """``from``/``to`` (inclusive) or ``values``: the option values an ``option`` entry runs."""
    if "values" in entry:
        vals = entry["values"]
        if not isinstance(vals, list) or not vals:
            raise SuiteError(f"instance entry {entry.get('file')!r}: values must be a non-empty list",
                             suite_file)
        return list(vals)
    lo, hi = entry.get("from"), entry.get("to")
    if not isinstance(lo, int) or not isinstance(hi, int) or hi < lo:
        raise SuiteError(f"instance entry {entry.get('file')!r}: option needs values = [...] or integer "
                         "from and to (to >= from)", suite_file)
    return list(range(lo, hi + 1))


def _relative_key(fp: Path, ref: dict[str, Any], base: Path) -> str:
    """An instance file's key in a reference table: its path from the table file's directory."""
    return Path(os.path.relpath(fp.resolve(), (base / str(ref["file"])).resolve().parent)).as_posix()


def _reference(ref: Any, base: Path, suite_file: str) -> Any:
    """``expected_from``: a function from an instance key to (expected_raw, reference fields)."""
    if not isinstance(ref, dict) or not {"file", "key", "value"} <= set(ref) or set(ref) - REF_KEYS:
        raise SuiteError("expected_from must be { file, key, value } (optional: match, part, weights, "
                         "fields)", suite_file)
    path = base / str(ref["file"])
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise SuiteError(f"expected_from: cannot read {path}: {e.strerror}", suite_file) from None
    rows = list(csv.DictReader(text.splitlines())) if path.suffix == ".csv" else _markdown_rows(text)
    key_col, val_col = str(ref["key"]), str(ref["value"])
    fields = {str(k): str(v) for k, v in (ref.get("fields") or {}).items()}
    for col in [key_col, val_col, *fields.values()]:
        if not any(col in r for r in rows):
            raise SuiteError(f"expected_from: no column {col!r} in {path}", suite_file)
    pattern = re.compile(str(ref["match"])) if "match" in ref else None
    table: dict[str, dict[str, str]] = {}
    for r in rows:
        if key_col not in r or val_col not in r:
            continue
        k = (r[key_col] or "").strip()
        if pattern is not None:
            m = pattern.fullmatch(k)
            if not m:
                continue
            k = m.group(1) if m.groups() else m.group(0)
        table.setdefault(k, r)

    def lookup(key: str) -> tuple[Any, dict[str, Any]]:
        r = table.get(key)
        if r is None:
            return None, {}
        return (_cell_value((r[val_col] or "").strip(), ref.get("part"), ref.get("weights")),
                {k: _number((r.get(c) or "").strip()) for k, c in fields.items()})

    return lookup


def _number(text: str) -> Any:
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        return text


def _cell_value(text: str, part: Any, weights: Any) -> Any:
    """A reference cell as an expected value: the whole cell, its N-th ``/`` part, or the parts
    combined by weights; a cell that is not made of numbers (``n/s``) is passed on as text."""
    if part is None and weights is None:
        return _number(text)
    try:
        nums = [int(x) for x in text.split("/")]
    except ValueError:
        return text or None
    if weights is not None:
        if len(nums) != len(weights):
            return text
        return sum(int(w) * n for w, n in zip(weights, nums))
    return nums[int(part)] if int(part) < len(nums) else text


def _markdown_rows(text: str) -> list[dict[str, str]]:
    """Every row of every Markdown table in ``text``, as {header: cell}."""
    out: list[dict[str, str]] = []
    lines = text.splitlines()
    header: list[str] | None = None
    for i, line in enumerate(lines):
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", nxt.strip()):
                header = cells
            continue
        if all(re.fullmatch(r":?-+:?", c) for c in cells):
            continue
        out.append(dict(zip(header, cells)))
    return out


def interpret_expected(raw: Any, start_is_goal: bool | None, zero_means_unsolvable: bool) -> tuple[Any, str]:
    """(expected, note): an int optimum, ``"unsolvable"``, or None when there is nothing to compare.

    With ``zero_means_unsolvable`` the published markers ``0`` and ``unsolvable`` are one symbol
    (fayaa.com lists "走投無路" as 0): it means "no solution" unless the start already satisfies the
    goal, where the only consistent reading is an optimum of 0.
    """
    if raw is None:
        return None, ""
    text = str(raw).strip().lower()
    if text in ("", "not computed", "n/c", "n/s", "unknown", "?"):
        return None, f"no figure ({raw})"
    if text in ("unsolvable", "none", "no solution"):
        if zero_means_unsolvable and start_is_goal:
            return 0, f"published {raw!r} (source marker 0) read as 0: the start already satisfies the goal"
        return "unsolvable", ""
    try:
        value = int(text)
    except ValueError:
        return None, f"unreadable expected value {raw!r}"
    if value == 0 and zero_means_unsolvable and not start_is_goal:
        return "unsolvable", "published 0 read as 'unsolvable' (the start is not a goal)"
    return value, ""


def apply_quick(suite: Suite) -> None:
    """Shrink every set as the suite's ``[quick]`` table says (default: 12 instances, 1 repetition)."""
    q = suite.quick
    n = int(q.get("max_instances", 12))
    for s in suite.sets:
        if len(s.instances) > n:
            step = len(s.instances) / n
            s.instances = [s.instances[int(i * step)] for i in range(n)]
        s.repetitions = int(q.get("repetitions", 1))
        if s.seeds is not None:
            s.seeds = s.seeds[:int(q.get("seeds", min(len(s.seeds), 3)))]
        s.warmup = int(q.get("warmup", s.warmup))
        if "time_limit" in q:
            s.time_limit = float(q["time_limit"])
