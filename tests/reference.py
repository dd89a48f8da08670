"""Reference implementations: every sketch built as an explicit dense matrix
from its definition, and direct NumPy versions of the algorithms, to check
the kernels and the algorithms against."""

import numpy as np

from sketchlab import _hash

# ---- sketching operators ----------------------------------------------------
# Each function builds S densely, entry by entry, from the definitions of
# SPEC section 2 and the hash of sketchlab._hash (whose NumPy form is itself
# checked against the splitmix64 generator in tests/test_hash.py).


def splitmix64_sequence(seed, count):
    """The stateful splitmix64 generator (Steele et al. 2014), in Python ints."""
    mask = (1 << 64) - 1
    state = seed & mask
    out = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        out.append(z ^ (z >> 31))
    return out


def osnap_dense(s, d, p, seed):
    """Column j: p nonzeros +-1/sqrt(p), one in each row block [b s/p, (b+1) s/p)."""
    key = _hash.derive_key(seed, _hash.STREAM_HASHING)
    S = np.zeros((s, d))
    for j in range(d):
        for b in range(p):
            h = _hash.hash64_np(key, np.array([j * p + b]))
            lo, hi = (b * s) // p, ((b + 1) * s) // p
            row = lo + int(_hash.bucket_np(h, hi - lo)[0])
            S[row, j] = _hash.sign_np(h)[0] / np.sqrt(p)
    return S


def countsketch_dense(s, d, seed):
    """Column j: a single +-1 in row bucket(hash(seed, j))."""
    return osnap_dense(s, d, 1, seed)


def gaussian_dense(s, d, seed):
    """i.i.d. N(0, 1/s): entry (t, j) is normal number j * s2 + t of the stream."""
    key = _hash.derive_key(seed, _hash.STREAM_GAUSSIAN)
    s2 = s + (s % 2)
    t, j = np.meshgrid(np.arange(s), np.arange(d), indexing="ij")
    return _hash.normal_np(key, j * s2 + t) / np.sqrt(s)


def hadamard(n):
    """Unnormalised Walsh-Hadamard matrix by the Sylvester recursion."""
    H = np.ones((1, 1))
    while H.shape[0] < n:
        H = np.block([[H, H], [H, -H]])
    return H


def srht_dense(s, d, seed):
    """P H D / sqrt(s) with the input zero-padded to the next power of two."""
    dpad = 1 << max(0, (d - 1).bit_length())
    signs = _hash.sign_np(
        _hash.hash64_np(_hash.derive_key(seed, _hash.STREAM_SIGNS), np.arange(d))
    )
    rows = np.sort(np.random.default_rng(seed).choice(dpad, size=s, replace=False))
    return hadamard(dpad)[rows][:, :d] * signs / np.sqrt(s)


def uniform_dense(s, d, seed, replace=True):
    if replace:
        key = _hash.derive_key(seed, _hash.STREAM_SAMPLING)
        idx = _hash.bucket_np(_hash.hash64_np(key, np.arange(s)), d)
    else:
        idx = np.sort(np.random.default_rng(seed).choice(d, size=s, replace=False))
    S = np.zeros((s, d))
    S[np.arange(s), idx] = np.sqrt(d / s)
    return S


def leverage_dense(s, scores, seed):
    """Row t = e_i / sqrt(s p_i), i the inverse CDF of p at uniform(hash(seed, t))."""
    scores = np.asarray(scores, dtype=np.float64)
    p = scores / scores.sum()
    key = _hash.derive_key(seed, _hash.STREAM_SAMPLING)
    u = _hash.uniform_np(_hash.hash64_np(key, np.arange(s)))
    cdf = np.cumsum(scores)
    S = np.zeros((s, scores.shape[0]))
    for t in range(s):
        i = int(np.searchsorted(cdf, u[t] * cdf[-1], side="right"))
        i = min(i, int(np.flatnonzero(scores)[-1]))
        S[t, i] = 1.0 / np.sqrt(s * p[i])
    return S


