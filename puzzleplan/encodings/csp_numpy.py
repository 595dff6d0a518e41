"""Vectorised violation counts of a constraint task over a population ``(P, n_vars)``.

The genetic algorithm scores whole populations at once, so every constraint
kind is evaluated for all individuals with a few numpy operations and no
Python loop over individuals:

* all-different scopes of equal length are stacked into one index array
  ``(G, m)``; the violation is ``m`` minus the number of distinct values,
  i.e. the number of equal neighbours after sorting each scope;
* records scopes likewise: a running maximum (``np.maximum.accumulate``)
  and a count of strict increases, compared with each scope's ``k``;
* plain expression constraints through the numpy expression evaluator
  (:func:`puzzleplan.encodings.npkernel.evaluate`), one pass per node with
  shared nodes computed once.

The violation measures are the ones :mod:`puzzleplan.lang.csp` defines; the
plain-Python checker (:mod:`puzzleplan.verify.csp`) computes the same
numbers one assignment at a time, and the tests compare the two.
"""

from __future__ import annotations

import numpy as np

from ..ir.csp import CspTask
from .npkernel import evaluate


class CspEvaluator:
    """Per-individual total violation (and per-kind parts) of a population."""

    def __init__(self, task: CspTask):
        self.task = task
        self._alldiff = _stack([c.scope for c in task.of_kind("alldiff")])
        rec = task.of_kind("records")
        self._records = [(idx, np.array([rec[i].k for i in rows], dtype=np.int64))
                         for idx, rows in _stack_rows([c.scope for c in rec])]
        self._exprs = [c.expr for c in task.of_kind("expr")]
        pos = {kind: [i for i, c in enumerate(task.constraints) if c.kind == kind]
               for kind in ("alldiff", "records", "expr")}
        self._alldiff_cols = [(idx, [pos["alldiff"][i] for i in rows])
                              for idx, rows in _stack_rows([c.scope for c in task.of_kind("alldiff")])]
        self._records_cols = [[pos["records"][i] for i in rows]
                              for _, rows in _stack_rows([c.scope for c in rec])]
        self._expr_cols = pos["expr"]
        self.evaluations = 0

    def violations(self, pop: np.ndarray) -> np.ndarray:
        """Total violation per row of ``pop`` (int64, shape ``(P,)``)."""
        pop = np.asarray(pop, dtype=np.int64)
        self.evaluations += pop.shape[0]
        total = np.zeros(pop.shape[0], dtype=np.int64)
        for idx in self._alldiff:
            total += self.alldiff_violations(pop, idx).sum(axis=1)
        for idx, ks in self._records:
            total += (records_counts(pop, idx) != ks).sum(axis=1)
        if self._exprs:
            memo: dict[int, np.ndarray] = {}
            for e in self._exprs:
                total += ~evaluate(e, pop, memo)  # type: ignore[arg-type]
        return total

    def per_constraint(self, pop: np.ndarray, graded: bool = False) -> np.ndarray:
        """``(P, C)``: each constraint's violation, columns in the task's constraint order.

        ``graded``: a records constraint contributes ``|count - k|`` instead of 0/1 -- a finer
        signal for local search (how far a line is from its clue), same zeros.
        """
        pop = np.asarray(pop, dtype=np.int64)
        self.evaluations += pop.shape[0]
        out = np.zeros((pop.shape[0], len(self.task.constraints)), dtype=np.int64)
        for idx, cols in self._alldiff_cols:
            out[:, cols] = self.alldiff_violations(pop, idx)
        for (idx, ks), cols in zip(self._records, self._records_cols):
            cnt = records_counts(pop, idx)
            out[:, cols] = np.abs(cnt - ks) if graded else cnt != ks
        memo: dict[int, np.ndarray] = {}
        for e, col in zip(self._exprs, self._expr_cols):
            out[:, col] = ~evaluate(e, pop, memo)  # type: ignore[arg-type]
        return out

    @staticmethod
    def alldiff_violations(pop: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """``(P, G)``: repeated values in each of ``G`` scopes of equal length."""
        x = np.sort(pop[:, idx], axis=2)
        return (x[:, :, 1:] == x[:, :, :-1]).sum(axis=2)


def records_counts(pop: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``(P, R)``: number of records (strict prefix maxima) of each scope."""
    x = pop[:, idx]
    run = np.maximum.accumulate(x, axis=2)
    return 1 + (x[:, :, 1:] > run[:, :, :-1]).sum(axis=2)


def _stack(scopes: list[tuple[int, ...]]) -> list[np.ndarray]:
    return [idx for idx, _ in _stack_rows(scopes)]


def _stack_rows(scopes: list[tuple[int, ...]]) -> list[tuple[np.ndarray, list[int]]]:
    """Scopes grouped by length: (index array ``(G, m)``, positions in the input list)."""
    by_len: dict[int, list[int]] = {}
    for i, s in enumerate(scopes):
        by_len.setdefault(len(s), []).append(i)
    return [(np.array([scopes[i] for i in rows], dtype=np.int64), rows) for rows in by_len.values()]


__all__ = ["CspEvaluator", "records_counts"]
