"""A scikit-learn TruncatedSVD that reaches the best rank in a few passes,
or reads the data once: :class:`RandomizedTruncatedSVD`."""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.extmath import svd_flip
from sklearn.utils.sparsefuncs import mean_variance_axis
from sklearn.utils.validation import check_is_fitted

from ._krylov import run_krylov_svd
from ._linear_map import as_linear_map, from_checked, is_linear_operator
from ._sklearn import check_X
from ._validation import Checked, as_generator, as_matrix, check_choice, check_int
from ._validation import plain_indices

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from ._validation import MatrixLike

__all__ = ["RandomizedTruncatedSVD"]

_ALGORITHMS = ("krylov", "single-pass")
# passes of the Krylov iteration when tol > 0 asks for more than the default rule
_TOL_MAX_PASSES = 200


class RandomizedTruncatedSVD(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Truncated SVD (LSA) by randomized block Krylov iteration, or in one pass.

    A drop-in for :class:`sklearn.decomposition.TruncatedSVD` (same default
    ``n_components=2``, same fitted attributes and methods, same sign
    convention) that runs :func:`~sketchlab.krylov_svd` (the default): the
    best rank-k SVD in a few passes over X, on any spectrum, flat TF-IDF
    ones included; or :func:`~sketchlab.fast_sp_svd` (``"single-pass"``) for
    data read once.  ``n_components`` may be a fraction of ``||X||_F^2`` to
    capture, the rank then chosen as the smallest that captures it.  Like
    TruncatedSVD, the data is not centered.

    Parameters
    ----------
    n_components : int or float, default 2
        An int: the rank, ``1 <= n_components <= min(n_samples,
        n_features)``.  A float in (0, 1): the fraction of ``||X||_F^2`` the
        components must capture (``algorithm="krylov"`` only); the smallest
        such rank is found in the iteration (``krylov_svd``'s ``tol =
        sqrt(1 - n_components)``), and ``n_components_`` is set to it.
    algorithm : {"krylov", "single-pass"}, default "krylov"
        :func:`~sketchlab.krylov_svd`, several passes, or
        :func:`~sketchlab.fast_sp_svd` (Algorithm 3), one pass, less
        accurate on slowly decaying spectra.
    n_iter : int, optional
        As TruncatedSVD's "randomized" solver: the passes over X are those of
        ``n_iter`` power iterations, ``2 n_iter + 2`` (exactly that many
        Krylov passes, more accurate than as many power iterations).
        Default: ``krylov_svd``'s stopping rule.
    n_oversamples : int, optional
        Block size beyond ``n_components`` (default 4, krylov_svd's).
    random_state : None, int, numpy.random.Generator or RandomState
        Seeds the start block (or the sketches).
    tol : float, default 0.0
        As ARPACK's in TruncatedSVD, the relative accuracy of the singular
        values: iterate until no singular value rose by more than ``tol`` of
        itself over the last pass (up to 200 passes).  0.0: krylov_svd's
        rule (1e-4, which leaves them within a few 1e-5).  Ignored by
        "single-pass" and with ``n_iter``.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Right singular vectors (rows of Vt), signs as TruncatedSVD's
        (``svd_flip(u_based_decision=False)``).
    singular_values_ : ndarray of shape (n_components,)
    explained_variance_ : ndarray of shape (n_components,)
        Variance of the projections ``X V`` of the training data.
    explained_variance_ratio_ : ndarray of shape (n_components,)
        Over the total variance of X's columns.
    n_components_ : int
        The rank (n_components, or the one found for a fraction).
    error_estimate_ : ErrorEstimate
        Of ``||X - U diag(s) Vt||_F``: exact up to rounding for "krylov"
        (the Frobenius identity), from probes for "single-pass".
    n_passes_ : int
        Passes made over X (1 for "single-pass").
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in,)
        When X has feature names.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sketchlab import RandomizedTruncatedSVD
    >>> X = sp.random(200, 80, density=0.1, format="csr", random_state=0)
    >>> svd = RandomizedTruncatedSVD(n_components=5, random_state=0).fit(X)
    >>> s = np.linalg.svd(X.toarray(), compute_uv=False)[:5]
    >>> bool(np.allclose(svd.singular_values_, s, rtol=1e-4))
    True
    >>> RandomizedTruncatedSVD(n_components=0.5, random_state=0).fit(X).n_components_ > 5
    True
    """

    def __init__(self, n_components: int | float = 2, *, algorithm: str = "krylov",
                 n_iter: int | None = None, n_oversamples: int | None = None,
                 random_state: None | int | np.random.Generator | np.random.RandomState = None,
                 tol: float = 0.0) -> None:
        self.n_components = n_components
        self.algorithm = algorithm
        self.n_iter = n_iter
        self.n_oversamples = n_oversamples
        self.random_state = random_state
        self.tol = tol

    def fit(self, X: MatrixLike, y: Any = None) -> RandomizedTruncatedSVD:
        """Fit on X (``{array-like, sparse matrix}`` of shape (n_samples,
        n_features)); y is ignored.  Returns self."""
        self.fit_transform(X)
        return self

    def fit_transform(self, X: MatrixLike, y: Any = None) -> NDArray[np.floating]:
        """Fit on X and return its projections ``X V`` (n_samples, n_components).

        X may also be a ``scipy.sparse.linalg.LinearOperator`` or a dask
        array (``algorithm="krylov"``, which needs only products: each pass
        over X is one over the dask chunks, and the data never come into
        memory as a whole)."""
        algorithm = check_choice(self.algorithm, "algorithm", _ALGORITHMS)
        ops = self._input_map(X, algorithm)
        k, tol = self._rank_or_fraction(ops.shape)
        gen = as_generator(self.random_state, "random_state")
        if algorithm == "krylov":
            res = self._krylov(ops, k, tol, gen)
        else:
            from ._svd import fast_sp_svd

            res = fast_sp_svd(Checked(ops.entries), k, rng=gen, estimate_error=True)
        U, s, Vt = res[0], res[1], res[2]
        U, Vt = svd_flip(U, Vt, u_based_decision=False)
        self.components_ = Vt
        self.singular_values_ = s
        self.n_components_ = int(s.shape[0])
        self.error_estimate_ = res.error_estimate
        self.n_passes_ = getattr(res, "passes", None) or 1
        projections = np.asarray(ops.matmat(np.ascontiguousarray(Vt.T)))
        self.explained_variance_ = exp_var = np.var(projections, axis=0)
        full_var = _total_variance(ops)
        self.explained_variance_ratio_ = exp_var / full_var if full_var > 0 \
            else np.zeros_like(exp_var)
        return projections

    def _input_map(self, X, algorithm):
        """X checked once, as a linear map: an array or sparse matrix through
        scikit-learn's bookkeeping and ``as_matrix``; a LinearOperator or a
        dask array (krylov only) as its products."""
        if is_linear_operator(X) or hasattr(X, "__dask_graph__"):
            if algorithm != "krylov":
                raise TypeError(
                    f"algorithm={algorithm!r} needs the entries of X, got a "
                    f"{type(X).__name__}: use algorithm='krylov' (products only), or "
                    "sketchlab.dask.fast_sp_svd for a dask array")
            ops = as_linear_map(X, "X")
            if ops.shape[1] < 2:
                raise ValueError(f"X must have at least 2 features, got shape {ops.shape}")
            self.n_features_in_ = ops.shape[1]
            return ops
        X = check_X(self, X, accept_sparse=("csr", "csc"), dtype=[np.float64, np.float32],
                    ensure_min_features=2)
        return from_checked(plain_indices(X))

    def _krylov(self, ops, k, tol, gen):
        passes = None
        if self.n_iter is not None:
            passes = 2 * check_int(self.n_iter, "n_iter", 0) + 2
        block = None
        if self.n_oversamples is not None:
            extra = check_int(self.n_oversamples, "n_oversamples", 0)
            block = min((k if k is not None else 16) + extra, min(ops.shape))
        rtol = self._check_tol()
        kw = {} if rtol == 0.0 or passes is not None else \
            dict(rtol=rtol, max_passes=_TOL_MAX_PASSES)
        return run_krylov_svd(ops, k, tol=tol, passes=passes, block_size=block, rng=gen,
                              estimate_error=True, stacklevel=5, **kw)

    def _rank_or_fraction(self, shape):
        """``(k, None)`` for an int n_components, ``(None, tol)`` for a fraction."""
        n = self.n_components
        if isinstance(n, numbers.Real) and not isinstance(n, (numbers.Integral, bool, np.bool_)):
            fraction = float(n)
            if not 0.0 < fraction < 1.0:
                raise ValueError(
                    f"n_components must be an int in [1, {min(shape)}] or a float in (0, 1), "
                    f"got {n!r}")
            if self.algorithm != "krylov":
                raise ValueError(
                    f"n_components as a fraction ({n!r}) needs algorithm='krylov', got "
                    f"algorithm={self.algorithm!r}")
            return None, math.sqrt(1.0 - fraction)
        k = check_int(n, "n_components", 1)
        if k > min(shape):
            raise ValueError(
                f"n_components must be <= min(n_samples, n_features) = {min(shape)}, got {k}")
        return k, None

    def _check_tol(self):
        tol = self.tol
        if isinstance(tol, (bool, np.bool_)) or not isinstance(tol, numbers.Real) \
                or not 0.0 <= float(tol) < 1.0:
            raise ValueError(f"tol must be a number in [0, 1), got {tol!r}")
        return float(tol)

    def transform(self, X: MatrixLike) -> NDArray[np.floating]:
        """Project X on the components: ``X V`` (n_samples, n_components)."""
        check_is_fitted(self, "components_")
        if is_linear_operator(X) or hasattr(X, "__dask_graph__"):
            ops = as_linear_map(X, "X")
            if ops.shape[1] != self.components_.shape[1]:
                raise ValueError(f"X has {ops.shape[1]} features, but {type(self).__name__} "
                                 f"is expecting {self.components_.shape[1]} features as input")
            return np.asarray(ops.matmat(np.ascontiguousarray(self.components_.T)))
        X = check_X(self, X, accept_sparse=("csr", "csc"), dtype=[np.float64, np.float32],
                    reset=False)
        return np.asarray(plain_indices(X) @ self.components_.T)

    def inverse_transform(self, X: ArrayLike) -> NDArray[np.floating]:
        """Back to the original space: ``X @ components_`` (n_samples, n_features)."""
        check_is_fitted(self, "components_")
        X = as_matrix(X, "X", sparse=False)
        if X.shape[1] != self.components_.shape[0]:
            raise ValueError(
                f"X must have {self.components_.shape[0]} columns (n_components_), got "
                f"{X.shape[1]}")
        return np.asarray(X @ self.components_)

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags



def _total_variance(ops):
    """The sum of the variances of X's columns: from the entries where the
    map holds them (scikit-learn's computation: no cancellation), else
    ``(||X||_F^2 - m ||mu||^2) / m`` with the column means mu (one product
    ``X^T 1``): ``||X||_F^2`` as a dask X sums it in its first pass, or, for a
    LinearOperator, exactly by products with the identity in blocks of 256
    columns (n products)."""
    X = ops.entries
    if X is not None:
        if sp.issparse(X):
            return float(mean_variance_axis(X, axis=0)[1].sum())
        return float(np.var(X, axis=0).sum())
    m, n = ops.shape
    mu = np.asarray(ops.rmatmat(np.ones((m, 1), dtype=ops.dtype)), dtype=np.float64)[:, 0] / m
    norm2 = ops.frobenius2()
    if callable(norm2):
        norm2 = norm2()
    if norm2 is None:
        norm2 = 0.0
        for j0 in range(0, n, 256):
            E = np.zeros((n, min(256, n - j0)), dtype=ops.dtype)
            E[np.arange(j0, j0 + E.shape[1]), np.arange(E.shape[1])] = 1
            block = np.asarray(ops.matmat(E), dtype=np.float64)
            norm2 += float(np.einsum("ij,ij->", block, block))
    return max(float(norm2) - m * float(mu @ mu), 0.0) / m
