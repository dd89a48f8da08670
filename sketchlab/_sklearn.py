"""What the scikit-learn estimators share: the one check of their input, and
the classifiers' one-regression-per-class outputs.

scikit-learn's ``validate_data`` keeps the estimator's bookkeeping (the
number of features, feature names, at least one sample); the entries are
checked once, by ``_validation.as_matrix`` (one compiled pass over the index
arrays and the values together), not a second time by scikit-learn, and the
checked X is handed on explicitly (``Checked``).
"""

from __future__ import annotations

from typing import Any

from sklearn.preprocessing import LabelBinarizer
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from ._validation import as_matrix, check_sparse_structure

__all__ = ["PlusMinusOneClasses", "check_X", "check_Xy"]


def check_X(estimator: Any, X: Any, *, reset: bool = True,
            accept_sparse: Any = "csr", dtype: Any = None, **kwargs: Any) -> Any:
    """X checked once, as ``as_matrix`` returns it (dense float32/float64,
    CSR/CSC), with ``validate_data``'s bookkeeping on the estimator.

    The index arrays of sparse input are checked before scikit-learn or
    scipy read through them (a corrupt one would crash the interpreter
    there); scikit-learn does not check the values again
    (``ensure_all_finite=False``): ``as_matrix`` does, with the indices."""
    X = check_sparse_structure(X, "X")
    X = validate_data(estimator, X, reset=reset, accept_sparse=accept_sparse,
                      dtype=dtype, ensure_all_finite=False, **kwargs)
    return as_matrix(X, "X")


def check_Xy(estimator: Any, X: Any, y: Any, *, accept_sparse: Any = "csr", dtype: Any = None,
             **kwargs: Any) -> tuple[Any, Any]:
    """``(X, y)``: X as :func:`check_X` gives it, y as ``validate_data``
    does (its values checked there: y is small)."""
    X = check_sparse_structure(X, "X")
    X, y = validate_data(estimator, X, y, accept_sparse=accept_sparse, dtype=dtype,
                         ensure_all_finite=False, **kwargs)
    import numpy as np

    if np.asarray(y).dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError("y must not contain NaN or Inf")
    return as_matrix(X, "X"), y


class PlusMinusOneClasses:
    """The ridge classifiers' classes (scikit-learn's ``RidgeClassifier``
    pattern): one regression per class on +-1 targets (one target for two
    classes), the prediction the class of the largest output (of its sign for
    two classes).  The estimator defines ``decision_function``; this mixin
    comes first among its bases."""

    _label_binarizer: Any

    def _class_targets(self, y: Any) -> Any:
        """The +-1 targets of the labels y (n_samples x n_classes, or one
        column for two classes), the classes kept for ``classes_``."""
        check_classification_targets(y)
        self._label_binarizer = LabelBinarizer(pos_label=1, neg_label=-1)
        return self._label_binarizer.fit_transform(y)

    @property
    def classes_(self) -> Any:
        return self._label_binarizer.classes_

    def predict(self, X: Any) -> Any:
        """The class of the largest output.

        Parameters
        ----------
        X : array_like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        scores = self.decision_function(X)  # type: ignore[attr-defined]
        index = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[index]
