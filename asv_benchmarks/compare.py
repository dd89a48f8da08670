"""Side-by-side ratio table of SPEC section 7, without asv, in one process.

    python asv_benchmarks/compare.py            # on the real data sets ($SKETCHLAB_DATA)
    python asv_benchmarks/compare.py --quick    # small synthetic stand-ins (seconds; CI)

Every figure is the median of several runs after a warm-up call (so compile
time never lands in a timing), and every ratio compares ours with the peer a
user would otherwise pick, measured in the same process one after the other.
The machine (cores, BLAS, Numba threads) is printed first: the ratios, not the
absolute times, are what carry over between machines.
"""

import argparse
import gc
import lzma
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]


# ---- infrastructure ------------------------------------------------------------


def median_time(fn, repeat, min_time=0.0):
    """Median wall time of ``fn()`` over ``repeat`` runs after one warm-up.
    With ``min_time``, a fast ``fn`` runs in batches of at least that long."""
    fn()
    batch = 1
    if min_time:
        t0 = time.perf_counter()
        fn()
        one = max(time.perf_counter() - t0, 1e-7)
        batch = max(1, int(min_time / one))
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        times.append((time.perf_counter() - t0) / batch)
    return float(np.median(times))


class Table:
    def __init__(self):
        self.rows = []

    def ratio(self, what, ours, peer, peer_name, target=None):
        """Record the speed-up ``peer / ours`` against a minimum target."""
        ratio = peer / ours
        met = None if target is None else ratio >= target
        self.rows.append((what, ours, peer, peer_name, ratio, target, True, met))

    def slowdown(self, what, ours, bound, bound_name, target=None):
        """Record ``ours / bound`` (how far from a lower bound) against a maximum."""
        ratio = ours / bound
        met = None if target is None else ratio <= target
        self.rows.append((what, ours, bound, bound_name, ratio, target, False, met))

    def value(self, what, value, target=None, higher_is_better=False, unit=""):
        met = None if target is None else (value >= target if higher_is_better else value <= target)
        self.rows.append((what, None, value, unit, None, target, higher_is_better, met))

    def print(self):
        print()
        print(f"{'benchmark':58s} {'ours':>10s} {'peer':>10s}  {'ratio':>8s}  {'target':>8s}  met")
        print("-" * 106)
        for what, ours, peer, name, ratio, target, hib, met in self.rows:
            mark = {None: "", True: "yes", False: "NO"}[met]
            if ratio is None:  # a plain value
                tgt = "" if target is None else (">= " if hib else "<= ") + f"{target:g}"
                print(f"{what:58s} {'':>10s} {peer:>10.4g}  {name:>8s}  {tgt:>8s}  {mark}")
                continue
            tgt = "" if target is None else (">= " if hib else "<= ") + f"{target:g}x"
            print(
                f"{what:58s} {ours * 1e3:8.2f}ms {peer * 1e3:8.2f}ms  {ratio:7.2f}x  {tgt:>8s}  {mark}"
                f"   (peer: {name})"
            )


def machine():
    import numba
    from threadpoolctl import threadpool_info

    blas = [
        f"{i.get('internal_api')} {i.get('version')} ({i.get('num_threads')} threads)"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    ]
    return {
        "python": platform.python_version(),
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "numba threads": numba.get_num_threads(),
        "numba threading layer": _threading_layer(),
        "blas": "; ".join(blas) or "unknown",
    }


def _threading_layer():
    import numba
    from numba import njit, prange

    @njit(parallel=True)
    def touch(x):
        for i in prange(x.shape[0]):
            x[i] = i

    touch(np.empty(4))
    return numba.threading_layer()


def data_dir():
    return Path(os.environ.get("SKETCHLAB_DATA", Path.home() / ".cache" / "sketchlab"))


def load_libsvm(name):
    from sklearn.datasets import load_svmlight_file

    path = data_dir() / name
    with lzma.open(path) if name.endswith(".xz") else open(path, "rb") as fh:
        X, _ = load_svmlight_file(fh)
    return X.tocsr()


def tfidf_matrix(quick):
    """debian-tfidf (52,396 x 25,252, nnz 2.07M) or, in quick mode or when it is
    absent, a random sparse matrix of the same shape family and density."""
    path = data_dir() / "debian-tfidf.svm.xz"
    if not quick and path.exists():
        return load_libsvm("debian-tfidf.svm.xz"), "debian-tfidf"
    m, n = (5000, 2500) if quick else (52396, 25252)
    A = sp.random(m, n, density=0.00157, format="csr", random_state=0)
    return A, f"synthetic {m}x{n} density 0.157%"


