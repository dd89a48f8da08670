"""
An SVD with its error bar
=========================

:func:`sketchlab.fast_sp_svd` (Algorithm 3 of the paper) reads ``A`` once.
With ``estimate_error=True`` its result also carries an estimate of
``||A - U diag(s) V^T||_F``, with an interval meant to hold the true error
about 90% of the time, from a few probes gathered in the same pass.  Here
the estimate and its interval sit beside the true error and the best
possible one (the truncated exact SVD) at several ranks.  Where the estimate
says that the answer misses most of ``A`` (rank 2 here), the call also warns
(:class:`sketchlab.InaccurateSVDWarning`); the warnings are caught and
printed below with their results.
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np

import sketchlab as sl

gen = np.random.default_rng(0)
decay = 0.9 ** np.arange(60)
A = (gen.standard_normal((1000, 60)) * decay) @ gen.standard_normal((60, 800))
s_exact = np.linalg.svd(A, compute_uv=False)

ranks = [2, 5, 10, 20, 30]
true, est, low, high, best = [], [], [], [], []
for k in ranks:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", sl.InaccurateSVDWarning)
        res = sl.fast_sp_svd(A, k, rng=1, estimate_error=True)
    U, s, Vt = res                 # the same unpacking with or without the estimate
    e = res.error_estimate
    true.append(np.linalg.norm(A - (U * s) @ Vt))
    est.append(e.value)
    low.append(e.low)
    high.append(e.high)
    best.append(np.sqrt(np.sum(s_exact[k:] ** 2)))
    print(f"k = {k:2d}: true error {true[-1]:8.1f}, estimate {e.value:8.1f} "
          f"[{e.low:.1f}, {e.high:.1f}]")
    for w in caught:
        print(f"        {w.category.__name__}: {w.message}")

est, low, high = map(np.array, (est, low, high))
fig, ax = plt.subplots(figsize=(6, 4))
ax.errorbar(ranks, est, yerr=[est - low, high - est], fmt="o", capsize=4,
            label="estimate and interval")
ax.plot(ranks, true, "s", label="true error")
ax.plot(ranks, best, "k--", label="best rank k (exact SVD)")
ax.set_yscale("log")
ax.set_xlabel("rank k")
ax.set_ylabel("‖A − U diag(s) Vᵀ‖_F")
ax.set_title("fast_sp_svd with its error estimate")
ax.legend()
fig.tight_layout()
plt.show()
