"""
A sketch and its error
======================

A sketching operator ``S`` (``s x m``) maps a tall matrix ``A`` to the much
smaller ``S A`` while keeping the lengths ``||S A x||`` close to ``||A x||``
for every ``x``: the distortion ``||S A x|| / ||A x|| - 1`` shrinks like
``1 / sqrt(s)``.  Here it is measured for four kinds of sketch on a sparse
``A``, at several sketch sizes.
"""

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp

import sketchlab as sl

gen = np.random.default_rng(0)
A = sp.random(20_000, 20, density=0.05, format="csr", random_state=gen)
X = gen.standard_normal((20, 200))  # 200 directions x
AX = np.linalg.norm(A @ X, axis=0)

sizes = [50, 100, 200, 400, 800, 1600]
fig, ax = plt.subplots(figsize=(6, 4))
for kind in ["countsketch", "osnap", "gaussian", "srht"]:
    worst = []
    for s in sizes:
        S = sl.make_sketch(kind, s, A.shape[0], rng=1)
        SAX = np.linalg.norm((S @ A) @ X, axis=0)
        worst.append(np.max(np.abs(SAX / AX - 1)))
    ax.loglog(sizes, worst, "o-", label=kind)
    print(f"{kind:12s} largest distortion at s = {sizes[-1]}: {worst[-1]:.3f}")
ax.loglog(sizes, 3 / np.sqrt(sizes), "k--", label="3 / sqrt(s)")
ax.set_xlabel("sketch size s")
ax.set_ylabel("max |‖SAx‖ / ‖Ax‖ − 1| over 200 x")
ax.set_title("Distortion of a 20,000 x 20 sparse A")
ax.legend()
fig.tight_layout()
plt.show()
