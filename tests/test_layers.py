"""The layer rule of DESIGN.md: imports only point downward, models see only the language,
and nothing puzzle-specific lives in the language, the IR, the encodings or the engines.

Static checks over the source (ast), so they see imports inside functions too.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest
from helpers import ROOT

PKG = ROOT / "puzzleplan"
MODELS = ROOT / "models"

# who may import whom (by first component below ``puzzleplan``); "" is the package root
# (``puzzleplan/__init__.py``, only a version string), importable from anywhere.
# lang < ir < encodings < solvers < verify < bench < top (api, cli and other single modules
# beside them, such as the cross-engine verifier); verify must not see the fast code it checks.
LOWER = ["lang", "ir", "encodings", "solvers"]
ALLOWED = {
    "lang": {"lang"},
    "ir": {"lang", "ir"},
    "encodings": {"lang", "ir", "encodings"},
    "solvers": {"lang", "ir", "encodings", "solvers"},
    "verify": {"lang", "ir", "verify"},
    # pictures evaluate looks with the reference interpreter and replay plans like the checker;
    # they never see kernels or engines
    "render": {"lang", "ir", "verify", "render"},
}
SUBPACKAGES = {"lang", "ir", "encodings", "solvers", "verify", "bench", "render"}


# above the command line: the program's entry point, the server it hands runs to, and their wire
ENTRY = {"launch", "serve"}


def allowed(layer: str, target: str) -> bool:
    if layer in ALLOWED:
        return target in ALLOWED[layer]
    if layer in ENTRY:
        return True
    if layer == "cli":
        return target not in ENTRY
    # bench and the top-level modules (api, ...): everything but the command line and the entry
    return target != "cli" and target not in ENTRY


def _modules() -> list[Path]:
    files = sorted(PKG.rglob("*.py"))
    assert len(files) > 10, "did not find the package sources"
    return files


def _layer_of_file(path: Path) -> str:
    parts = path.relative_to(PKG).with_suffix("").parts
    if parts == ("__init__",):
        return ""
    if len(parts) > 1:
        assert parts[0] in SUBPACKAGES, f"new subpackage {parts[0]!r}: give it a place in the layer rule"
    return parts[0]


def _module_name(path: Path) -> list[str]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return parts


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute dotted module) for every import in the file, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    mod = _module_name(path)
    package = mod if path.name == "__init__.py" else mod[:-1]
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if node.module is None:
                # ``from . import a, b``: each name may be a submodule
                out.extend((node.lineno, f"{target}.{a.name}") for a in node.names)
            else:
                out.append((node.lineno, target))
    return out


def _target_layer(dotted: str) -> str | None:
    parts = dotted.split(".")
    if parts[0] != "puzzleplan":
        return None
    if len(parts) == 1:
        return ""
    if parts[1] == "__version__":
        return ""
    return parts[1]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_downward(path: Path):
    layer = _layer_of_file(path)
    bad = []
    for line, dotted in _imports(path):
        target = _target_layer(dotted)
        if target is None:
            continue                            # not ours
        if layer == "":
            bad.append((line, dotted))          # the root package imports nothing of its own
            continue
        if target == "":
            continue                            # ``from puzzleplan import __version__``
        if not allowed(layer, target):
            bad.append((line, dotted))
    assert not bad, f"{path.relative_to(ROOT)} ({layer}) imports upward/sideways: {bad}"


def test_import_resolution_sees_relative_and_absolute_imports():
    # guards the checker itself: a known downward import must be found
    found = {d for _, d in _imports(PKG / "verify" / "reference.py")}
    assert "puzzleplan.ir.task" in found and "puzzleplan.lang.ops" in found


def _model_files() -> list[Path]:
    # the bundled models, and the test-only models of this suite (they follow the same rule)
    files = sorted(p for p in MODELS.glob("*.py") if p.name != "__init__.py")
    assert files, "no model files found"
    return files + sorted((Path(__file__).parent / "models").glob("*.py"))


def _model_import_problems(path: Path) -> list[str]:
    """A model file loads on the language alone: it imports ``puzzleplan.lang`` and the standard
    library, never numpy (the kernels own it), another model (models are loaded by path, one at a
    time) or anything through ``__import__`` / ``importlib``, which would hide such an import."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                bad.append(f"{path.name}:{node.lineno}: relative import in a model file")
            names = [node.module or ""]
        elif isinstance(node, ast.Call):
            f = node.func
            called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if called in ("__import__", "import_module", "spec_from_file_location"):
                bad.append(f"{path.name}:{node.lineno}: imports at run time ({called})")
        for n in names:
            top = n.split(".")[0]
            if top == "puzzleplan" and n != "puzzleplan.lang":
                bad.append(f"{path.name}:{node.lineno} imports {n}")
            elif top != "puzzleplan" and top not in sys.stdlib_module_names:
                bad.append(f"{path.name}:{node.lineno} imports {n}: neither the language nor stdlib")
    return bad


