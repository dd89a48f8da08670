"""The operator layer's application forms and the sketch state, against dense references."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import sketchlab as sl
from sketchlab._registry import kinds_with

from ._kinds import KINDS as REGISTERED
from .reference import dense_of

# the registered kinds built from sizes alone (tests/_kinds.py reads the registry)
KINDS = [k for k in REGISTERED if k not in kinds_with(needs_scores=True)]


def make(kind, s, d, seed):
    return sl.make_sketch(kind, s, d, rng=seed)


def matrix(fmt, m, n, seed, dtype=np.float64):
    gen = np.random.default_rng(seed)
    D = gen.standard_normal((m, n)) * (gen.random((m, n)) < 0.3)
    D = D.astype(dtype)
    return {"C": D, "F": np.asfortranarray(D), "csr": sp.csr_matrix(D),
            "csc": sp.csc_matrix(D)}[fmt], D


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fmt", ["C", "F", "csr", "csc"])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("order", ["C", "F", "slice"])
def test_apply_into_and_onto_out(kind, fmt, axis, order):
    d, other = 40, 23
    S = make(kind, 7, d, 1)
    A, D = matrix(fmt, *((d, other) if axis == 0 else (other, d)), seed=2)
    Sd = dense_of(S)
    want = Sd @ D if axis == 0 else D @ Sd.T
    shape = want.shape
    base = np.random.default_rng(3).standard_normal((shape[0] + 4, shape[1] + 3))
    if order == "slice":  # a window of a larger array: neither C- nor F-contiguous
        out = base[2:2 + shape[0], 1:1 + shape[1]]
    else:
        out = np.array(base[:shape[0], :shape[1]], order=order)
    before = out.copy()
    assert S.apply(A, axis=axis, out=out, accumulate=True) is out
    np.testing.assert_allclose(out, before + want, rtol=1e-12, atol=1e-12)
    assert S.apply(A, axis=axis, out=out) is out
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    if order == "slice":  # the rest of the larger array is untouched
        mask = np.ones(base.shape, bool)
        mask[2:2 + shape[0], 1:1 + shape[1]] = False
        np.testing.assert_array_equal(base[mask],
                                      np.random.default_rng(3).standard_normal(base.shape)[mask])


@pytest.mark.parametrize("kind", KINDS)
def test_apply_out_is_bitwise_the_plain_result_for_hashing_and_sampling(kind):
    S = make(kind, 9, 60, 4)
    A = sp.random(60, 30, density=0.2, format="csr", random_state=5)
    out = np.empty((9, 30))
    S.apply(A, out=out)
    if kind in ("countsketch", "osnap", "uniform"):
        assert np.array_equal(out, S @ A)
    else:
        np.testing.assert_allclose(out, S @ A, rtol=1e-13, atol=1e-13)


def test_apply_out_is_checked():
    S = sl.CountSketch(5, 20, rng=0)
    A = np.ones((20, 3))
    with pytest.raises(ValueError, match=r"out must have shape \(5, 3\)"):
        S.apply(A, out=np.empty((5, 4)))
    with pytest.raises(ValueError, match="out must have dtype float64"):
        S.apply(A, out=np.empty((5, 3), dtype=np.float32))
    with pytest.raises(TypeError, match="out must be a numpy.ndarray"):
        S.apply(A, out=[[0.0] * 3] * 5)
    frozen = np.empty((5, 3))
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="out must be writable"):
        S.apply(A, out=frozen)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("axis", [0, 1])
def test_apply_many_equals_apply_bit_for_bit(kind, axis):
    S = make(kind, 6, 50, 7)
    X1, _ = matrix("C", *((50, 8) if axis == 0 else (8, 50)), seed=8)
    X2, _ = matrix("csr", *((50, 5) if axis == 0 else (5, 50)), seed=9, dtype=np.float32)
    together = S.apply_many([X1, X2], axis, offset=None)
    for X, got in zip([X1, X2], together):
        alone = S.apply(X, axis)
        assert got.dtype == alone.dtype
        np.testing.assert_array_equal(got, alone)
    with pytest.raises(ValueError, match=r"arrays\[1\].shape\[0\] = 49 differs"):
        S.apply_many([np.ones((50, 2)), np.ones((49, 2))])


@pytest.mark.parametrize("fmt", ["C", "csr", "csc"])
def test_sketch_both_into_and_onto_out(fmt):
    S1, S2 = sl.CountSketch(6, 30, rng=1), sl.OSNAP(5, 20, rng=2)
    A, D = matrix(fmt, 30, 20, seed=3)
    want = dense_of(S1) @ D @ dense_of(S2).T
    out = np.asfortranarray(np.ones((6, 5)))
    assert sl.sketch_both(S1, A, S2, out=out, accumulate=True) is out
    np.testing.assert_allclose(out, 1.0 + want, rtol=1e-12, atol=1e-12)


def test_index_selection_gathers_rows_and_columns():
    A = np.arange(20.0).reshape(4, 5)
    P = sl.IndexSelection([3, 1, 1], 4)
    np.testing.assert_array_equal(P @ A, A[[3, 1, 1]])
    Q = sl.IndexSelection([4, 0], 5)
    np.testing.assert_array_equal(A @ Q.T, A[:, [4, 0]])
    np.testing.assert_array_equal(Q @ sp.csr_matrix(A.T), A.T[[4, 0]])
    assert P == sl.IndexSelection(np.array([3, 1, 1]), 4) and P != sl.IndexSelection([3, 1], 4)
    with pytest.raises(ValueError, match=r"indices must lie in \[0, 4\)"):
        sl.IndexSelection([4], 4)
    with pytest.raises(ValueError, match="indices must be a non-empty 1-D array of ints"):
        sl.IndexSelection([0.5], 4)


def test_registry_kinds_and_flags():
    assert sl.SKETCH_KINDS == ("countsketch", "osnap", "gaussian", "srht", "uniform", "leverage")
    assert set(sl.SVD_SKETCHES) == {"countsketch", "osnap", "gaussian", "srht", "osnap-gaussian"}
    from sketchlab._registry import KINDS as REGISTRY, kinds_with

    assert kinds_with(one_pass=True) == ("countsketch", "osnap", "uniform", "leverage")
    assert "srht" not in kinds_with(open_dim=True)
    for name, kind in REGISTRY.items():
        S = sl.make_sketch(name, 4, 50, rng=0, **({"scores": np.ones(50)} if kind.needs_scores
                                                   else {}))
        assert S.shape == (4, 50)
    with pytest.raises(ValueError, match="kind must be one of"):
        sl.make_sketch("hash", 4, 50)
    with pytest.raises(TypeError, match="scores= applies to kind 'leverage' only"):
        sl.make_sketch("gaussian", 4, 50, scores=np.ones(50))


# ---- SketchState ---------------------------------------------------------------------


def _sketches(m, n, seed=0):
    return {"range": (None, sl.make_sketch("osnap-gaussian", 6, n, rng=seed)),
            "co-range": (sl.GaussianSketch(5, m, rng=seed + 1), None),
            "core": (sl.CountSketch(9, m, rng=seed + 2), sl.OSNAP(8, n, rng=seed + 3))}


def _references(sketches, D):
    (_, Om), (Ps, _), (Sc, Sr) = sketches["range"], sketches["co-range"], sketches["core"]
    return {"range": D @ dense_of(Om).T, "co-range": dense_of(Ps) @ D,
            "core": dense_of(Sc) @ D @ dense_of(Sr).T}


@pytest.mark.parametrize("fmt", ["C", "F", "csr", "csc"])
def test_state_of_a_grid_equals_the_dense_sketches(fmt):
    m, n = 70, 50
    A, D = matrix(fmt, m, n, seed=4)
    sketches = _sketches(m, n)
    state = sl.SketchState((m, n), sketches)
    for i0, i1 in [(0, 33), (33, 70)]:
        for j0, j1 in [(0, 1), (1, 29), (29, 50)]:
            block = A[i0:i1, j0:j1]
            state.update(block.tocsr() if fmt == "csr" else block, (i0, j0))
    want = _references(sketches, D)
    for name in want:
        np.testing.assert_allclose(state[name], want[name], rtol=1e-12, atol=1e-12)
    assert state.squared_norm == pytest.approx(float((D ** 2).sum()), rel=1e-12)
    assert state.rows_seen == m


@pytest.mark.parametrize("fmt", ["C", "F", "csr", "csc"])
def test_state_of_one_whole_block_overwrites_its_arrays(fmt, monkeypatch):
    """A fresh state updated with all of A allocates without zeros and lets
    the loops write every entry: arrays that start as NaN come out as the
    dense sketches; a second update adds to them; an open-ended state's row
    blocks and the shares of blocks too."""
    import sketchlab._sketch_state as state_module

    def poisoned(shape, dtype, order="C"):
        return np.full(shape, np.nan, dtype=dtype, order=order)

    monkeypatch.setattr(state_module, "_uninitialized", poisoned)
    m, n = 70, 50
    A, D = matrix(fmt, m, n, seed=6)
    sketches = _sketches(m, n)
    state = sl.SketchState((m, n), sketches).update(A)
    want = _references(sketches, D)
    for name in want:
        np.testing.assert_allclose(state[name], want[name], rtol=1e-12, atol=1e-12)
    state.update(A)
    for name in want:
        np.testing.assert_allclose(state[name], 2 * want[name], rtol=1e-12, atol=1e-12)
    rows = sl.SketchState((None, n), {"range": sketches["range"]})
    rows.update(A[:30]).update(A[30:], (30, 0))
    np.testing.assert_allclose(rows["range"], want["range"], rtol=1e-12, atol=1e-12)
    # a block's shares (what a dask task sends) are written whole too
    shared = sl.SketchState((m, n), sketches)
    for i0, i1 in [(0, 41), (41, 70)]:
        block = A[i0:i1]
        shares = shared.block_sketches(block, (i0, 0))
        shared.add_block_sketches(shares, (i0, 0), block.shape)
    for name in want:
        np.testing.assert_allclose(shared[name], want[name], rtol=1e-12, atol=1e-12)


def test_state_shares_merge_and_open_rows():
    m, n = 60, 40
    A, D = matrix("C", m, n, seed=6)
    sketches = _sketches(m, n, seed=5)
    whole = sl.SketchState((m, n), sketches).update(A)
    # shares computed elsewhere, added in any order
    from_shares = sl.SketchState((m, n), sketches)
    blocks = [((0, 0), A[:25, :15]), ((25, 15), A[25:, 15:]), ((0, 15), A[:25, 15:]),
              ((25, 0), A[25:, :15])]
    for offsets, block in reversed(blocks):
        shares = from_shares.block_sketches(block, offsets)
        from_shares.add_block_sketches(shares, offsets, block.shape)
    merged = sl.SketchState((m, n), sketches)
    for offsets, block in blocks:
        merged.merge(sl.SketchState((m, n), sketches).update(block, offsets))
    for name in sketches:
        np.testing.assert_allclose(from_shares[name], whole[name], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(merged[name], whole[name], rtol=1e-12, atol=1e-12)
    # open-ended rows (partial_fit): range sketches grow by row blocks
    big = 2**31 - 1
    open_sketches = {"range": (None, sl.GaussianSketch(4, n, rng=1)),
                     "co-range": (sl.CountSketch(6, big, rng=2), None)}
    state = sl.SketchState((None, n), open_sketches)
    state.update(A[:20], (0, 0)).update(A[20:], (20, 0))
    np.testing.assert_allclose(state["range"], D @ dense_of(open_sketches["range"][1]).T,
                               rtol=1e-12)
    with pytest.raises(ValueError, match="in order"):
        state.update(A[:5], (0, 0))
    with pytest.raises(ValueError, match="only states of a known shape can be merged"):
        state.merge(state)


def test_state_checks():
    S = sl.CountSketch(4, 10, rng=0)
    with pytest.raises(ValueError, match="needs at least one operator"):
        sl.SketchState((10, 10), {"x": (None, None)})
    with pytest.raises(ValueError, match="has input_dim 10, expected 12"):
        sl.SketchState((10, 12), {"x": (None, S)})
    with pytest.raises(TypeError, match="must be a SketchOperator or None"):
        sl.SketchState((10, 10), {"x": ("countsketch", None)})
    state = sl.SketchState((10, 10), {"x": (S, None)})
    with pytest.raises(ValueError, match="does not fit"):
        state.update(np.ones((5, 5)), (8, 0))
    with pytest.raises(ValueError, match="must not contain NaN"):
        state.update(np.full((2, 2), np.nan))


def test_state_and_operators_pickle():
    sketches = _sketches(30, 20)
    state = sl.SketchState((30, 20), sketches)
    state.update(np.ones((30, 20)))
    back = pickle.loads(pickle.dumps(state))
    for name in sketches:
        np.testing.assert_array_equal(back[name], state[name])
    sampler = pickle.loads(pickle.dumps(sl.LeverageScoreSampler(5, scores=np.arange(1.0, 9.0),
                                                                rng=1)))
    assert not sampler.indices.flags.writeable and not sampler.probabilities.flags.writeable
