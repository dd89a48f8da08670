"""The counter-based hash: splitmix64, identical in Numba and NumPy."""

import numpy as np
import pytest
from numba import njit

from sketchlab import _hash
from sketchlab._engine._jit import hashing as jit_hash

from .reference import splitmix64_sequence


@njit
def _numba_hashes(key, counters):
    out = np.empty(counters.shape[0], dtype=np.uint64)
    for i in range(counters.shape[0]):
        out[i] = jit_hash.hash64(np.uint64(key), np.uint64(counters[i]))
    return out


@njit
def _numba_derived(key, counters, n):
    buckets = np.empty(counters.shape[0], dtype=np.int64)
    signs = np.empty(counters.shape[0])
    uniforms = np.empty(counters.shape[0])
    normals = np.empty(counters.shape[0])
    for i in range(counters.shape[0]):
        h = jit_hash.hash64(np.uint64(key), np.uint64(counters[i]))
        buckets[i] = jit_hash.bucket_of(h, n)
        signs[i] = jit_hash.sign_of(h)
        uniforms[i] = jit_hash.uniform_of(h)
        normals[i] = jit_hash.normal_of(np.uint64(key), np.uint64(counters[i]))
    return buckets, signs, uniforms, normals


@pytest.mark.parametrize("seed", [0, 1, 2**63 + 12345])
def test_counter_form_equals_splitmix64_generator(seed):
    # hash64(key, i) is output i of the stateful generator started at key
    expected = np.array(splitmix64_sequence(seed, 64), dtype=np.uint64)
    np.testing.assert_array_equal(_hash.hash64_np(seed, np.arange(64)), expected)
    np.testing.assert_array_equal(_numba_hashes(np.uint64(seed), np.arange(64)), expected)


def test_published_splitmix64_vector():
    # first outputs of splitmix64 seeded with 0, as published with the reference C code
    assert int(_hash.hash64_np(0, np.array([0]))[0]) == 0xE220A8397B1DCDAF
    assert int(_hash.hash64_np(0, np.array([1]))[0]) == 0x6E789E6AA1B965F4


def test_numba_and_numpy_derived_values_agree():
    key = _hash.derive_key(987, _hash.STREAM_HASHING)
    counters = np.arange(10_000, dtype=np.int64) * 7919
    b, s, u, z = _numba_derived(np.uint64(key), counters, 37)
    h = _hash.hash64_np(key, counters)
    np.testing.assert_array_equal(b, _hash.bucket_np(h, 37))
    np.testing.assert_array_equal(s, _hash.sign_np(h))
    np.testing.assert_array_equal(u, _hash.uniform_np(h))
    # normal_of is Box-Muller on counters 2c and 2c + 1 (GaussianSketch's ziggurat and its
    # NumPy twin normal_np are compared in tests/test_gaussian_generator.py)
    pair = counters // 2
    radius = np.sqrt(-2.0 * np.log(_hash.uniform_np(_hash.hash64_np(key, 2 * pair))))
    angle = 2.0 * np.pi * _hash.uniform_np(_hash.hash64_np(key, 2 * pair + 1))
    box_muller = np.where(counters % 2 == 1, radius * np.sin(angle), radius * np.cos(angle))
    np.testing.assert_allclose(z, box_muller, rtol=1e-14, atol=1e-14)


def test_streams_give_different_keys():
    keys = {_hash.derive_key(5, stream) for stream in range(1, 5)}
    assert len(keys) == 4
    assert _hash.derive_key(5, 1) != _hash.derive_key(6, 1)


def test_bucket_and_sign_are_uniform():
    # chi-square test with fixed seed: 200k draws into 50 buckets
    h = _hash.hash64_np(_hash.derive_key(3, 1), np.arange(200_000))
    counts = np.bincount(_hash.bucket_np(h, 50), minlength=50)
    chi2 = ((counts - 4000.0) ** 2 / 4000.0).sum()
    assert chi2 < 100  # 49 dof: P(chi2 > 100) < 1e-5
    assert abs(_hash.sign_np(h).mean()) < 5 / np.sqrt(200_000)
    u = _hash.uniform_np(h)
    assert 0 < u.min() and u.max() < 1


def test_normals_have_unit_moments():
    z = _hash.normal_np(_hash.derive_key(11, 2), np.arange(400_000))
    n = z.size
    assert abs(z.mean()) < 5 / np.sqrt(n)
    assert abs(z.var() - 1) < 5 * np.sqrt(2 / n)
    assert abs(np.mean(z**4) - 3) < 5 * np.sqrt(96 / n)