@pytest.mark.parametrize("path", _model_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_model_files_import_only_the_language(path: Path):
    assert not _model_import_problems(path)


def test_model_import_check_sees_numpy_other_models_and_hidden_imports(tmp_path: Path):
    f = tmp_path / "m.py"
    f.write_text("from __future__ import annotations\nimport re\nfrom puzzleplan.lang import Model\n",
                 encoding="utf-8")
    assert _model_import_problems(f) == []
    for line in ("import numpy as np", "from klotski import parse", "from models import sokoban",
                 "from . import zpg", "from puzzleplan.api import load_task",
                 "m = importlib.import_module('zpg')", "np = __import__('numpy')"):
        f.write_text(f"import importlib\n{line}\n", encoding="utf-8")
        assert _model_import_problems(f), line


# ----------------------------------------------------------------------------- no puzzle names
PUZZLE_NAMES = [r"klotski", r"hua\s*_?rong", r"sliding", r"sokoban", r"kwirk", r"(?<![a-z])zen(?![a-z])",
                r"skyscraper", r"sudoku", r"lights\s*_?out"]


class _DropProse(ast.NodeTransformer):
    """Blank out prose string literals (help texts, messages: three words or more).

    They document, like comments do; short literals (names, keys, compared values such as
    ``model.name == "klotski"``) are code and stay.
    """

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str) and len(node.value.split()) >= 3:
            return ast.copy_location(ast.Constant(""), node)
        return node


