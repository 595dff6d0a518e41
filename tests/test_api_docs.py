"""docs/api.md is executed, not just read: its ```python blocks run in order, in one namespace.

Each block runs from the repository root (the page's paths are relative to it) the way a notebook
cell does: a last bare expression is evaluated and "displayed" (its ``_repr_svg_`` /
``_repr_html_`` called, as Jupyter would).  The page's promises are checked by its own asserts;
these tests check that it keeps covering the workflow, and that the ``py.typed`` marker it mentions
ships with the package.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Any

from helpers import ROOT

API_PAGE = ROOT / "docs" / "api.md"


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(first line number, source) of every ```python block of a Markdown page."""
    out = []
    for m in re.finditer(r"^```python\n(.*?)^```", text, flags=re.S | re.M):
        out.append((text.count("\n", 0, m.start()) + 2, m.group(1)))
    return out


def display(value: Any) -> str:
    """What Jupyter would show for a cell's value: its richest representation."""
    for method in ("_repr_svg_", "_repr_html_"):
        fn = getattr(value, method, None)
        if callable(fn):
            return str(fn())
    return repr(value)


def run_cell(source: str, namespace: dict[str, Any], where: str) -> Any:
    """Run one cell like a notebook does: statements, then the last bare expression displayed."""
    tree = ast.parse(source, filename=where)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, where, "exec"), namespace)
    if last is None:
        return None
    value = eval(compile(last, where, "eval"), namespace)
    display(value)
    return value


def test_api_page_examples_run_in_order(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    blocks = python_blocks(API_PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 8
    namespace: dict[str, Any] = {"__name__": "__api_docs__"}
    for line, source in blocks:
        run_cell(source, namespace, f"{API_PAGE.relative_to(ROOT)}:{line}")
    out = capsys.readouterr().out
    assert "no plan of at most 13 steps (UNSAT at horizon 13" in out   # what the page says sat prints


def test_api_page_covers_the_workflow():
    code = "\n".join(src for _, src in python_blocks(API_PAGE.read_text(encoding="utf-8")))
    for call in ("api.load_task(", "api.solve(", "Limits(", "loaded.labels(", "api.plan_labels(",
                 ".moves(", "crosscheck.run(", "api.picture(", "count=2"):
        assert call in code, f"docs/api.md shows no {call}"
    assert "numba" not in code, "examples must stay on kernel='numpy' (no compile in the tests)"


def test_the_notebook_and_the_page_link_each_other():
    page = API_PAGE.read_text(encoding="utf-8")
    assert "(example.ipynb)" in page
    assert "api.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "docs/api.md" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(api.md)" in (ROOT / "docs" / "index.md").read_text(encoding="utf-8")


def test_cell_runner_displays_the_last_expression(capsys):
    class Pic:
        shown = 0

        def _repr_svg_(self) -> str:
            Pic.shown += 1
            return "<svg/>"

    ns: dict[str, Any] = {"Pic": Pic}
    value = run_cell("x = 2\nPic()", ns, "cell")
    assert isinstance(value, Pic) and Pic.shown == 1 and ns["x"] == 2
    assert run_cell("y = x + 1", ns, "cell") is None and ns["y"] == 3
    assert python_blocks("a\n```python\nz = 1\n```\n```bash\nno\n```\n") == [(3, "z = 1\n")]


def test_py_typed_marker_ships():
    assert (ROOT / "puzzleplan" / "py.typed").is_file()
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["puzzleplan"]
    # an installed copy (editable or not) has it beside the package's modules
    import puzzleplan

    assert (Path(puzzleplan.__file__).parent / "py.typed").is_file()


def test_loaded_labels_and_moves_read_a_result():
    from puzzleplan import api
    from puzzleplan.solvers import Result

    loaded = api.load_task("klotski", f"{ROOT}/instances/klotski/unblockit2.txt#unblockit2-001")
    assert loaded.labels(Result("limit", "bfs")) is None and loaded.moves(Result("limit", "bfs")) is None
    first = next(k for k, a in enumerate(loaded.task.actions) if a.cost == 1)
    free = next(k for k, a in enumerate(loaded.task.actions)
                if a.cost == 0 and a.label.split()[0] == loaded.task.actions[first].label.split()[0])
    res = Result("solved", "bfs", cost=1, plan=[first, free])
    assert loaded.labels(res) == [loaded.task.actions[first].label, loaded.task.actions[free].label]
    assert loaded.moves(res) == api.plan_moves(loaded.task, [first, free]) and len(loaded.moves(res)) == 1
