"""
A kernel approximation
======================

An RBF kernel matrix ``K`` (``n x n``) is approximated from ``c`` of its
columns ``C`` as ``K ~ C U C^T``.  The methods differ in the core ``U``:
the Nystrom method takes the inverse of the ``c x c`` intersection,
:func:`sketchlab.faster_spsd` (Algorithm 2 of the paper) solves a sketched
regression with ``s`` sampled rows, and :func:`sketchlab.optimal_spsd` the
exact one (``U = C^+ K (C^+)^T``, which reads all of ``K``).
"""

import matplotlib.pyplot as plt
import numpy as np

import sketchlab as sl

gen = np.random.default_rng(0)
centers = gen.standard_normal((6, 5)) * 3
points = centers[gen.integers(0, 6, 1000)] + gen.standard_normal((1000, 5))
K = sl.RBFKernel(points, gamma=0.1)
K_full = K.toarray()
norm = np.linalg.norm(K_full)

sizes = [10, 20, 40, 80]
methods = {
    "nystrom": lambda c: sl.nystrom(K, c, rng=1),
    "faster_spsd (s = 4c)": lambda c: sl.faster_spsd(K, c, 4 * c, rng=1),
    "optimal_spsd": lambda c: sl.optimal_spsd(K, c, rng=1),
}
fig, ax = plt.subplots(figsize=(6, 4))
for name, method in methods.items():
    errors = [np.linalg.norm(K_full - method(c).toarray()) / norm for c in sizes]
    ax.semilogy(sizes, errors, "o-", label=name)
    print(f"{name:22s} relative error with c = {sizes[-1]}: {errors[-1]:.2e}")
ax.set_xlabel("columns of K used (c)")
ax.set_ylabel("‖K − C U Cᵀ‖_F / ‖K‖_F")
ax.set_title("RBF kernel of 1,000 points")
ax.legend()
fig.tight_layout()
plt.show()