def dense_of(op):
    """Reference dense matrix of any operator, from its definition."""
    import sketchlab as sl

    s, d = op.shape
    if isinstance(op, sl.ComposedSketch):
        return dense_of(op.outer) @ dense_of(op.inner)
    if isinstance(op, sl.IndexSelection):
        return np.eye(d)[op.indices]
    if isinstance(op, sl.CountSketch):
        return countsketch_dense(s, d, op.seed)
    if isinstance(op, sl.OSNAP):
        return osnap_dense(s, d, op.nnz_per_col, op.seed)
    if isinstance(op, sl.GaussianSketch):
        return gaussian_dense(s, d, op.seed)
    if isinstance(op, sl.SRHT):
        return srht_dense(s, d, op.seed)
    if isinstance(op, sl.UniformSampler):
        return uniform_dense(s, d, op.seed, op.replace)
    if isinstance(op, sl.LeverageScoreSampler):
        return leverage_dense(s, op.probabilities, op.seed)
    raise TypeError(type(op))

# ---- generalized matrix regression -----------------------------------------


def gmr_dense(A):
    """A as a float64 ndarray (densifies sparse input)."""
    return np.asarray(A.toarray() if hasattr(A, "toarray") else A, dtype=np.float64)


_RTOL_KEYWORD = "rtol" if int(np.__version__.split(".")[0]) >= 2 else "rcond"


def numpy_pinv(B, rtol=None, hermitian=False):
    """numpy's pseudo-inverse with singular values <= rtol * s_max dropped
    (``rtol`` since numpy 2, ``rcond``, same meaning, before)."""
    if rtol is None:
        return np.linalg.pinv(B, hermitian=hermitian)
    return np.linalg.pinv(B, hermitian=hermitian, **{_RTOL_KEYWORD: rtol})


def pinv_rtol(B, rtol):
    """numpy's pseudo-inverse with singular values <= rtol * s_max dropped."""
    return numpy_pinv(gmr_dense(B), rtol)


def gmr_pinv(A, C, R, rtol_c, rtol_r):
    """X* = C^+ A R^+ straight from the definition (eq. glsr)."""
    return pinv_rtol(C, rtol_c) @ gmr_dense(A) @ pinv_rtol(R, rtol_r)


def fast_gmr_explicit(A, C, R, S_C, S_R, rtol_c, rtol_r):
    """X~ = (S_C C)^+ (S_C A S_R^T) (R S_R^T)^+ (eq. U_hat) with S_C, S_R given
    as explicit dense matrices."""
    S_C, S_R, A = gmr_dense(S_C), gmr_dense(S_R), gmr_dense(A)
    C, R = gmr_dense(C), gmr_dense(R)
    return pinv_rtol(S_C @ C, rtol_c) @ (S_C @ A @ S_R.T) @ pinv_rtol(R @ S_R.T, rtol_r)


def gmr_residual_dense(A, C, X, R):
    """||A - C X R||_F by forming the m x n residual."""
    return float(np.linalg.norm(gmr_dense(A) - gmr_dense(C) @ gmr_dense(X) @ gmr_dense(R)))


# ---- SPSD approximation -----------------------------------------------------
# Kernel blocks from explicit differences, and the four SPSD cores straight
# from their formulas with the sketches as explicit dense matrices.


def spsd_dense(A):
    return np.asarray(A.toarray() if hasattr(A, "toarray") else A, dtype=np.float64)


def rbf_dense(X, gamma, Y=None):
    """exp(-gamma ||x_i - y_j||^2) from the explicit differences x_i - y_j."""
    X = spsd_dense(X)
    Y = X if Y is None else spsd_dense(Y)
    diff = X[:, None, :] - Y[None, :, :]
    return np.exp(-gamma * np.einsum("ijk,ijk->ij", diff, diff))


def pinv_default(B):
    """Pseudo-inverse with singular values <= max(m, n) eps s_max dropped."""
    B = spsd_dense(B)
    return numpy_pinv(B, max(B.shape) * np.finfo(np.float64).eps)


def sampling_dense(indices, weights, n):
    """S = diag(weights) I[indices, :], the s x n row-sampling matrix."""
    S = np.zeros((len(indices), n))
    S[np.arange(len(indices)), indices] = weights
    return S


def psd_projection_dense(X):
    """pi_H+: symmetric part, negative eigenvalues zeroed."""
    w, V = np.linalg.eigh((X + X.T) / 2)
    return (V * np.maximum(w, 0.0)) @ V.T


def nystrom_dense(K, cols):
    """U = W^+, W = K[cols, cols] (eigenvalue cutoff c eps |lambda|_max)."""
    K = spsd_dense(K)
    W = K[np.ix_(cols, cols)]
    return numpy_pinv((W + W.T) / 2, len(cols) * np.finfo(np.float64).eps, hermitian=True)


