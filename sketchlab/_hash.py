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
- normals: the ziggurat of Marsaglia & Tsang (2000) with 256 layers, one
  64-bit hash per normal (see :func:`normal_np`)
"""

import functools
import math
from collections import namedtuple
from fractions import Fraction

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


# --------------------------------------------------------------------------
# Normals: a counter-based ziggurat
# --------------------------------------------------------------------------
#
# The half-normal density f(x) = exp(-x^2 / 2), x >= 0, is covered by 256
# layers of equal area v: layer i is the rectangle [0, w_i] x [y_i, y_{i+1}]
# with y_0 = 0 < y_1 = f(r) < ... < y_255 < y_256 = 1, y_i = f(x_i), and
# w_i = v / (y_{i+1} - y_i) (so w_i = x_i up to rounding for i >= 1); layer 0
# is the strip [0, r] x [0, f(r)] together with the tail x > r, whose area
# makes up v.  A uniform point of a uniformly chosen layer lies under f with
# probability sqrt(pi / 2) / (256 v) (about 0.9933); keeping it and drawing
# again otherwise gives |z| exactly half-normal.
#
# Normal ``index`` of the stream ``key`` takes h = hash64(key, index): bits
# 0-7 choose the layer i, bit 8 the sign, bits 12-63 a 52-bit integer m, and
# x = (m + 0.5) w_i / 2**52.  When the whole grid cell of m lies left of
# x_{i+1} (m < limits[i]) the point is under f whatever its height: z = +-x,
# the only path of 98.5% of the normals (no log, no exp).  Otherwise (rare
# path) further uniforms come from a second stream that belongs to this
# normal alone, hash64(entry_key, c) for c = 0, 1, 2, ... with
# entry_key = hash64(retry_key(key), index): a height in layer i >= 1
# (accept x if under f, else draw a new layer, sign and m), or Marsaglia's
# (1964) tail method in layer 0.  So every normal is a pure function of
# (key, index), whatever else is generated and in whichever order.

ZIGGURAT_LAYERS = 256

ZigguratTables = namedtuple("ZigguratTables", "widths limits heights r v")
ZigguratTables.__doc__ = """Tables of the ziggurat (float64, read-only).

widths : (512,) float64
    ``widths[sign << 8 | i] = (-1)**sign w_i / 2**52``.
limits : (256,) uint64
    ``floor(2**52 x_{i+1} / w_i)`` (``x_256 = 0``): m below it needs no
    height test.
heights : (257,) float64
    ``y_i``: 0, then ``f(x_i)`` for ``i = 1 .. 255``, then 1.
r : float
    Start of the tail, ``x_1``.
v : float
    Area of every layer.
