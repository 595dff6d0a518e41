"""Figures from search statistics and bench results (matplotlib, the optional ``plot`` extra).

* ``layers``: states per BFS layer as the Hua Rong Dao paper's Table I has
  them -- after layer n is closed, CLOSE holds every state of layers 0..n and
  OPEN the states of layer n+1.  Both come from the ``layers`` stat the BFS
  engine records (states per layer, zero-cost continuations included), so no
  engine changes were needed.  For best-first engines the ``f_layers`` stat
  (states expanded per f-value) takes its place.
* ``cost_time``: one point per bench run, search time against cost, one colour
  per engine -- which engine reaches which cost how fast.

matplotlib is imported on first use with the ``Agg`` back end (files only, no
display); without it, a one-line error (exit 31).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..lang.errors import EXIT_BAD_OPTION, EXIT_OUTPUT, PuzzleError

FORMATS = (".png", ".svg", ".pdf")


def _plt() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise PuzzleError("plots need matplotlib: pip install 'puzzleplan[plot]'",
                          code=EXIT_BAD_OPTION) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: str) -> None:
    if not path.lower().endswith(FORMATS):
        raise PuzzleError(f"plot file must end in {', '.join(FORMATS)}", path, code=EXIT_BAD_OPTION)
    try:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    except OSError as e:
        raise PuzzleError(f"cannot write plot: {e.strerror}", path, code=EXIT_OUTPUT) from None
    finally:
        _plt().close(fig)


def layer_table(layers: Sequence[int]) -> list[tuple[int, int, int]]:
    """(layer n, CLOSE = states in layers 0..n, OPEN = states in layer n+1) for every layer."""
    out = []
    closed = 0
    for n, size in enumerate(layers):
        closed += size
        out.append((n, closed, layers[n + 1] if n + 1 < len(layers) else 0))
    return out


def render_layer_table(layers: Sequence[int], every: int = 1) -> str:
    rows = [r for r in layer_table(layers) if r[0] % every == 0 or r[0] == len(layers) - 1]
    w = max(len(f"{r[1]:,}") for r in rows) if rows else 5
    lines = [f"{'layer':>5}  {'closed':>{w}}  {'open':>{w}}"]
    lines += [f"{n:>5}  {c:>{w},}  {o:>{w},}" for n, c, o in rows]
    return "\n".join(lines)


def plot_layers(layers: Sequence[int], path: str, title: str = "", xlabel: str = "layer (cost)") -> None:
    """CLOSE and OPEN sizes per layer (log scale) to ``path`` (.png/.svg/.pdf)."""
    plt = _plt()
    rows = layer_table(layers)
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot([r[0] for r in rows], [r[1] for r in rows], label="closed (layers 0..n)")
    opened = [r for r in rows if r[2] > 0]      # the last layer's OPEN is empty (search ended): no log(0)
    ax.plot([r[0] for r in opened], [r[2] for r in opened], label="open (layer n+1)")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("states")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    _save(fig, path)


def plot_cost_time(records: Sequence[dict[str, Any]], path: str, title: str = "") -> int:
    """Search time (log) against cost, one series per engine; returns the number of points drawn."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    n = 0
    engines = sorted({str(r.get("engine") or r.get("solver")) for r in records})
    for e in engines:
        pts = [(max(float(r["time_s"]), 1e-6), r["cost"]) for r in records
               if str(r.get("engine") or r.get("solver")) == e
               and isinstance(r.get("time_s"), (int, float)) and isinstance(r.get("cost"), int)]
        if pts:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], label=f"{e} ({len(pts)})", s=14, alpha=0.7)
            n += len(pts)
    if n == 0:
        _plt().close(fig)
        raise PuzzleError("no run with both a time and a cost to plot", code=EXIT_BAD_OPTION)
    ax.set_xscale("log")
    ax.set_xlabel("search time (s)")
    ax.set_ylabel("cost")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    _save(fig, path)
    return n


def main(files: Sequence[str], output: str | None) -> int:
    """``bench plot RESULTS.json -o FIG.png`` (cost against time) or ``-o DIR/`` (every figure)."""
    from .compare import load_records

    if len(files) != 1:
        raise PuzzleError("bench plot needs one result file: RESULTS.json -o FIG.png|DIR",
                          code=EXIT_BAD_OPTION)
    if not output:
        raise PuzzleError("bench plot needs -o FIG.png (.svg, .pdf) or -o DIR for every figure",
                          code=EXIT_BAD_OPTION)
    records = load_records(files[0])
    from pathlib import Path

    if not Path(output).suffix or output.endswith(("/", "\\")):   # a directory: every figure
        from .figures import write_all

        for path, n in write_all(records, output).items():
            print(f"wrote {path}: {n} series")
        return 0
    n = plot_cost_time(records, output, title=files[0])
    print(f"wrote {output}: {n} runs")
    return 0
