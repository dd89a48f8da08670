"""The counter-based ziggurat behind GaussianSketch.

Checked against: the published constants of Marsaglia & Tsang (2000) and the
layer recursion redone in 40-digit decimal arithmetic (tables); the NumPy
twin, bit for bit (Numba kernel); itself on a larger range (blocks) and in a
process with another thread count; N(0, 1) (Kolmogorov-Smirnov, moments,
tail frequencies) and the rejection rates that follow from the layer area,
all with bounds from the theory and fixed keys.
"""

import hashlib
import json
import math
import textwrap
from decimal import Decimal, localcontext

import numpy as np
import pytest
from scipy import stats

import sketchlab as sl
from sketchlab import _hash
from sketchlab._engine._jit import gaussian as jit_gaussian

from ._support import run_isolated

# Marsaglia & Tsang (2000), 256 layers: start of the tail and area of a layer.
PUBLISHED_R = 3.6541528853610088
PUBLISHED_V = 4.92867323399e-3

N_DRAWS = 10**6
P_FAIL = 1e-6  # two-sided level of every statistical bound below


def _key(seed):
    return _hash.derive_key(seed, _hash.STREAM_GAUSSIAN)


def _tail_area(r):
    """Integral of exp(-x^2 / 2) over (r, inf)."""
    return math.sqrt(math.pi / 2) * math.erfc(r / math.sqrt(2))


def _binomial_bounds(n, p):
    lo, hi = stats.binom.interval(1 - P_FAIL, n, p)
    return int(lo), int(hi)


def _expected_columns(key, s, j0, b):
    """Columns j0 .. j0 + b - 1 from the NumPy twin: normal j * s2 + t over sqrt(s)."""
    s2 = s + (s & 1)
    t, j = np.meshgrid(np.arange(s), np.arange(j0, j0 + b))
    return _hash.normal_np(key, j * s2 + t) * (1.0 / np.sqrt(s))


def _columns(key, s, j0, b):
    out = np.empty((b, s))
    jit_gaussian.gaussian_columns(np.uint64(key), s, j0, out)
    return out


# -- tables -------------------------------------------------------------------


def test_tables_are_the_published_ziggurat():
    tables = _hash.ziggurat_tables()
    assert abs(tables.r - PUBLISHED_R) <= math.ulp(PUBLISHED_R)
    assert tables.v == pytest.approx(PUBLISHED_V, rel=1e-11)  # 12 digits published
    w, y = tables.widths[:256] * 2.0**52, tables.heights
    np.testing.assert_array_equal(tables.widths[256:], -tables.widths[:256])
    assert y[0] == 0.0 and y[256] == 1.0 and np.all(np.diff(y) > 0)
    assert y[1] == pytest.approx(math.exp(-0.5 * tables.r**2), rel=1e-15)
    assert np.all(np.diff(w) < 0)
    assert w[1] == pytest.approx(tables.r, rel=1e-13)
    assert tables.limits[255] == 0  # the top layer always tests the height


def test_layers_have_equal_area_and_cover_the_density():
    # in 50-digit decimal arithmetic on the stored doubles
    tables = _hash.ziggurat_tables()
    with localcontext() as ctx:
        ctx.prec = 50
        w = [Decimal(float(wi)) * 2**52 for wi in tables.widths[:256]]
        y = [Decimal(float(yi)) for yi in tables.heights]
        v, r = Decimal(tables.v), Decimal(tables.r)
        # f^-1(y_i): where the curve crosses the bottom of layer i
        edge = [None] + [(-2 * yi.ln()).sqrt() for yi in y[1:256]] + [Decimal(0)]
        for i in range(256):
            assert abs(w[i] * (y[i + 1] - y[i]) / v - 1) < Decimal("4e-16"), i
            if i >= 1:
                # the rectangle reaches the curve; a shortfall of 1e-12 w_i would
                # leave out a sliver of relative area 1e-24
                assert abs(w[i] / edge[i] - 1) < Decimal("1e-12"), i
            # fast path: the accepted grid cells end left of the curve's crossing of the
            # top of the layer (up to rounding of y_{i+1}), and the next cell does not
            m = Decimal(int(tables.limits[i]))
            assert m * w[i] / 2**52 <= edge[i + 1] * (1 + Decimal("1e-15")), i
            assert (m + 1) * w[i] / 2**52 > edge[i + 1] * (1 - Decimal("1e-15")), i
        # layer 0: the strip [0, r] x [0, f(r)] and the tail beyond r
        tail = Decimal(_tail_area(tables.r))
        assert abs((r * y[1] + tail) / v - 1) < Decimal("1e-15")


