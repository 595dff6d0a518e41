"""Which pysat back ends an engine may run on.

``-E solver=NAME`` reaches pysat unchanged, and pysat's back ends differ in what
they implement: some names are listed but not built into the wheel, Lingeling
has no conflict-limited solve (so no time limit could stop it), Kissat ignores
assumptions (the goal literal the horizon search assumes would silently be
dropped) and exposes no statistics.  Each of these ended in a traceback, or
could have produced a wrong answer.  The engines ask here first, and a solver
that lacks something they use is refused with a one-line option error.
"""

from __future__ import annotations

import warnings
from functools import cache

from ..lang.errors import OptionError


@cache
def _missing(name: str) -> str | None:
    """What ``name`` lacks for the engines' use (None: usable); tried on a two-clause formula."""
    from pysat.solvers import NoSuchSolverError, Solver, SolverNames

    if not hasattr(SolverNames, name):
        return "pysat has no solver by that name"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")       # Kissat only warns that it drops assumptions
            with Solver(name=name, bootstrap_with=[[1, 2], [-1, 2]]) as s:
                s.conf_budget(100)
                if s.solve_limited(assumptions=[-2]) is not False:
                    return "it does not honour assumptions"
                s.accum_stats()
    except NoSuchSolverError:
        return "this pysat build does not include it"
    except NotImplementedError as e:
        return str(e).rstrip(".").lower() or "it lacks an operation the engine uses"
    except RuntimeWarning as e:
        return str(e).split(".")[0].lower()
    except Exception as e:   # noqa: BLE001 -- any other failure of a back end is the same refusal
        return f"it failed a trial solve ({type(e).__name__})"
    return None


def usable() -> list[str]:
    """The pysat solver names that pass the trial, in pysat's order."""
    from pysat.solvers import SolverNames

    return [k for k in vars(SolverNames) if not k.startswith("_") and _missing(k) is None]


def check_solver(engine: str, name: str) -> str:
    """``name`` when the engine can run on it; otherwise a one-line ``OptionError`` (exit 31)."""
    why = _missing(name)
    if why is not None:
        ok = usable()
        some = ", ".join(ok[:6]) + (f" and {len(ok) - 6} more" if len(ok) > 6 else "")
        raise OptionError(f"engine {engine}: SAT solver {name!r} cannot be used: {why} (usable: {some})")
    return name
