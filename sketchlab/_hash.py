"""The counter-based hash that defines every random sketch.

An operator is defined by a 64-bit seed: each random quantity of column ``j``
(its bucket, its sign, its Gaussian entries) is a pure function of
``(key, counter)`` where ``key`` is derived from the seed and a stream tag and
``counter`` is computed from ``j``.  Any block of columns can therefore be
regenerated on its own, in any order and on any thread, and gives exactly the
same numbers as the whole operator.

The mixing function is splitmix64 (Steele, Lea & Flood, 2014): the state
``key + (counter + 1) * 0x9E3779B97F4A7C15`` goes through the murmur3-style
finalizer.  Two versions are kept here and tested against each other: one for
Numba kernels (``sketchlab._jit.hashing``, imported only when a kernel
first runs, so that ``import sketchlab`` does not load Numba), one vectorised
with NumPy here, for Python code and tests.

Derived quantities (both versions):

- ``bucket(h, n)``: ``((h >> 32) * n) >> 32``, uniform in ``[0, n)`` for ``n < 2**32``
- ``sign(h)``: ``+1`` if bit 0 of ``h`` is 0, else ``-1``
- ``uniform(h)``: ``((h >> 11) + 0.5) / 2**53``, in the open interval (0, 1)
- normals: Box-Muller on two consecutive counters ``2c`` and ``2c + 1``
"""

import numpy as np

GOLDEN = 0x9E3779B97F4A7C15
M1 = 0xBF58476D1CE4E5B9
M2 = 0x94D049BB133111EB
_MASK = (1 << 64) - 1

# Stream tags: one key per kind of random quantity, so that e.g. the buckets
# of a CountSketch and the entries of a Gaussian with the same seed are
# unrelated.
STREAM_HASHING = 1  # CountSketch / OSNAP buckets and signs
STREAM_GAUSSIAN = 2  # Gaussian entries
STREAM_SIGNS = 3  # SRHT diagonal signs
STREAM_SAMPLING = 4  # i.i.d. sampled indices


def _mix64_int(z):
    """splitmix64's finalizer on a Python int (mod 2**64)."""
    z &= _MASK
    z = ((z ^ (z >> 30)) * M1) & _MASK
    z = ((z ^ (z >> 27)) * M2) & _MASK
    return z ^ (z >> 31)


def derive_key(seed, stream):
    """64-bit key of ``stream`` for an operator with ``seed`` (Python ints)."""
    return _mix64_int((int(seed) & _MASK) + ((int(stream) * GOLDEN) & _MASK))


# --------------------------------------------------------------------------
# NumPy versions (same numbers, vectorised)
# --------------------------------------------------------------------------


def hash64_np(key, counter):
    """Vectorised :func:`hash64`: ``counter`` an integer array, returns uint64."""
    counter = np.asarray(counter).astype(np.uint64)
    with np.errstate(over="ignore"):
        z = np.uint64(key) + (counter + np.uint64(1)) * np.uint64(GOLDEN)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(M1)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(M2)
    return z ^ (z >> np.uint64(31))


def bucket_np(h, n):
    with np.errstate(over="ignore"):
        return (((h >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32)).astype(np.int64)


def sign_np(h):
    return 1.0 - 2.0 * (h & np.uint64(1)).astype(np.float64)


def uniform_np(h):
    return ((h >> np.uint64(11)).astype(np.float64) + 0.5) * (1.0 / 9007199254740992.0)


def normal_np(key, index):
    """Vectorised :func:`normal_of` for an integer array ``index``."""
    index = np.asarray(index).astype(np.uint64)
    pair = index >> np.uint64(1)
    u1 = uniform_np(hash64_np(key, np.uint64(2) * pair))
    u2 = uniform_np(hash64_np(key, np.uint64(2) * pair + np.uint64(1)))
    radius = np.sqrt(-2.0 * np.log(u1))
    odd = (index & np.uint64(1)).astype(bool)
    return np.where(odd, radius * np.sin(2.0 * np.pi * u2), radius * np.cos(2.0 * np.pi * u2))
