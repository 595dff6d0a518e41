"""puzzleplan: one puzzle model, many engines."""

import os as _os

# One thread per process unless the user asks otherwise.  numpy's OpenBLAS otherwise starts a pool
# thread at import that does not block SIGINT/SIGTERM; while pysat's C code has its own SIGINT
# handler installed (it long-jumps into the solver's stack), a signal the kernel hands to that
# thread crashed the process (SIGSEGV).  puzzleplan does integer work only: BLAS threads buy nothing.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    _os.environ.setdefault(_var, "1")

__version__ = "0.1.0"
