"""Bit-for-bit determinism across thread counts, and the on-disk JIT cache."""

import json
import textwrap

import pytest

from ._support import run_isolated

# each test starts Python subprocesses (fresh JIT caches, thread counts, the
# workqueue layer): long-profile work, run with SKETCHLAB_XSLOW=1
pytestmark = pytest.mark.slow

SCRIPT = textwrap.dedent(
    """
    import hashlib, json, sys
    import numpy as np, scipy.sparse as sp
    import numba
    import sketchlab as sl

    A = sp.random(3000, 700, density=0.01, format="csr", random_state=0)
    D = np.random.default_rng(1).standard_normal((600, 300))
    ops = lambda d, s: [
        sl.CountSketch(s, d, rng=1), sl.OSNAP(s, d, nnz_per_col=3, rng=2),
        sl.UniformSampler(s, d, rng=3), sl.GaussianSketch(s, d, rng=4), sl.SRHT(s, d, rng=5),
        sl.LeverageScoreSampler(s, d, scores=np.arange(d) % 7, rng=6),
    ]
    digest = hashlib.sha256()
    for X in (A, A.tocsc()):
        for S1, S2 in zip(ops(3000, 40), ops(700, 30)):
            for out in (S1 @ X, S2.apply(X, axis=1), sl.sketch_both(S1, X, S2)):
                digest.update(np.ascontiguousarray(out).tobytes())
    for X in (D, np.asfortranarray(D)):
        for S1, S2 in zip(ops(600, 50), ops(300, 20)):
            for out in (S1 @ X, S2.apply(X, axis=1), sl.sketch_both(S1, X, S2)):
                digest.update(np.ascontiguousarray(out).tobytes())
    from sketchlab._engine._jit import apply, gaussian, hadamard, hashing, reductions
    misses = hits = 0
    for mod in (apply, gaussian, hadamard, hashing, reductions):
        for name in dir(mod):
            f = getattr(mod, name)
            if isinstance(f, numba.core.registry.CPUDispatcher) and f.signatures:
                misses += sum(f.stats.cache_misses.values())
                hits += sum(f.stats.cache_hits.values())
    print(json.dumps({"digest": digest.hexdigest(), "threads": numba.get_num_threads(),
                      "misses": misses, "hits": hits}))
    """
)


def _run(threads, cache_dir):
    code, out, err = run_isolated(SCRIPT, timeout=600, env={
        "NUMBA_NUM_THREADS": str(threads), "NUMBA_CACHE_DIR": str(cache_dir)})
    assert code == 0, err
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    cache = tmp_path_factory.mktemp("numba-cache")
    first = _run(2, cache)  # compiles and writes the cache
    second = _run(2, cache)  # a new process: loads everything from the cache
    serial = _run(1, cache)
    return first, second, serial


def test_same_bits_for_one_and_two_threads(runs):
    first, second, serial = runs
    assert first["threads"] == 2 and serial["threads"] == 1
    assert serial["digest"] == first["digest"] == second["digest"]


def test_second_process_does_not_recompile(runs):
    first, second, _ = runs
    assert first["misses"] > 0
    assert second["misses"] == 0 and second["hits"] > 0


THREADS_SCRIPT = textwrap.dedent(
    """
    import threading
    import numpy as np, scipy.sparse as sp
    import numba
    import sketchlab as sl

    gen = np.random.default_rng(0)
    A = sp.random(20000, 3000, density=0.002, format="csr", random_state=gen)
    S1, S2 = sl.CountSketch(200, 20000, rng=1), sl.OSNAP(100, 3000, rng=2)
    expected = sl.sketch_both(S1, A, S2), S1 @ A
    results, errors = [], []

    def work():
        try:
            for _ in range(20):
                results.append((sl.sketch_both(S1, A, S2), S1 @ A))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert all(np.array_equal(r[0], expected[0]) and np.array_equal(r[1], expected[1])
               for r in results)
    print(numba.threading_layer(), len(results))
    """
)


def test_concurrent_calls_under_the_workqueue_layer_do_not_abort():
    """Numba's workqueue layer aborts the process when two Python threads
    launch parallel loops at once; sketchlab serializes its launches there."""
    code, out, err = run_isolated(THREADS_SCRIPT, timeout=600, env={
        "NUMBA_THREADING_LAYER": "workqueue", "NUMBA_NUM_THREADS": "2"})
    assert code == 0, err[-2000:]
    assert out.split() == ["workqueue", "80"]


BLAS_SCRIPT = textwrap.dedent(
    """
    import numpy, scipy.linalg
    from threadpoolctl import threadpool_info
    from sketchlab._config import one_blas_thread, serial_blas

    def blas_threads():
        return sorted({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})

    before = blas_threads()
    with serial_blas():
        assert blas_threads() == [1]
        assert one_blas_thread(blas_threads)() == [1]  # nested: one thread still
        with serial_blas():
            pass
        assert blas_threads() == [1], "an inner context restored the threads"
    assert blas_threads() == before, (blas_threads(), before)
    print(before)
    """
)


def test_serial_blas_nests():
    """One BLAS thread inside serial_blas (or a _linalg entry point) however
    the contexts nest; the threads come back when the outermost one closes."""
    code, out, err = run_isolated(BLAS_SCRIPT, timeout=600, env={
        "OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"})
    assert code == 0, err[-2000:]
    assert out.split() == ["[2]"]
