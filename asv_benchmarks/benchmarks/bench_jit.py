"""Start-up costs, each measured in a fresh Python process (track_*, seconds).

- ``import sketchlab`` (SPEC 7: < 1 s; numpy and scipy.sparse included);
- the first call of an entry point on a small sparse matrix, with a fresh,
  empty ``NUMBA_CACHE_DIR`` (cold: every kernel it needs is compiled) and with
  a cache that an earlier process filled (warm: kernels are loaded);
- the kernels the warm process compiled anyway (SPEC 7: none, cache=True).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

from . import common

ENTRY_POINTS = {
    "sketch_both": (
        "sl.sketch_both(sl.CountSketch(50, A.shape[0], rng=1), A, sl.CountSketch(50, A.shape[1], rng=2))"
    ),
    "fast_gmr": (
        "C = A @ np.ones((A.shape[1], 5)); R = np.ones((5, A.shape[0])) @ A; "
        "sl.fast_gmr(A, C, R, sketch_size=50, rng=0)"
    ),
    "fast_sp_svd": "sl.fast_sp_svd(A, 5, rng=0)",
}

SCRIPT = """
import time
t0 = time.perf_counter()
import sketchlab as sl
t1 = time.perf_counter()
import json, sys
import numpy as np, scipy.sparse as sp
A = sp.random(2000, 1000, density=0.01, format="csr", random_state=0)
t2 = time.perf_counter()
{call}
t3 = time.perf_counter()
from numba.core.registry import CPUDispatcher
compiled = sum(
    sum(obj.stats.cache_misses.values())
    for name, module in list(sys.modules.items()) if name.startswith("sketchlab.")
    for obj in vars(module).values() if isinstance(obj, CPUDispatcher)
)
print(json.dumps({{"import": t1 - t0, "first_call": t3 - t2, "compiled": compiled}}))
"""


def run_fresh(call, cache_dir=None):
    """Run ``call`` in a fresh interpreter with NUMBA_CACHE_DIR=cache_dir (None:
    as in this process); the measured figures as a dict."""
    env = dict(os.environ)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(call=call)],
        env=env, capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def track_import_seconds():
    return run_fresh("pass", common.CACHE_DIR / "numba-warm")["import"]


track_import_seconds.unit = "seconds"


class FirstCall:
    params = [["sketch_both"] if common.QUICK else list(ENTRY_POINTS)]
    param_names = ["entry_point"]
    timeout = 1200

    def setup_cache(self):
        # fill the warm cache (recompiling whatever is stale)
        warm = common.CACHE_DIR / "numba-warm"
        warm.mkdir(parents=True, exist_ok=True)
        for name in self.params[0]:
            try:
                common.require(name)
            except NotImplementedError:
                continue
            run_fresh(ENTRY_POINTS[name], warm)
        return str(warm)

    setup_cache.timeout = 1200

    def track_cold_seconds(self, warm, entry_point):
        common.require(entry_point)
        cold = tempfile.mkdtemp(prefix="sketchlab-numba-cold-")
        try:
            return run_fresh(ENTRY_POINTS[entry_point], cold)["first_call"]
        finally:
            shutil.rmtree(cold, ignore_errors=True)

    track_cold_seconds.unit = "seconds"

    def track_warm_seconds(self, warm, entry_point):
        common.require(entry_point)
        return run_fresh(ENTRY_POINTS[entry_point], warm)["first_call"]

    track_warm_seconds.unit = "seconds"

    def track_warm_recompiled_kernels(self, warm, entry_point):
        common.require(entry_point)
        return run_fresh(ENTRY_POINTS[entry_point], warm)["compiled"]

    track_warm_recompiled_kernels.unit = "kernels"