def fast_spsd_dense(K, cols, S):
    """U = (S C)^+ (S K S^T) (C^T S^T)^+ (eq. fast_spd)."""
    K, S = spsd_dense(K), spsd_dense(S)
    C = K[:, cols]
    P = pinv_default(S @ C)
    return P @ (S @ K @ S.T) @ P.T


def faster_spsd_dense(K, cols, S1, S2):
    """U = pi_H+((S1 C)^+ S1 K S2^T (C^T S2^T)^+) (eq. TX_psd, Algorithm 2)."""
    K, S1, S2 = spsd_dense(K), spsd_dense(S1), spsd_dense(S2)
    C = K[:, cols]
    X = pinv_default(S1 @ C) @ (S1 @ K @ S2.T) @ pinv_default(C.T @ S2.T)
    return psd_projection_dense(X)


def optimal_spsd_dense(K, cols):
    """U = C^+ K (C^+)^T."""
    K = spsd_dense(K)
    P = pinv_default(K[:, cols])
    return P @ K @ P.T


def spsd_error_dense(K, C, U):
    """||K - C U C^T||_F / ||K||_F with the n x n residual formed."""
    K, C = spsd_dense(K), spsd_dense(C)
    return float(np.linalg.norm(K - C @ U @ C.T) / np.linalg.norm(K))


def eta_dense(K, k):
    """sum of the k largest lambda_i^2 over sum of all (full eigendecomposition)."""
    w = np.linalg.eigvalsh(spsd_dense(K))
    w2 = np.sort(w**2)[::-1]
    return float(w2[:k].sum() / w2.sum())


# ---- single-pass SVD --------------------------------------------------------
# Direct NumPy versions of the three single-pass SVDs, from their formulas,
# with every sketch given as an explicit dense matrix (A dense).


def _svd_dense(A):
    return np.asarray(A.toarray() if hasattr(A, "toarray") else A, dtype=np.float64)


def _bases(A, Omega, Psi):
    """U_C = qr(A Omega^T), V_R = qr((Psi A)^T) (Omega: c x n, Psi: r x m)."""
    A = _svd_dense(A)
    U_C = np.linalg.qr(A @ Omega.T)[0]
    V_R = np.linalg.qr((Psi @ A).T)[0]
    return A, U_C, V_R


def _lifted_svd(U_C, N, V_R):
    U_N, s, Vt_N = np.linalg.svd(N, full_matrices=False)
    return U_C @ U_N, s, Vt_N @ V_R.T


def fast_sp_svd_dense(A, Omega, Psi, S_C, S_R):
    """Algorithm 3: N = (S_C U_C)^+ (S_C A S_R^T) (V_R^T S_R^T)^+, svd(N)."""
    A, U_C, V_R = _bases(A, Omega, Psi)
    N = np.linalg.pinv(S_C @ U_C) @ (S_C @ A @ S_R.T) @ np.linalg.pinv(V_R.T @ S_R.T)
    return _lifted_svd(U_C, N, V_R)


def practical_sp_svd_dense(A, Omega, Psi):
    """Appendix algorithm (Tropp et al. 2017): N = (Psi U_C)^+ R V_R, R = Psi A."""
    A, U_C, V_R = _bases(A, Omega, Psi)
    N = np.linalg.pinv(Psi @ U_C) @ (Psi @ A) @ V_R
    return _lifted_svd(U_C, N, V_R)


def three_sketch_svd_dense(A, Omega, Psi, Phi, Theta):
    """Tropp et al. 2019: Q = orth(A Omega^T), P = orth((Psi A)^T),
    core (Phi Q)^+ (Phi A Theta^T) ((Theta P)^+)^T, A ~ Q core P^T."""
    A, Q, P = _bases(A, Omega, Psi)
    core = np.linalg.pinv(Phi @ Q) @ (Phi @ A @ Theta.T) @ np.linalg.pinv(Theta @ P).T
    return _lifted_svd(Q, core, P)


def lowrank_residual_dense(A, U, s, Vt):
    """||A - U diag(s) Vt||_F by forming the m x n residual."""
    return float(np.linalg.norm(_svd_dense(A) - (np.asarray(U) * np.asarray(s)) @ np.asarray(Vt)))