def _code_without_docs(path: Path) -> str:
    """The module's code without comments, docstrings and prose string literals."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                body[0] = ast.Pass()
    return ast.unparse(_DropProse().visit(tree))


GENERIC = [p for p in _modules() if _layer_of_file(p) in LOWER + ["render"]]


@pytest.mark.parametrize("path", GENERIC, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_puzzle_names_in_generic_layers(path: Path):
    code = _code_without_docs(path).lower()
    hits = [pat for pat in PUZZLE_NAMES if re.search(pat, code)]
    assert not hits, f"{path.relative_to(ROOT)} mentions {hits} in code"


def test_puzzle_name_scan_strips_docstrings_but_sees_code(tmp_path: Path):
    f = tmp_path / "m.py"
    f.write_text('"""A klotski docstring."""\n# sokoban comment\nx = 1\n', encoding="utf-8")
    assert "klotski" not in _code_without_docs(f).lower()
    assert "sokoban" not in _code_without_docs(f).lower()
    f.write_text('NAME = "sudoku"\nif m.name == "kwirk": pass\nhelp = "meant for sokoban levels"\n',
                 encoding="utf-8")
    code = _code_without_docs(f).lower()
    assert "sudoku" in code and "kwirk" in code and "sokoban" not in code
    assert not re.search(PUZZLE_NAMES[5], "frozen=true")


def test_layer_rule_itself():
    assert allowed("verify", "ir") and not allowed("verify", "encodings") and not allowed("verify", "solvers")
    assert not allowed("lang", "ir") and not allowed("ir", "encodings") and not allowed("solvers", "verify")
    assert allowed("bench", "api") and not allowed("bench", "cli")
    assert allowed("api", "bench") and not allowed("api", "cli") and allowed("cli", "api")
    assert allowed("render", "verify") and not allowed("render", "solvers")
    assert not allowed("render", "encodings")
    assert allowed("api", "render") and not allowed("verify", "render")


def _closure(path: Path) -> tuple[set[str], set[str]]:
    """(our modules, third-party top-level packages) that importing ``path`` can load, transitively."""
    ours: set[str] = set()
    third: set[str] = set()
    todo = [path]
    while todo:
        for _, dotted in _imports(todo.pop()):
            top = dotted.split(".")[0]
            if top != "puzzleplan":
                third.add(top)
                continue
            parts = dotted.split(".")
            for k in range(2, len(parts) + 1):   # a package's __init__ runs before its modules
                name = ".".join(parts[:k])
                if name in ours:
                    continue
                base = ROOT.joinpath(*parts[:k])
                target = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
                if target.exists():
                    ours.add(name)
                    todo.append(target)
    return ours, third


def test_certificate_checker_sees_no_engine_code():
    """The certificate checker trusts the reference semantics only: nothing it loads, however
    indirectly, comes from the kernels or the engines, nor numpy, numba or a solver."""
    ours, third = _closure(PKG / "verify" / "certificate.py")
    assert "puzzleplan.verify.reference" in ours and "puzzleplan.ir.task" in ours
    assert not {m for m in ours if _target_layer(m) in ("encodings", "solvers")}, sorted(ours)
    assert not third & {"numpy", "numba", "pysat", "ortools", "scipy"}, sorted(third)


# ----------------------------------------------------------------------------- no import cycles
def _unit_graph() -> dict[str, dict[str, str]]:
    """unit -> {unit it imports: where, as 'file:line'}; a unit is a top-level module (api, cli,
    crosscheck, ...) or a subpackage (lang, solvers, bench, ...).  Imports inside functions count:
    a lazy import hides a cycle from Python's loader, not from a reader."""
    graph: dict[str, dict[str, str]] = {}
    for path in _modules():
        unit = _layer_of_file(path)
        if unit == "":
            continue
        for line, dotted in _imports(path):
            target = _target_layer(dotted)
            if target not in (None, "", unit):
                graph.setdefault(unit, {}).setdefault(target, f"{path.relative_to(ROOT)}:{line}")  # type: ignore[arg-type]
    return graph


def _cycles(graph: dict[str, dict[str, str]]) -> list[list[str]]:
    """The shortest cycle through each unit that is on one, each cycle once (from its least unit)."""
    found: set[tuple[str, ...]] = set()
    for start in graph:
        paths = {start: [start]}
        todo = [start]
        while todo:
            u = todo.pop(0)
            for v in sorted(graph.get(u, {})):
                if v == start:
                    cyc = paths[u]
                    k = cyc.index(min(cyc))
                    found.add(tuple(cyc[k:] + cyc[:k]))
                    todo = []
                    break
                if v not in paths:
                    paths[v] = paths[u] + [v]
                    todo.append(v)
    return [list(c) for c in sorted(found)]


def test_no_import_cycles_between_modules_and_subpackages():
    graph = _unit_graph()
    assert "api" in graph.get("bench", {}) and "api" in graph.get("cli", {})   # the graph is read
    cycles = _cycles(graph)
    shown = [" -> ".join(c + [c[0]]) + " (" + ", ".join(graph[a][b] for a, b in zip(c, c[1:] + c[:1])) + ")"
             for c in cycles]
    assert not cycles, "import cycles: " + "; ".join(shown)


def test_cycle_finder_itself():
    assert _cycles({"api": {"bench": "x"}, "bench": {"api": "y"}}) == [["api", "bench"]]
    assert _cycles({"a": {"b": ""}, "b": {"c": ""}, "c": {"a": ""}, "d": {"a": ""}}) == [["a", "b", "c"]]
    assert _cycles({"cli": {"api": "", "bench": ""}, "bench": {"api": ""}, "api": {}}) == []
