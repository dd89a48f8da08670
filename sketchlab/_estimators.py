"""scikit-learn estimators (scikit-learn is an optional dependency: this
module, imported lazily by ``sketchlab``, is the only one that needs it)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from . import _spsd
from ._kernel_matrices import KernelParamsMixin
from ._linalg import nystrom_core, product, psd_factor
from ._errors import check_probes
from ._registry import kinds_with
from ._selection import LANDMARKS, select_landmarks
from ._sketch_state import SketchState
from ._svd import svd_recover, svd_sketches
from ._validation import as_generator, as_matrix, check_choice, check_int
from ._sklearn import check_X
from ._validation import Checked, plain_indices

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from ._validation import MatrixLike

__all__ = ["SketchedNystroem", "SinglePassSVD"]

# ---- SketchedNystroem --------------------------------------------------------

_SPSD_CORES = ("faster", "fast", "nystrom", "optimal")


class SketchedNystroem(ClassNamePrefixFeaturesOutMixin, TransformerMixin, KernelParamsMixin,
                       BaseEstimator):
    """Kernel feature map from an SPSD approximation ``K ~ C U C^T``.

    A drop-in for :class:`sklearn.kernel_approximation.Nystroem` (same
    parameters, meanings and defaults: kernel, gamma, coef0, degree,
    kernel_params, n_components, random_state) whose core ``U`` can be the
    Nystrom core or a better one: fit picks ``n_components`` landmark points
    (uniformly by default, as Nystroem), builds ``C = K[:, landmarks]`` and
    the core with :func:`~sketchlab.faster_spsd` (Algorithm 2, the
    default), :func:`~sketchlab.fast_spsd`, :func:`~sketchlab.nystrom` or
    :func:`~sketchlab.optimal_spsd`, and transform maps
    ``x -> k(x, landmarks) V D^{1/2}`` with ``U = V D V^T``, so that
    ``phi(X_fit) phi(X_fit)^T = C U C^T``.

    Parameters
    ----------
    kernel : str or callable, default "rbf"
        A kernel of ``sklearn.metrics.pairwise.PAIRWISE_KERNEL_FUNCTIONS``
        ("rbf", "laplacian", "polynomial"/"poly", "sigmoid", "linear",
        "cosine", "chi2", "additive_chi2") or a callable ``k(x, y)``, as for
        Nystroem.  "rbf" runs on sketchlab's compiled kernel, the others on
        scikit-learn's ``pairwise_kernels``.
    gamma : float, default None
        Kernel coefficient of rbf, laplacian, polynomial, exponential chi2
        and sigmoid; None means the kernel's default (1 / n_features for
        rbf), as Nystroem.
    coef0 : float, default None
        Zero coefficient of the polynomial and sigmoid kernels (None: the
        kernel's default).
    degree : float, default None
        Degree of the polynomial kernel (None: its default, 3).
    kernel_params : dict, default None
        More parameters of a callable kernel.
    n_components : int, default 100
        Number of landmarks c (and of output features); clipped to
        n_samples with a warning.
    random_state : None, int, numpy.random.Generator or RandomState
        Seeds the landmarks and the sketches.
    core : {"faster", "fast", "nystrom", "optimal"}, default "faster"
        How ``U`` is computed.  "nystrom" is Nystroem's core and evaluates
        only the c x c landmark block at fit, as Nystroem; "optimal"
        evaluates the whole kernel matrix (in row blocks): O(n_samples^2).
    sketch_size : int, optional
        Rows s of the sketches of the "fast" and "faster" cores,
        ``s >= n_components``; default ``min(10 * n_components, n_samples)``
        (larger values are clipped to n_samples with a warning).
    landmarks : {"uniform", "rpcholesky", "ridge-leverage"}, default "uniform"
        How the landmark points are chosen (see :func:`sketchlab.nystrom`).
    estimate_error : bool, default False
        Estimate ``||K - C U C^T||_F`` at fit (``error_estimate_``; it
        evaluates about 40 n more kernel entries: the error's diagonal and
        one sampled block, see :func:`sketchlab.nystrom`).

    Attributes
    ----------
    components_ : ndarray or sparse matrix of shape (n_components, n_features)
        The landmark points.
    component_indices_ : ndarray of shape (n_components,)
        Their row indices in the training data.
    core_ : ndarray of shape (n_components, n_components)
        The SPSD core U.
    normalization_ : ndarray of shape (n_components, n_components)
        ``(V D^{1/2})^T``; the features are ``k(X, components_) @
        normalization_.T``, as in Nystroem.
    n_evaluated_ : int
        Kernel entries evaluated by fit.
    error_estimate_ : ErrorEstimate or None
        With ``estimate_error=True``: of ``||K - C U C^T||_F`` on the
        training data (``relative``: over ``||K||_F``).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string feature names.

    Raises
    ------
    ValueError
        At fit, for an unknown kernel, core or landmarks, parameters out of
        range (gamma <= 0 for rbf, n_components < 1, sketch_size <
        n_components), or X with NaN/Inf.

    Notes
    -----
    Kernel entries at fit: ``c^2`` ("nystrom", uniform landmarks), ``n c +
    s^2`` ("fast", "faster"), ``n c + n^2`` ("optimal"); transform
    evaluates ``m c``, and fit_transform reuses C for the training points
    instead.  Eigenvalues of U below ``c eps max(eig)`` (rank deficiency,
    e.g. repeated points) are set to 0, so the corresponding features are 0
    instead of blowing up.  With "faster" and
    ``s = O(c / sqrt(eps) + c / (eps rho^2) + c log c)``, ``C U C^T`` is
    within ``(1 + eps)`` of the best approximation with these landmarks
    (Theorem 3; rho, the paper's eq. (4.3), is half the ratio of
    ``||K - P K P||_F`` to ``||(I - P) K P||_F`` for P the projection onto
    the range of C).

    Examples
    --------
    >>> import numpy as np
    >>> from sketchlab import SketchedNystroem
    >>> X = np.random.default_rng(0).standard_normal((500, 4))
    >>> feats = SketchedNystroem(n_components=50, random_state=0)
    >>> Z = feats.fit_transform(X)
    >>> Z.shape
    (500, 50)
    """

    def __init__(self, kernel: str | Callable[..., Any] = "rbf", *, gamma: float | None = None,
                 coef0: float | None = None, degree: float | None = None,
                 kernel_params: Mapping[str, Any] | None = None, n_components: int = 100,
                 random_state: None | int | np.random.Generator | np.random.RandomState = None,
                 core: str = "faster", sketch_size: int | None = None, landmarks: str = "uniform",
                 estimate_error: bool = False) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.random_state = random_state
        self.core = core
        self.sketch_size = sketch_size
        self.landmarks = landmarks
        self.estimate_error = estimate_error

    def fit(self, X: MatrixLike, y: Any = None) -> SketchedNystroem:
        """Pick the landmarks and compute the core.

        Parameters
        ----------
        X : array_like or sparse matrix of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        self._fit(X)
        return self

    def fit_transform(self, X: MatrixLike, y: Any = None) -> NDArray[np.floating]:
        """Fit, then the features of X, reusing the kernel columns C of the
        fit (the training points' kernel values at the landmarks) when the
        core computed them.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        X, C = self._fit(X)
        if C is None:
            return self.transform(X)
        return np.asarray(product(np.asarray(C, dtype=np.float64), self.normalization_.T),
                          dtype=X.dtype)

    def _fit(self, X):
        core = check_choice(self.core, "core", _SPSD_CORES)
        landmarks = check_choice(self.landmarks, "landmarks", LANDMARKS)
        c = check_int(self.n_components, "n_components", 1)
        if self.sketch_size is not None:
            s = check_int(self.sketch_size, "sketch_size", 1)
            if s < c:
                raise ValueError(
                    f"sketch_size must be >= n_components ({c}), got {self.sketch_size!r}"
                )
        X = check_X(self, X, accept_sparse="csr", dtype=[np.float64, np.float32])
        n = X.shape[0]
        if c > n:
            warnings.warn(
                f"n_components ({c}) > n_samples ({n}): n_components was set to n_samples, "
                "which evaluates the whole kernel matrix",
                stacklevel=3,
            )
            c = n
        if self.sketch_size is None:
            s = min(10 * c, n)
        elif s > n:
            if core in ("fast", "faster"):
                warnings.warn(
                    f"sketch_size ({s}) > n_samples ({n}): sketch_size was set to n_samples",
                    stacklevel=3,
                )
            s = n
        s = max(s, c)
        K = self._oracle(Checked(X))
        gen = as_generator(self.random_state, "random_state")
        estimate = bool(self.estimate_error)
        if core == "nystrom" and not estimate:
            # Nystroem's work: the landmark block alone (C only if the
            # landmark selection evaluated it on the way)
            columns, C = select_landmarks(K, c, landmarks, gen)
            W = np.asarray(C[columns] if C is not None else K[columns, columns],
                           dtype=np.float64)
            U = nystrom_core(W)
            error_estimate = None
        else:
            kw = dict(landmarks=landmarks, rng=gen, estimate_error=estimate)
            approx = {
                "nystrom": lambda: _spsd.nystrom(K, c, **kw),
                "fast": lambda: _spsd.fast_spsd(K, c, s, **kw),
                "faster": lambda: _spsd.faster_spsd(K, c, s, **kw),
                "optimal": lambda: _spsd.optimal_spsd(K, c, **kw),
            }[core]()
            columns, C, U, error_estimate = approx.columns, approx.C, approx.U, \
                approx.error_estimate
        w, V = psd_factor(U)  # the rank rule drops the eigenvalues at or below c eps max(w)
        self.components_ = X[columns]
        self.component_indices_ = columns
        self.core_ = U
        self.normalization_ = (V * np.sqrt(w)).T
        self.n_evaluated_ = K.n_evaluated
        self.error_estimate_ = error_estimate
        self._n_features_out = c
        return X, C

    def transform(self, X: MatrixLike) -> NDArray[np.floating]:
        """Map X to the kernel features.

        Parameters
        ----------
        X : array_like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            float32 for float32 X, else float64.
        """
        check_is_fitted(self)
        X = check_X(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                    reset=False)
        # the components: rows of the checked X of fit
        embedded = self._oracle(Checked(self.components_)).cross(Checked(X))
        return np.asarray(product(embedded, self.normalization_.T), dtype=X.dtype)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


# ---- SinglePassSVD -----------------------------------------------------------

# Operators on the row dimension get this input_dim, since the number of rows
# is not known in advance: the hash and Gaussian kinds regenerate any column
# from the seed alone, so no memory depends on it (SRHT does: not allowed).
_MAX_ROWS = 2**31 - 1
_ALGORITHMS = {"fast": "fast", "practical": "practical", "three-sketch": "three"}
_DEFAULT_KINDS = {
    "fast": ("osnap-gaussian", "osnap"),
    "practical": ("gaussian", None),
    "three-sketch": ("gaussian", "gaussian"),
}
# kinds that need no row count in advance (not SRHT)
_ESTIMATOR_SKETCHES = kinds_with(svd=True, open_dim=True)


class SinglePassSVD(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Truncated SVD of data that arrives in row batches, each read once.

    Keeps the sketches of :func:`sketchlab.fast_sp_svd` (or of its peers)
    and updates them with each batch of rows (:meth:`partial_fit`); the right
    singular vectors and singular values are recomputed from the sketches
    after every batch.  The result equals that of the function on the
    stacked batches with the same ``random_state`` and sizes (up to rounding;
    for "osnap-gaussian", when the total number of rows is at least 4 r).

    Parameters
    ----------
    n_components : int, default 10
        Target rank k; the output keeps k components.
    algorithm : {"fast", "practical", "three-sketch"}, default "fast"
        :func:`~sketchlab.fast_sp_svd` (Algorithm 3),
        :func:`~sketchlab.practical_sp_svd` (Tropp et al. 2017) or
        :func:`~sketchlab.three_sketch_svd` (Tropp et al. 2019).
    c, r, s_c, s_r : int, optional
        Sketch sizes, as in the functions (``s_c``, ``s_r`` unused by
        "practical").  Defaults as in the functions, with the number of rows
        taken as unbounded.
    range_sketch, core_sketch : str, optional
        Sketch kinds, as in the functions except "srht" (it needs the number
        of rows in advance); default the function's defaults.
    random_state : None, int, numpy.random.Generator or RandomState
        Seeds the sketches at the first batch.
    n_probes : int, default 10
        Probes of the test sketch behind ``error_estimate_`` (gathered in the
        same pass; drawn after the other sketches, so the components do not
        depend on it).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Right singular vectors (rows of Vt), as TruncatedSVD's.
    singular_values_ : ndarray of shape (n_components,)
    explained_variance_ : ndarray of shape (n_components,)
        Variance of the training data's projections ``X V`` on each
        component, as TruncatedSVD defines it (after :meth:`partial_fit`,
        from ``U diag(s)``, the projections of the rank-k approximation,
        since earlier batches are not kept; after :meth:`fit`, exact).
    explained_variance_ratio_ : ndarray of shape (n_components,)
        ``explained_variance_`` over the total variance of the rows seen
        (kept exactly from their sums and squared norms).
    error_estimate_ : ErrorEstimate
        Estimate of ``||X - U diag(s) Vt||_F`` over the rows seen, with an
        interval (``relative``: over ``||X||_F``).  Single-pass methods can
        fall well short of multi-pass ones (``TruncatedSVD``, randomized SVD
        with power iterations) on slowly decaying spectra: this is where it
        shows.
    n_features_in_ : int
    n_samples_seen_ : int
        Rows read so far.

    Notes
    -----
    When to use which: TruncatedSVD (or ``randomized_svd`` with power
    iterations) reads the data several times and is more accurate on flat
    spectra; SinglePassSVD reads each batch once and keeps only sketches,
    for data that arrives in batches or does not fit in memory.  On
    debian-tfidf (52,396 x 25,252 TF-IDF, k = 10), the single-pass sketch
    rank-10 error is about 6% above the best rank 10 where randomized_svd's
    is 4e-6.  Memory: the range sketch C grows by ``c`` numbers per row
    (U_C, the orthonormal basis of C, is needed to recover the core); the
    rest, ``r n + s_c s_r`` and the ``16 n_probes^2`` of the test sketch
    behind ``error_estimate_``, is fixed.  Each :meth:`partial_fit` costs the
    sketch update of the batch plus a QR of C, O(m c^2).  Guarantee:
    Theorem 4 of the paper, as :func:`~sketchlab.fast_sp_svd`.

    Examples
    --------
    >>> import numpy as np
    >>> from sketchlab import SinglePassSVD
    >>> gen = np.random.default_rng(0)
    >>> X = gen.standard_normal((500, 5)) @ gen.standard_normal((5, 40))
    >>> est = SinglePassSVD(n_components=5, random_state=0)
    >>> for batch in np.array_split(X, 4):
    ...     est = est.partial_fit(batch)
    >>> est.components_.shape
    (5, 40)
    >>> s = np.linalg.svd(X, compute_uv=False)[:5]
    >>> bool(np.allclose(est.singular_values_, s))
    True
    """

    # fitted state, set by partial_fit (read back by the next call)
    _sketch_state: SketchState
    n_samples_seen_: int
    _column_sums: NDArray[np.float64]

    def __init__(self, n_components: int = 10, *, algorithm: str = "fast", c: int | None = None,
                 r: int | None = None, s_c: int | None = None, s_r: int | None = None,
                 range_sketch: str | None = None, core_sketch: str | None = None,
                 random_state: None | int | np.random.Generator | np.random.RandomState = None,
                 n_probes: int = 10) -> None:
        self.n_components = n_components
        self.algorithm = algorithm
        self.c = c
        self.r = r
        self.s_c = s_c
        self.s_r = s_r
        self.range_sketch = range_sketch
        self.core_sketch = core_sketch
        self.random_state = random_state
        self.n_probes = n_probes

    def fit(self, X: MatrixLike, y: Any = None) -> SinglePassSVD:
        """Fit on all of X (one batch).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        self.fit_transform(X)
        return self

    def fit_transform(self, X: MatrixLike, y: Any = None) -> NDArray[np.floating]:
        """Fit on all of X (one batch) and return ``X V``, its projections
        on the components (as TruncatedSVD.fit_transform).  With all of X at
        hand, ``explained_variance_`` is computed from these exact
        projections.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        for name in ("_sketch_state", "components_", "singular_values_", "n_samples_seen_"):
            if hasattr(self, name):
                delattr(self, name)
        X = check_X(self, X, accept_sparse=("csr", "csc"), dtype=[np.float64, np.float32])
        self._partial_fit(X, True)
        # the index dtypes scipy's sparse-dense product takes
        projections = np.asarray(plain_indices(X) @ self.components_.T)
        self._set_variances(np.asarray(projections, dtype=np.float64))
        return projections

    def partial_fit(self, X: MatrixLike, y: Any = None) -> SinglePassSVD:
        """Add a batch of rows to the sketches and update the components.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The next rows; the number of features is fixed by the first
            batch.
        y : ignored

        Returns
        -------
        self

        Raises
        ------
        ValueError
            NaN/Inf, a different number of features than the first batch,
            fewer rows seen so far than ``n_components``, bad parameters.
        """
        first = not hasattr(self, "_sketch_state")
        X = check_X(self, X, accept_sparse=("csr", "csc"), dtype=[np.float64, np.float32],
                    reset=first)
        return self._partial_fit(X, first)

    def _partial_fit(self, X, first):
        """:meth:`partial_fit` of a checked X (``check_X``)."""
        state = self._new_state(X.shape[1]) if first else self._sketch_state
        seen = 0 if first else self.n_samples_seen_
        total = seen + X.shape[0]
        k = self.n_components
        if total < k:
            raise ValueError(
                f"n_components={k} must be <= the number of rows seen so far, n_samples={total}"
            )
        if total > _MAX_ROWS:
            raise ValueError(f"at most {_MAX_ROWS} rows can be streamed, got {total}")
        state.update(Checked(X), (seen, 0))
        self._sketch_state = state
        self.n_samples_seen_ = total
        sums = np.asarray(X.sum(axis=0), dtype=np.float64).ravel()
        self._column_sums = sums if first else self._column_sums + sums
        res = svd_recover(_ALGORITHMS[self.algorithm], state, k, overwrite=False)
        U, s, Vt = res
        self.components_ = Vt
        self.singular_values_ = s
        self.error_estimate_ = res.error_estimate
        # the projections X V of the rows seen, for the rank-k approximation
        # (those of earlier batches are not kept): U diag(s)
        self._set_variances(np.asarray(U, dtype=np.float64) * s)
        return self

    def _set_variances(self, projections):
        """TruncatedSVD's definitions: var(X V) over var(X), over the rows seen."""
        self.explained_variance_ = np.var(projections, axis=0)
        total = self.n_samples_seen_
        mean = self._column_sums / total
        with np.errstate(over="ignore"):
            full_var = float(np.square(self._sketch_state.norm / math.sqrt(total))) \
                - float(mean @ mean)
        self.explained_variance_ratio_ = (self.explained_variance_ / full_var if full_var > 0
                                          else np.zeros_like(self.explained_variance_))

    def _new_state(self, n_features):
        algorithm = check_choice(self.algorithm, "algorithm", _ALGORITHMS)
        k = check_int(self.n_components, "n_components", 1)
        if k > n_features:
            raise ValueError(
                f"n_components={k} must be <= the number of features, n_features={n_features}"
            )
        default_range, default_core = _DEFAULT_KINDS[algorithm]
        range_sketch = default_range if self.range_sketch is None else self.range_sketch
        check_choice(range_sketch, "range_sketch", _ESTIMATOR_SKETCHES)
        core_sketch = None
        if algorithm != "practical":
            core_sketch = default_core if self.core_sketch is None else self.core_sketch
            check_choice(core_sketch, "core_sketch", _ESTIMATOR_SKETCHES)
        method = _ALGORITHMS[algorithm]
        _, rank, sketches = svd_sketches(
            method, (_MAX_ROWS, n_features), k, c=self.c, r=self.r,
            s_c=None if method == "practical" else self.s_c,
            s_r=None if method == "practical" else self.s_r,
            range_sketch=range_sketch, core_sketch=core_sketch,
            rng=as_generator(self.random_state, "random_state"),
            estimate_error=True, n_probes=check_probes(self.n_probes),
        )
        return SketchState((None, n_features), sketches)

    def transform(self, X: MatrixLike) -> NDArray[np.floating]:
        """Project X on the right singular vectors: ``X V`` (n_samples, n_components).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        check_is_fitted(self, "components_")
        X = check_X(self, X, accept_sparse=("csr", "csc"), dtype=[np.float64, np.float32],
                    reset=False)
        return np.asarray(plain_indices(X) @ self.components_.T)

    def inverse_transform(self, X: ArrayLike) -> NDArray[np.floating]:
        """Back to the original space: ``X @ components_``.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_components)

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self, "components_")
        X = as_matrix(X, "X", sparse=False)
        if X.shape[1] != self.components_.shape[0]:
            raise ValueError(
                f"X must have {self.components_.shape[0]} columns (n_components), got "
                f"{X.shape[1]}"
            )
        return np.asarray(X @ self.components_)

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
