"""The model language: what a model file imports (and nothing else)."""

from .csp import CspModel, records_count
from .errors import InstanceError, ModelError, OptionError, PuzzleError
from .expr import (
    FALSE,
    TRUE,
    Abs,
    Add,
    And,
    Count,
    Element,
    Expr,
    If,
    Implies,
    Max,
    Member,
    Min,
    MinAssignment,
    Not,
    Or,
    Sum,
    Table,
    ToInt,
    const,
)
from .look import Look, Tile
from .model import Act, Model, Option, When
from .records import Record, is_uint, read_records, read_text, split_headers, text_lines, to_int
from .scripting import progress, script
from .variant import variant

__all__ = [
    "FALSE", "TRUE", "Abs", "Act", "Add", "And", "Count", "CspModel", "Element", "Expr", "If", "Implies",
    "InstanceError", "Look", "Max", "Member", "Min", "MinAssignment", "Model", "ModelError", "Not", "Option",
    "OptionError", "Or", "PuzzleError", "Record", "Sum", "Table", "Tile", "ToInt", "When", "const",
    "read_records", "split_headers", "records_count", "progress", "script", "variant",
    "is_uint", "read_text", "text_lines", "to_int",
]
