"""docs/example.ipynb runs end to end, without Jupyter: its code cells are exec'd in order.

The notebook is read with the json module (no nbformat/nbconvert dependency) and run from docs/,
the directory Jupyter starts a notebook in, so its way of finding the instance files is tested
too.  A cell's last bare expression is displayed the way Jupyter would (``_repr_svg_`` /
``_repr_html_``); the pictures it draws must be SVG.
"""

from __future__ import annotations

import json
from typing import Any

from helpers import ROOT
from test_api_docs import run_cell

NOTEBOOK = ROOT / "docs" / "example.ipynb"


def _notebook() -> dict[str, Any]:
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))


def _code_cells(nb: dict[str, Any]) -> list[str]:
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def test_notebook_is_a_plain_nbformat_4_file():
    nb = _notebook()
    assert nb["nbformat"] == 4 and nb["metadata"]["kernelspec"]["language"] == "python"
    kinds = {c["cell_type"] for c in nb["cells"]}
    assert kinds == {"markdown", "code"}
    # no stored outputs: what a reader sees after running it is what the library prints today
    for c in nb["cells"]:
        if c["cell_type"] == "code":
            assert c["outputs"] == [] and c["execution_count"] is None


def test_notebook_covers_the_workflow():
    code = "\n".join(_code_cells(_notebook()))
    for call in ("api.load_task(", "api.solve(", ".labels(", ".moves(", "api.picture(", "crosscheck.run("):
        assert call in code, f"the notebook shows no {call}"


def test_notebook_runs_end_to_end(monkeypatch, capsys):
    monkeypatch.chdir(ROOT / "docs")
    namespace: dict[str, Any] = {"__name__": "__notebook__"}
    shown = []
    for i, source in enumerate(_code_cells(_notebook())):
        value = run_cell(source, namespace, f"{NOTEBOOK.name}, code cell {i + 1}")
        if value is not None:
            shown.append(value)
    out = capsys.readouterr().out
    assert "optimal 5 moves in 8 unit steps" in out
    assert "confirmed 8" in out
    # the cells that end in a picture display it as SVG
    assert len(shown) >= 2
    assert "<svg" in shown[0]._repr_svg_() and "<svg" in shown[-1]._repr_html_()