# -- the Numba kernel and the NumPy twin ---------------------------------------


@pytest.mark.parametrize(
    ("seed", "s", "j0", "b"), [(0, 200, 0, 2000), (5, 7, 11, 3000), (2**40, 1, 3, 500)]
)
def test_numba_kernel_equals_numpy_twin_bit_for_bit(seed, s, j0, b):
    key = _key(seed)
    np.testing.assert_array_equal(_columns(key, s, j0, b), _expected_columns(key, s, j0, b))


def test_bit_for_bit_comparison_covers_the_rare_paths():
    # the 400,000 entries of the first case above include wedge rejections and tail draws
    s2, b = 200, 2000
    _, redraws, tail_rounds = _hash.ziggurat_np(_key(0), np.arange(s2 * b))
    assert (redraws > 0).sum() > 1000 and redraws.max() >= 2
    assert (tail_rounds > 0).sum() > 30 and tail_rounds.max() >= 2


def _rare_path_numba(h, entry_keys):
    t = _hash.ziggurat_tables()
    return np.array(
        [jit_gaussian.ziggurat_rare(np.uint64(h_), np.uint64(e), t.widths, t.limits, t.heights, t.r)
         for h_, e in zip(h, entry_keys)]
    )


def _rare_path_python(h, entry_keys):
    t = _hash.ziggurat_tables()
    return np.array([_hash._ziggurat_rare(int(h_), int(e), t)[0] for h_, e in zip(h, entry_keys)])


def _first_draws(layer, sign, m):
    return (m.astype(np.uint64) << np.uint64(12)) | np.uint64(sign << 8 | layer)


def test_rare_paths_forced_agree_bit_for_bit():
    # first draws that miss the fast test in the tail layer (0) and in the top layer (255,
    # always a height test), each with its own entry stream
    limits = _hash.ziggurat_tables().limits
    gen = np.random.default_rng(3)
    entry_keys = _hash.hash64_np(12345, np.arange(3000))
    for layer in (0, 255, 17):
        m = gen.integers(int(limits[layer]), 2**52, size=3000)
        for sign in (0, 1):
            h = _first_draws(layer, sign, m)
            z = _rare_path_numba(h, entry_keys)
            np.testing.assert_array_equal(z, _rare_path_python(h, entry_keys))
            assert np.all(np.isfinite(z))


def test_tail_layer_draws_are_the_normal_tail():
    # first draws in the tail part of layer 0 return a normal conditioned on |z| > r
    tables = _hash.ziggurat_tables()
    n = 20_000
    m = np.full(n, int(tables.limits[0]), dtype=np.uint64)
    entry_keys = _hash.hash64_np(777, np.arange(n))
    z = _rare_path_numba(_first_draws(0, 0, m), entry_keys)
    assert z.min() > tables.r
    r = tables.r

    def tail_cdf(x):
        return 1.0 - stats.norm.sf(x) / stats.norm.sf(r)

    result = stats.kstest(z, tail_cdf)
    assert result.statistic < stats.kstwo.isf(P_FAIL, n)


# -- counter-based: blocks and threads ------------------------------------------


def test_blocks_regenerated_alone_equal_the_whole():
    key, s, d = _key(42), 31, 1000
    whole = _columns(key, s, 0, d)
    for j0, j1 in [(500, 1000), (0, 1), (999, 1000), (137, 611), (3, 4)]:
        np.testing.assert_array_equal(_columns(key, s, j0, j1 - j0), whole[j0:j1])
    # the operator is made of these columns (each of them is column j of S)
    np.testing.assert_array_equal(sl.GaussianSketch(s, d, rng=42).toarray(), whole.T)


_THREAD_SCRIPT = textwrap.dedent(
    """
    import hashlib, json
    import numba, numpy as np
    from sketchlab import _hash
    from sketchlab._engine._jit.gaussian import gaussian_columns
    digest = hashlib.sha256()
    for seed, s, j0, b in [(1, 200, 0, 3000), (2, 37, 5, 4001)]:
        out = np.empty((b, s))
        gaussian_columns(np.uint64(_hash.derive_key(seed, _hash.STREAM_GAUSSIAN)), s, j0, out)
        digest.update(out.tobytes())
    print(json.dumps({"digest": digest.hexdigest(), "threads": numba.get_num_threads()}))
    """
)


