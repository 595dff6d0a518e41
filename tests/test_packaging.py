"""The wheel's package list (pyproject.toml) names every package directory under puzzleplan/.

Why: the list is kept by hand (models/ is mapped to puzzleplan.models), and an editable install
imports a package the list forgot, so only a built wheel would have shown the gap.
"""

from __future__ import annotations

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_directory_is_listed() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "puzzleplan").rglob("__init__.py")}
    assert found - listed == set(), "packages missing from pyproject.toml"
    mapped = set(config.get("package-dir", {}))
    assert listed - found - mapped == set(), "listed packages that do not exist"
