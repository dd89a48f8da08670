"""The engine: every piece of compiled code, behind one package.

Everything above the engine reaches compiled code through the functions of
these modules, and only through them:

- :mod:`.operators`: the loops that generate and apply sketching operators
  (hash codes, tables, the dense kinds' columns, the Walsh-Hadamard
  transform);
- :mod:`.products`: products with a matrix for the iterative solvers (CSR
  times dense by rows, ``A^T A Z`` in one pass, the counting-sort transpose);
- :mod:`.kernels`: kernel blocks (RBF from Gram products, the exact
  recomputation where the expansion cancels);
- :mod:`.checks`: the compiled parts of the input checks;
- :mod:`.reductions`: ``||A||_F^2`` and the largest magnitude in one pass;
- :mod:`.threads`: the one door to the thread pool (``threads_for``), BLAS
  calls in fixed row chunks on all threads (``tall_mul``, ``tall_tmul``,
  ``map_on_threads``), page faulting (``fault_in``);
- :mod:`.views`: views of a validated sparse matrix the loops read.

The compiled loops themselves are ``._jit`` (Numba, imported on first use:
importing the engine does not import Numba).  A second backend (a GPU,
another runtime) is a sibling package with these modules and functions;
nothing above the engine changes but the import that chooses it.
"""