"""


def _tail_area(r):
    """Integral of f over (r, inf)."""
    return math.sqrt(math.pi / 2) * math.erfc(r / math.sqrt(2))


def _layer_edges(r):
    """``x_1 = r, x_2, ..., x_255`` of the layers of area ``v`` (f(r) r plus
    the tail) stacked from ``r`` by ``f(x_{i+1}) = f(x_i) + v / x_i``, and
    ``v / x_255 + f(x_255) - 1``: positive when the top layer [0, x_255] x
    [f(x_255), 1] needs less than v (``r`` too small), negative when more.
    ``log1p`` and ``expm1`` keep the heights near the mode accurate."""
    v = r * math.exp(-0.5 * r * r) + _tail_area(r)
    x = [r]
    for _ in range(ZIGGURAT_LAYERS - 2):
        gap = v / x[-1] + math.expm1(-0.5 * x[-1] * x[-1])  # f(x_{i+1}) - 1
        if gap >= 0.0:
            return x, 1.0  # the mode is reached before 256 layers are stacked
        x.append(math.sqrt(-2.0 * math.log1p(gap)))
    return x, v / x[-1] + math.expm1(-0.5 * x[-1] * x[-1])


@functools.lru_cache(maxsize=None)
def ziggurat_tables():
    """The 256-layer ziggurat for the half-normal density, computed in float64.

    ``r`` is found by bisection to the last bit, on the side where the top
    layer needs no more than ``v`` (it lands within one ulp of Marsaglia &
    Tsang's 3.6541528853610088).  The widths are then computed from the
    stored heights, ``w_i = v / (y_{i+1} - y_i)``, so that every layer has
    area v to within float64 rounding; rounding in the heights only leaves
    slivers of area O(eps**2) between a rectangle and f.  Deterministic on
    a given platform: only ``exp``, ``expm1``, ``log1p``, ``sqrt`` and
    ``erfc`` of the math module are used.
    """
    lo, hi = 3.0, 4.0  # top layer needs less than v at lo, more at hi
    while True:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if _layer_edges(mid)[1] > 0.0:
            lo = mid
        else:
            hi = mid
    r = lo
    x, _ = _layer_edges(r)
    v = r * math.exp(-0.5 * r * r) + _tail_area(r)
    heights = np.array([0.0] + [math.exp(-0.5 * xi * xi) for xi in x] + [1.0])
    widths = v / np.diff(heights)
    scaled = widths * 2.0**-52
    # exact rational floor: every grid cell below the limit lies left of x_{i+1}
    x.append(0.0)
    limits = np.array(
        [(Fraction(x[i]) * 2**52) // Fraction(float(widths[i])) for i in range(ZIGGURAT_LAYERS)],
        dtype=np.uint64,
    )
    signed = np.concatenate((scaled, -scaled))
    for table in (signed, limits, heights):
        table.setflags(write=False)
    return ZigguratTables(signed, limits, heights, r, v)


def retry_key(key):
    """Key of the rare path's streams: splitmix64's finalizer of ``key``."""
    return _mix64_int(int(key))


def _ziggurat_rare(h, entry_key, tables):
    """The rare path for one normal whose first draw ``h`` missed the fast
    test, in Python floats (same operations, in the same order, as the Numba
    kernel).  Returns ``(z, redraws, tail_rounds)``: the normal, how many
    points above f were rejected (each followed by a new layer, sign and m),
    and how many rounds the tail method took (0 outside the tail)."""
    widths, limits, heights, r = tables.widths, tables.limits, tables.heights, tables.r
    c = redraws = 0
    while True:
        layer = h & 0xFF
        m = h >> 12
        x = (float(m) + 0.5) * float(widths[h & 0x1FF])
        if m < int(limits[layer]):
            return x, redraws, 0
        if layer == 0:
            rounds = 0
            while True:
                a = -math.log(_uniform_int(_hash64_int(entry_key, c))) / r
                b = -math.log(_uniform_int(_hash64_int(entry_key, c + 1)))
                c += 2
                rounds += 1
                if b + b > a * a:
                    return (r + a) * (1.0 - 2.0 * float((h >> 8) & 1)), redraws, rounds
        u = _uniform_int(_hash64_int(entry_key, c))
        c += 1
        low, high = float(heights[layer]), float(heights[layer + 1])
        if low + u * (high - low) < math.exp(-0.5 * x * x):
            return x, redraws, 0
        h = _hash64_int(entry_key, c)
        c += 1
        redraws += 1


def _hash64_int(key, counter):
    return _mix64_int(key + (counter + 1) * GOLDEN)


def _uniform_int(h):
    return (float(h >> 11) + 0.5) * (1.0 / 9007199254740992.0)


def ziggurat_np(key, index):
    """Normals ``index`` of the stream ``key`` with how each was drawn.

    Returns ``(z, redraws, tail_rounds)``, arrays of the shape of ``index``:
    the normals, the number of rejected points before each (nonzero for
    about 0.67% of them) and the rounds of the tail method (nonzero for
    about 0.026%, the normals beyond ``r`` drawn in layer 0).
    """
    index = np.asarray(index).astype(np.uint64)
    tables = ziggurat_tables()
    h = hash64_np(key, index).ravel()
    m = h >> np.uint64(12)
    z = (m.astype(np.float64) + 0.5) * tables.widths[(h & np.uint64(0x1FF)).astype(np.intp)]
    redraws = np.zeros(h.shape, dtype=np.int64)
    tail_rounds = np.zeros(h.shape, dtype=np.int64)
    rare = np.flatnonzero(m >= tables.limits[(h & np.uint64(0xFF)).astype(np.intp)])
    entry_keys = hash64_np(retry_key(key), index.ravel()[rare])
    for pos, hk, ek in zip(rare.tolist(), h[rare].tolist(), entry_keys.tolist()):
        z[pos], redraws[pos], tail_rounds[pos] = _ziggurat_rare(hk, ek, tables)
    return z.reshape(index.shape), redraws.reshape(index.shape), tail_rounds.reshape(index.shape)


def normal_np(key, index):
    """Standard normal number ``index`` of the stream ``key``, for an integer
    array ``index`` (the NumPy twin of ``sketchlab._jit.gaussian``)."""
    return ziggurat_np(key, index)[0]
