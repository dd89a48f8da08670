"""Kernel ridge regression by preconditioned conjugate gradients on landmarks.

:class:`SketchedKernelRidge` fits the model of scikit-learn's ``KernelRidge``
(no intercept; ``f(x) = sum_i w_i k(x, x_i)``) without factoring the n x n
kernel matrix:

- ``solver="pcg"``: the full problem ``(K + alpha I) w = y`` by conjugate
  gradients, preconditioned by the Nystrom approximation on the landmarks,
  ``P = F F^T + alpha I`` with ``F F^T = C W^+ C^T`` (RPCholesky-PCG: Diaz,
  Epperly, Frangella, Tropp & Webber 2023, "Robust, randomized
  preconditioning for kernel ridge regression").  The landmarks only
  precondition: the solution is that of ``KernelRidge`` up to ``tol``.
- ``solver="restricted"``: the problem restricted to the landmarks S,
  ``f = sum_{j in S} b_j k(., x_j)`` minimizing ``||K_nS b - y||^2 + alpha
  b^T K_SS b``, whose normal equations ``(K_nS^T K_nS + alpha K_SS) b =
  K_nS^T y`` are solved by preconditioned conjugate gradients (KRILL, in the
  same paper; Falkon, Rudi, Carratino & Rosasco 2017, solves this problem
  with uniform landmarks).  With RPCholesky landmarks the factor ``F = K_nS
  L^-T`` (``L L^T = K_SS``) that RPCholesky builds anyway turns it into
  ridge regression on F, ``(F^T F + alpha I) w = F^T y``, ``b = L^-T w``,
  and ``K_nS`` is never stored.  Up to 4,096 landmarks the system matrix is
  formed once by BLAS 3 (about ``n c^2`` flops, cheaper than iterations that
  read the n x c matrix twice each at memory speed) and the preconditioner
  is its own Cholesky factor, so CG only checks the solve (one iteration,
  two at most); above, each iteration multiplies by the n x c matrix and its
  transpose, preconditioned by ``(Phi A)^T (Phi A) + alpha M`` with a sparse
  embedding Phi of 4 c rows (KRILL's preconditioner).

:class:`SketchedKernelRidgeClassifier` is the classifier of scikit-learn's
``RidgeClassifier`` pattern on top of it (targets +-1 per class, the class
of the largest output).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from ._cg import pcg
from ._config import serial_blas
from ._kernel_matrices import BLOCK_ENTRIES, KernelParamsMixin
from ._linear_map import as_linear_map
from ._linalg import gram_t, lower_transpose_solve, nystrom_factor, psd_factor, spd_solver
from ._engine.threads import tall_mul, tall_tmul
from ._operators import OSNAP
from ._rpcholesky import block_rpcholesky
from ._selection import LANDMARKS, select_landmarks
from ._validation import as_generator, check_choice, check_int, check_positive
from ._sklearn import PlusMinusOneClasses, check_X, check_Xy
from ._trace import factor_effective_dimension, is_auto, rpcholesky_for_rank
from ._validation import Checked

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._validation import MatrixLike

__all__ = ["SketchedKernelRidge", "SketchedKernelRidgeClassifier"]

SOLVERS = ("auto", "pcg", "restricted")
# rows of the sparse embedding of the restricted solver's preconditioner, per
# landmark, and its nonzeros per column
_SKETCH_ROWS_PER_LANDMARK = 4
_SKETCH_NNZ = 8


# rows per chunk of the preconditioner's products with F
_ROWS_PER_CHUNK = 2048


# n_components="auto": the landmarks of ``_trace.rpcholesky_for_rank`` for
# ``d_eff(K, rule alpha)``, at most _AUTO_MAX.  "pcg" needs the eigenvalues
# above about _PCG_RULE_FACTOR * alpha in its preconditioner (CG's condition
# number is then about that factor: some 30 iterations to 1e-6),
# "restricted" those above alpha (its model has only the landmarks).
_AUTO_MAX = 4096
_PCG_RULE_FACTOR = 10.0


# The restricted solver forms C^T C (c x c) up to this many landmarks: its
# cost grows as n c^2 (compute-bound), the CG products' as n c per iteration
# (memory-bound); at about 4,000 landmarks they meet for ~15 iterations.
_GRAM_MAX_LANDMARKS = 4096


def _pcg(matvec, precond, B, tol, max_iter):
    """Conjugate gradients on the columns of B (``_cg.pcg``): ``(X, history)``."""
    out = pcg(matvec, B, tol=tol, maxiter=max_iter, precond=precond)
    return out.X, out.history


def _sketch_preconditioner(A, shift, alpha, gen):
    """``V -> ((Phi A)^T (Phi A) + alpha shift)^-1 V`` with a sparse embedding
    Phi of ``4 c`` rows (KRILL's preconditioner), or the exact ``A^T A``
    when the embedding would have as many rows as A."""
    n, c = A.shape
    s = _SKETCH_ROWS_PER_LANDMARK * c
    SA = A if s >= n else OSNAP(s, n, nnz_per_col=min(_SKETCH_NNZ, s), rng=gen).apply(A, axis=0)
    return spd_solver(gram_t(SA, SA) + alpha * shift)


def _regularized_normal_pcg(A, M, Y, alpha, tol, max_iter, gen, gram=None):
    """``(A^T A + alpha M) B = A^T Y`` for a tall A (n x c) and a symmetric
    c x c M by preconditioned CG; returns ``(B, history)`` as :func:`_pcg`.
    Up to _GRAM_MAX_LANDMARKS columns ``A^T A`` is formed once (BLAS 3, about
    ``n c^2`` flops: cheaper than iterations that read all of A twice each
    at memory speed) and the preconditioner is the Cholesky factor of the
    system matrix itself, so CG only checks the solve (one or two
    iterations); above, each iteration multiplies by A and A^T and the
    preconditioner is KRILL's sketch.  ``gram``: ``A^T A`` when the caller
    has it."""
    if A.shape[1] <= _GRAM_MAX_LANDMARKS:
        G = (gram_t(A, A) if gram is None else gram) + alpha * M
        inner = spd_solver(G)

        def matvec(V):
            return G @ V
    else:
        inner = _sketch_preconditioner(A, M, alpha, gen)

        def matvec(V):
            return gram_t(A, A @ V) + alpha * (M @ V)

    with serial_blas():  # memory-bound products with few columns
        return _pcg(matvec, inner, gram_t(A, Y), tol, max_iter)


def _nystrom_gram(C, cols, CtC):
    """``F^T F`` of ``nystrom_factor``'s F from ``C^T C`` (no n x c
    product): ``P^T C^T C P`` with ``F = C P``."""
    w, V = psd_factor(np.asarray(C[cols], dtype=np.float64))
    keep = w > 0
    P = V[:, keep] / np.sqrt(w[keep])
    return P.T @ CtC @ P


def _fit_restricted(C, cols, Y, alpha, tol, max_iter, gen, gram=None):
    """The restricted problem ``(C^T C + alpha W) B = C^T Y`` from the kernel
    columns (C = K_nS, W = K_SS)."""
    W = C[cols]
    return _regularized_normal_pcg(C, (W + W.T) / 2, Y, alpha, tol, max_iter, gen, gram)


def _full_rank_factor(F, cols):
    """Whether every pivot of the RPCholesky factor F was a true pivot (a
    positive diagonal entry ``F[cols[j], j]``): K was not exhausted."""
    return bool(np.all(F[cols, np.arange(cols.size)] > 0))


def _fit_restricted_factor(F, cols, Y, alpha, tol, max_iter, gen, gram=None):
    """The restricted problem from the RPCholesky factor F (``F = C L^-T``,
    ``L = F[cols]`` lower triangular, ``L L^T = W``): with ``w = L^T b`` it
    is ridge regression on F, ``(F^T F + alpha I) w = F^T Y``, then ``b =
    L^-T w``.  C = K_nS is never stored."""
    Wc, history = _regularized_normal_pcg(F, np.eye(F.shape[1]), Y, alpha, tol, max_iter,
                                          gen, gram)
    return lower_transpose_solve(F[cols], Wc), history


class _SketchedKernelRidgeBase(KernelParamsMixin, BaseEstimator):
    """The fit and the kernel expansion shared by the regressor and the
    classifier (parameters: see :class:`SketchedKernelRidge`)."""

    def __init__(self, alpha: float = 1.0, *, kernel: str | Callable[..., Any] = "rbf",
                 gamma: float | None = None, degree: float | None = None,
                 coef0: float | None = None, kernel_params: Mapping[str, Any] | None = None,
                 n_components: int | str = 500, landmarks: str = "rpcholesky",
                 solver: str = "auto",
                 tol: float = 1e-6, max_iter: int = 200, cache_size: float = 4096,
                 random_state: None | int | np.random.Generator | np.random.RandomState = None
                 ) -> None:
        self.alpha = alpha
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.landmarks = landmarks
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.cache_size = cache_size
        self.random_state = random_state

    def _check_params(self):
        alpha = check_positive(self.alpha, "alpha")
        tol = check_positive(self.tol, "tol")
        max_iter = check_int(self.max_iter, "max_iter", 1)
        c = None if is_auto(self.n_components) else \
            check_int(self.n_components, "n_components", 1)
        landmarks = check_choice(self.landmarks, "landmarks", LANDMARKS)
        solver = check_choice(self.solver, "solver", SOLVERS)
        cache = check_positive(self.cache_size, "cache_size")
        return alpha, tol, max_iter, c, landmarks, solver, cache

    def fit(self, X: MatrixLike, y: Any) -> SketchedKernelRidge:
        """Fit the model.

        Parameters
        ----------
        X : array_like or sparse matrix of shape (n_samples, n_features)
        y : array_like of shape (n_samples,) or (n_samples, n_targets)

        Returns
        -------
        self
        """
        self._check_params()
        X, y = check_Xy(self, X, y, accept_sparse="csr", dtype=np.float64, multi_output=True,
                        y_numeric=True)
        return self._fit(X, np.asarray(y, dtype=np.float64))

    def _fit(self, X, y):
        """The fit of a checked X (``check_X``) and float64 targets y."""
        alpha, tol, max_iter, c, landmarks, solver, cache = self._check_params()
        Y = y.reshape(-1, 1) if y.ndim == 1 else y
        n = X.shape[0]
        if c is not None and c > n:  # as scikit-learn's Nystroem
            warnings.warn(
                f"n_components ({c}) > n_samples ({n}): n_components was set to n_samples "
                "(every sample a landmark: the whole kernel matrix is evaluated)",
                UserWarning, stacklevel=3)
            c = n
        cache_bytes = cache * 2.0**20
        chosen = solver == "auto"
        if chosen:
            solver = "pcg" if 8.0 * n * n <= cache_bytes else "restricted"
        K = self._oracle(Checked(X))
        total = float(np.sum(K.diagonal(), dtype=np.float64))
        gen = as_generator(self.random_state, "random_state")
        C = F = G = CtC = None
        if c is None:  # "auto": RPCholesky's landmarks for d_eff (above)
            rule = alpha * (_PCG_RULE_FACTOR if solver == "pcg" else 1.0)
            cols, F, G = rpcholesky_for_rank(K, rule, total, gen, min(n, _AUTO_MAX))
            if landmarks != "rpcholesky":
                F = G = None
                cols, C = select_landmarks(K, cols.size, landmarks, gen)
        elif landmarks == "rpcholesky":
            # F alone: the restricted problem is ridge regression on F (below)
            cols, _, F = block_rpcholesky(K, c, gen, columns=False)
        else:
            cols, C = select_landmarks(K, c, landmarks, gen)
        if F is None:
            C = np.asarray(K[:, cols] if C is None else C, dtype=np.float64)
        elif solver == "restricted" and not _full_rank_factor(F, cols):
            # K has rank < c: the landmarks drawn after it ran out have zero
            # columns in F; solve on their kernel columns instead
            C, F, G = np.asarray(K[:, cols], dtype=np.float64), None, None
        if solver == "pcg" and F is None:
            F, C = nystrom_factor(C, C[cols]), None
        # the Gram matrix of the Nystrom factor (the solvers' own, formed once):
        # the effective dimension is read off it
        formed = solver == "pcg" or cols.size <= _GRAM_MAX_LANDMARKS
        if F is not None and G is None and formed:
            G = gram_t(F, F)
        if C is not None and formed:
            CtC = gram_t(C, C)
        Gf = G if F is not None else (_nystrom_gram(C, cols, CtC) if formed else None)
        deff = None if Gf is None else factor_effective_dimension(Gf, total, alpha)
        self.effective_dimension_ = None if deff is None else deff.estimate
        self.n_components_ = int(cols.size)
        if chosen and solver == "restricted" and deff is not None and cols.size < deff.estimate:
            warnings.warn(
                f"solver='auto' chose 'restricted' (the {n} x {n} kernel matrix needs "
                f"{8.0 * n * n / 2**20:.0f} MB > cache_size={cache:g} MB): the model has only "
                f"{cols.size} landmarks, fewer than the effective dimension, about "
                f"{deff.estimate:.0f} at alpha={alpha:g}, so it may be less accurate than kernel "
                "ridge on all the samples; raise cache_size (for 'pcg', exact), raise "
                "n_components (or 'auto'), or pass solver='restricted' to accept it",
                UserWarning, stacklevel=3)
        if solver == "pcg":
            coef, history = self._fit_pcg(K, F, G, Y, alpha, tol, max_iter, cache_bytes)
            self.X_fit_ = X
        else:
            if F is not None:
                coef, history = _fit_restricted_factor(F, cols, Y, alpha, tol, max_iter, gen,
                                                       G)
            else:
                coef, history = _fit_restricted(C, cols, Y, alpha, tol, max_iter, gen, CtC)
            self.X_fit_ = X[cols]
        self.n_evaluated_ = K.n_evaluated
        self.landmark_indices_ = cols
        self.solver_ = solver
        self.n_iter_ = history.shape[0] - 1
        self.residual_history_ = history[:, 0] if y.ndim == 1 else history
        self.dual_coef_ = coef[:, 0] if y.ndim == 1 else coef
        final = history[-1]
        if np.any(final > tol):
            warnings.warn(
                f"conjugate gradients (solver={solver!r}) stopped after {self.n_iter_} "
                f"iterations at a relative residual of {float(final.max()):.3g} > tol={tol:g}; "
                "increase max_iter, alpha or n_components (a better preconditioner)",
                ConvergenceWarning, stacklevel=3)
        return self

    def _fit_pcg(self, K, F, G, Y, alpha, tol, max_iter, cache_bytes):
        """The full problem ``(K + alpha I) W = Y`` by CG, preconditioned by
        ``(F F^T + alpha I)^-1 = (I - F (F^T F + alpha I)^-1 F^T) / alpha``."""
        inner = spd_solver(G + alpha * np.eye(F.shape[1]))

        def precond(V):
            # two memory-bound reads of F: row chunks on all threads
            with serial_blas():
                FtV = tall_tmul(F, V, _ROWS_PER_CHUNK)
                return (V - tall_mul(F, inner(FtV), _ROWS_PER_CHUNK)) / alpha

        op = as_linear_map(K, cache_bytes=cache_bytes)
        if op.recomputes:  # kernel blocks recomputed: compute-bound, all BLAS threads
            return _pcg(lambda V: op.matmat(V) + alpha * V, precond, Y, tol, max_iter)
        # memory-bound products with few columns: idle BLAS threads only spin
        with serial_blas():
            return _pcg(lambda V: op.matmat(V) + alpha * V, precond, Y, tol, max_iter)

    def predict(self, X: MatrixLike) -> NDArray[np.floating]:
        """Predict with the kernel expansion ``k(X, X_fit_) @ dual_coef_``.

        Parameters
        ----------
        X : array_like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        check_is_fitted(self)
        X = check_X(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        oracle = self._oracle(Checked(self.X_fit_))  # rows of the checked X of fit
        coef = self.dual_coef_
        out = np.empty((X.shape[0],) + coef.shape[1:])
        step = max(1, BLOCK_ENTRIES // oracle.shape[0])
        for i0 in range(0, X.shape[0], step):
            out[i0:i0 + step] = oracle.cross(Checked(X[i0:i0 + step])) @ coef
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class SketchedKernelRidge(MultiOutputMixin, RegressorMixin, _SketchedKernelRidgeBase):
    """Kernel ridge regression by conjugate gradients preconditioned with
    landmarks (RPCholesky-PCG and KRILL).

    The model of :class:`sklearn.kernel_ridge.KernelRidge` (same kernel
    parameters; ``dual_coef_`` and ``X_fit_`` as there), fitted without
    storing or factoring the whole kernel matrix when it does not fit:
    ``n_components`` landmark points, chosen by randomly pivoted Cholesky by
    default, build a Nystrom preconditioner for conjugate gradients on the
    full problem (``solver="pcg"``), or define the problem restricted to the
    landmarks (``solver="restricted"``).

    Parameters
    ----------
    alpha : float, default 1.0
        Regularization, > 0: the full problem is ``(K + alpha I) w = y``, as
        in KernelRidge.
    kernel : str or callable, default "rbf"
        As for :class:`SketchedNystroem` (the kernels of
        ``sklearn.metrics.pairwise.PAIRWISE_KERNEL_FUNCTIONS`` or a
        callable); "rbf" runs on sketchlab's compiled kernel.  The default
        is "rbf", not KernelRidge's "linear": a linear kernel has rank at most
        n_features, where plain Ridge is exact and faster than landmarks.
    gamma, degree, coef0 : float, optional
        Kernel parameters (None: the kernel's default, 1 / n_features for
        gamma of rbf), as for SketchedNystroem.
    kernel_params : dict, optional
        More parameters of a callable kernel.
    n_components : int or "auto", default 500
        Number of landmarks c (clipped to n_samples, with a warning, as
        scikit-learn's Nystroem does).  ``"auto"``: the rank from the
        effective dimension ``d_eff(K, a) = tr(K (K + a I)^-1)`` read off the
        RPCholesky factor of the landmarks (see Notes): ``ceil(d_eff(K, 10
        alpha))`` for "pcg" (the eigenvalues its preconditioner must hold:
        CG's condition number is then about 10), ``ceil(d_eff(K, alpha))``
        for "restricted" (the dimension its model needs); at least 50, at
        most 4,096.
    landmarks : {"rpcholesky", "uniform", "ridge-leverage"}, default "rpcholesky"
        How the landmarks are chosen (see :func:`sketchlab.nystrom`);
        "rpcholesky" is the accelerated randomly pivoted Cholesky.
    solver : {"auto", "pcg", "restricted"}, default "auto"
        "pcg": the full problem, the landmarks precondition; "restricted":
        the problem on the landmarks; "auto": "pcg" when the whole kernel
        matrix fits in ``cache_size`` (``8 n^2`` bytes), else "restricted",
        with a warning when the landmarks are fewer than the effective
        dimension (the restricted model then gives up accuracy that "pcg"
        would keep).
    tol : float, default 1e-6
        Conjugate gradients stop when the relative residual ``||b - A x|| /
        ||b||`` of every target is at most tol.
    max_iter : int, default 200
        Most conjugate-gradient iterations.
    cache_size : float, default 4096
        Megabytes for stored kernel entries (``solver="pcg"``): when the
        lower half of K fits (about ``4 n (n + 2048)`` bytes) it is
        evaluated once and kept; otherwise the first ``cache_size / (8 n)``
        rows of K are kept and the others recomputed at every iteration.
    random_state : None, int, numpy.random.Generator or RandomState
        Seeds the landmarks and the restricted solver's sketch.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n_fit,) or (n_fit, n_targets)
        Coefficients of the kernel expansion on ``X_fit_``.
    X_fit_ : ndarray or sparse matrix of shape (n_fit, n_features)
        The training points ("pcg") or the landmark points ("restricted").
    landmark_indices_ : ndarray of shape (c,)
        Row indices of the landmarks in the training data.
    solver_ : str
        The solver used ("pcg" or "restricted").
    n_components_ : int
        The landmarks used (``n_components``, clipped, or the "auto" rank).
    effective_dimension_ : float or None
        An estimate of ``d_eff(K, alpha)`` read off the landmarks' Nystrom
        factor (``_trace.factor_effective_dimension``; an over-estimate when
        the landmarks are far fewer than it); None for "restricted" with
        more than 4,096 landmarks (no Gram matrix formed).
    n_iter_ : int
        Conjugate-gradient iterations run.
    residual_history_ : ndarray of shape (n_iter + 1,) or (n_iter + 1, n_targets)
        Relative residual of each target after each iteration (the first
        row: before the first).
    n_evaluated_ : int
        Kernel entries evaluated by fit.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string feature names.

    Raises
    ------
    ValueError
        At fit, for parameters out of range or X, y with NaN/Inf.

    Warns
    -----
    sklearn.exceptions.ConvergenceWarning
        When conjugate gradients stop at max_iter above tol.
    UserWarning
        When ``solver="auto"`` chose "restricted" with fewer landmarks than
        the effective dimension.

    See Also
    --------
    SketchedKernelRidgeClassifier : the classifier on top of it.
    SketchedNystroem : kernel features for any linear model.

    Notes
    -----
    Work and memory (n samples, c landmarks, t targets, d features):

    - landmarks: ``n c`` kernel entries (plus the candidates' blocks of
      RPCholesky); ``2 n c`` floats at most (C and the Nystrom factor).
    - "pcg": each iteration multiplies K by t vectors.  When the lower block
      triangle of K (tiles of 2,048 rows, about ``4 n (n + 2048)`` bytes)
      fits in ``cache_size``, it is evaluated once (``n^2 d / 2`` work) and
      an iteration reads it twice at memory speed.  Otherwise the first ``r
      = min(n, cache_size / (8 n))`` rows of K are evaluated once and stored
      (``8 r n`` bytes) and the other rows are evaluated again at every
      iteration, by blocks of about 4M entries (``n^2 d`` work per
      iteration when nothing is stored).  Memory: the stored entries, ``n
      c`` floats for the preconditioner and ``O(n t)`` vectors.
    - "restricted": one n x c matrix is stored (RPCholesky's factor F, or
      ``K_nS`` for the other landmarks).  Up to 4,096 landmarks its Gram
      matrix is formed once (about ``n c^2`` flops, BLAS 3) and factored
      (``c^3 / 3``), and an iteration costs ``2 c^2 t``; above, the
      preconditioner costs a sparse sketch of the n x c matrix and ``4 c^3``
      flops, and an iteration multiplies by the matrix and its transpose
      (``4 n c t``, reading it twice).  Memory: about ``n c + 2 c^2`` floats
      (``2 n c`` for uniform and ridge-leverage landmarks, whose kernel
      columns are computed apart), never ``n^2``.

    ``n_components="auto"`` runs RPCholesky with 256 landmarks and reads
    ``d_eff`` off its factor F (``tr f(F F^T)`` plus the residual trace ``tr
    K - ||F||_F^2`` over ``alpha`` plus the smallest eigenvalue of ``F
    F^T``, f = x / (x + alpha): an over-estimate while the landmarks are
    few); while that says more than the landmarks, it continues the run to
    twice as many (no work repeated); the landmarks are then the fewest
    first pivots c whose factor says ``d_eff <= c`` (to 5%).  On 20,000
    Fashion-MNIST images (alpha = 0.1, gamma = 1/133, "pcg") it chose
    2,048 landmarks and fit in 56.6 s against 56.8 s with 2,000 and 132.6 s
    with 4,000 (the same process, load average about 3); an earlier ladder
    under heavier load took 137.7, 113.9, 104.5 and 97.2 s with 500, 1,000,
    2,000 and 4,000.  Every fit scored the same (88.9% on 2,000 test
    images): "pcg" solves the full problem.

    The Gram products of the kernel blocks never call BLAS's SYRK on more
    than 2048 rows (the multi-threaded OpenBLAS SYRK has crashed on large
    ones on some machines).

    Examples
    --------
    >>> import numpy as np
    >>> from sketchlab import SketchedKernelRidge
    >>> gen = np.random.default_rng(0)
    >>> X = gen.uniform(-3, 3, (400, 1))
    >>> y = np.sin(X[:, 0]) + 0.1 * gen.standard_normal(400)
    >>> model = SketchedKernelRidge(alpha=0.1, gamma=0.5, n_components=30,
    ...                             random_state=0).fit(X, y)
    >>> model.solver_, bool(model.n_iter_ <= 30)
    ('pcg', True)
    >>> float(np.round(model.predict([[1.0]])[0], 2))
    0.83
    """

class SketchedKernelRidgeClassifier(PlusMinusOneClasses, ClassifierMixin,
                                    _SketchedKernelRidgeBase):
    """Classifier by kernel ridge regression on +-1 targets, fitted by
    :class:`SketchedKernelRidge` (the pattern of scikit-learn's
    ``RidgeClassifier``).

    Each class gets a target that is +1 on its samples and -1 elsewhere (one
    target for two classes); the prediction is the class of the largest
    output (of its sign for two classes).  The parameters are those of
    :class:`SketchedKernelRidge`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    dual_coef_, X_fit_, landmark_indices_, solver_, n_iter_, residual_history_, n_evaluated_
        As for :class:`SketchedKernelRidge` (one target per class, or one).
    n_components_, effective_dimension_
        As for :class:`SketchedKernelRidge`.

    Examples
    --------
    >>> import numpy as np
    >>> from sketchlab import SketchedKernelRidgeClassifier
    >>> gen = np.random.default_rng(0)
    >>> X = gen.standard_normal((300, 2))
    >>> y = np.where(np.hypot(X[:, 0], X[:, 1]) < 1.0, "in", "out")
    >>> clf = SketchedKernelRidgeClassifier(alpha=0.1, gamma=1.0, n_components=40,
    ...                                     random_state=0).fit(X, y)
    >>> clf.predict([[0.0, 0.0], [2.5, 0.0]])
    array(['in', 'out'], dtype='<U3')
    """

    def fit(self, X: MatrixLike, y: Any) -> SketchedKernelRidgeClassifier:
        """Fit one ridge regression per class on +-1 targets.

        Parameters
        ----------
        X : array_like or sparse matrix of shape (n_samples, n_features)
        y : array_like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self
        """
        self._check_params()
        X, y = check_Xy(self, X, y, accept_sparse="csr", dtype=np.float64)
        Y = self._class_targets(y)
        if Y.shape[1] == 1:
            Y = Y[:, 0]
        self._fit(X, Y.astype(np.float64))
        return self

    def decision_function(self, X: MatrixLike) -> NDArray[np.floating]:
        """The regression outputs: shape (n_samples,) for two classes (> 0
        means ``classes_[1]``), else (n_samples, n_classes).

        Parameters
        ----------
        X : array_like or sparse matrix of shape (n_samples, n_features)
        """
        return _SketchedKernelRidgeBase.predict(self, X)  # the regression's outputs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
