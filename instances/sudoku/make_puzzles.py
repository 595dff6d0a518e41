# ruff: noqa: ANN001, ANN201, E702, E701
"""Generate sudoku puzzles: random full grid (seeded), remove clues while CP-SAT says unique."""
import random
import sys

from ortools.sat.python import cp_model


def count(cells, limit=2):
    m = cp_model.CpModel(); x = [[m.new_int_var(1, 9, "") for _ in range(9)] for _ in range(9)]
    for r in range(9): m.add_all_different(x[r])
    for c in range(9): m.add_all_different([x[r][c] for r in range(9)])
    for b in range(9):
        r0, c0 = 3*(b//3), 3*(b%3); m.add_all_different([x[r0+i][c0+j] for i in range(3) for j in range(3)])
    for i, v in enumerate(cells):
        if v: m.add(x[i//9][i%9] == v)
    s = cp_model.CpSolver(); s.parameters.num_workers = 1; s.parameters.enumerate_all_solutions = True
    class CB(cp_model.CpSolverSolutionCallback):
        def __init__(s2): super().__init__(); s2.n = 0; s2.first = None
        def on_solution_callback(s2):
            s2.n += 1
            if s2.first is None: s2.first = [s2.value(x[i//9][i%9]) for i in range(81)]
            if s2.n >= limit: s2.stop_search()
    cb = CB(); s.solve(m, cb); return cb.n, cb.first
rng = random.Random(int(sys.argv[1])); n = int(sys.argv[2])
for _ in range(n):
    # random full grid: solve with random givens order via a shuffled first row
    row = list(range(1, 10)); rng.shuffle(row)
    _, full = count(row + [0]*72, 1)
    # relabel digits randomly, shuffle rows within bands
    perm = list(range(1, 10)); rng.shuffle(perm); full = [perm[v-1] for v in full]
    cells = full[:]
    order = list(range(81)); rng.shuffle(order)
    for i in order:
        keep = cells[i]; cells[i] = 0
        if count(cells)[0] != 1: cells[i] = keep
    print("".join(str(v) if v else "." for v in cells))
