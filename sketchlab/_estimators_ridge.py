"""scikit-learn's ``Ridge``, ``RidgeClassifier`` and ``RidgeCV`` on :func:`sketchlab.ridge`.

:class:`SketchedRidge` fits the model of ``sklearn.linear_model.Ridge``
(``alpha``, ``fit_intercept``, ``tol``, ``max_iter``, ``random_state``;
``coef_``, ``intercept_``, ``n_iter_``) by the Nystrom-preconditioned
conjugate gradients of :func:`sketchlab.ridge`, or by the direct solve for
few features.  With ``fit_intercept`` the columns of X are centred as
scikit-learn centres them: a dense X by a centred copy, a sparse X
implicitly (``A x - 1 (mu^T x)``, the products of
:class:`sketchlab._linear_map.CenteredMap`: the matrix stays sparse), with
the weighted means when ``sample_weight`` is given (the rows then scaled by
``sqrt(sample_weight)``, scikit-learn's ``_rescale_data``).

:class:`SketchedRidgeClassifier` is ``RidgeClassifier``'s pattern on top of it
(targets +-1 per class), and :class:`SketchedRidgeCV` chooses alpha from a
list, every alpha solved from one sketch (a regularization path), by
generalized cross-validation (Golub, Heath and Wahba 1979) or on a held-out
split.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin, RegressorMixin
from sklearn.model_selection import check_cv
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.validation import check_is_fitted

from ._linear_map import LinearMap, centered, from_checked
from ._linalg import eigh
from ._ridge import check_alphas, gram, ridge_run
from ._sklearn import PlusMinusOneClasses, check_X, check_Xy
from ._validation import as_generator, check_choice, check_int, check_positive

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._validation import MatrixLike

__all__ = ["SketchedRidge", "SketchedRidgeClassifier", "SketchedRidgeCV"]

SOLVERS = ("auto", "nystrom-pcg", "cg", "direct")
# solver="auto": the direct solve up to this many features (the d x d matrix
# A^T A formed and factored: about d^3 / 3 flops, under a second)
_DIRECT_FEATURES = 2048
# SketchedRidgeCV: exact leave-one-out up to this many flops (m d^2)
_LOO_FLOPS = 1 << 33


class _OffsetMap(LinearMap):
    """``A - u mu^T`` as its products (A a LinearMap, u of length m, mu of
    length d): the weighted centring of a sparse X, ``diag(sqrt(w)) (X - 1
    mu^T)``, never formed."""

    def __init__(self, inner, u, mu):
        super().__init__(inner.shape, inner.dtype)
        self.inner = inner
        self.u = np.asarray(u, dtype=inner.dtype).reshape(-1, 1)
        self.mu = np.asarray(mu, dtype=inner.dtype).reshape(1, -1)

    def _matmat(self, X, out):
        Y = self.inner.matmat(X)
        Y -= self.u @ (self.mu @ X)
        return Y

    def _rmatmat(self, Y, out):
        Z = self.inner.rmatmat(Y)
        Z -= self.mu.T @ (self.u.T @ Y)
        return Z


def _check_solver_params(est):
    solver = check_choice(est.solver, "solver", SOLVERS)
    tol = check_positive(est.tol, "tol")
    if tol >= 1:
        raise ValueError(f"tol must be a number in (0, 1), got {est.tol!r}")
    max_iter = None if est.max_iter is None else check_int(est.max_iter, "max_iter", 1)
    rank = est.rank
    if not (isinstance(rank, str) and rank == "auto"):
        rank = check_int(rank, "rank", 1)
    return solver, tol, max_iter, rank


class _Centred:
    """The design of a linear model with intercept: the map of the centred
    (and row-weighted) X, the centred targets and the offsets."""

    def __init__(self, X, Y, sample_weight, fit_intercept):
        m, d = X.shape
        dtype = X.dtype
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        if fit_intercept:
            weights = np.ones(m) if w is None else w
            total = float(weights.sum())
            x_offset = np.asarray(X.T @ weights, dtype=np.float64).reshape(-1) / total
            y_offset = weights @ Y / total
        else:
            x_offset, y_offset = np.zeros(d), np.zeros(Y.shape[1])
        self.x_offset = x_offset.astype(dtype)
        self.y_offset = y_offset.astype(dtype)
        root = None if w is None else np.sqrt(w)
        Yc = Y - y_offset if fit_intercept else Y
        if root is not None:
            Yc = Yc * root[:, None]
        self.Y = np.ascontiguousarray(Yc, dtype=dtype)
        if sp.issparse(X):
            Xw = X if root is None else (sp.diags(root.astype(dtype)) @ X).asformat(X.format)
            ops = from_checked(Xw)
            if fit_intercept:  # implicit: the matrix stays sparse
                ops = centered(ops, self.x_offset) if root is None else \
                    _OffsetMap(ops, root, self.x_offset)
        else:
            Xc = X - self.x_offset if fit_intercept else X
            if root is not None:
                Xc = Xc * root[:, None].astype(dtype)
            ops = from_checked(np.ascontiguousarray(Xc, dtype=dtype))
        self.ops = ops

    def intercept(self, coef):
        """``y_offset - X_offset . coef`` per target (coef: t x d)."""
        return self.y_offset - coef @ self.x_offset


class _SketchedRidgeBase(BaseEstimator):
    """Parameters and the fit shared by the regressor and the classifier."""

    def __init__(self, alpha: Any = 1.0, *, fit_intercept: bool = True, solver: str = "auto",
                 rank: int | str = "auto", tol: float = 1e-4, max_iter: int | None = None,
                 random_state: None | int | np.random.Generator | np.random.RandomState = None
                 ) -> None:
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.rank = rank
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def _fit(self, X, Y, sample_weight, alpha):
        """Fit on validated X (m x d) and Y (m x t); sets coef_ (t x d),
        intercept_ (t,), n_iter_, solver_, rank_."""
        solver, tol, max_iter, rank = _check_solver_params(self)
        alphas, is_array = check_alphas(alpha, "alpha")
        t = Y.shape[1]
        if is_array and alphas.size != t:
            raise ValueError(f"alpha must be a number or an array of one value per target "
                             f"({t}), got {alphas.size} values")
        alphas = np.broadcast_to(alphas, (t,)).copy()
        design = _Centred(X, Y, sample_weight, self.fit_intercept)
        if solver == "auto":
            solver = "direct" if X.shape[1] <= _DIRECT_FEATURES else "nystrom-pcg"
        res = ridge_run(design.ops, design.Y, alphas, paired=True, method=solver, rank=rank,
                        tol=tol, maxiter=max_iter,
                        gen=as_generator(self.random_state, "random_state"))
        coef = np.ascontiguousarray(res.x.T)
        self.coef_ = coef
        self.intercept_ = design.intercept(coef) if self.fit_intercept else \
            np.zeros(t, dtype=coef.dtype)
        self.solver_ = res.method
        self.rank_ = res.rank
        self.n_iter_ = np.ones(t, dtype=np.int64) if solver == "direct" else \
            _steps_per_column(res.history, tol)
        return self

    def _decision(self, X):
        check_is_fitted(self)
        X = check_X(self, X, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32],
                    reset=False)
        out = X @ self.coef_.T if sp.issparse(X) else np.asarray(X) @ self.coef_.T
        return np.asarray(out) + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _steps_per_column(history, tol):
    """Steps each solution took: those after which it was still above tol."""
    return np.sum(history[:-1] > tol, axis=0).astype(np.int64)


def _validated(est, X, y, sample_weight, multi_output=True):
    X, y = check_Xy(est, X, y, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32],
                    multi_output=multi_output, y_numeric=multi_output)
    if sample_weight is not None:
        sample_weight = _check_weights(sample_weight, X.shape[0])
    return X, y, sample_weight


def _check_weights(sample_weight, m):
    """A number or an array of m finite weights >= 0, as an array."""
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"sample_weight must be a number or an array of {m} numbers, got "
                        f"{type(sample_weight).__name__}") from None
    if w.ndim == 0:
        w = np.full(m, float(w))
    if w.shape != (m,):
        raise ValueError(f"sample_weight must have shape ({m},) (the samples), got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("sample_weight must be finite and >= 0")
    if not w.sum() > 0:
        raise ValueError("sample_weight must not be all zero (a positive sum)")
    return w


class SketchedRidge(MultiOutputMixin, RegressorMixin, _SketchedRidgeBase):
    """Ridge regression by Nystrom-preconditioned conjugate gradients (a
    drop-in for :class:`sklearn.linear_model.Ridge`).

    Minimizes ``||y - X w - b||^2 + alpha ||w||^2`` (weighted by
    ``sample_weight``) as ``Ridge`` does, with :func:`sketchlab.ridge`: the
    normal equations by conjugate gradients preconditioned with a
    randomized Nystrom sketch of ``X^T X`` (Frangella, Tropp and Udell
    2023), or, for at most 2,048 features, by the Cholesky factor of the
    normal equations (``Ridge(solver="cholesky")``'s answer).  A sparse X
    with ``fit_intercept`` is centred implicitly (it stays sparse).

    Parameters
    ----------
    alpha : float or array_like of shape (n_targets,), default 1.0
        Regularization, >= 0; an array gives each target its own.
    fit_intercept : bool, default True
        Fit an intercept (the columns of X and y centred, by their weighted
        means).
    solver : {"auto", "nystrom-pcg", "cg", "direct"}, default "auto"
        ``"auto"``: "direct" up to 2,048 features, else "nystrom-pcg".  See
        :func:`sketchlab.ridge`.
    rank : "auto" or int, default "auto"
        The preconditioner's rank (see :func:`sketchlab.ridge`).
    tol : float, default 1e-4
        Relative residual of the normal equations at which the iterations
        stop (scikit-learn's ``sparse_cg`` rule and default), in (0, 1).
    max_iter : int, optional
        Most conjugate-gradient steps (default 10 n_features).
    random_state : None, int, numpy.random.Generator or RandomState
        Seeds the sketch.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
    intercept_ : float or ndarray of shape (n_targets,)
    n_iter_ : ndarray of shape (n_targets,)
        Conjugate-gradient steps per target (1 for the direct solve).
    solver_ : str
        The method that ran (``"direct"``, ``"nystrom-pcg"`` or ``"cg"``).
    rank_ : int
        The rank of the Nystrom preconditioner (0 when none was used).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string feature names.

    Warns
    -----
    sklearn.exceptions.ConvergenceWarning
        When a target's residual is above tol after max_iter steps.

    See Also
    --------
    sketchlab.ridge : the solver, with regularization paths.
    SketchedRidgeCV : alpha chosen by cross-validation from one sketch.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn.linear_model import Ridge
    >>> from sketchlab import SketchedRidge
    >>> X = sp.random(2000, 300, density=0.05, format="csr", random_state=0)
    >>> y = X @ np.arange(300.0) + 1.0
    >>> model = SketchedRidge(alpha=0.1, tol=1e-10, random_state=0).fit(X, y)
    >>> ref = Ridge(alpha=0.1, solver="cholesky").fit(X.toarray(), y)
    >>> bool(np.allclose(model.coef_, ref.coef_)), bool(np.isclose(model.intercept_,
    ...                                                              ref.intercept_))
    (True, True)
    """

    def fit(self, X: MatrixLike, y: Any, sample_weight: Any = None) -> SketchedRidge:
        """Fit the model.

        Parameters
        ----------
        X : array_like or sparse matrix of shape (n_samples, n_features)
        y : array_like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : float or array_like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        X, y, sample_weight = _validated(self, X, y, sample_weight)
        Y = np.asarray(y, dtype=X.dtype).reshape(X.shape[0], -1)
        self._fit(X, Y, sample_weight, self.alpha)
        if y.ndim == 1:
            self.coef_ = self.coef_[0]
            self.intercept_ = self.intercept_[0]
        return self

    def predict(self, X: MatrixLike) -> NDArray[np.floating]:
        """``X @ coef_.T + intercept_``.

        Parameters
        ----------
        X : array_like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        return self._decision(X)


class SketchedRidgeClassifier(PlusMinusOneClasses, ClassifierMixin, _SketchedRidgeBase):
    """Classifier by ridge regression on +-1 targets (a drop-in for
    :class:`sklearn.linear_model.RidgeClassifier`), fitted as
    :class:`SketchedRidge`.

    Each class gets a target that is +1 on its samples and -1 elsewhere (one
    target for two classes); the prediction is the class of the largest
    output.  The parameters are those of :class:`SketchedRidge`, and
    ``class_weight`` (None, "balanced" or a dict) weights the samples.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    n_iter_, solver_, rank_
        As for :class:`SketchedRidge`.

    Examples
    --------
    >>> import numpy as np
    >>> from sketchlab import SketchedRidgeClassifier
    >>> gen = np.random.default_rng(0)
    >>> X = gen.standard_normal((300, 5))
    >>> y = np.where(X[:, 0] + 0.1 * gen.standard_normal(300) > 0, "pos", "neg")
    >>> clf = SketchedRidgeClassifier(random_state=0).fit(X, y)
    >>> clf.predict([[2.0, 0, 0, 0, 0], [-2.0, 0, 0, 0, 0]])
    array(['pos', 'neg'], dtype='<U3')
    """

    def __init__(self, alpha: Any = 1.0, *, fit_intercept: bool = True, solver: str = "auto",
                 rank: int | str = "auto", tol: float = 1e-4, max_iter: int | None = None,
                 class_weight: Any = None,
                 random_state: None | int | np.random.Generator | np.random.RandomState = None
                 ) -> None:
        super().__init__(alpha, fit_intercept=fit_intercept, solver=solver, rank=rank, tol=tol,
                         max_iter=max_iter, random_state=random_state)
        self.class_weight = class_weight

    def fit(self, X: MatrixLike, y: Any, sample_weight: Any = None
            ) -> SketchedRidgeClassifier:
        """Fit one ridge regression per class on +-1 targets.

        Parameters
        ----------
        X : array_like or sparse matrix of shape (n_samples, n_features)
        y : array_like of shape (n_samples,)
        sample_weight : float or array_like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        X, y, sample_weight = _validated(self, X, y, sample_weight, multi_output=False)
        Y = self._class_targets(y).astype(X.dtype)
        if self.class_weight is not None:
            weights = compute_sample_weight(self.class_weight, y)
            sample_weight = weights if sample_weight is None else sample_weight * weights
        self._fit(X, Y, sample_weight, self.alpha)
        return self

    def decision_function(self, X: MatrixLike) -> NDArray[np.floating]:
        """The regression outputs: shape (n_samples,) for two classes (> 0
        means ``classes_[1]``), else (n_samples, n_classes).

        Parameters
        ----------
        X : array_like or sparse matrix of shape (n_samples, n_features)
        """
        scores = self._decision(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores


class SketchedRidgeCV(MultiOutputMixin, RegressorMixin, _SketchedRidgeBase):
    """Ridge regression with alpha chosen from a list, every alpha from one
    sketch (a drop-in for :class:`sklearn.linear_model.RidgeCV`).

    All the alphas are solved together by :func:`sketchlab.ridge` (one
    Nystrom sketch, one block iteration: a regularization path), and scored
    by leave-one-out cross-validation (``cv=None``) or on a held-out share
    of the rows (``cv`` a float); the model is then the solution at the best
    alpha (refitted on all rows).

    Leave-one-out is RidgeCV's criterion, exact where the direct solve runs
    (up to 2,048 features, ``m d^2 <= 2**33``, no sample weights: the hat
    matrix's diagonal from the eigendecomposition of ``X_c^T X_c``), and
    otherwise its rotation-invariant form, generalized cross-validation
    (Golub, Heath and Wahba 1979): ``m ||y - y_hat||^2 / (m - df)^2``
    (weighted), ``df = 1 + tr(X_c (X_c^T X_c + alpha I)^-1 X_c^T)`` with the
    intercept, the trace from the eigenvalues of ``X^T X`` for the direct
    solve, else Girard and Hutchinson's estimate from 8 random probes solved
    with the path (unbiased; what its error changes in the score is of
    order ``error(df) / m``).

    Parameters
    ----------
    alphas : array_like of shape (n_alphas,), default (0.1, 1.0, 10.0)
        The candidate values, >= 0.
    fit_intercept : bool, default True
    cv : None, float, int, splitter or iterable of splits, default None
        None: leave-one-out (exact, or generalized cross-validation; see
        above); a float in (0, 1): that share of the rows (drawn with
        ``random_state``) held out for scoring; an int, a scikit-learn
        splitter or an iterable of ``(train, test)`` index arrays: those
        folds (``KFold`` for an int, as RidgeCV), each fitted as one path
        and scored on its held-out rows, the mean over the folds.
    solver, rank, tol, max_iter, random_state
        As for :class:`SketchedRidge`.

    Attributes
    ----------
    alpha_ : float
        The chosen alpha.
    best_score_ : float
        Its score: minus the leave-one-out (or generalized cross-validation)
        mean squared error, or minus the held-out one (larger is better, as
        RidgeCV's).
    cv_scores_ : ndarray of shape (n_alphas,)
        The score of every alpha.
    coef_, intercept_, n_iter_, solver_, rank_
        As for :class:`SketchedRidge`, at ``alpha_``.

    Examples
    --------
    >>> import numpy as np
    >>> from sketchlab import SketchedRidgeCV
    >>> gen = np.random.default_rng(0)
    >>> X = gen.standard_normal((500, 20))
    >>> y = X @ gen.standard_normal(20) + 0.5 * gen.standard_normal(500)
    >>> model = SketchedRidgeCV(alphas=np.logspace(-3, 3, 13), random_state=0).fit(X, y)
    >>> float(model.alpha_) <= 10.0
    True
    """

    def __init__(self, alphas: Any = (0.1, 1.0, 10.0), *, fit_intercept: bool = True,
                 cv: float | None = None, solver: str = "auto", rank: int | str = "auto",
                 tol: float = 1e-4, max_iter: int | None = None,
                 random_state: None | int | np.random.Generator | np.random.RandomState = None
                 ) -> None:
        self.alphas = alphas
        self.fit_intercept = fit_intercept
        self.cv = cv
        self.solver = solver
        self.rank = rank
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X: MatrixLike, y: Any, sample_weight: Any = None) -> SketchedRidgeCV:
        """Solve for every alpha, score them, keep the best.

        Parameters
        ----------
        X : array_like or sparse matrix of shape (n_samples, n_features)
        y : array_like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : float or array_like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        solver, tol, max_iter, rank = _check_solver_params(self)
        alphas, _ = check_alphas(self.alphas, "alphas")
        cv = self.cv
        if isinstance(cv, (bool, np.bool_)) or (isinstance(cv, numbers.Real) and not isinstance(
                cv, numbers.Integral) and not 0.0 < float(cv) < 1.0):
            raise ValueError(f"cv must be None, a share of rows in (0, 1), an int >= 2, a "
                             f"cross-validation splitter or an iterable of splits, got {cv!r}")
        X, y, sample_weight = _validated(self, X, y, sample_weight)
        Y = np.asarray(y, dtype=X.dtype).reshape(X.shape[0], -1)
        gen = as_generator(self.random_state, "random_state")
        if solver == "auto":
            solver = "direct" if X.shape[1] <= _DIRECT_FEATURES else "nystrom-pcg"
        if cv is None:
            scores = self._leave_one_out(X, Y, sample_weight, alphas, solver, rank, tol,
                                         max_iter, gen)
        else:
            m = X.shape[0]
            if isinstance(cv, numbers.Real) and not isinstance(cv, numbers.Integral):
                held = max(1, min(m - 1, int(round(float(cv) * m))))
                order = gen.permutation(m)
                splits = [(np.sort(order[held:]), np.sort(order[:held]))]
            else:
                splits = list(check_cv(cv).split(X, Y))
            scores = np.mean([self._held_out(X, Y, sample_weight, alphas, train, test, solver,
                                             rank, tol, max_iter, gen)
                              for train, test in splits], axis=0)
        best = int(np.argmax(scores))
        self.alpha_ = float(alphas[best])
        self.best_score_ = float(scores[best])
        self.cv_scores_ = scores
        self._fit(X, Y, sample_weight, self.alpha_)
        if y.ndim == 1:
            self.coef_ = self.coef_[0]
            self.intercept_ = self.intercept_[0]
        return self

    def _leave_one_out(self, X, Y, sample_weight, alphas, solver, rank, tol, max_iter, gen):
        """Minus the leave-one-out error of every alpha (summed over the
        targets): exact from the eigendecomposition of ``X_c^T X_c`` where it
        is cheap, else its generalized cross-validation approximation."""
        design = _Centred(X, Y, sample_weight, self.fit_intercept)
        m, d = X.shape
        if solver == "direct" and sample_weight is None and m * d * d <= _LOO_FLOPS:
            return self._exact_loo(design, alphas)
        res = ridge_run(design.ops, design.Y, alphas, method=solver, rank=rank, tol=tol,
                        maxiter=max_iter, gen=gen,
                        trace="exact" if solver == "direct" else "probes")
        t, p = Y.shape[1], alphas.size
        fitted = design.ops.matmat(res.x)  # m x (t p), alpha fastest
        rss = np.sum((np.repeat(design.Y, p, axis=1) - fitted) ** 2, axis=0).reshape(t, p)
        df = np.asarray(res.effective_dimension, dtype=np.float64) + \
            (1.0 if self.fit_intercept else 0.0)
        return -np.sum(m * rss / np.maximum(m - df, 1e-12) ** 2, axis=0)

    def _exact_loo(self, design, alphas):
        """Leave-one-out errors ``((y - y_hat) / (1 - h))^2`` with the hat
        matrix's diagonal ``h = 1/m + sum_j Q_ij^2 / (w_j + alpha)``, ``X_c^T
        X_c = V diag(w) V^T`` and ``Q = X_c V`` (RidgeCV's criterion)."""
        ops, Yc = design.ops, design.Y.astype(np.float64)
        m = ops.shape[0]
        w, V = eigh(gram(ops))
        w = np.maximum(w, 0.0)
        Q = np.asarray(ops.matmat(V.astype(ops.dtype)), dtype=np.float64)  # m x d
        QtY = Q.T @ Yc  # = V^T X_c^T Y
        base = 1.0 / m if self.fit_intercept else 0.0
        scores = np.empty(alphas.size)
        for a, alpha in enumerate(alphas):
            inv = np.where(w + alpha > 0, 1.0 / np.where(w + alpha > 0, w + alpha, 1.0), 0.0)
            fitted = Q @ (inv[:, None] * QtY)
            h = base + (Q * Q) @ inv
            loo = (Yc - fitted) / np.maximum(1.0 - h, 1e-12)[:, None]
            scores[a] = -float(np.mean(loo ** 2)) * Yc.shape[1]
        return scores

    def _held_out(self, X, Y, sample_weight, alphas, train, test, solver, rank, tol,
                  max_iter, gen):
        """Minus the mean squared error on the rows ``test`` of every alpha
        (the path fitted on the rows ``train``)."""
        held = len(test)
        sw_train = None if sample_weight is None else sample_weight[train]
        design = _Centred(X[train], Y[train], sw_train, self.fit_intercept)
        res = ridge_run(design.ops, design.Y, alphas, method=solver, rank=rank, tol=tol,
                        maxiter=max_iter, gen=gen)
        t, p = Y.shape[1], alphas.size
        coef = res.x.reshape(X.shape[1], t, p)
        Xt = X[test]
        predicted = np.asarray(Xt @ coef.reshape(X.shape[1], -1)).reshape(held, t, p)
        if self.fit_intercept:
            offsets = design.y_offset[:, None] - np.einsum("d,dtp->tp", design.x_offset, coef)
            predicted = predicted + offsets
        errors = (Y[test][:, :, None] - predicted) ** 2
        weights = np.ones(held) if sample_weight is None else sample_weight[test]
        mse = np.einsum("i,itp->p", weights, errors) / (weights.sum() * t)
        return -mse

    def predict(self, X: MatrixLike) -> NDArray[np.floating]:
        """``X @ coef_.T + intercept_``.

        Parameters
        ----------
        X : array_like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        return self._decision(X)
