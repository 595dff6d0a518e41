"""Write docs/cli-reference.md from the argparse parser of ``puzzleplan`` (puzzleplan/cli.py).

Why generated: the parser is the one place where commands, options, defaults
and help texts are defined; a hand-written reference drifts from it.
tests/test_docs.py regenerates the page in memory and fails when the
checked-in file differs, naming this script.

    python scripts/gen_cli_reference.py            # rewrite docs/cli-reference.md
    python scripts/gen_cli_reference.py --check    # exit 1 if the file is stale

The page is built from the parser's actions, not from argparse's own help
formatter, whose line wrapping depends on the terminal width and the Python
version.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "docs" / "cli-reference.md"
COMMAND = "python scripts/gen_cli_reference.py"

HEADER = f"""# CLI reference

<!-- Generated from the argparse parser in puzzleplan/cli.py by `{COMMAND}`.
     Do not edit by hand: tests/test_docs.py fails when this page differs from the parser. -->

Every command and option of `puzzleplan`, generated from the program's own
argument parser, so it always matches the installed version. The
[command-line guide](cli.md) explains them with examples, output formats and
exit codes.
"""


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell (one line, pipes escaped)."""
    return " ".join(text.split()).replace("|", "\\|")


def _expand(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The help text with argparse's %-placeholders filled in, as ``--help`` would print them."""
    text = action.help or ""
    if "%" in text:
        params = dict(vars(action), prog=parser.prog)
        params = {k: getattr(v, "__name__", v) for k, v in params.items()}
        text = text % params
    return text


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        return action.metavar if isinstance(action.metavar, str) else " ".join(action.metavar)
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        return "{" + ",".join(map(str, action.choices)) + "}"
    return action.dest.upper() if action.option_strings else action.dest


def _takes_value(action: argparse.Action) -> bool:
    return action.nargs != 0


def _positional_synopsis(action: argparse.Action) -> str:
    name = _metavar(action).upper() if action.metavar is None else _metavar(action)
    if action.nargs == "?":
        return f"[{name}]"
    if action.nargs == "*":
        return f"[{name} ...]"
    if action.nargs == "+":
        return f"{name} [{name} ...]"
    return name


def _option_name(action: argparse.Action) -> str:
    """``--engine E``, ``-e``: the longest spelling with its value, then the aliases."""
    first, *aliases = sorted(action.option_strings, key=lambda s: (-len(s), s))
    if _takes_value(action):
        value = _metavar(action)
        first += f" [{value}]" if action.nargs == "?" else f" {value}"
    return ", ".join(f"`{s}`" for s in [first, *aliases])


def _default(action: argparse.Action) -> str:
    if not _takes_value(action) or action.default in (None, argparse.SUPPRESS):
        return ""
    if isinstance(action.default, list):
        return "" if not action.default else f"`{' '.join(map(str, action.default))}`"
    return f"`{action.default}`"


def _notes(action: argparse.Action) -> str:
    extra = []
    if action.required and action.option_strings:
        extra.append("required")
    if isinstance(action, argparse._AppendAction) and "repeatable" not in (action.help or ""):
        extra.append("repeatable")
    if action.choices is not None and action.metavar is not None:
        extra.append("one of " + ", ".join(f"`{c}`" for c in action.choices))
    return f"({'; '.join(extra)})" if extra else ""


def _meaning(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    return " ".join(x for x in (_cell(_expand(parser, action)), _notes(action)) if x)


def _anchor(path: list[str]) -> str:
    """MkDocs' anchor for the heading `` `puzzleplan a b` ``."""
    return "-".join(["puzzleplan", *path])


def _section(parser: argparse.ArgumentParser, path: list[str], summary: str) -> list[str]:
    """Markdown for one (sub)command, then its own subcommands, depth first."""
    visible = [a for a in parser._actions
               if a.help is not argparse.SUPPRESS and not isinstance(a, argparse._HelpAction)]
    subs = [a for a in visible if isinstance(a, argparse._SubParsersAction)]
    positionals = [a for a in visible if not a.option_strings and a not in subs]
    options = [a for a in visible if a.option_strings]

    synopsis = " ".join(["puzzleplan", *path] + (["[options]"] if options else [])
                        + [_positional_synopsis(a) for a in positionals] + (["COMMAND"] if subs else []))
    out = [f"{'#' * min(len(path) + 1, 4)} `{' '.join(['puzzleplan', *path])}`", ""]
    text = summary or parser.description or ""
    if summary and parser.description and parser.description != summary:
        text = f"{summary}. {parser.description}"
    if text:
        out += [_cell(text), ""]
    out += ["```text", synopsis, "```", ""]
    if positionals:
        out += ["| argument | meaning |", "|---|---|"]
        out += [f"| `{_positional_synopsis(a)}` | {_meaning(parser, a)} |" for a in positionals]
        out.append("")
    if options:
        out += ["| option | default | meaning |", "|---|---|---|"]
        out += [f"| {_option_name(a)} | {_default(a)} | {_meaning(parser, a)} |" for a in options]
        out.append("")
    for sub in subs:
        helps = {c.dest: c.help or "" for c in sub._choices_actions}
        out += ["| command | what it does |", "|---|---|"]
        out += [f"| [`{name}`](#{_anchor([*path, name])}) | {_cell(helps.get(name, ''))} |"
                for name in sub.choices]
        out.append("")
        for name, child in sub.choices.items():
            out += _section(child, [*path, name], helps.get(name, ""))
    return out


def generate() -> str:
    """The page's full text for the parser as it is now."""
    from puzzleplan.cli import build_parser

    parser = build_parser()
    body = _section(parser, [], "")
    # the top level: drop its heading (the page title stands for it)
    return HEADER + "\n" + "\n".join(body[2:]).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Write docs/cli-reference.md from the puzzleplan parser.")
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 if the file is stale")
    args = ap.parse_args(argv)
    text = generate()
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET.relative_to(ROOT)} is stale: run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
