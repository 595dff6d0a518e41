"""User-facing errors: one line, naming the file and line where there is one.

They live in the lowest layer because model files raise them while parsing
instances, and every layer above reports them the same way.  ``code`` is
the process exit code the CLI uses (documented in docs/cli.md).
"""

from __future__ import annotations

EXIT_BAD_INPUT = 30      # malformed instance file
EXIT_BAD_OPTION = 31     # unknown or invalid -O option / CLI argument
EXIT_BAD_MODEL = 32      # model file missing, not loadable, or invalid
EXIT_UNKNOWN_ENGINE = 33  # engine name not known
EXIT_BAD_PLAN = 34       # a plan file that does not replay
EXIT_OUTPUT = 35         # an output file that cannot be written


class PuzzleError(Exception):
    """An error caused by what the user gave us, not by a bug."""

    code = EXIT_BAD_INPUT

    def __init__(self, message: str, file: str | None = None, line: int | None = None,
                 code: int | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        where = ""
        if self.file is not None:
            where = f"{self.file}:{self.line}: " if self.line is not None else f"{self.file}: "
        return where + self.message


class InstanceError(PuzzleError):
    code = EXIT_BAD_INPUT


class OptionError(PuzzleError):
    code = EXIT_BAD_OPTION


class ModelError(PuzzleError):
    code = EXIT_BAD_MODEL
