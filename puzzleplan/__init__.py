"""puzzleplan: one puzzle model, many engines."""

__version__ = "0.1.0"