# ---- sections --------------------------------------------------------------------


def bench_sketches(table, quick, repeat):
    import sketchlab as sl
    from scipy.linalg import clarkson_woodruff_transform
    from sketchlab._kernels.reductions import read_pass

    A, name = tfidf_matrix(quick)
    m, n = A.shape
    s = 200
    print(f"sketches on {name}: {m} x {n}, nnz {A.nnz}, index dtype {A.indices.dtype}")
    S_C, S_R = sl.CountSketch(s, m, rng=1), sl.CountSketch(s, n, rng=2)
    P_C, P_R = S_C.tosparse("csr"), S_R.tosparse("csr")

    t_both = median_time(lambda: sl.sketch_both(S_C, A, S_R), repeat, 0.05)
    t_both_unchecked = median_time(
        lambda: sl.sketch_both(S_C, A, S_R, check_finite=False), repeat, 0.05
    )
    t_scipy_both = median_time(lambda: (P_C @ A) @ P_R.T, max(3, repeat // 3))
    t_read = median_time(lambda: read_pass(A.data, A.indices), repeat * 3, 0.05)
    table.ratio(f"CountSketch sketch_both {s}x{s}", t_both, t_scipy_both, "scipy (S_C@A)@S_R.T", 10)
    table.slowdown("  ... time / read-only pass (roofline)", t_both, t_read, "read pass", 3)
    table.slowdown(
        "  ... check_finite=False, time / read-only pass", t_both_unchecked, t_read, "read pass", 3
    )

    t_left = median_time(lambda: S_C @ A, repeat)
    t_cw = median_time(lambda: clarkson_woodruff_transform(A, s, seed=1).toarray(), max(3, repeat // 3))
    t_left_explicit = median_time(lambda: (P_C @ A).toarray(), max(3, repeat // 3))
    table.ratio(f"CountSketch S @ A (s = {s})", t_left, t_cw, "scipy clarkson_woodruff", 3)
    table.ratio(f"CountSketch S @ A (s = {s})", t_left, t_left_explicit, "(S_sparse @ A).toarray()", 3)
    t_right = median_time(lambda: S_R.apply(A, axis=1), repeat)
    t_right_explicit = median_time(lambda: (A @ P_R.T).toarray(), max(3, repeat // 3))
    table.ratio(f"CountSketch A @ S.T (s = {s})", t_right, t_right_explicit, "(A @ S_sparse.T).toarray()", 3)

    dm, dn = (2048, 200) if quick else (16384, 1000)
    D = np.random.default_rng(0).standard_normal((dm, dn))
    H, G = sl.SRHT(s, dm, rng=3), sl.GaussianSketch(s, dm, rng=4)
    t_srht = median_time(lambda: H @ D, repeat)
    t_gauss = median_time(lambda: G @ D, repeat)
    gen = np.random.default_rng(5)
    t_numpy = median_time(lambda: gen.standard_normal((s, dm)) @ D, repeat)
    table.ratio(f"SRHT S @ A, dense {dm}x{dn}, s = {s}", t_srht, t_gauss, "GaussianSketch", None)
    table.ratio(f"GaussianSketch S @ A, dense {dm}x{dn}, s = {s}", t_gauss, t_numpy, "numpy randn+GEMM", None)


def bench_import(table):
    code = "import time; t = time.perf_counter(); import sketchlab; print(time.perf_counter() - t)"
    times = []
    for _ in range(5):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        times.append(float(out.stdout.strip()))
    table.value("import sketchlab (fresh process, median of 5)", float(np.median(times)), 1.0, unit="s")


SECTIONS = {"sketch": bench_sketches}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small synthetic inputs, few repeats")
    parser.add_argument("--repeat", type=int, default=None, help="runs per timing (median)")
    parser.add_argument("--only", action="append", choices=sorted(SECTIONS), help="run only these sections")
    args = parser.parse_args(argv)
    repeat = args.repeat or (3 if args.quick else 15)
    print("machine:")
    for key, value in machine().items():
        print(f"  {key}: {value}")
    table = Table()
    for name in args.only or list(SECTIONS):
        SECTIONS[name](table, args.quick, repeat)
    bench_import(table)
    table.print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
