"""Script declarations: how a move script (a genome) picks actions, and how far a state has got.

Why this exists: a genetic algorithm over move scripts (the indirect encoding
of e.g. Coldridge & Amos's Zen Puzzle Garden GA) must know, without knowing
the puzzle, which actions a gene chooses among and what "progress" a partial
script has made.  Both are facts about the model, so the model declares them:

``script(m, opening=..., inner=..., ...)``
    A script is a sequence of *clauses*.  A clause starts with an *opening*
    decision (one action of an opening schema, e.g. "enter the garden at entry
    point e") and continues with *inner* decisions (actions of inner schemas,
    e.g. "slide in direction d") until the state offers opening actions again.
    Each decision uses two genes: the *option* gene picks among the applicable
    options (distinct values of the schema's ``option`` parameter, in the
    order the schema declares them: gene mod number of applicable options),
    the *variant* gene among the applicable values of the ``variant``
    parameter of that option (e.g. how many times to push), again modulo.

``progress(m, remaining)``
    An integer expression of the work still to do, 0 when it is all done
    (e.g. the number of unraked squares).  A GA scores a partial script by
    ``remaining(state) / remaining(initial state)`` (the paper's AreaFitness).

Both land in ``model.info["script"]`` (plain data plus one expression), which
grounding copies to the task unchanged; engines that do not use scripts never
look at it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ModelError
from .expr import INT, Expr, ExprLike, lift
from .model import Model

KEY = "script"


@dataclass(frozen=True)
class Choice:
    """One schema's part in a decision: which parameter is the option, which (if any) the variant.

    ``options`` / ``variants`` are the parameter's values in declaration order:
    gene values index into the applicable ones in this order.
    """

    schema: str
    option: str
    options: tuple[Any, ...]
    variant: str | None = None
    variants: tuple[Any, ...] = ()


@dataclass(frozen=True)
class ScriptSpec:
    """What a script GA needs to know about a model (see the module docstring)."""

    opening: tuple[Choice, ...]
    inner: tuple[Choice, ...]
    inner_options: int          # the option gene's range at inner decisions (most options ever applicable)
    steps: int                  # inner decisions a clause stores genes for (more reuse them cyclically)
    progress: Expr | None = None

    @property
    def opening_options(self) -> int:
        """The opening gene's range: every opening option of every opening schema."""
        return sum(len(c.options) for c in self.opening)

    @property
    def variant_range(self) -> int:
        return max([len(c.variants) for c in self.opening + self.inner] + [1])


def _choice(m: Model, schema: str, params: Sequence[str] | str) -> Choice:
    names = (params,) if isinstance(params, str) else tuple(params)
    found = [s for s in m.schemas if s.name == schema]
    if not found:
        raise ModelError(f"script: no action schema {schema!r} declared (declare the actions first)")
    if not 1 <= len(names) <= 2:
        raise ModelError(f"script: schema {schema!r} needs (option) or (option, variant) parameter names")
    sch = found[0]
    for n in names:
        if n not in sch.params:
            raise ModelError(f"script: schema {schema!r} has no parameter {n!r}")
    opt = names[0]
    var = names[1] if len(names) > 1 else None
    return Choice(schema, opt, tuple(sch.params[opt]), var, tuple(sch.params[var]) if var else ())


def script(m: Model, opening: Mapping[str, Sequence[str] | str], inner: Mapping[str, Sequence[str] | str],
           inner_options: int | None = None, steps: int = 8) -> ScriptSpec:
    """Declare how a move script decodes into actions (module docstring).

    ``opening`` / ``inner`` map a schema name to its option parameter, or to
    (option, variant).  ``inner_options``: the range of the option gene at
    inner decisions; by default the number of distinct inner options (give
    the true maximum, e.g. 2 where at most two directions are ever open, so
    that every gene value means something).  ``steps``: inner decisions a
    clause stores genes for.
    """
    if not opening or not inner:
        raise ModelError("script: declare at least one opening and one inner schema")
    op = tuple(_choice(m, s, p) for s, p in opening.items())
    inn = tuple(_choice(m, s, p) for s, p in inner.items())
    if set(opening) & set(inner):
        raise ModelError("script: a schema cannot be both opening and inner")
    n_inner = inner_options if inner_options is not None else max(len(c.options) for c in inn)
    if n_inner < 1 or steps < 1:
        raise ModelError("script: inner_options and steps must be >= 1")
    old = m.info.get(KEY)
    kept = old.progress if isinstance(old, ScriptSpec) else None
    spec = ScriptSpec(op, inn, int(n_inner), int(steps), kept)
    m.info[KEY] = spec
    return spec


def progress(m: Model, remaining: ExprLike) -> None:
    """Declare the work still to do (an integer expression, 0 when done); see the module docstring."""
    e = lift(remaining)
    if e.kind != INT:
        raise ModelError("progress: the remaining-work measure must be an integer expression")
    old = m.info.get(KEY)
    if isinstance(old, ScriptSpec):
        m.info[KEY] = ScriptSpec(old.opening, old.inner, old.inner_options, old.steps, e)
    else:
        m.info[KEY] = ScriptSpec((), (), 1, 1, e)


def spec_of(info: Mapping[str, Any]) -> ScriptSpec | None:
    """The declaration a task carries (``task.info``), or None."""
    s = info.get(KEY)
    return s if isinstance(s, ScriptSpec) else None


__all__ = ["Choice", "ScriptSpec", "progress", "script", "spec_of"]