def _digest_in_subprocess(threads, cache_dir):
    code, out, err = run_isolated(_THREAD_SCRIPT, timeout=600, env={
        "NUMBA_NUM_THREADS": str(threads), "NUMBA_CACHE_DIR": str(cache_dir)})
    assert code == 0, err
    return json.loads(out.strip().splitlines()[-1])


def test_same_numbers_for_one_and_two_threads(tmp_path):
    serial = _digest_in_subprocess(1, tmp_path)
    parallel = _digest_in_subprocess(2, tmp_path)
    assert serial["threads"] == 1 and parallel["threads"] == 2
    expected = hashlib.sha256()
    for seed, s, j0, b in [(1, 200, 0, 3000), (2, 37, 5, 4001)]:
        expected.update(_expected_columns(_key(seed), s, j0, b).tobytes())
    assert serial["digest"] == parallel["digest"] == expected.hexdigest()


# -- distribution ---------------------------------------------------------------


@pytest.fixture(scope="module")
def draws():
    return _hash.ziggurat_np(_key(2024), np.arange(N_DRAWS))


def test_no_nan_or_inf(draws):
    assert np.all(np.isfinite(draws[0]))


def test_kolmogorov_smirnov_against_standard_normal(draws):
    result = stats.kstest(draws[0], "norm")
    assert result.statistic < stats.kstwo.isf(P_FAIL, N_DRAWS)


def test_first_four_moments(draws):
    z = draws[0]
    n = z.size
    # E z^k and Var z^k = E z^2k - (E z^k)^2 of N(0, 1); 5 standard errors (CLT)
    for k, mean, var in [(1, 0.0, 1.0), (2, 1.0, 2.0), (3, 0.0, 15.0), (4, 3.0, 96.0)]:
        assert abs(np.mean(z**k) - mean) < 5 * math.sqrt(var / n), k


@pytest.mark.parametrize("level", [3.0, 4.0, 5.0])
def test_tail_frequencies(draws, level):
    z = draws[0]
    lo, hi = _binomial_bounds(z.size, math.erfc(level / math.sqrt(2)))
    assert lo <= np.sum(np.abs(z) > level) <= hi
    # both signs
    lo, hi = _binomial_bounds(z.size, 0.5 * math.erfc(level / math.sqrt(2)))
    assert lo <= np.sum(z > level) <= hi


def test_rejections_happen_at_the_rate_the_layer_area_gives(draws):
    # a uniform point of the 256 layers (area 256 v) lies under f with probability
    # sqrt(pi / 2) / (256 v); the others are rejected and drawn again
    _, redraws, _ = draws
    q = 1.0 - math.sqrt(math.pi / 2) / (256 * PUBLISHED_V)
    lo, hi = _binomial_bounds(N_DRAWS, q)
    assert lo <= np.sum(redraws > 0) <= hi
    lo, hi = _binomial_bounds(N_DRAWS, q * q)
    assert lo <= np.sum(redraws > 1) <= hi


def test_tail_method_runs_at_its_rate(draws):
    # the tail part of layer 0 has area T(r) of the 256 v; Marsaglia's method accepts a
    # round with probability E exp(-X^2 / 2), X ~ Exp(r), which is r exp(r^2 / 2) T(r)
    _, _, tail_rounds = draws
    r = PUBLISHED_R
    tails = int(np.sum(tail_rounds > 0))
    # |z| > r comes from the tail method and from nowhere else
    lo, hi = _binomial_bounds(N_DRAWS, math.erfc(r / math.sqrt(2)))
    assert lo <= tails <= hi
    assert np.sum(np.abs(draws[0]) > r) == tails
    p_accept = r * math.exp(r * r / 2) * _tail_area(r)
    rounds = int(tail_rounds.sum())
    # rounds - tails: failures before each success, negative binomial
    lo, hi = stats.nbinom.interval(1 - P_FAIL, tails, p_accept)
    assert rounds > tails  # the tail loop's rejection ran
    assert lo <= rounds - tails <= hi
