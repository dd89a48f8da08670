"""Exact residual norms without densifying a sparse A.

For GMR, ||A - C X R||_F^2 = ||A||_F^2 - 2 <X, C^T A R^T> + ||C X R||_F^2;
for a low-rank factorization with orthonormal U, V,
||A - U diag(s) V^T||_F^2 = ||A||_F^2 - 2 sum_i s_i u_i^T A v_i + sum_i s_i^2.
"""

__all__ = ["gmr_residual", "gmr_error_ratio", "lowrank_residual"]

# ---- GMR residuals (gmr_residual, gmr_error_ratio) -------------------------

# ---- low-rank residual (lowrank_residual) -----------------------------------
