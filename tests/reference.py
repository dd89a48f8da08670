"""Reference implementations: every sketch built as an explicit dense matrix
from its definition, and direct NumPy versions of the algorithms, to check
the kernels and the algorithms against."""

import numpy as np

from sketchlab import _hash

# ---- sketching operators ----------------------------------------------------

# ---- generalized matrix regression -----------------------------------------

# ---- SPSD approximation -----------------------------------------------------

# ---- single-pass SVD --------------------------------------------------------
