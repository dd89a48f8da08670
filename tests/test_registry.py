"""The registry is built from the operator classes: names, flags and the
operators it builds agree with the classes' attributes."""

import numpy as np
import pytest

import sketchlab as sl
from sketchlab._registry import FLAGS, GMR_DEFAULT_SKETCH, KINDS, kinds_with, operator_class

from ._kinds import ALL, make


@pytest.mark.parametrize("name", list(KINDS))
def test_each_kind_is_its_class(name):
    kind = KINDS[name]
    S = make(name, 4, 50, seed=0)
    assert S.kind == name and type(S) is operator_class(name)
    for flag in FLAGS:  # the registry copies the class attributes; instances read the same
        assert getattr(kind, flag) == getattr(type(S), flag) == getattr(S, flag), flag


def test_kind_lists_follow_the_flags():
    assert sl.SKETCH_KINDS == kinds_with(gmr=True)
    assert sl.SVD_SKETCHES == kinds_with(svd=True)
    assert set(kinds_with(splittable=True)) == {"countsketch", "gaussian", "uniform", "leverage"}
    assert KINDS[GMR_DEFAULT_SKETCH].one_pass and KINDS[GMR_DEFAULT_SKETCH].gmr
    assert set(ALL) >= set(KINDS)


def test_a_gaussian_over_an_osnap_is_the_registered_kind():
    G, O = sl.GaussianSketch(3, 12, rng=1), sl.OSNAP(12, 40, rng=2)
    S = sl.compose(G, O)
    assert S.kind == "osnap-gaussian" and isinstance(S, sl.ComposedSketch)
    assert S.svd and not S.gmr and not S.one_pass
    other = sl.compose(sl.GaussianSketch(3, 12, rng=1), sl.UniformSampler(12, 40, rng=2))
    assert other.kind == "composed" and not other.svd
    # equality and hashing do not depend on the class that names the kind
    plain = sl.ComposedSketch(G, O)
    assert plain == S and hash(plain) == hash(S)
    np.testing.assert_allclose(S.toarray(), G.toarray() @ O.toarray(), rtol=1e-12)


def test_fast_gmr_tol_takes_the_splittable_kinds():
    gen = np.random.default_rng(0)
    A, C, R = gen.standard_normal((60, 50)), gen.standard_normal((60, 3)), gen.standard_normal((2, 50))
    with pytest.raises(ValueError, match="tol= needs sketch to be a kind name in"):
        sl.fast_gmr(A, C, R, tol=0.5, sketch="osnap")


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
