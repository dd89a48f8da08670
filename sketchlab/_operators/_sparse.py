"""The small sparse kinds: hashing (CountSketch, OSNAP) and sampling
(uniform, leverage scores, a given selection), all applied through tables."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _hash
from .._validation import check_int
from .._engine import operators as _engine
from ._base import _MAX_HASH_ROWS, SketchOperator, _read_only
from ._tables import _Tables, _TableSketch

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from .._validation import MatrixLike


class OSNAP(_TableSketch):
    """OSNAP sparse embedding (Nelson & Nguyen, 2013).

    Column ``j`` has ``nnz_per_col = p`` nonzeros ``+-1/sqrt(p)`` in ``p``
    distinct rows, one in each block ``[floor(b s/p), floor((b+1) s/p))`` of
    rows, at a position and with a sign given by the hash of ``(seed, j p + b)``.

    Parameters
    ----------
    sketch_size : int
        Number of rows ``s``.
    input_dim : int
        Number of columns ``d``.
    nnz_per_col : int, optional
        Nonzeros per column ``p``, ``1 <= p <= sketch_size``; default
        ``min(4, sketch_size)``.
    rng : None, int or numpy.random.Generator
        Seed.

    Notes
    -----
    Applying it costs O(p nnz(A)) and it needs no O(d) memory to exist.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> S = sketchlab.OSNAP(8, 100, nnz_per_col=2, rng=0)
    >>> bool((np.count_nonzero(S.toarray(), axis=0) == 2).all())
    True
    """

    kind = "osnap"
    description = "OSNAP: p = min(4, s) entries +-1/sqrt(p) per column"
    # nonzeros per column of a subspace embedding for the least-squares solvers
    # (Epperly, Meier and Nakatsukasa's sparse sign embedding)
    EMBEDDING_NNZ = 8

    @classmethod
    def embedding_params(cls, sketch_size: int) -> dict[str, Any]:
        """8 nonzeros per column (at most ``sketch_size``): the sparse sign
        embedding of the sketch-and-precondition papers."""
        return {"nnz_per_col": min(cls.EMBEDDING_NNZ, sketch_size)}

    def __init__(self, sketch_size: int, input_dim: int, *, nnz_per_col: int | None = None,
                 rng: None | int | np.random.Generator = None) -> None:
        super().__init__(sketch_size, input_dim, rng=rng)
        if self._s > _MAX_HASH_ROWS:
            raise ValueError(
                f"sketch_size must be <= 2**30 for the hashing kinds, got {self._s}"
            )
        if nnz_per_col is None:
            nnz_per_col = min(4, self._s)
        self._p = check_int(nnz_per_col, "nnz_per_col", 1, self._s)
        self._key = np.uint64(_hash.derive_key(self._seed, _hash.STREAM_HASHING))

    @property
    def nnz_per_col(self) -> int:
        return self._p

    def _params(self):
        return (self._p,)

    def _repr_params(self):
        return (("nnz_per_col", self._p),)

    def _make_tables(self, j0, j1):
        p = self._p
        codes = _engine.hash_codes(self._key, self._s, p, j0, j1 - j0)
        return _Tables(self._s, codes=codes, p=p, scale=1.0 / np.sqrt(p))

    def _tables_at(self, columns):
        p = self._p
        codes = _engine.hash_codes_at(self._key, self._s, p, columns)
        return _Tables(self._s, codes=codes, p=p, scale=1.0 / np.sqrt(p))


class CountSketch(OSNAP):
    """CountSketch (Clarkson & Woodruff, 2013): one ``+-1`` per column.

    Column ``j`` has its nonzero in row ``bucket(hash(seed, j), s)`` with sign
    ``sign(hash(seed, j))`` (see ``sketchlab._hash``); it is OSNAP with one
    nonzero per column.

    Parameters
    ----------
    sketch_size : int
        Number of rows ``s``.
    input_dim : int
        Number of columns ``d``.
    rng : None, int or numpy.random.Generator
        Seed.

    Notes
    -----
    ``S @ A``, ``A @ S.T`` and :func:`sketch_both` cost O(nnz(A)) plus the
    output, in one pass over the nonzeros of A.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> S = sketchlab.CountSketch(3, 5, rng=0)
    >>> S.shape
    (3, 5)
    >>> bool(np.allclose(S @ np.eye(5), S.toarray()))
    True
    """

    kind = "countsketch"

    @classmethod
    def embedding_params(cls, sketch_size: int) -> dict[str, Any]:
        """None: one nonzero per column is what makes it a CountSketch."""
        return {}

    @classmethod
    def halves(cls, half: int, input_dim: int, rng: Any) -> SketchOperator:
        """OSNAP with 2 nonzeros per column, one in each half of its rows: two
        independent CountSketches of ``half`` rows, each scaled by 1/sqrt(2)."""
        return OSNAP(2 * half, input_dim, nnz_per_col=2, rng=rng)
    description = "CountSketch: one +-1 per column"
    splittable = True  # OSNAP(2s, d) with 2 per column: two independent CountSketches

    def __init__(self, sketch_size: int, input_dim: int, *,
                 rng: None | int | np.random.Generator = None) -> None:
        super().__init__(sketch_size, input_dim, nnz_per_col=1, rng=rng)

    def _repr_params(self):
        return ()



class _Sampler(_TableSketch):
    """Row sampling: row ``t`` of S is ``weights[t] * e_{indices[t]}^T``."""

    _read_only_attrs: tuple[str, ...] = ("_indices", "_weights")

    def __setstate__(self, state):
        # unpickled arrays come back writable: an operator stays immutable
        self.__dict__.update(state)
        _read_only(*(getattr(self, name) for name in self._read_only_attrs))

    @property
    def indices(self) -> NDArray[np.int64]:
        """Sampled input indices, one per row of S (read-only)."""
        return self._indices

    @property
    def weights(self) -> NDArray[np.float64]:
        """Scale of each row of S (read-only)."""
        return self._weights

    def _finish(self, indices, weights):
        self._indices = np.ascontiguousarray(indices, dtype=np.int64)
        self._weights = np.ascontiguousarray(weights, dtype=np.float64)
        _read_only(self._indices, self._weights)

    def _make_tables(self, j0, j1):
        idx = self._indices
        sel = np.flatnonzero((idx >= j0) & (idx < j1))
        cols = idx[sel] - j0
        order = np.argsort(cols, kind="stable")
        counts = np.bincount(cols, minlength=j1 - j0)
        col_ptr = np.zeros(j1 - j0 + 1, dtype=np.int64)
        np.cumsum(counts, out=col_ptr[1:])
        rows = sel[order].astype(np.int32)
        vals = self._weights[sel[order]]
        return _Tables(self._s, csc=(col_ptr, rows, vals))

    def _tables_at(self, columns):
        idx = self._indices
        sel = np.flatnonzero(np.isin(idx, columns))
        cols = np.searchsorted(columns, idx[sel])
        order = np.argsort(cols, kind="stable")
        col_ptr = np.zeros(columns.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(cols, minlength=columns.shape[0]), out=col_ptr[1:])
        return _Tables(self._s, csc=(col_ptr, sel[order].astype(np.int32),
                                     self._weights[sel[order]]))


class UniformSampler(_Sampler):
    """Uniform row sampling, ``S[t] = sqrt(d/s) e_{i_t}^T``.

    Parameters
    ----------
    sketch_size : int
        Number of samples ``s`` (``<= d`` when ``replace=False``).
    input_dim : int
        Size ``d`` of the population.
    replace : bool, default True
        i.i.d. draws (index ``t`` from the hash of ``(seed, t)``) or a sample
        without replacement (sorted; drawn with ``numpy.random.Generator``
        seeded by the operator's seed).
    rng : None, int or numpy.random.Generator

    Examples
    --------
    >>> import sketchlab
    >>> S = sketchlab.UniformSampler(3, 10, replace=False, rng=0)
    >>> len(set(S.indices.tolist()))
    3
    """

    kind = "uniform"
    description = "uniform row sampling with replacement"
    splittable = True  # i.i.d. rows (with replacement, the default)
    svd = False

    def __init__(self, sketch_size: int, input_dim: int, *, replace: bool = True,
                 rng: None | int | np.random.Generator = None) -> None:
        super().__init__(sketch_size, input_dim, rng=rng)
        if not isinstance(replace, (bool, np.bool_)):
            raise TypeError(f"replace must be a bool, got {replace!r}")
        self._replace = bool(replace)
        if not self._replace and self._s > self._d:
            raise ValueError(
                f"sketch_size must be <= input_dim {self._d} when replace=False, got {self._s}"
            )
        if self._replace:
            key = _hash.derive_key(self._seed, _hash.STREAM_SAMPLING)
            idx = _hash.bucket_np(_hash.hash64_np(key, np.arange(self._s)), self._d)
        else:
            gen = np.random.default_rng(self._seed)
            idx = np.sort(gen.choice(self._d, size=self._s, replace=False))
        self._finish(idx, np.full(self._s, np.sqrt(self._d / self._s)))

    @property
    def replace(self) -> bool:
        return self._replace

    def _params(self):
        return (self._replace,)

    def _repr_params(self):
        return (("replace", self._replace),)


class LeverageScoreSampler(_Sampler):
    """i.i.d. sampling with probabilities proportional to given scores.

    Row ``t`` of S is ``e_{i_t}^T / sqrt(s p_{i_t})`` with ``p = scores /
    sum(scores)``; index ``t`` is drawn by inverting the cumulative
    distribution at the uniform number ``hash(seed, t)``.

    Parameters
    ----------
    sketch_size : int
        Number of samples ``s``.
    input_dim : int or None
        Length of ``scores`` (checked; None takes it from ``scores``).
    scores : array_like of shape (d,)
        Non-negative, finite, not all zero (e.g. :func:`leverage_scores`).
    rng : None, int or numpy.random.Generator

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> S = sketchlab.LeverageScoreSampler(4, scores=[0.0, 1.0, 1.0, 0.0], rng=0)
    >>> sorted(set(S.indices.tolist())) in ([1], [2], [1, 2])
    True
    """

    kind = "leverage"
    description = "leverage-score row sampling"
    needs_scores = True
    splittable = True  # i.i.d. rows
    svd = False
    _read_only_attrs = ("_indices", "_weights", "_probabilities")

    def __init__(self, sketch_size: int, input_dim: int | None = None, *, scores: ArrayLike,
                 rng: None | int | np.random.Generator = None) -> None:
        scores = np.asarray(scores)
        if scores.dtype == object or scores.dtype.kind not in "biuf":
            raise TypeError(f"scores must be a real numeric array, got dtype {scores.dtype}")
        scores = scores.astype(np.float64)
        if scores.ndim != 1 or scores.shape[0] == 0:
            raise ValueError(f"scores must be a non-empty 1-D array, got shape {scores.shape}")
        if input_dim is None:
            input_dim = scores.shape[0]
        super().__init__(sketch_size, input_dim, rng=rng)
        if scores.shape[0] != self._d:
            raise ValueError(
                f"scores must have length input_dim={self._d}, got {scores.shape[0]}"
            )
        if not np.isfinite(scores).all() or (scores < 0).any():
            raise ValueError("scores must be finite and non-negative")
        peak = scores.max()
        if not peak > 0:
            raise ValueError("scores must not all be zero")
        # scale by a power of two (exact) so that the sum cannot overflow
        scores = np.ldexp(scores, -np.frexp(peak)[1])
        total = scores.sum()
        self._probabilities = scores / total
        cdf = np.cumsum(scores)
        key = _hash.derive_key(self._seed, _hash.STREAM_SAMPLING)
        u = _hash.uniform_np(_hash.hash64_np(key, np.arange(self._s))) * cdf[-1]
        idx = np.searchsorted(cdf, u, side="right")
        last = np.flatnonzero(scores)[-1]
        idx = np.minimum(idx, last)
        self._finish(idx, 1.0 / np.sqrt(self._s * self._probabilities[idx]))
        _read_only(self._probabilities)
        # a digest, not hash(): the same scores give equal operators in any process
        self._scores_digest = hashlib.sha256(self._probabilities.tobytes()).hexdigest()

    @property
    def probabilities(self) -> NDArray[np.float64]:
        """Sampling probabilities ``p`` (read-only)."""
        return self._probabilities

    def _params(self):
        return (self._scores_digest,)

    @classmethod
    def from_matrix(cls, A: MatrixLike, sketch_size: int, *, axis: int = 0, k: int | None = None,
                    method: str = "exact",
                    rng: None | int | np.random.Generator = None) -> LeverageScoreSampler:
        """Sampler on the leverage scores of ``A``.

        ``axis=0`` samples rows of ``A`` (row leverage scores, operator of
        shape ``(s, m)``); ``axis=1`` samples columns (shape ``(s, n)``).
        ``k`` asks for rank-k scores and ``method="sketch"`` for the fast
        approximation; see :func:`sketchlab.leverage_scores`.  ``rng`` seeds
        the approximation (when used) and then the sampler.

        Examples
        --------
        >>> import numpy as np, sketchlab
        >>> A = np.random.default_rng(0).standard_normal((100, 5))
        >>> S = sketchlab.LeverageScoreSampler.from_matrix(A, 20, rng=0)
        >>> S.shape
        (20, 100)
        """
        from .._leverage import leverage_scores
        from .._validation import as_generator

        if method == "exact":  # no randomness in the scores: rng seeds the sampler alone
            scores, gen = leverage_scores(A, axis=axis, k=k, method=method), rng
        else:
            gen = as_generator(rng)
            scores = leverage_scores(A, axis=axis, k=k, method=method, rng=gen)
        if not scores.sum() > 0:
            raise ValueError("A is all zero: it has no leverage scores to sample by")
        return cls(sketch_size, scores.shape[0], scores=scores, rng=gen)


class IndexSelection(_Sampler):
    """Selection of given indices: row t of S is ``e_{indices[t]}^T``.

    ``S @ A`` is ``A[indices]`` and ``A @ S.T`` is ``A[:, indices]`` (weights
    1, no randomness): the linear map that gathers the rows or columns a CUR
    decomposition keeps, as an operator, so that a single pass (in blocks, or
    over the chunks of a dask array) can gather them beside other sketches.

    Parameters
    ----------
    indices : array_like of int, shape (s,)
        In ``[0, input_dim)``; repeats allowed.
    input_dim : int

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> P = sketchlab.IndexSelection([2, 0], 4)
    >>> P @ np.arange(8.0).reshape(4, 2)
    array([[4., 5.],
           [0., 1.]])
    """

    kind = "selection"  # not a registered kind: built from its indices
    svd = gmr = False

    def __init__(self, indices: ArrayLike, input_dim: int) -> None:
        idx = np.asarray(indices)
        if idx.ndim != 1 or idx.size == 0 or (idx.dtype.kind not in "iu"):
            raise ValueError(
                f"indices must be a non-empty 1-D array of ints, got dtype {idx.dtype} and "
                f"shape {idx.shape}"
            )
        super().__init__(idx.size, input_dim, rng=0)
        if idx.min() < 0 or idx.max() >= self._d:
            raise ValueError(
                f"indices must lie in [0, {self._d}), got values in [{idx.min()}, {idx.max()}]"
            )
        self._finish(idx, np.ones(idx.size))
        self._digest = hashlib.sha256(self._indices.tobytes()).hexdigest()

    def _params(self):
        return (self._digest,)

    def __repr__(self) -> str:
        return f"IndexSelection(<{self._s} indices>, {self._d})"
