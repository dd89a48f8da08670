"""Kernel principal component analysis without the n x n kernel in memory
twice: :class:`SketchedKernelPCA`."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.extmath import svd_flip
from sklearn.utils.validation import check_is_fitted

from ._eigsh import eigsh_run
from ._kernel_matrices import BLOCK_ENTRIES, kernel_oracle
from ._linalg import eigh, lower_inverse, spd_solver
from ._linear_map import LinearMap, as_linear_map
from ._rpcholesky import block_rpcholesky
from ._sklearn import check_X
from ._validation import Checked, as_generator, check_choice, check_int, check_positive

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from ._validation import MatrixLike

__all__ = ["SketchedKernelPCA", "CentredKernelMap"]

METHODS = ("auto", "exact", "rpcholesky")
_EIGEN_SOLVERS = ("auto", "dense", "arpack", "randomized")
# kernels whose matrices are PSD for any points (the centred kernel then too)
_PSD_KERNELS = ("rbf", "linear", "laplacian", "cosine", "chi2")


class CentredKernelMap(LinearMap):
    """``H K H`` (``H = I - 1 1^T / n``: the kernel centred in feature space)
    as its products, K a kernel map: ``K V - 1 (r^T V) - r (1^T V) + m 1
    (1^T V)`` with ``r = K 1 / n`` and ``m = 1^T K 1 / n^2``."""

    symmetric = True

    def __init__(self, K: LinearMap, psd: bool):
        n = K.shape[0]
        super().__init__(K.shape, K.dtype)
        self.K = K
        self.psd = psd
        self.rows = K.matmat(np.ones(n, dtype=K.dtype)) / n  # r: the rows' means
        self.total = float(np.mean(self.rows))  # m
        self.product_columns = n // 2

    def _matmat(self, V, out):
        s = V.sum(axis=0)
        Y = self.K.matmat(V, out=out)
        Y -= (self.rows @ V)[None, :]
        Y -= np.outer(self.rows, s)
        Y += self.total * s[None, :]
        return Y

    _rmatmat = _matmat


class SketchedKernelPCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Kernel PCA from the kernel's products: eigenpairs of the centred kernel
    by :func:`~sketchlab.eigsh`, or of its RPCholesky approximation for n
    beyond memory.

    A drop-in for :class:`sklearn.decomposition.KernelPCA` (the same
    parameters, fitted attributes and methods).  scikit-learn's KernelPCA
    forms the n x n kernel and centres it (n = 60,000 images: 29 GB);
    here ``method="exact"`` keeps the kernel as a map (the lower block
    triangle stored where it fits ``cache_size``, else rows recomputed at
    every product), centres it implicitly (``H K H`` as its products) and
    finds the eigenpairs with :func:`~sketchlab.eigsh`, each with its
    residual; ``method="rpcholesky"`` approximates K by ``F F^T`` on
    ``n_landmarks`` landmarks drawn by randomly pivoted Cholesky and takes the
    eigenpairs of the centred approximation (memory ``n n_landmarks``).

    Parameters
    ----------
    n_components : int, optional
        Number of components.  None: every one with a positive eigenvalue
        (``method="exact"``: above ``sqrt(eps)`` times the largest).
    kernel, gamma, degree, coef0, kernel_params
        As scikit-learn's (default ``"linear"``; ``gamma`` None is ``1 /
        n_features``; ``degree`` 3 and ``coef0`` 1 where they apply).
    alpha : float, default 1.0
        Ridge of the inverse transform (``fit_inverse_transform``).
    fit_inverse_transform : bool, default False
        Learn the pre-image map (kernel ridge regression of X on its
        projections, as scikit-learn: it stores the n x n kernel of the
        projections).
    eigen_solver : {"auto", "dense", "arpack", "randomized"}, default "auto"
        Accepted for compatibility (every choice runs ``method``'s solver).
    tol : float, default 0
        The eigenpairs' residual ``||K_c v - lambda v|| <= tol lambda_max``
        (``method="exact"``); 0: ``eigsh``'s default, ``sqrt(eps)``.
    max_iter : int, optional
        Bound on the passes over K (``eigsh``'s ``passes``, as a bound).
    iterated_power : int or "auto", default "auto"
        Accepted for compatibility.
    remove_zero_eig : bool, default False
        Drop components with zero eigenvalue (always done when
        ``n_components`` is None).
    random_state : None, int, numpy.random.Generator or RandomState
    copy_X : bool, default True
        Keep a copy of X (``X_fit_``) rather than X itself.
    n_jobs : None
        Accepted for compatibility (the threads are Numba's and BLAS's).
    method : {"auto", "exact", "rpcholesky"}, default "auto"
        "auto": "exact" when the kernel's lower block triangle fits
        ``cache_size`` (about ``4 n^2`` bytes), else "rpcholesky" (which needs
        a PSD kernel: "rbf", "linear", "laplacian", "cosine", "chi2", or
        "poly" of an integer degree with ``coef0 >= 0``).
    n_landmarks : int, default 2000
        Landmarks of ``method="rpcholesky"`` (at most n).
    cache_size : float, default 4096
        Megabytes of stored kernel entries for ``method="exact"``.

    Attributes
    ----------
    eigenvalues_ : ndarray of shape (n_components,)
        Eigenvalues of the centred kernel matrix, descending.
    eigenvectors_ : ndarray of shape (n_samples, n_components)
        Its eigenvectors (unit norm), signs as scikit-learn's (``svd_flip``).
    residuals_ : ndarray of shape (n_components,)
        ``method="exact"``: ``||K_c v - lambda v||`` of each pair (computed);
        ``"rpcholesky"``: None.
    method_ : str
        The method run.
    n_iter_ : int
        ``"exact"``: the passes over K (products with a block, the residuals'
        included); ``"rpcholesky"``: 1.
    landmark_indices_ : ndarray or None
        The landmarks (``"rpcholesky"``).
    X_fit_ : ndarray or sparse matrix of shape (n_samples, n_features)
    gamma_ : float
        The kernel's gamma (``1 / n_features`` when gamma is None), where it
        has one.
    dual_coef_, X_transformed_fit_ : ndarray
        With ``fit_inverse_transform``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.decomposition import KernelPCA
    >>> from sketchlab import SketchedKernelPCA
    >>> X = np.random.default_rng(0).standard_normal((300, 5))
    >>> ours = SketchedKernelPCA(4, kernel="rbf", gamma=0.2, random_state=0).fit(X)
    >>> exact = KernelPCA(4, kernel="rbf", gamma=0.2, eigen_solver="dense").fit(X)
    >>> bool(np.allclose(ours.eigenvalues_, exact.eigenvalues_, rtol=1e-10))
    True
    >>> bool(np.allclose(np.abs(ours.transform(X[:3])), np.abs(exact.transform(X[:3]))))
    True
    """

    def __init__(self, n_components: int | None = None, *,
                 kernel: str | Callable[..., Any] = "linear", gamma: float | None = None,
                 degree: float = 3, coef0: float = 1,
                 kernel_params: Mapping[str, Any] | None = None, alpha: float = 1.0,
                 fit_inverse_transform: bool = False, eigen_solver: str = "auto",
                 tol: float = 0, max_iter: int | None = None,
                 iterated_power: int | str = "auto", remove_zero_eig: bool = False,
                 random_state: None | int | np.random.Generator | np.random.RandomState = None,
                 copy_X: bool = True, n_jobs: int | None = None, method: str = "auto",
                 n_landmarks: int = 2000, cache_size: float = 4096) -> None:
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.alpha = alpha
        self.fit_inverse_transform = fit_inverse_transform
        self.eigen_solver = eigen_solver
        self.tol = tol
        self.max_iter = max_iter
        self.iterated_power = iterated_power
        self.remove_zero_eig = remove_zero_eig
        self.random_state = random_state
        self.copy_X = copy_X
        self.n_jobs = n_jobs
        self.method = method
        self.n_landmarks = n_landmarks
        self.cache_size = cache_size

    # -- fitting ------------------------------------------------------------------

    def _check_params(self, n):
        check_choice(self.method, "method", METHODS)
        check_choice(self.eigen_solver, "eigen_solver", _EIGEN_SOLVERS)
        k = None
        if self.n_components is not None:
            k = min(check_int(self.n_components, "n_components", 1), n)
        tol = self.tol
        if isinstance(tol, (bool, np.bool_)) or not isinstance(tol, numbers.Real) \
                or not 0.0 <= float(tol) < 1.0:
            raise ValueError(f"tol must be a number in [0, 1), got {tol!r}")
        if self.max_iter is not None:
            check_int(self.max_iter, "max_iter", 2)
        landmarks = check_int(self.n_landmarks, "n_landmarks", 1)
        cache = check_positive(self.cache_size, "cache_size") * 2.0**20
        check_positive(self.alpha, "alpha")
        for name in ("fit_inverse_transform", "remove_zero_eig", "copy_X"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name} must be a bool, got {getattr(self, name)!r}")
        return k, float(tol), landmarks, cache

    def _kernel(self, X):
        """The kernel oracle of the points X (a named kernel ignores the
        parameters it does not take; a callable takes only kernel_params)."""
        if callable(self.kernel):
            return kernel_oracle(X, self.kernel, kernel_params=self.kernel_params)
        return kernel_oracle(X, self.kernel, gamma=self.gamma, degree=self.degree,
                             coef0=self.coef0, kernel_params=self.kernel_params)

    def fit(self, X: MatrixLike, y: Any = None) -> SketchedKernelPCA:
        """Fit on X (n_samples, n_features); y is ignored.  Returns self."""
        X = check_X(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                    copy=self.copy_X)
        n = X.shape[0]
        k, tol, landmarks, cache = self._check_params(n)
        K = self._kernel(Checked(X))
        self.gamma_ = getattr(K, "gamma", None)
        if self.gamma_ is None:
            self.gamma_ = K.params.get("gamma") if hasattr(K, "params") else None
        method = self.method
        if method == "auto":
            method = "exact" if 4.0 * n * (n + 2048) <= cache else "rpcholesky"
        psd = isinstance(self.kernel, str) and self.kernel in _PSD_KERNELS or (
            self.kernel == "poly" and float(self.degree).is_integer() and self.degree >= 0
            and (self.coef0 or 0) >= 0)
        if method == "rpcholesky" and not psd:
            raise ValueError(
                f"method='rpcholesky' needs a positive semidefinite kernel, got "
                f"kernel={self.kernel!r}: use method='exact' (cache_size= for its stored "
                "entries)")
        gen = as_generator(self.random_state, "random_state")
        if method == "exact":
            w, V, residuals = self._fit_exact(K, k, tol, cache, psd, gen)
            self.landmark_indices_ = None
            self._features = None
        else:
            w, V, residuals = self._fit_landmarks(K, k, min(landmarks, n), gen)
        # scikit-learn's conventions: tiny or negative eigenvalues are 0, signs
        # by svd_flip, descending, zeros dropped for None or remove_zero_eig
        if w.size:
            w = np.where(w > max(w.max(), 0.0) * 1e-12 * n, w, 0.0)  # rounding-level to 0
        V, _ = svd_flip(V, None)
        order = np.argsort(w, kind="stable")[::-1]
        w, V = w[order], V[:, order]
        if residuals is not None:
            residuals = residuals[order]
        if self.remove_zero_eig or self.n_components is None:
            keep = w > 0
            w, V = w[keep], V[:, keep]
            residuals = residuals[keep] if residuals is not None else None
        self.eigenvalues_, self.eigenvectors_, self.residuals_ = w, V, residuals
        if self._features is not None:
            # transform maps f(x) - mean on the components: W = F_c^T V / sqrt(w)
            cols, Linv, mean, Fc = self._features
            scale = np.sqrt(w)
            W = (Fc.T @ V) / np.where(scale > 0, scale, 1.0)
            self._features = (cols, Linv, mean, W)
        self.method_ = method
        self.X_fit_ = X
        self._oracle_fit = K
        if self.fit_inverse_transform:
            if sp.issparse(X):
                raise NotImplementedError("the inverse transform needs dense X (as "
                                          "scikit-learn's)")
            self._fit_inverse(self.eigenvectors_ * np.sqrt(self.eigenvalues_), X)
        return self

    def _fit_exact(self, K, k, tol, cache, psd, gen):
        ops = CentredKernelMap(as_linear_map(K, "K", cache_bytes=cache), psd)
        self._centre = (ops.rows, ops.total)
        res = eigsh_run(ops, k, which="LA", tol=tol if tol > 0 else
                        (None if k is not None else math.sqrt(np.finfo(np.float64).eps)),
                        passes=self.max_iter, block_size=None, psd=psd, rng=gen)
        self.n_iter_ = res.passes
        return np.asarray(res.w, dtype=np.float64), res.V, res.residuals

    def _fit_landmarks(self, K, k, c, gen):
        cols, _, F = block_rpcholesky(K, c, gen, columns=False)
        live = np.abs(np.diagonal(F[cols])) > 0  # drawn after the kernel ran out: zero columns
        if not live.all():
            cols, F = cols[live], F[:, live]
        # transform: f(x) = L^-1 k(landmarks, x), L = F[landmarks] (lower triangular)
        Linv = lower_inverse(np.ascontiguousarray(np.tril(F[cols])))
        if Linv is None:  # pragma: no cover - the live pivots have nonzero diagonals
            raise np.linalg.LinAlgError("the landmarks' Cholesky factor is singular")
        mean = F.mean(axis=0)
        Fc = F
        Fc -= mean  # centred in place: F is this fit's own (n x c, the largest array)
        lam, W = eigh(Fc.T @ Fc)  # the centred approximation F_c F_c^T, on its c columns
        order = np.argsort(lam)[::-1]
        lam, W = np.maximum(lam[order], 0.0), W[:, order]
        take = lam.size if k is None else min(k, lam.size)
        lam, W = lam[:take], W[:, :take]
        scale = np.sqrt(lam)
        V = (Fc @ W) / np.where(scale > 0, scale, 1.0)
        self._features = (cols, Linv, mean, Fc)  # Fc until the signs are final (fit)
        self.landmark_indices_ = cols
        self.n_iter_ = 1
        return lam, V, None

    def _fit_inverse(self, Z, X):
        Kz = self._kernel_between(Z, Z)
        Kz[np.diag_indices_from(Kz)] += float(self.alpha)
        self.dual_coef_ = spd_solver(Kz)(np.asarray(X, dtype=np.float64))
        self.X_transformed_fit_ = Z

    def _kernel_between(self, A, B):
        """The kernel of the rows of A against those of B (the same kernel and
        parameters): a dense block."""
        oracle = self._kernel(B)
        return np.asarray(oracle.cross(A), dtype=np.float64)

    def fit_transform(self, X: MatrixLike, y: Any = None, **params: Any) -> NDArray[np.floating]:
        """Fit on X and return its projections (n_samples, n_components)."""
        self.fit(X, **params)
        return self.eigenvectors_ * np.sqrt(self.eigenvalues_)

    # -- using the fit ------------------------------------------------------------

    def transform(self, X: MatrixLike) -> NDArray[np.floating]:
        """Project new points: their centred kernel against the training points
        times the scaled eigenvectors (``"rpcholesky"``: through the landmarks'
        features), in row blocks of at most 4M kernel entries."""
        check_is_fitted(self, "eigenvectors_")
        X = check_X(self, X, reset=False, accept_sparse="csr", dtype=[np.float64, np.float32])
        m = X.shape[0]
        w = self.eigenvalues_
        out = np.empty((m, w.size))
        if self._features is not None:
            cols, Linv, mean, W = self._features
            step = max(1, BLOCK_ENTRIES // max(1, cols.size))
            for i in range(0, m, step):
                block = np.asarray(self._oracle_fit.cross(Checked(X[i:i + step]), cols),
                                   dtype=np.float64)
                out[i:i + step] = (block @ Linv.T - mean) @ W
            return out
        rows, total = self._centre
        scaled = np.zeros_like(self.eigenvectors_)
        nz = w > 0
        scaled[:, nz] = self.eigenvectors_[:, nz] / np.sqrt(w[nz])
        n = self.eigenvectors_.shape[0]
        step = max(1, BLOCK_ENTRIES // max(1, n))
        for i in range(0, m, step):
            block = np.asarray(self._oracle_fit.cross(Checked(X[i:i + step])), dtype=np.float64)
            means = block.mean(axis=1, keepdims=True)
            block -= rows[None, :]
            block -= means
            block += total
            out[i:i + step] = block @ scaled
        return out

    def inverse_transform(self, X: ArrayLike) -> NDArray[np.floating]:
        """Back to the data space through the learned pre-image map
        (``fit_inverse_transform=True``)."""
        if not self.fit_inverse_transform:
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("the inverse transform was not fitted: pass "
                                 "fit_inverse_transform=True")
        check_is_fitted(self, "dual_coef_")
        Z = np.asarray(X, dtype=np.float64)
        return self._kernel_between(Z, self.X_transformed_fit_) @ self.dual_coef_

    @property
    def _n_features_out(self):
        return self.eigenvalues_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags
