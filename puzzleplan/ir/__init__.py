"""Grounded, integer-indexed tasks (see task.py)."""

from .task import Effect, GroundAction, Task, ground

__all__ = ["Effect", "GroundAction", "Task", "ground"]
