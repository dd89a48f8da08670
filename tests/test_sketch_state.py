"""The sketch state (sketchlab/_sketch_state.py), against dense references."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import sketchlab as sl

from ._support import base_dense, random_matrix, sketch_state
from .reference import dense_of


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
    A, D = random_matrix(fmt, m, n, seed=4)
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
    A, D = random_matrix(fmt, m, n, seed=6)
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
    A, D = random_matrix("C", m, n, seed=6)
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


def test_state_pickles():
    sketches = _sketches(30, 20)
    state = sl.SketchState((30, 20), sketches)
    state.update(np.ones((30, 20)))
    back = pickle.loads(pickle.dumps(state))
    for name in sketches:
        np.testing.assert_array_equal(back[name], state[name])


# ---- from the fuzz suite (tests/test_fuzz.py): the bugs it found, every option once --


def test_sketch_state_core_of_size_one_from_csc_block():
    A = sp.random(4, 5, density=0.5, format="csc", random_state=0)
    L, R = sl.CountSketch(1, 4, rng=1), sl.CountSketch(3, 5, rng=2)
    state = sl.SketchState(A.shape, {"core": (L, R)}).update(A)
    assert np.allclose(state["core"], dense_of(L) @ A.toarray() @ dense_of(R).T)


@pytest.mark.parametrize("e", [-1000, -600, 600, 1000])
def test_sketch_state_norm_at_extreme_scales(e):
    """SketchState.norm is ||A||_F at any scale (squared_norm under/overflows
    there, as ||A||_F^2 itself does), also summed over blocks and dask's
    shares."""
    A = base_dense((7, 5))
    state = sketch_state(A.shape).update(2.0**e * A)
    assert np.isclose(np.ldexp(state.norm, -e), np.linalg.norm(A), rtol=1e-14)
    half = sketch_state(A.shape).update(2.0**e * A[:3])
    rest = sketch_state(A.shape)
    rest.add_block_sketches(rest.block_sketches(2.0**(e // 2) * A[3:], (3, 0)), (3, 0),
                            (4, 5))
    both = np.hypot(np.ldexp(np.linalg.norm(A[:3]), e), np.ldexp(np.linalg.norm(A[3:]), e // 2))
    assert np.isclose(half.merge(rest).norm, both, rtol=1e-14)
