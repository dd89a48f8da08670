"""Kernel matrices given as oracles: only the requested blocks are computed.

:class:`RBFKernel` evaluates ``K_ij = exp(-gamma ||x_i - x_j||^2)`` over the
rows of a dense or CSR data matrix, block by block, and counts every entry it
evaluates, so that an algorithm's query cost (Theorem 3 counts the entries of
K an SPSD approximation observes) can be measured.  :class:`PairwiseKernel`
does the same for every kernel scikit-learn's ``pairwise_kernels`` knows (and
for a callable), so that kernel methods can take sklearn's kernel names and
parameters; :func:`kernel_oracle` maps those parameters to an oracle.  A
plain square ndarray is accepted wherever an oracle is (see
:func:`as_kernel`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from ._engine.kernels import (
    DENSIFY_MAX_ENTRIES,
    SYRK_MAX_ROWS,
    Points,
    can_center,
    csr_sq_norms,
    rbf_block,
)
from ._validation import as_matrix, check_int, check_positive

if TYPE_CHECKING:
    from typing import TypeAlias

    from numpy.typing import ArrayLike, DTypeLike, NDArray

    from ._validation import MatrixLike

    # What the SPSD methods take as K: a kernel oracle or a square symmetric array.
    KernelLike: TypeAlias = "_KernelOracle | ArrayLike"

__all__ = ["RBFKernel", "PairwiseKernel"]

# Entries of K held at once by row_blocks() by default (32 MB of float64).
BLOCK_ENTRIES = 1 << 22

def _parse_index(key, n, name):
    """(ids, span, scalar): int64 ids of a key along an axis of length n;
    span = (start, stop) when the key is a contiguous slice (zero-copy rows)."""
    if isinstance(key, slice):
        start, stop, step = key.indices(n)
        if step == 1:
            stop = max(start, stop)
            return np.arange(start, stop, dtype=np.int64), (start, stop), False
        return np.arange(start, stop, step, dtype=np.int64), None, False
    if isinstance(key, (numbers.Integral, np.integer)) and not isinstance(key, (bool, np.bool_)):
        i = int(key)
        if not -n <= i < n:
            raise IndexError(f"{name} index {i} is out of bounds for size {n}")
        return np.array([i % n], dtype=np.int64), None, True
    arr = np.asarray(key)
    if arr.dtype == bool:
        if arr.shape != (n,):
            raise IndexError(f"{name} boolean index must have shape ({n},), got {arr.shape}")
        return np.flatnonzero(arr).astype(np.int64), None, False
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise IndexError(
            f"{name} index must be an int, a slice, or a 1-D array of ints or booleans, "
            f"got {type(key).__name__} with dtype {arr.dtype} and shape {arr.shape}"
        )
    ids = arr.astype(np.int64, copy=True)
    if ids.size and (ids.min() < -n or ids.max() >= n):
        bad = ids[(ids < -n) | (ids >= n)][0]
        raise IndexError(f"{name} index {bad} is out of bounds for size {n}")
    ids[ids < 0] += n
    return ids, None, False


class _KernelOracle:
    """A square symmetric matrix that is evaluated block by block.

    Subclasses implement ``_block(rows, rspan, cols, cspan)`` returning the
    dense block for int64 index arrays (``rspan``/``cspan`` are (start, stop)
    for contiguous slices, else None); this class parses keys and counts.
    """

    def __init__(self, n: int, dtype: DTypeLike) -> None:
        self._n = n
        self._dtype = np.dtype(dtype)
        self._count = 0

    @property
    def shape(self) -> tuple[int, int]:
        """``(n, n)``."""
        return (self._n, self._n)

    @property
    def dtype(self) -> np.dtype:
        """dtype of the evaluated blocks (float32 or float64)."""
        return self._dtype

    ndim = 2
    # True where K[i, j] and K[j, i] come from one formula symmetric in its
    # two points (equal up to the rounding of the inner products), so that
    # an algorithm may read the rows K[T, :] as the columns K[:, T]
    _symmetric_by_formula = False

    @property
    def n_evaluated(self) -> int:
        """Number of entries evaluated since creation or the last
        :meth:`reset_count` (every entry of every requested block)."""
        return self._count

    def reset_count(self) -> int:
        """Set :attr:`n_evaluated` to 0 and return its previous value."""
        count, self._count = self._count, 0
        return count

    def __getitem__(self, key: Any) -> Any:  # an array; a scalar for two int indices
        if isinstance(key, tuple):
            if len(key) != 2:
                raise IndexError(f"a kernel takes 1 or 2 indices, got {len(key)}")
            rkey, ckey = key
        else:
            rkey, ckey = key, slice(None)
        rows, rspan, rscalar = _parse_index(rkey, self._n, "row")
        cols, cspan, cscalar = _parse_index(ckey, self._n, "column")
        self._count += rows.shape[0] * cols.shape[0]
        out = self._block(rows, rspan, cols, cspan)
        if rscalar and cscalar:
            return out[0, 0]
        if rscalar:
            return out[0]
        if cscalar:
            return out[:, 0]
        return out

    def _block(self, rows, rspan, cols, cspan):  # pragma: no cover - abstract
        raise NotImplementedError

    def rows_into(self, rows: NDArray[np.integer], out: NDArray[np.floating]) -> None:
        """``out[...] = self[rows, :]`` for an int array ``rows`` (in range)
        and a C-contiguous ``out`` of shape (len(rows), n): where the oracle
        can, computed in ``out`` itself (a caller that fills a large array
        block by block saves each block's fresh memory)."""
        rows = np.asarray(rows, dtype=np.int64)
        self._count += rows.shape[0] * self._n
        out[...] = self._block(rows, None, np.arange(self._n), (0, self._n))

    def _cross_args(self, Y, cols):
        """Validate the arguments of ``cross`` and count its entries:
        ``(Y, cols, cspan)``."""
        Y = as_matrix(Y, "Y")
        if Y.shape[1] != self._n_features:
            raise ValueError(
                f"Y must have {self._n_features} columns (n_features), got {Y.shape[1]}"
            )
        self._check_points(Y, "Y")
        cols, cspan, _ = _parse_index(slice(None) if cols is None else cols, self._n, "column")
        self._count += Y.shape[0] * cols.shape[0]
        return Y, cols, cspan

    def _check_points(self, Y, name):
        """Checks a kernel makes on its points, beyond :func:`as_matrix`'s."""

    def toarray(self) -> NDArray[np.floating]:
        """The whole ``n x n`` matrix (counts ``n**2`` entries; small n only)."""
        return self[:, :]

    def row_blocks(self,
                   block_rows: int | None = None) -> Iterator[tuple[int, NDArray[np.floating]]]:
        """Iterate over ``(start, K[start:stop, :])`` blocks of whole rows.

        Parameters
        ----------
        block_rows : int, optional
            Rows per block; by default blocks of about 4M entries (32 MB in
            float64).

        Yields
        ------
        start : int
        block : ndarray of shape (stop - start, n)
        """
        n = self._n
        if block_rows is None:
            block_rows = max(1, BLOCK_ENTRIES // n)
        block_rows = check_int(block_rows, "block_rows", 1)
        for i0 in range(0, n, block_rows):
            yield i0, self[i0:min(n, i0 + block_rows), :]


def _same_points(rows, rspan, cols, cspan):
    """Whether a block's rows and columns are the same points (in order)."""
    if rspan is not None:
        return rspan == cspan
    return cspan is None and rows.shape == cols.shape and np.array_equal(rows, cols)


class _ArrayKernel(_KernelOracle):
    """A precomputed kernel matrix seen through the oracle interface."""

    def __init__(self, K, name="K"):
        K = as_matrix(K, name, sparse=False)
        if K.shape[0] != K.shape[1]:
            raise ValueError(f"{name} must be a square matrix, got shape {K.shape}")
        if K.shape[0] == 0:
            raise ValueError(f"{name} must not be empty, got shape {K.shape}")
        _check_symmetric(K, name)
        super().__init__(K.shape[0], K.dtype)
        self._K = K

    def diagonal(self):
        """The diagonal of K (counts ``n`` entries)."""
        self._count += self._n
        return np.diagonal(self._K).copy()

    def _block(self, rows, rspan, cols, cspan):
        K = self._K
        R = K[rspan[0]:rspan[1]] if rspan is not None else K[rows]
        if cspan is not None:
            return np.ascontiguousarray(R[:, cspan[0]:cspan[1]])
        return np.ascontiguousarray(R[:, cols])

    def __repr__(self):
        return f"<kernel oracle over a {self._n}x{self._n} {self._dtype} array>"


def _check_symmetric(K, name):
    """Symmetric up to sqrt(eps) relative to max |K_ij|, checked on square
    tiles (K[I, J] against K[J, I]^T) so that no n x n temporary is made."""
    n = K.shape[0]
    scale = max(abs(float(K.max())), abs(float(K.min())))
    tol = np.sqrt(np.finfo(K.dtype).eps) * scale
    step = 512
    for i0 in range(0, n, step):
        i1 = min(n, i0 + step)
        for j0 in range(i0, n, step):
            j1 = min(n, j0 + step)
            gap = float(np.abs(K[i0:i1, j0:j1] - K[j0:j1, i0:i1].T).max())
            if gap > tol:
                raise ValueError(
                    f"{name} must be symmetric: max |K - K^T| = {gap:.3g} exceeds "
                    f"{tol:.3g} (sqrt(eps) * max|K|)"
                )


def as_kernel(K: Any, name: str = "K") -> _KernelOracle:
    """``K`` as a kernel oracle: an oracle is returned as is, a square
    symmetric ndarray is wrapped (its blocks are read and counted)."""
    if isinstance(K, _KernelOracle):
        return K
    if sp.issparse(K):
        raise TypeError(
            f"{name} must be a kernel oracle (e.g. RBFKernel) or a dense square array, "
            f"got a scipy.sparse {K.format} matrix"
        )
    return _ArrayKernel(K, name)


class RBFKernel(_KernelOracle):
    """RBF kernel matrix ``K_ij = exp(-gamma ||x_i - x_j||^2)`` as an oracle.

    Only the blocks asked for are computed: ``K[rows, cols]`` evaluates
    exactly ``len(rows) * len(cols)`` entries and adds that number to
    :attr:`n_evaluated`.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n, d)
        The points, one per row.  Dense (C or F order) or sparse (CSR; other
        formats are converted); float32 is kept (blocks are float32), other
        real dtypes become float64.  NaN and Inf are rejected.
    gamma : float
        Scale of the kernel, > 0 (the paper's sigma).

    Attributes
    ----------
    shape : (int, int)
        ``(n, n)``.
    dtype : numpy.dtype
        float32 for float32 X, else float64.
    gamma : float
    n_features : int
    n_evaluated : int
        Entries evaluated so far (see :meth:`reset_count`).

    Raises
    ------
    ValueError
        If gamma <= 0, X is empty or holds NaN/Inf.
    TypeError
        If X is not numeric.

    See Also
    --------
    PairwiseKernel : the same interface for scikit-learn's other kernels.

    Notes
    -----
    Indexing accepts, on each axis, an int, a slice, or a 1-D array of ints
    (negative ones wrap) or booleans; ``K[rows]`` means ``K[rows, :]``.

    A block is computed from ``||x_i||^2 + ||x_j||^2 - 2 x_i . x_j``
    (squared norms precomputed in float64) through a Numba kernel parallel
    over the rows of the block, whose exp is vectorized (range reduction and
    a polynomial, within 1 ulp of libm's).  The inner products come from one
    BLAS product of the selected rows (dense X, or sparse X at least 1/32
    dense, through dense copies of at most 4M entries), else from a Numba
    sparse product on the CSR arrays that never densifies.  All arithmetic
    is in float64.  Cost per m x p block: O(m p d) (dense route) or the work
    of the sparse product plus O(d) (CSR route).

    That expansion cancels when a distance is small next to the norms (points
    far from the origin, or close to each other).  Every entry whose
    expanded distance is at most 1/64 of ``||x_i||^2 + ||x_j||^2`` (or whose
    norms over- or underflow) is recomputed from the explicit differences
    ``x_i - x_j`` of the points as given, scaled by a power of two where
    their squares would over- or underflow; the other entries have a
    relative distance error below about ``64 sqrt(d) eps``.  So that few
    entries need this, points far from the origin (the squared norm of their
    mean above 15/16 of their mean squared norm) are centered, in a float64
    copy made once: on their mean rounded to a power-of-two grid, so that
    centering is exact for points on a grid (integer features) and an entry
    does not depend on the block it is computed in.  Sparse points are
    centered only when their dense copy is no larger than their CSR arrays.
    Points whose largest coordinate is outside [2**-200, 2**200] are scaled
    by a power of two (gamma takes its square, kept as mantissa and
    exponent so that it cannot overflow).  For any finite input every value
    lies in [0, 1], and an entry whose row and column are the same point is
    exactly 1.

    :meth:`diagonal` returns ones without evaluating anything and does not
    count (k(x, x) = 1 is known); every other entry, diagonal ones inside a
    requested block included, is counted.  The counter is not thread-safe.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    >>> K = sketchlab.RBFKernel(X, gamma=0.5)
    >>> K[[0, 1], [1, 2]]
    array([[0.60653066, 0.13533528],
           [1.        , 0.082085  ]])
    >>> K.n_evaluated
    4

    Far from the origin, where ``||x||^2 + ||y||^2 - 2 x.y`` cancels:

    >>> K = sketchlab.RBFKernel([[1e9], [1e9 + 0.5], [1e9 + 1.0]], gamma=1.0)
    >>> K[0, 1:]
    array([0.77880078, 0.36787944])
    """

    _symmetric_by_formula = True

    def __init__(self, X: MatrixLike, gamma: float) -> None:
        gamma = check_positive(gamma, "gamma")
        X = as_matrix(X, "X")
        self._setup(X, gamma)

    def _setup(self, X, gamma):
        """The body of ``__init__`` for a validated X and gamma."""
        n, d = X.shape
        if n == 0 or d == 0:
            raise ValueError(f"X must have at least one row and one column, got shape {X.shape}")
        super().__init__(n, X.dtype)
        self._gamma = gamma
        self._n_features = d
        self._points = Points(X)

    @property
    def gamma(self) -> float:
        return self._gamma

    @property
    def n_features(self) -> int:
        return self._n_features

    def __repr__(self) -> str:
        kind = "sparse" if sp.issparse(self._points.orig) else "dense"
        return (
            f"RBFKernel(<{kind} {self._n}x{self.n_features} {self._dtype}>, "
            f"gamma={self._gamma!r})"
        )

    def diagonal(self) -> NDArray[np.floating]:
        """The diagonal, all ones (known without evaluation; not counted)."""
        return np.ones(self._n, dtype=self._dtype)

    def _block(self, rows, rspan, cols, cspan):
        P = self._points
        return rbf_block(P, rows, rspan, P, cols, cspan, _same_points(rows, rspan, cols, cspan),
                          rows, cols, self._gamma, self._dtype)

    def rows_into(self, rows: NDArray[np.integer], out: NDArray[np.floating]) -> None:
        rows = np.asarray(rows, dtype=np.int64)
        self._count += rows.shape[0] * self._n
        P = self._points
        cols = np.arange(self._n)
        rbf_block(P, rows, None, P, cols, (0, self._n), False, rows, cols, self._gamma,
                   self._dtype, out=out)

    def cross(self, Y: MatrixLike, cols: ArrayLike | slice | None = None) -> NDArray[np.floating]:
        """Kernel values between new points and the oracle's points.

        Parameters
        ----------
        Y : array_like or scipy.sparse matrix of shape (m, d)
        cols : int array or slice, optional
            Which points of X (default all).

        Returns
        -------
        ndarray of shape (m, len(cols))
            ``exp(-gamma ||y_a - x_cols[b]||^2)``; float32 when both Y and X
            are float32.  Counted in :attr:`n_evaluated`.

        Raises
        ------
        ValueError
            If Y does not have ``n_features`` columns or holds NaN/Inf.

        Examples
        --------
        >>> import numpy as np, sketchlab
        >>> K = sketchlab.RBFKernel(np.eye(2), gamma=1.0)
        >>> K.cross(np.zeros((1, 2)))
        array([[0.36787944, 0.36787944]])
        """
        return self._cross(*self._cross_args(Y, cols))

    def _cross(self, Y, cols, cspan):
        P = self._points
        if P.center is not None and not can_center(Y):
            # Centering Y would densify it: compare it with the oracle's
            # points uncentered (the exact recomputation covers cancellation).
            sub = P.orig[cspan[0]:cspan[1]] if cspan is not None else P.orig[cols]
            P = Points(sub, shift=P.shift)
            cols = np.arange(sub.shape[0], dtype=np.int64)
            cspan = (0, sub.shape[0])
        m = Y.shape[0]
        rows = np.arange(m, dtype=np.int64)
        dtype = np.result_type(self._dtype, Y.dtype)
        Q = Points(Y, shift=P.shift, center=P.center)
        # New points far outside the oracle's scale give inf norms and
        # inf * 0 in the Gram product; the entries they touch are marked and
        # recomputed.  (The oracle's own points, scaled into [2**-200,
        # 2**200], cannot.)
        with np.errstate(over="ignore", invalid="ignore"):
            return rbf_block(Q, rows, (0, m), P, cols, cspan, False,
                              np.full(m, -1, dtype=np.int64), cols, self._gamma, dtype)


# The kernels of sklearn.metrics.pairwise.PAIRWISE_KERNEL_FUNCTIONS and the
# parameters each takes (sklearn's KERNEL_PARAMS; a test checks they agree).
_KERNEL_PARAMS = {
    "additive_chi2": (),
    "chi2": ("gamma",),
    "cosine": (),
    "linear": (),
    "poly": ("gamma", "degree", "coef0"),
    "polynomial": ("gamma", "degree", "coef0"),
    "rbf": ("gamma",),
    "laplacian": ("gamma",),
    "sigmoid": ("gamma", "coef0"),
}
# sklearn's laplacian_kernel and chi2_kernel reject gamma = 0.
_GAMMA_POSITIVE = frozenset(["laplacian", "chi2"])
# sklearn's chi2 kernels take only dense, non-negative points.
_CHI2 = frozenset(["chi2", "additive_chi2"])


def _check_real(value, name, low=None, strict=False):
    """``value`` as a finite float (``>= low``, or ``> low`` when strict)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    fvalue = float(value)
    bad_low = low is not None and (fvalue < low or (strict and fvalue == low))
    if not math.isfinite(fvalue) or bad_low:
        bound = "" if low is None else f" {'>' if strict else '>='} {low:g}"
        raise ValueError(f"{name} must be a finite number{bound}, got {value!r}")
    return fvalue


def _kernel_spec(kernel, gamma, degree, coef0, kernel_params):
    """Validated ``(kernel, params)``: the kernel name or callable and the
    keyword arguments of ``pairwise_kernels`` for it, with sklearn's defaults
    filled in for the named kernels (gamma 1.0 for chi2; degree 3; coef0 1),
    except a default gamma of 1 / n_features, which is left None."""
    if kernel_params is None:
        extra = {}
    elif isinstance(kernel_params, Mapping):
        extra = dict(kernel_params)
        for key in extra:
            if not isinstance(key, str):
                raise TypeError(f"kernel_params keys must be strings, got {key!r}")
    else:
        raise TypeError(f"kernel_params must be a dict or None, got {type(kernel_params).__name__}")
    if callable(kernel):
        for name, value in (("gamma", gamma), ("degree", degree), ("coef0", coef0)):
            if value is not None:
                raise ValueError(
                    f"{name} applies to the named kernels only; pass the parameters of a "
                    f"callable kernel in kernel_params, got {name}={value!r}"
                )
        return kernel, extra
    names = sorted(_KERNEL_PARAMS)
    if not isinstance(kernel, str):
        raise TypeError(f"kernel must be one of {names} or a callable, got {kernel!r}")
    if kernel == "precomputed":
        raise ValueError(
            "kernel='precomputed' has no points to evaluate; pass the precomputed kernel "
            "matrix itself where a kernel oracle is taken (a square ndarray is accepted)"
        )
    if kernel not in _KERNEL_PARAMS:
        raise ValueError(f"kernel must be one of {names} or a callable, got {kernel!r}")
    takes = _KERNEL_PARAMS[kernel]
    unknown = sorted(set(extra) - set(takes))
    if unknown:
        raise ValueError(
            f"kernel_params has {unknown[0]!r}, which the {kernel!r} kernel does not take "
            f"(it takes {list(takes) if takes else 'no parameters'})"
        )
    # as sklearn's Nystroem: explicit arguments win over kernel_params, and a
    # kernel ignores those it does not take
    for name, value in (("gamma", gamma), ("degree", degree), ("coef0", coef0)):
        if value is not None and name in takes:
            extra[name] = value
    params = {}
    if "gamma" in takes:
        value = extra.get("gamma")
        if value is None and kernel == "chi2":
            value = 1.0
        params["gamma"] = None if value is None else _check_real(
            value, "gamma", 0.0, strict=kernel in _GAMMA_POSITIVE)
    if "degree" in takes:
        value = extra.get("degree")
        params["degree"] = _check_real(3 if value is None else value, "degree", 1.0)
    if "coef0" in takes:
        value = extra.get("coef0")
        params["coef0"] = _check_real(1 if value is None else value, "coef0")
    return kernel, params


def _pairwise_kernels():
    """sklearn's ``pairwise_kernels``, imported on first use."""
    try:
        from sklearn.metrics.pairwise import pairwise_kernels
    except ImportError as exc:
        raise ImportError(
            "PairwiseKernel evaluates this kernel with scikit-learn, which is not "
            "installed; install it with: pip install 'sketchlab[sklearn]'"
        ) from exc
    return pairwise_kernels




class PairwiseKernel(_KernelOracle):
    """Any kernel of scikit-learn's ``pairwise_kernels`` as an oracle.

    The oracle interface of :class:`RBFKernel` (``K[rows, cols]`` blocks
    that evaluate and count exactly the entries asked for, :meth:`cross`,
    :meth:`diagonal`, :meth:`row_blocks`, :attr:`n_evaluated`) for the
    kernels sklearn's ``Nystroem`` takes, with sklearn's parameter names,
    meanings and defaults, so that the SPSD approximations accept them.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n, d)
        The points, one per row, dense or sparse; float32 is kept (blocks
        are float32), other real dtypes become float64.  NaN and Inf are
        rejected; the chi2 kernels need non-negative points.
    kernel : str or callable, default="rbf"
        One of "rbf", "laplacian", "polynomial" (or "poly"), "sigmoid",
        "linear", "cosine", "chi2", "additive_chi2" (the keys of
        ``sklearn.metrics.pairwise.PAIRWISE_KERNEL_FUNCTIONS``), or a
        callable ``k(x, y, **kernel_params)`` on two rows that returns a
        number (as sklearn calls it: one Python call per entry, slow).
    gamma : float, optional
        For rbf, laplacian, polynomial, sigmoid (default 1 / d) and chi2
        (default 1.0); >= 0, and > 0 for laplacian and chi2.
    degree : float, optional
        For polynomial, >= 1 (default 3).
    coef0 : float, optional
        For polynomial and sigmoid (default 1).
    kernel_params : dict, optional
        Further parameters: for a named kernel, those it takes (gamma,
        degree, coef0; the explicit arguments win); for a callable, its
        keyword arguments.

    Attributes
    ----------
    shape : (int, int)
    dtype : numpy.dtype
        float32 for float32 X, else float64.
    kernel : str or callable
    params : dict
        The keyword arguments the kernel is evaluated with, defaults filled
        in (e.g. ``{"gamma": 0.25}`` for rbf on 4 features).
    n_features : int
    n_evaluated : int

    Raises
    ------
    ValueError
        If kernel is not a known name, a parameter is out of range,
        kernel_params holds a parameter the kernel does not take, gamma,
        degree or coef0 is given with a callable kernel, X is empty, holds
        NaN/Inf, or is negative for a chi2 kernel.
    TypeError
        If kernel is neither a string nor a callable, a parameter is not a
        number, or X is not numeric.
    ImportError
        For a kernel other than rbf (or rbf with gamma = 0) when
        scikit-learn is not installed (``pip install 'sketchlab[sklearn]'``).

    See Also
    --------
    RBFKernel : the RBF oracle that "rbf" uses.
    kernel_oracle : the oracle for sklearn-style kernel parameters.

    Notes
    -----
    "rbf" (with gamma > 0) is evaluated by :class:`RBFKernel`, with the same
    numbers (and its guard against cancellation); every other kernel by
    ``sklearn.metrics.pairwise.pairwise_kernels`` on the selected rows, in
    float64 (float32 blocks are rounded from float64 values).  The chi2
    kernels take sparse X here too: the selected rows are densified in
    tiles of at most 4M entries.  A block costs what sklearn's kernel costs
    on those rows: O(m p d) for m x p.

    :meth:`diagonal` is known without evaluation for rbf, laplacian and chi2
    (ones) and additive_chi2 (zeros), and then not counted; for the other
    kernels it is computed (from the squared norms, or by calling a
    callable kernel on each point) and counts n entries.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> X = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
    >>> K = sketchlab.PairwiseKernel(X, "polynomial", degree=2)
    >>> K.params
    {'gamma': 0.5, 'degree': 2.0, 'coef0': 1.0}
    >>> K[:2, :]
    array([[2.25, 2.25, 1.  ],
           [2.25, 4.  , 4.  ]])
    >>> K.n_evaluated
    6
    >>> K.cross(np.array([[0.0, 1.0]]), cols=[1, 2])
    array([[2.25, 4.  ]])
    """

    def __init__(self, X: MatrixLike, kernel: str | Callable[..., Any] = "rbf", *,
                 gamma: float | None = None, degree: float | None = None,
                 coef0: float | None = None,
                 kernel_params: Mapping[str, Any] | None = None) -> None:
        kernel, params = _kernel_spec(kernel, gamma, degree, coef0, kernel_params)
        X = as_matrix(X, "X")
        n, d = X.shape
        if n == 0 or d == 0:
            raise ValueError(f"X must have at least one row and one column, got shape {X.shape}")
        if params.get("gamma", 0.0) is None:
            params["gamma"] = 1.0 / d
        super().__init__(n, X.dtype)
        self._kernel = kernel
        self._params = params
        self._n_features = d
        self._rbf = None
        if kernel == "rbf" and params["gamma"] > 0:
            self._rbf = RBFKernel.__new__(RBFKernel)
            self._rbf._setup(X, params["gamma"])
            return
        self._pairwise = _pairwise_kernels()
        self._check_points(X, "X")
        if sp.issparse(X):
            X = X.tocsr()
            if not X.has_canonical_format:  # duplicates summed, for the diagonal
                X = X.copy()
                X.sum_duplicates()
        self._X = X

    def _check_points(self, X, name):
        if self._kernel in _CHI2:
            values = X.data if sp.issparse(X) else X
            low = float(values.min()) if values.size else 0.0
            if low < 0:
                raise ValueError(f"{name} must be non-negative for the {self._kernel!r} "
                                 f"kernel, got a minimum of {low!r}")

    @property
    def kernel(self) -> str | Callable[..., Any]:
        return self._kernel

    @property
    def params(self) -> dict[str, Any]:
        return dict(self._params)

    @property
    def n_features(self) -> int:
        return self._n_features

    def __repr__(self) -> str:
        points = self._rbf._points.orig if self._rbf is not None else self._X
        kind = "sparse" if sp.issparse(points) else "dense"
        kernel = self._kernel
        name = repr(kernel) if isinstance(kernel, str) else getattr(kernel, "__name__", kernel)
        args = "".join(f", {k}={v!r}" for k, v in self._params.items())
        return (f"PairwiseKernel(<{kind} {self._n}x{self._n_features} {self._dtype}>, "
                f"{name}{args})")

    def diagonal(self) -> NDArray[np.floating]:
        """The diagonal of K.

        Known without evaluation, and not counted, for rbf, laplacian and
        chi2 (ones) and additive_chi2 (zeros); otherwise computed and counted
        (n entries).

        Returns
        -------
        ndarray of shape (n,)
        """
        kernel = self._kernel
        if kernel in ("rbf", "laplacian", "chi2"):
            return np.ones(self._n, dtype=self._dtype)
        if kernel == "additive_chi2":
            return np.zeros(self._n, dtype=self._dtype)
        self._count += self._n
        X = self._X
        if callable(kernel):
            out = np.empty(self._n)
            for i in range(self._n):
                row = _float64_rows(X[i:i + 1])
                out[i] = self._pairwise(row, None, metric=kernel, **self._params)[0, 0]
            return out.astype(self._dtype, copy=False)
        sq = csr_sq_norms(X) if sp.issparse(X) else np.einsum("ij,ij->i", X, X,
                                                                  dtype=np.float64)
        p = self._params
        if kernel == "linear":
            out = sq
        elif kernel in ("poly", "polynomial"):
            out = (p["gamma"] * sq + p["coef0"]) ** p["degree"]
        elif kernel == "sigmoid":
            out = np.tanh(p["gamma"] * sq + p["coef0"])
        else:  # cosine: sklearn normalizes the rows; a zero row stays zero
            out = (sq > 0).astype(np.float64)
        return out.astype(self._dtype, copy=False)

    def _block(self, rows, rspan, cols, cspan):
        if self._rbf is not None:
            return self._rbf._block(rows, rspan, cols, cspan)
        return self._evaluate(self._X, rows, rspan, self._X, cols, cspan,
                              _same_points(rows, rspan, cols, cspan), self._dtype)

    def cross(self, Y: MatrixLike, cols: ArrayLike | slice | None = None) -> NDArray[np.floating]:
        """Kernel values between new points and the oracle's points.

        Parameters
        ----------
        Y : array_like or scipy.sparse matrix of shape (m, d)
        cols : int array or slice, optional
            Which points of X (default all).

        Returns
        -------
        ndarray of shape (m, len(cols))
            ``k(y_a, x_cols[b])``; float32 when both Y and X are float32.
            Counted in :attr:`n_evaluated`.

        Raises
        ------
        ValueError
            If Y does not have ``n_features`` columns, holds NaN/Inf, or is
            negative for a chi2 kernel.

        Examples
        --------
        >>> import numpy as np, sketchlab
        >>> K = sketchlab.PairwiseKernel(np.eye(2), "laplacian", gamma=1.0)
        >>> K.cross(np.zeros((1, 2)))
        array([[0.36787944, 0.36787944]])
        """
        Y, cols, cspan = self._cross_args(Y, cols)
        if self._rbf is not None:
            return self._rbf._cross(Y, cols, cspan)
        if sp.issparse(Y):
            Y = Y.tocsr()
        m = Y.shape[0]
        dtype = np.result_type(self._dtype, Y.dtype)
        return self._evaluate(Y, np.arange(m, dtype=np.int64), (0, m), self._X, cols, cspan,
                              False, dtype)

    def _evaluate(self, A, rows, rspan, B, cols, cspan, same, dtype):
        """``k(a_rows[i], b_cols[j])`` through sklearn, in float64, as a
        C-ordered array of ``dtype``."""
        m, p = rows.shape[0], cols.shape[0]
        out = np.empty((m, p), dtype=dtype)
        if m == 0 or p == 0:
            return out
        kernel, params = self._kernel, self._params
        if kernel in _CHI2 and (sp.issparse(A) or sp.issparse(B)):
            # sklearn's chi2 kernels take dense points only: densify in tiles
            step = max(1, DENSIFY_MAX_ENTRIES // self._n_features)
            for i0 in range(0, m, step):
                R = _dense_float64(A[rows[i0:i0 + step]])
                for j0 in range(0, p, step):
                    C = _dense_float64(B[cols[j0:j0 + step]])
                    out[i0:i0 + step, j0:j0 + step] = self._pairwise(R, C, metric=kernel,
                                                                     **params)
            return out
        R = _float64_rows(A[rspan[0]:rspan[1]] if rspan is not None else A[rows])
        C = None if same else _float64_rows(B[cspan[0]:cspan[1]] if cspan is not None
                                            else B[cols])
        if same and m > SYRK_MAX_ROWS and not sp.issparse(R):
            # sklearn would compute R @ R.T (a SYRK, see symmetric_gram): the
            # columns from a copy make it a GEMM
            C = R.copy()
        out[...] = self._pairwise(R, C, metric=kernel, **params)
        return out


def _float64_rows(R):
    """Rows for sklearn in float64: a dense array, or a CSR matrix."""
    if sp.issparse(R):
        return R.astype(np.float64) if R.dtype != np.float64 else R
    return np.asarray(R, dtype=np.float64)


def _dense_float64(R):
    return R.toarray().astype(np.float64, copy=False) if sp.issparse(R) else (
        np.asarray(R, dtype=np.float64))


def kernel_oracle(X: MatrixLike, kernel: str | Callable[..., Any] = "rbf", *,
                  gamma: float | None = None, degree: float | None = None,
                  coef0: float | None = None,
                  kernel_params: Mapping[str, Any] | None = None) -> RBFKernel | PairwiseKernel:
    """The kernel oracle for sklearn-style kernel parameters.

    Maps the kernel parameters of ``sklearn.kernel_approximation.Nystroem``
    (same names, meanings and defaults) to an oracle over the rows of X: an
    :class:`RBFKernel` for "rbf" (gamma > 0; None means 1 / n_features),
    else a :class:`PairwiseKernel`.  Both have the same interface
    (``K[rows, cols]``, ``cross``, ``diagonal``, ``n_evaluated``).

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n, d)
    kernel, gamma, degree, coef0, kernel_params
        As for :class:`PairwiseKernel`.

    Returns
    -------
    RBFKernel or PairwiseKernel

    Raises
    ------
    ValueError, TypeError, ImportError
        As :class:`PairwiseKernel`.

    Examples
    --------
    >>> import numpy as np
    >>> from sketchlab._kernel_matrices import kernel_oracle
    >>> kernel_oracle(np.ones((5, 4)))
    RBFKernel(<dense 5x4 float64>, gamma=0.25)
    >>> kernel_oracle(np.ones((5, 4)), "sigmoid", coef0=0.0)
    PairwiseKernel(<dense 5x4 float64>, 'sigmoid', gamma=0.25, coef0=0.0)
    """
    if isinstance(kernel, str) and kernel == "rbf":
        _, params = _kernel_spec(kernel, gamma, degree, coef0, kernel_params)
        if params["gamma"] is None or params["gamma"] > 0:
            X = as_matrix(X, "X")
            if X.shape[1] > 0 and params["gamma"] is None:
                params["gamma"] = 1.0 / X.shape[1]
            oracle = RBFKernel.__new__(RBFKernel)
            oracle._setup(X, params["gamma"])
            return oracle
    return PairwiseKernel(X, kernel, gamma=gamma, degree=degree, coef0=coef0,
                          kernel_params=kernel_params)


class KernelParamsMixin:
    """The kernel oracle of an estimator that takes scikit-learn's kernel
    parameters (``kernel``, ``gamma``, ``degree``, ``coef0``,
    ``kernel_params``) as attributes: ``SketchedNystroem``, the kernel ridge
    estimators."""

    kernel: str | Callable[..., Any]
    gamma: float | None
    degree: float | None
    coef0: float | None
    kernel_params: Mapping[str, Any] | None

    def _oracle(self, X: MatrixLike) -> RBFKernel | PairwiseKernel:
        return kernel_oracle(X, self.kernel, gamma=self.gamma, degree=self.degree,
                             coef0=self.coef0, kernel_params=self.kernel_params)


# the kernels of PAIRWISE_KERNEL_FUNCTIONS that are positive semidefinite
# for every data set (sigmoid is not; additive_chi2 is conditionally
# negative definite; poly only with coef0 >= 0 and an integer degree)
_PSD_KERNELS = frozenset(["rbf", "laplacian", "linear", "cosine", "chi2"])


def kernel_is_psd(K: Any) -> bool | None:
    """Whether a kernel oracle is positive semidefinite by its formula: True
    for RBFKernel and the PSD kernels of PairwiseKernel (poly with coef0 >=
    0 and an integer degree), False for sigmoid and additive_chi2, None for a
    callable or a given matrix (unknown)."""
    if isinstance(K, RBFKernel):
        return True
    if isinstance(K, PairwiseKernel):
        kernel, params = K.kernel, K.params
        if callable(kernel):
            return None
        if kernel in _PSD_KERNELS:
            return True
        if kernel in ("poly", "polynomial"):
            degree, coef0 = params.get("degree", 3), params.get("coef0", 1)
            return bool(float(coef0) >= 0 and float(degree).is_integer() and degree >= 0)
        return False
    return None


def is_kernel_oracle(K: Any) -> bool:
    """Whether K is one of the kernel oracles (block-evaluated symmetric matrices)."""
    return isinstance(K, _KernelOracle)
