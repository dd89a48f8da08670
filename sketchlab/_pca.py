"""Principal component analysis by randomized block Krylov iteration, sparse
data centred implicitly: :class:`RandomizedPCA`."""

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

from ._eigsh import eigsh_run, sparse_products
from ._krylov import krylov_run
from ._linear_map import CenteredMap, LinearMap, as_linear_map
from ._sklearn import check_X
from ._validation import as_generator, as_matrix, check_choice, check_int

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from ._validation import MatrixLike

__all__ = ["RandomizedPCA", "pca_fit", "PCAFit"]

_SOLVERS = ("auto", "krylov", "lanczos")
_NORMALIZERS = ("auto", "QR", "LU", "none")
# The Krylov iteration's rule (largest rise of a singular value over a pass,
# relative): 1e-7 leaves the singular values within a few 1e-7 of their
# limit, the explained variances within 1e-6 (krylov_svd's own 1e-4 leaves
# them within a few 1e-5)
_RTOL = 1e-7
# bound on the passes of the Krylov rule (28 at k = 50 on debian-tfidf; the bases are
# reserved for the bound, so it is not larger than needed)
_MAX_PASSES = 48


class _Centred(CenteredMap):
    """``X - 1 mu^T`` whose ``||.||_F^2`` is given (the sum of the columns'
    squared deviations, computed from the data: no cancellation)."""

    def __init__(self, inner, mu, norm2):
        super().__init__(inner, mu)
        self._norm2 = norm2

    def frobenius2(self):
        return self._norm2


class PCAFit:
    """What a fit computes (the in-memory and dask fronts share it)."""

    def __init__(self, components, singular_values, mean, n_samples, total_var, passes):
        self.components, self.singular_values = components, singular_values
        self.mean, self.n_samples, self.total_var, self.passes = mean, n_samples, total_var, passes


class GramMap(LinearMap):
    """``A^T A`` of a map A (d x d, symmetric PSD) as its products ``A^T (A
    Z)``: two passes over A each.  ``product_columns``: what a product with
    one column costs in columns of eigsh's orthogonalization (``4 d``
    flops): ``n`` for dense data, 0 (cheap) for sparse data."""

    symmetric = True
    psd = True

    def __init__(self, ops: LinearMap, product_columns: int):
        d = ops.shape[1]
        super().__init__((d, d), ops.dtype)
        self.ops = ops
        self.product_columns = product_columns

    def _matmat(self, X, out):
        return self.ops.rmatmat(self.ops.matmat(X))

    _rmatmat = _matmat


def pca_fit(ops: LinearMap, mean: Any, total_var: float, *, k: int | None, tol: float | None,
            passes: int | None, block_size: int | None, rtol: float, gen: np.random.Generator,
            solver: str = "krylov", cost: int = 0) -> tuple[PCAFit, Any]:
    """The SVD of the centred data ``ops - 1 mean^T`` (a LinearMap of the data,
    in memory or dask chunks), whose squared Frobenius norm is ``total_var (n
    - 1)``: ``krylov_svd`` on it ("krylov"), or ``eigsh`` on its Gram matrix
    ("lanczos": a basis of about 2 k + 20 vectors of length d, restarted).
    Returns the fit and U (the left singular vectors)."""
    n, d = ops.shape
    centred = _Centred(ops, mean, total_var * (n - 1))
    if solver == "lanczos":
        if k is None:
            raise ValueError("svd_solver='lanczos' needs an int n_components (a fraction of "
                             "the variance needs svd_solver='krylov')")
        res = eigsh_run(GramMap(centred, cost), k, which="LA",
                        tol=rtol if rtol != _RTOL else None, passes=passes,
                        block_size=block_size, psd=True, rng=gen)
        order = np.argsort(res.w)[::-1]
        s = np.sqrt(np.maximum(res.w[order].astype(np.float64), 0.0))
        V = res.V[:, order]
        U = centred.matmat(V).astype(np.float64)
        U /= np.where(s > 0, s, 1.0)
        U, Vt = svd_flip(U, np.ascontiguousarray(V.T), u_based_decision=False)
        fit = PCAFit(Vt.astype(ops.dtype), s.astype(ops.dtype),
                     np.asarray(mean, dtype=ops.dtype), n, total_var, 2 * res.passes + 1)
        return fit, U.astype(ops.dtype)
    res = krylov_run(centred, centred.shape, centred.dtype, k=k, tol=tol, passes=passes,
                     block_size=block_size, rng=gen, estimate_error=False,
                     rtol=rtol, max_passes=_MAX_PASSES)
    U, s, Vt = res
    U, Vt = svd_flip(U, Vt, u_based_decision=False)
    return PCAFit(Vt, s, np.asarray(mean, dtype=ops.dtype), n, total_var, res.passes), U


class RandomizedPCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Principal component analysis by randomized block Krylov iteration,
    sparse input centred without densifying it.

    A drop-in for :class:`sklearn.decomposition.PCA` (the same parameters,
    fitted attributes and methods) whose solver is
    :func:`~sketchlab.krylov_svd` on the centred data ``X - 1 mu^T``, never
    formed: its products are ``X Z - 1 (mu^T Z)`` and ``X^T Y - mu (1^T Y)``,
    so a sparse X stays sparse (scikit-learn's PCA takes sparse input only
    with ``svd_solver="arpack"`` or ``"covariance_eigh"``, which forms the
    d x d covariance).  Accurate on any spectrum (a flat TF-IDF one
    included), the explained variances within about 1e-6 of the exact ones
    by default.

    Parameters
    ----------
    n_components : int, float or None, default None
        An int: the number of components, ``1 <= n_components <= min(n_samples,
        n_features)``.  A float in (0, 1): the fraction of the total variance
        to explain, the number of components the smallest that explains it
        (found in the iteration: ``krylov_svd``'s ``tol = sqrt(1 -
        n_components)``).  None: ``min(n_samples, n_features)``.
    copy : bool, default True
        Accepted for compatibility: X is never modified (the centring is
        implicit).
    whiten : bool, default False
        Scale the projections to unit variance (``transform`` divides by
        ``sqrt(explained_variance_)``).
    svd_solver : {"auto", "krylov", "lanczos"}, default "auto"
        "auto" and "krylov": :func:`~sketchlab.krylov_svd` on the centred data
        (block Lanczos bidiagonalization, its bases growing with the passes:
        about ``(n + d)(passes / 2 + 1) b`` entries).  "lanczos":
        :func:`~sketchlab.eigsh` on the covariance ``X_c^T X_c`` (each
        product two passes over X), its basis restarted at about ``2 k + 20``
        vectors of length d: far less memory, an int ``n_components``
        only.
    tol : float, default 0.0
        The relative accuracy of the singular values: iterate until none
        rose by more than ``tol`` of itself over the last pass (and the rise
        left, extrapolated, is as small), up to 48 passes.  0.0: 1e-7.
    iterated_power : int or "auto", default "auto"
        An int: the passes over X are those of that many power iterations,
        ``2 iterated_power + 2`` Krylov passes exactly.  "auto": the rule of
        ``tol``.
    n_oversamples : int, optional
        Block size beyond ``n_components`` (default: krylov_svd's block).
    power_iteration_normalizer : {"auto", "QR", "LU", "none"}, default "auto"
        Accepted for compatibility: the Krylov basis is always kept
        orthonormal.
    random_state : None, int, numpy.random.Generator or RandomState
        Seeds the start block.
    scheduler : str, Client or executor, optional
        For a dask X (dense or scipy.sparse chunks along rows, or any
        chunking): the scheduler of its passes (see :mod:`sketchlab.dask`).
        The columns' means and variances take one pass over the chunks, then
        each Krylov pass one more; the fit is the in-memory one for the same
        ``random_state`` up to the rounding of the partial sums.

    Attributes
    ----------
    components_ : ndarray of shape ``(n_components_, n_features)``
        The principal axes (orthonormal rows), signs as scikit-learn's
        (``svd_flip(u_based_decision=False)``).
    explained_variance_ : ndarray of shape ``(n_components_,)``
        ``singular_values_**2 / (n_samples - 1)``.
    explained_variance_ratio_ : ndarray of shape ``(n_components_,)``
        Over the total variance of X's columns.
    singular_values_ : ndarray of shape ``(n_components_,)``
    mean_ : ndarray of shape (n_features,)
    n_components_ : int
    n_samples_ : int
    noise_variance_ : float
        The mean variance left in the ``min(n_samples, n_features) -
        n_components_`` other directions (probabilistic PCA, Tipping and
        Bishop 1999); 0 when there are none.
    n_passes_ : int
        Passes over X (its products with a block, two more for the means
        and variances not counted).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When X has feature names.

    Notes
    -----
    The variances come from the data directly (``mean_variance_axis`` for
    sparse X), not from ``||X||_F^2 - n ||mu||^2``, which cancels when the
    means dominate.  Memory: X, the bases of the iteration (about ``(n +
    d)(passes / 2 + 1) b`` entries) and the results: no dense copy of X.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn.decomposition import PCA
    >>> from sketchlab import RandomizedPCA
    >>> X = sp.random(300, 80, density=0.1, format="csr", random_state=0)
    >>> ours = RandomizedPCA(n_components=5, random_state=0).fit(X)
    >>> exact = PCA(n_components=5, svd_solver="full").fit(X.toarray())
    >>> bool(np.allclose(ours.explained_variance_, exact.explained_variance_, rtol=1e-6))
    True
    >>> ours.transform(X[:2]).shape
    (2, 5)
    """

    def __init__(self, n_components: int | float | None = None, *, copy: bool = True,
                 whiten: bool = False, svd_solver: str = "auto", tol: float = 0.0,
                 iterated_power: int | str = "auto", n_oversamples: int | None = None,
                 power_iteration_normalizer: str = "auto",
                 random_state: None | int | np.random.Generator | np.random.RandomState = None,
                 scheduler: Any = None) -> None:
        self.n_components = n_components
        self.copy = copy
        self.whiten = whiten
        self.svd_solver = svd_solver
        self.tol = tol
        self.iterated_power = iterated_power
        self.n_oversamples = n_oversamples
        self.power_iteration_normalizer = power_iteration_normalizer
        self.random_state = random_state
        self.scheduler = scheduler

    # -- fitting ------------------------------------------------------------------

    def fit(self, X: MatrixLike, y: Any = None) -> RandomizedPCA:
        """Fit on X (``{array-like, sparse matrix}`` of shape (n_samples,
        n_features)); y is ignored.  Returns self."""
        self._fit(X)
        return self

    def fit_transform(self, X: MatrixLike, y: Any = None) -> NDArray[np.floating]:
        """Fit on X and return its projections, ``(n_samples, n_components_)``."""
        U = self._fit(X)
        if self.whiten:
            return U * math.sqrt(self.n_samples_ - 1)
        return U * self.singular_values_

    def _check_X(self, X, reset):
        return check_X(self, X, reset=reset, accept_sparse=("csr", "csc"),
                       dtype=[np.float64, np.float32])

    def _fit(self, X):
        if hasattr(X, "__dask_graph__"):
            return self._fit_dask(X)
        X = self._check_X(X, reset=True)
        self._check_params()
        n, d = X.shape
        if n < 2:
            raise ValueError(f"RandomizedPCA needs at least 2 samples, got n_samples={n}")
        if sp.issparse(X):
            mean, var = mean_variance_axis(X, axis=0)
            total_var = float(np.sum(var, dtype=np.float64)) * n / (n - 1)
        else:
            mean = X.mean(axis=0, dtype=np.float64)
            total_var = float(np.sum(np.var(X, axis=0, ddof=1, dtype=np.float64)))
        fit, U = self._run(as_linear_map(X, "X"), mean, total_var, (n, d))
        self._set(fit)
        return U

    def _fit_dask(self, X):
        """A dask X: the columns' moments in one pass over its chunks, then each
        Krylov pass one pass over them (its ChunkMap)."""
        from ._dask_pass import check_array, column_moments

        check_array(X, "X")
        self._check_params()
        n, d = X.shape
        if n < 2:
            raise ValueError(f"RandomizedPCA needs at least 2 samples, got n_samples={n}")
        if d < 1:
            raise ValueError(f"X must have at least one feature, got shape {X.shape}")
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.n_features_in_ = d
        mean, total_var = column_moments(X, self.scheduler)
        ops = as_linear_map(X, "X", scheduler=self.scheduler)
        ops.sparse_entries = sp.issparse(getattr(X, "_meta", None))
        fit, U = self._run(ops, mean, total_var, (n, d))
        self._set(fit)
        return U

    def _run(self, ops, mean, total_var, shape):
        """The Krylov fit on the map of X (the dask front's too)."""
        k, tol = self._rank_or_fraction(shape)
        gen = as_generator(self.random_state, "random_state")
        passes = None
        if self.iterated_power != "auto":
            passes = 2 * check_int(self.iterated_power, "iterated_power", 0) + 2
        block = None
        if self.n_oversamples is not None:
            extra = check_int(self.n_oversamples, "n_oversamples", 0)
            block = min((k if k is not None else 16) + extra, min(shape))
        rtol = float(self.tol) if self.tol else _RTOL
        if total_var <= 0.0:  # constant columns: nothing to find, every direction equal
            k = k if k is not None else 1
            return self._constant(ops, mean, k, shape), np.zeros((shape[0], k), dtype=ops.dtype)
        solver = "lanczos" if self.svd_solver == "lanczos" else "krylov"
        # the Gram map's product with a column in columns of orthogonalization
        # (4 d flops): n for dense data; sparse data: cheap, as a sparse A
        cost = 0 if sparse_products(ops) else shape[0]
        return pca_fit(ops, mean, total_var, k=k, tol=tol, passes=passes, block_size=block,
                       rtol=rtol, gen=gen, solver=solver, cost=cost)

    def _constant(self, ops, mean, k, shape):
        components = np.eye(k, shape[1], dtype=ops.dtype)
        return PCAFit(components, np.zeros(k, dtype=ops.dtype),
                      np.asarray(mean, dtype=ops.dtype), shape[0], 0.0, 0)

    def _set(self, fit):
        n = fit.n_samples
        s = fit.singular_values
        self.components_ = fit.components
        self.singular_values_ = s
        self.n_components_ = int(s.shape[0])
        self.n_samples_ = n
        self.mean_ = fit.mean
        self.n_passes_ = fit.passes
        ev = (s.astype(np.float64) ** 2) / (n - 1)
        total = fit.total_var
        self.explained_variance_ = ev.astype(s.dtype)
        self.explained_variance_ratio_ = (ev / total if total > 0 else np.zeros_like(ev)
                                          ).astype(s.dtype)
        rest = min(n, self.n_features_in_) - self.n_components_
        self.noise_variance_ = float(max(total - ev.sum(), 0.0) / rest) if rest > 0 else 0.0

    def _check_params(self):
        check_choice(self.svd_solver, "svd_solver", _SOLVERS)
        check_choice(self.power_iteration_normalizer, "power_iteration_normalizer",
                     _NORMALIZERS)
        tol = self.tol
        if isinstance(tol, (bool, np.bool_)) or not isinstance(tol, numbers.Real) \
                or not 0.0 <= float(tol) < 1.0:
            raise ValueError(f"tol must be a number in [0, 1), got {tol!r}")
        if not (isinstance(self.iterated_power, str) and self.iterated_power == "auto"):
            check_int(self.iterated_power, "iterated_power", 0)
        if not isinstance(self.whiten, (bool, np.bool_)):
            raise TypeError(f"whiten must be a bool, got {self.whiten!r}")

    def _rank_or_fraction(self, shape):
        """``(k, None)`` for an int or None n_components, ``(None, tol)`` for a
        fraction."""
        n = self.n_components
        limit = min(shape)
        if n is None:
            return limit, None
        if isinstance(n, numbers.Real) and not isinstance(n, (numbers.Integral, bool, np.bool_)):
            fraction = float(n)
            if not 0.0 < fraction < 1.0:
                raise ValueError(
                    f"n_components must be an int in [1, {limit}], a float in (0, 1) or None, "
                    f"got {n!r}")
            return None, math.sqrt(1.0 - fraction)
        if isinstance(n, str):
            raise ValueError(f"n_components must be an int, a float in (0, 1) or None, got "
                             f"{n!r} ('mle' needs the whole spectrum: use "
                             "sklearn.decomposition.PCA)")
        k = check_int(n, "n_components", 1)
        if k > limit:
            raise ValueError(
                f"n_components must be <= min(n_samples, n_features) = {limit}, got {k}")
        return k, None

    # -- using the fit ------------------------------------------------------------

    def transform(self, X: MatrixLike) -> NDArray[np.floating]:
        """Project X on the components, ``(n_samples, n_components_)``, whitened
        when ``whiten``; sparse X is not densified; a dask X gives a dask
        array (its row blocks projected)."""
        check_is_fitted(self, "components_")
        if hasattr(X, "__dask_graph__"):
            if X.ndim != 2 or X.shape[1] != self.n_features_in_:
                raise ValueError(f"X must have {self.n_features_in_} columns, got shape "
                                 f"{X.shape}")
            if X.numblocks[1] != 1:
                X = X.rechunk({1: -1})
            dtype = self.components_.dtype
            return X.map_blocks(self.transform, chunks=(X.chunks[0], (self.n_components_,)),
                                dtype=dtype, meta=np.empty((0, 0), dtype=dtype))
        X = self._check_X(X, reset=False)
        C = self.components_
        Z = np.asarray(X @ C.T) - self.mean_ @ C.T
        if self.whiten:
            Z /= np.sqrt(np.maximum(self.explained_variance_, np.finfo(Z.dtype).tiny))
        return Z.astype(C.dtype, copy=False)

    def inverse_transform(self, X: ArrayLike) -> NDArray[np.floating]:
        """Back to the data space: ``X C + mean_`` (un-whitened first)."""
        check_is_fitted(self, "components_")
        Z = as_matrix(X, "X", sparse=False)
        if Z.shape[1] != self.n_components_:
            raise ValueError(f"X must have {self.n_components_} columns (n_components_), "
                             f"got {Z.shape[1]}")
        if self.whiten:
            Z = Z * np.sqrt(self.explained_variance_)
        return Z @ self.components_ + self.mean_

    def _model(self):
        """``(C, g, s2)``: the covariance model is ``C^T diag(g) C + s2 I``
        with C = components_ (orthonormal rows)."""
        ev = self.explained_variance_.astype(np.float64)
        s2 = float(self.noise_variance_)
        g = np.where(ev > s2, ev - s2, 0.0)
        if self.whiten:
            g = g * ev
        return self.components_.astype(np.float64), g, s2

    def get_covariance(self) -> NDArray[np.floating]:
        """The data covariance of the model, ``C^T diag(g) C + noise_variance_ I``
        (as scikit-learn's PCA)."""
        check_is_fitted(self, "components_")
        C, g, s2 = self._model()
        cov = (C.T * g) @ C
        cov[np.diag_indices_from(cov)] += s2
        return cov

    def get_precision(self) -> NDArray[np.floating]:
        """The inverse of :meth:`get_covariance`, by the Woodbury identity
        (the components are orthonormal): ``(I - C^T diag(g / (g + s2)) C) /
        s2``; a pseudo-inverse when ``noise_variance_`` is 0."""
        check_is_fitted(self, "components_")
        C, g, s2 = self._model()
        if s2 > 0:
            P = -(C.T * (g / (g + s2))) @ C
            P[np.diag_indices_from(P)] += 1.0
            return P / s2
        inv = np.where(g > 0, 1.0 / np.where(g > 0, g, 1.0), 0.0)
        return (C.T * inv) @ C

    def _log_det_covariance(self):
        C, g, s2 = self._model()
        d = C.shape[1]
        if s2 > 0:
            return float(np.sum(np.log(g + s2)) + (d - g.size) * math.log(s2))
        return float(np.sum(np.log(g))) if g.size == d and np.all(g > 0) else -math.inf

    def score_samples(self, X: MatrixLike) -> NDArray[np.floating]:
        """Log-likelihood of each sample under the model (a Gaussian with
        :meth:`get_covariance`), from the components (no d x d precision, no
        dense copy of a sparse X)."""
        check_is_fitted(self, "components_")
        X = self._check_X(X, reset=False)
        C, g, s2 = self._model()
        mu = self.mean_.astype(np.float64)
        proj = np.asarray(X @ C.T, dtype=np.float64) - mu @ C.T  # C (x - mu), per row
        if s2 > 0:
            if sp.issparse(X):
                sq = np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
                norms = sq - 2 * np.asarray(X @ mu, dtype=np.float64).ravel() + mu @ mu
            else:
                norms = np.sum((np.asarray(X, dtype=np.float64) - mu) ** 2, axis=1)
            quad = (norms - (proj * proj) @ (g / (g + s2))) / s2
        else:
            inv = np.where(g > 0, 1.0 / np.where(g > 0, g, 1.0), 0.0)
            quad = (proj * proj) @ inv
        d = C.shape[1]
        return -0.5 * quad - 0.5 * (d * math.log(2 * math.pi) + self._log_det_covariance())

    def score(self, X: MatrixLike, y: Any = None) -> float:
        """The mean log-likelihood of the samples."""
        return float(np.mean(self.score_samples(X)))

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
