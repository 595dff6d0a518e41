"""The documentation site builds cleanly and its generated CLI reference matches the parser.

* ``mkdocs build --strict`` (mkdocs.yml: broken links and anchors are warnings,
  strict turns them into a failure) into a temporary directory.
* docs/cli-reference.md equals what scripts/gen_cli_reference.py writes from
  the parser now, so the page cannot go stale; and the generator misses no
  command or option of the parser.
* Every bundled model has its page in docs/models/.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

from helpers import ROOT

from puzzleplan import api
from puzzleplan.cli import build_parser

GENERATOR = ROOT / "scripts" / "gen_cli_reference.py"
REFERENCE = ROOT / "docs" / "cli-reference.md"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_cli_reference", GENERATOR)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_mkdocs_strict_build(tmp_path: Path):
    try:
        import mkdocs  # noqa: F401
    except ImportError as e:  # the test extra installs it; CI must not skip this silently
        raise AssertionError("mkdocs is missing: pip install -e '.[test]'") from e
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    problems = [ln for ln in proc.stderr.splitlines() if ln.startswith(("WARNING", "ERROR"))]
    assert proc.returncode == 0 and not problems, (
        "mkdocs build --strict failed:\n" + ("\n".join(problems) or proc.stderr[-3000:]))
    site = tmp_path / "site"
    assert (site / "index.html").is_file()
    for page in ("install", "quickstart", "tutorial", "cli-reference", "language", "models/lightsout"):
        assert (site / page / "index.html").is_file(), page
    assert "Lights Out" in (site / "tutorial" / "index.html").read_text(encoding="utf-8")


def test_cli_reference_is_up_to_date():
    current = REFERENCE.read_text(encoding="utf-8") if REFERENCE.exists() else ""
    assert current == _generator().generate(), (
        "docs/cli-reference.md differs from the command-line parser: regenerate it with "
        "`python scripts/gen_cli_reference.py` and commit the result")


def _subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _subcommands(child, (*path, name))


def test_cli_reference_covers_every_command_and_option():
    text = _generator().generate()
    commands = list(_subcommands(build_parser()))
    assert len(commands) >= 8
    for path, parser in commands:
        if path:
            assert f"`puzzleplan {' '.join(path)}`" in text, f"no section for {' '.join(path)}"
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction) or action.help is argparse.SUPPRESS:
                continue
            for spelling in action.option_strings:
                assert f"`{spelling}" in text, f"{' '.join(path)}: option {spelling} missing"
            if action.help and not isinstance(action, argparse._SubParsersAction):
                words = " ".join(action.help.split())[:40].replace("|", "\\|")
                assert words in text, f"{' '.join(path)}: help of {action.dest} missing"


def test_generator_check_mode_reports_stale_file(tmp_path: Path, monkeypatch, capsys):
    gen = _generator()
    monkeypatch.setattr(gen, "TARGET", tmp_path / "cli-reference.md")
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    (tmp_path / "cli-reference.md").write_text("old\n", encoding="utf-8")
    assert gen.main(["--check"]) == 1
    assert "python scripts/gen_cli_reference.py" in capsys.readouterr().err
    assert gen.main([]) == 0 and gen.main(["--check"]) == 0


def test_every_bundled_model_has_a_page():
    missing = [m for m in api.bundled_models() if not (ROOT / "docs" / "models" / f"{m}.md").is_file()]
    assert not missing, f"bundled models without docs/models/<name>.md: {missing}"
