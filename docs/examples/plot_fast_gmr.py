"""
Fast GMR against the exact answer
=================================

Generalized matrix regression finds the core ``X`` of ``A ~ C X R`` for
given ``C`` (``m x c``) and ``R`` (``r x n``).  :func:`sketchlab.gmr` solves
it exactly (``X* = C^+ A R^+``); :func:`sketchlab.fast_gmr` (Algorithm 1 of
the paper) solves the sketched problem of size ``s_c x s_r``.  Its error
ratio ``||A - C X~ R||_F / ||A - C X* R||_F - 1`` falls like ``1 / a^2``
for sketch sizes ``s_c = a c``, ``s_r = a r``.
"""

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp

import sketchlab as sl

gen = np.random.default_rng(0)
A = sp.random(5000, 3000, density=0.01, format="csr", random_state=gen)
C = A @ gen.standard_normal((3000, 10))  # 10 combinations of A's columns
R = gen.standard_normal((10, 5000)) @ A  # 10 combinations of its rows

X_exact = sl.gmr(A, C, R)
best = sl.gmr_residual(A, C, X_exact, R)
print(f"exact residual ||A - C X* R||_F = {best:.4f}")

factors = [2, 4, 8, 16, 32]
fig, ax = plt.subplots(figsize=(6, 4))
for kind in ["countsketch", "gaussian", "leverage"]:
    ratios = []
    for a in factors:
        X = sl.fast_gmr(A, C, R, sketch_size=(10 * a, 10 * a), sketch=kind, rng=1).X
        ratios.append(sl.gmr_error_ratio(A, C, X, R, X_opt=X_exact))
    ax.loglog(factors, ratios, "o-", label=kind)
    print(f"{kind:12s} error ratio at a = {factors[-1]}: {ratios[-1]:.2e}")
ax.loglog(factors, 1.0 / np.array(factors, dtype=float) ** 2, "k--", label="1 / a²")
ax.set_xlabel("sketch size / (c or r)  (a)")
ax.set_ylabel("error ratio of Fast GMR")
ax.set_title("Fast GMR against the exact GMR")
ax.legend()
fig.tight_layout()
plt.show()
