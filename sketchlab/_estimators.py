"""scikit-learn estimators (scikit-learn is an optional dependency: this
module, imported lazily by ``sketchlab``, is the only one that needs it)."""

import warnings

import numpy as np
import scipy.linalg as sla
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _spsd
from ._config import serial_blas
from ._kernel_matrices import RBFKernel
from ._registry import kinds_with
from ._sketch_state import SketchState
from ._svd import svd_recover, svd_sketches
from ._validation import check_choice, check_int, check_positive, check_sparse_structure

__all__ = ["SketchedNystroem", "SinglePassSVD"]

# ---- SketchedNystroem --------------------------------------------------------

_SPSD_CORES = {
    "nystrom": lambda K, c, s, rng: _spsd.nystrom(K, c, rng=rng),
    "fast": lambda K, c, s, rng: _spsd.fast_spsd(K, c, s, rng=rng),
    "faster": lambda K, c, s, rng: _spsd.faster_spsd(K, c, s, rng=rng),
    "optimal": lambda K, c, s, rng: _spsd.optimal_spsd(K, c, rng=rng),
}


class SketchedNystroem(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Kernel feature map from an SPSD approximation ``K ~ C U C^T``.

    A drop-in for :class:`sklearn.kernel_approximation.Nystroem` whose core
    ``U`` can be the Nystrom core or a better one: fit draws
    ``n_components`` landmark points uniformly, builds ``C = K[:, landmarks]``
    and the core with :func:`~sketchlab.nystrom`,
    :func:`~sketchlab.fast_spsd`, :func:`~sketchlab.faster_spsd`
    (Algorithm 2, the default) or :func:`~sketchlab.optimal_spsd`, and
    transform maps ``x -> k(x, landmarks) V D^{1/2}`` with ``U = V D V^T``,
    so that ``phi(X_fit) phi(X_fit)^T = C U C^T``.

    Parameters
    ----------
    kernel : {"rbf"}, default "rbf"
        ``k(x, y) = exp(-gamma ||x - y||^2)``.
    gamma : float or None, default 1.0
        Kernel scale, > 0; None means ``1 / n_features`` (as
        :func:`sklearn.metrics.pairwise.rbf_kernel`).
    n_components : int, default 100
        Number of landmarks c (and of output features); clipped to
        n_samples with a warning.
    sketch_size : int, optional
        Rows s of the sketches of the "fast" and "faster" cores,
        ``s >= n_components``; default ``min(10 * n_components, n_samples)``
        (larger values are clipped to n_samples with a warning).
    core : {"faster", "fast", "nystrom", "optimal"}, default "faster"
        How ``U`` is computed.  "optimal" evaluates the whole kernel matrix
        (in row blocks): O(n_samples^2).
    random_state : None, int, numpy.random.Generator or RandomState
        Seeds the landmarks and the sketches.

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
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string feature names.

    Raises
    ------
    ValueError
        At fit, for gamma <= 0, an unknown kernel or core, n_components < 1,
        sketch_size < n_components, or X with NaN/Inf.

    Notes
    -----
    Fit evaluates ``n c`` kernel entries for C plus ``s^2`` ("fast",
    "faster"), nothing more ("nystrom") or ``n^2`` ("optimal"); transform
    evaluates ``m c``.  Eigenvalues of U below ``c eps max(eig)`` (rank
    deficiency, e.g. repeated points) are set to 0, so the corresponding
    features are 0 instead of blowing up.  With "faster" and
    ``s = O(c / sqrt(eps) + c / (eps rho^2) + c log c)``, ``C U C^T`` is
    within ``(1 + eps)`` of the best approximation with these landmarks
    (Theorem 3).

    Examples
    --------
    >>> import numpy as np
    >>> from sketchlab import SketchedNystroem
    >>> X = np.random.default_rng(0).standard_normal((500, 4))
    >>> feats = SketchedNystroem(gamma=0.2, n_components=50, random_state=0)
    >>> Z = feats.fit_transform(X)
    >>> Z.shape
    (500, 50)
    """

    def __init__(self, kernel="rbf", *, gamma=1.0, n_components=100, sketch_size=None,
                 core="faster", random_state=None):
        self.kernel = kernel
        self.gamma = gamma
        self.n_components = n_components
        self.sketch_size = sketch_size
        self.core = core
        self.random_state = random_state

    def fit(self, X, y=None):
        """Draw the landmarks and compute the core.

        Parameters
        ----------
        X : array_like or sparse matrix of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        check_choice(self.kernel, "kernel", ("rbf",))
        core = check_choice(self.core, "core", tuple(_SPSD_CORES))
        c = check_int(self.n_components, "n_components", 1)
        if self.sketch_size is not None:
            s = check_int(self.sketch_size, "sketch_size", 1)
            if s < c:
                raise ValueError(
                    f"sketch_size must be >= n_components ({c}), got {self.sketch_size!r}"
                )
        if self.gamma is not None:
            check_positive(self.gamma, "gamma")
        check_sparse_structure(X, "X")
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32])
        n = X.shape[0]
        if c > n:
            warnings.warn(
                f"n_components ({c}) > n_samples ({n}): n_components was set to n_samples, "
                "which evaluates the whole kernel matrix",
                stacklevel=2,
            )
            c = n
        if self.sketch_size is None:
            s = min(10 * c, n)
        elif s > n:
            if core in ("fast", "faster"):
                warnings.warn(
                    f"sketch_size ({s}) > n_samples ({n}): sketch_size was set to n_samples",
                    stacklevel=2,
                )
            s = n
        s = max(s, c)
        gamma = self._gamma(X.shape[1])
        approx = _SPSD_CORES[core](RBFKernel(X, gamma), c, s, self.random_state)
        U = approx.U
        with serial_blas():
            w, V = sla.eigh((U + U.T) / 2, check_finite=False)
        w = np.where(w > c * np.finfo(np.float64).eps * max(w.max(), 0.0), w, 0.0)
        self.components_ = X[approx.columns]
        self.component_indices_ = approx.columns
        self.core_ = U
        self.normalization_ = (V * np.sqrt(w)).T
        self.n_evaluated_ = approx.n_evaluated
        self._n_features_out = c
        return self

    def transform(self, X):
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
        check_sparse_structure(X, "X")
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                          reset=False)
        gamma = self._gamma(X.shape[1])
        embedded = RBFKernel(self.components_, gamma).cross(X)
        with serial_blas():  # an (m, c) x (c, c) product
            return np.asarray(embedded @ self.normalization_.T, dtype=X.dtype)

    def _gamma(self, n_features):
        if self.gamma is None:
            return 1.0 / n_features
        return check_positive(self.gamma, "gamma")

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

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Right singular vectors (rows of Vt).
    singular_values_ : ndarray of shape (n_components,)
    n_features_in_ : int
    n_samples_seen_ : int
        Rows read so far.

    Notes
    -----
    Memory: the range sketch C grows by ``c`` numbers per row (U_C, the
    orthonormal basis of C, is needed to recover the core); the rest,
    ``r n + s_c s_r``, is fixed.  Each :meth:`partial_fit` costs the sketch
    update of the batch plus a QR of C, O(m c^2).  Guarantee: Theorem 4 of
    the paper, as :func:`~sketchlab.fast_sp_svd`.

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

    def __init__(self, n_components=10, *, algorithm="fast", c=None, r=None, s_c=None, s_r=None,
                 range_sketch=None, core_sketch=None, random_state=None):
        self.n_components = n_components
        self.algorithm = algorithm
        self.c = c
        self.r = r
        self.s_c = s_c
        self.s_r = s_r
        self.range_sketch = range_sketch
        self.core_sketch = core_sketch
        self.random_state = random_state

    def fit(self, X, y=None):
        """Fit on all of X (one batch).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        for name in ("_sketch_state", "components_", "singular_values_", "n_samples_seen_"):
            if hasattr(self, name):
                delattr(self, name)
        return self.partial_fit(X)

    def partial_fit(self, X, y=None):
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
        check_sparse_structure(X, "X")
        X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=[np.float64, np.float32],
                          reset=first)
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
        state.update(X, (seen, 0))
        self._sketch_state = state
        self.n_samples_seen_ = total
        _, s, Vt, _ = svd_recover(_ALGORITHMS[self.algorithm], state, k, overwrite=False)
        self.components_ = Vt
        self.singular_values_ = s
        return self

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
            range_sketch=range_sketch, core_sketch=core_sketch, rng=self.random_state,
        )
        return SketchState((None, n_features), sketches)

    def transform(self, X):
        """Project X on the right singular vectors: ``X V`` (n_samples, n_components).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        check_is_fitted(self, "components_")
        check_sparse_structure(X, "X")
        X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=[np.float64, np.float32],
                          reset=False)
        return np.asarray(X @ self.components_.T)

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
