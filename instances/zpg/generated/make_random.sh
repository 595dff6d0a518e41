#!/usr/bin/env bash
# Regenerate the 50 random rocks-only gardens random-01..50.txt (issue 20's Zen set).
#
# Why: the symbolic engines' coverage on small gardens needs boards that nobody chose by hand.
# Board i uses seed i and the sizes 4x4, 4x5, 5x4, 5x5 in turn; `puzzleplan generate` draws
# rocks at its default density (0.15), keeps the first solvable board, and writes the optimum
# (excursions) that bfs proved, with the plan the reference checker replayed, into the header.
#
#     bash instances/zpg/generated/make_random.sh        # from the repository root
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
sizes=(4x4 4x5 5x4 5x5)
for i in $(seq 1 50); do
    size=${sizes[$(( (i - 1) % 4 ))]}
    puzzleplan generate zpg --size "$size" --seed "$i" --out "$here/random-$(printf %02d "$i").txt" >/dev/null
done
