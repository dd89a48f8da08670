"""Bit-for-bit stability of the hashing and sampling kinds across refactors.

The digests below were taken at commit ccea9a5, before the operator layer was
redesigned ("one core, one apply, one sketch state"): ``S @ A``, ``A @ S.T``,
``sketch_both`` with the hashing and sampling kinds, for fixed seeds, over
every input layout.  A change that alters a single bit of these results fails
here.  They are computed by our compiled loops alone (no BLAS), so their bits
do not depend on the kernels the machine's BLAS picks.  The inputs are built
from integer draws and ``standard_normal`` only, whose streams numpy keeps
stable across releases.

``fast_gmr`` with CountSketch ends in LAPACK and BLAS (two pseudo-inverses),
whose roundings differ between OpenBLAS's kernels: it is checked against the
formula on the same sketches, to a tolerance.

Regenerate (only for an intended change of the numbers, with a note in the
CHANGELOG): ``python tests/test_digests.py``.
"""

import hashlib
import json

import numpy as np
import pytest
import scipy.sparse as sp

import sketchlab as sl


def _sparse(gen, m, n, per_row, dtype):
    """CSR with ``per_row`` entries per row, unsorted, with duplicates, some rows empty."""
    rows = []
    for i in range(m):
        k = 0 if i % 7 == 3 else per_row
        rows.append(gen.integers(0, n, k))
    indptr = np.concatenate(([0], np.cumsum([r.size for r in rows]))).astype(np.int32)
    indices = np.concatenate(rows).astype(np.int32)
    data = gen.standard_normal(indices.size).astype(dtype)
    return sp.csr_matrix((data, indices, indptr), shape=(m, n))


def _inputs():
    gen = np.random.default_rng(2024)
    out = {}
    for dtype in (np.float64, np.float32):
        tag = np.dtype(dtype).name
        A = _sparse(gen, 900, 400, 6, dtype)
        out[f"csr-{tag}"] = A
        out[f"csc-{tag}"] = A.tocsc()
        D = gen.standard_normal((300, 120)).astype(dtype)
        out[f"dense-c-{tag}"] = D
        out[f"dense-f-{tag}"] = np.asfortranarray(D)
    return out


def _operators(d, s, seed):
    scores = (np.arange(d) % 5).astype(np.float64) + 0.5
    return {
        "countsketch": sl.CountSketch(s, d, rng=seed),
        "osnap": sl.OSNAP(s, d, nnz_per_col=3, rng=seed + 1),
        "uniform": sl.UniformSampler(s, d, rng=seed + 2),
        "uniform-noreplace": sl.UniformSampler(s, d, replace=False, rng=seed + 3),
        "leverage": sl.LeverageScoreSampler(s, d, scores=scores, rng=seed + 4),
    }


def _digest(x):
    x = np.ascontiguousarray(x)
    return hashlib.sha256(x.dtype.str.encode() + repr(x.shape).encode() + x.tobytes()).hexdigest()


def compute_digests():
    """{case: sha256} of every result this module guards."""
    results = {}
    for name, A in _inputs().items():
        m, n = A.shape
        left, right = _operators(m, 37, 11), _operators(n, 23, 71)
        for kind in left:
            S1, S2 = left[kind], right[kind]
            results[f"{name}/{kind}/left"] = _digest(S1 @ A)
            results[f"{name}/{kind}/right"] = _digest(A @ S2.T)
            results[f"{name}/{kind}/both"] = _digest(sl.sketch_both(S1, A, S2))
            results[f"{name}/{kind}/block-left"] = _digest(S1.apply(A[: m // 3], axis=0, offset=5))
    return results


def gmr_cases():
    """fast_gmr's float64 cases: (name, A, C, R), C and R drawn from one generator."""
    gen = np.random.default_rng(7)
    cases = []
    for name, A in _inputs().items():
        if not name.endswith("float64"):
            continue
        m, n = A.shape
        C = np.asarray(A @ gen.standard_normal((n, 6)))
        R = np.asarray(gen.standard_normal((5, m)) @ A)
        cases.append((name, A, C, R))
    return cases


# taken at ccea9a5 with `python tests/test_digests.py`
EXPECTED = {
    "csc-float32/countsketch/block-left":
        "31945020c05106e28dc15e84023909aa1eb5ec62446d2d32e9f25530e31a9f7b",
    "csc-float32/countsketch/both":
        "696ff57ad156ebb4f3bca6cf91898f0b13429d0cc1b469c88620bb9d80b41e3d",
    "csc-float32/countsketch/left":
        "0b9fdc2d90312df25c54a313a3dab5966e937325dc30e8b42141677d5fbba597",
    "csc-float32/countsketch/right":
        "01ec059767aab213e00a1bd1771c2ecf38c0082202c3509b8b0bf714d5592a94",
    "csc-float32/leverage/block-left":
        "2773d32bbf41f8d88ac13137fea6e3518c0cd0b287f103b1ea085ac834e7cc30",
    "csc-float32/leverage/both":
        "2d559d1b9210aa2631570f1faebd2eb2d3a3f9cab0eb938cf643f14c1214823e",
    "csc-float32/leverage/left":
        "81f695c73dcf1a979143f910a6ffe608739d7cdef3fdeb0412b15473a0521885",
    "csc-float32/leverage/right":
        "0b7741e54f8d3f9dc403bc2eca94bcf0fe6750695b8dac1855b3e960474febc0",
    "csc-float32/osnap/block-left":
        "3235d25500faec6a089ef1fd7190625862c76d6db06e7dd917fc579f1cf9efff",
    "csc-float32/osnap/both":
        "6ff6e26e48a2e69b25efadf4e4829631b16288945e7d5dc9de4a1b329c1dedca",
    "csc-float32/osnap/left":
        "738c6f7ee1360cc1ce950984cfe09a53cf262cc7a1157aaa9dd1d16fb119f121",
    "csc-float32/osnap/right":
        "ee58d16c651e931d7f77911120c790611563295c62d3b01bad8063c2790ed41b",
    "csc-float32/uniform-noreplace/block-left":
        "7de2b3002145a37c8705f3520be8b53009fc3b6b2ef786b607e44e0569ad2e2c",
    "csc-float32/uniform-noreplace/both":
        "58d5e11186743b234860f9996aa7c2a7811452f77024494016a8cedb5d949152",
    "csc-float32/uniform-noreplace/left":
        "53f679694b5e9f9c30c685ab0e0bd0d8661b8cd5e240e24bdd82d3b0e8fc11f7",
    "csc-float32/uniform-noreplace/right":
        "74be5f0ee627d147a6a3a8c71282e9a1116fc451cd28ff3d959f7437e44ce52e",
    "csc-float32/uniform/block-left":
        "931c3a7cd0f7c153bc01865ab7ba78dd95338574251209be94a33518faf2e8a9",
    "csc-float32/uniform/both":
        "d94ae6cd71ac8126e5ecc48ee335c6025116ab2fa25c8dba9dca07b6ecb6ebca",
    "csc-float32/uniform/left":
        "bf88f604d2fba95433813b210fe8b94986779c785796e9e98371d29a7f86d17f",
    "csc-float32/uniform/right":
        "f51b7986b105a3676caa96818e81a16913973c6ec3cc9a7a8b2bab3ef4079ac3",
    "csc-float64/countsketch/block-left":
        "150ccb25ecf7671d4a26f18f24eca807c551959564802a478a9f856117f65f8b",
    "csc-float64/countsketch/both":
        "3a18e7e4721f646edf735741a5de8fb7853f6e85b24a36c9d30836b699899699",
    "csc-float64/countsketch/left":
        "30cb4e0e9d2a02331a9dea926c299d352bb5563cd1f5c3ddf1cf10ff36021515",
    "csc-float64/countsketch/right":
        "4f9b1662488748801a7202fcd9c13491c703a352aed784d1a766bb807abb25b2",
    "csc-float64/leverage/block-left":
        "5a03c8efbb7f296d21e5854389aad3f11fbc7e2e915e182cd331edf33a83df25",
    "csc-float64/leverage/both":
        "7e3db8d7399c661623f65474bd980f38f4e384f51d04e56afbe5f451caa795b9",
    "csc-float64/leverage/left":
        "773302d78bc7d23dc1709e49768ba469b036c0d2a7ac216361d4b0b974b01579",
    "csc-float64/leverage/right":
        "50cd90e16eaaaadc1cc633bc60fa66ffc330b52818e55169f826edf7f144783f",
    "csc-float64/osnap/block-left":
        "db49ff5ce783c09ce8c9adacdf81d63cec81e4d14437ff8210db9fc90bfae26e",
    "csc-float64/osnap/both":
        "87ec0343c50d135b9134494e5f48ab5c709231717af6740e898f0b4e94f91b50",
    "csc-float64/osnap/left":
        "b13c776cc24d4e37f3ffdb30a03264d30137c23ad7dddb1366d147996ee10d06",
    "csc-float64/osnap/right":
        "f6cffa6c32f207134ee78667cdbb3507de3d06f9bcca261f736c68c27e66ade9",
    "csc-float64/uniform-noreplace/block-left":
        "c27193e6287934c9affb767d750bcf9bce8fd19b131cfd1f621423d3d12cbf3c",
    "csc-float64/uniform-noreplace/both":
        "665f7ac8fcb025d51fe61efee06655a2658a1f7b178f36bfc76dad2342c36891",
    "csc-float64/uniform-noreplace/left":
        "492d81b9cb6faee240678d5a2ca9b166d2362e9f25e794af2fe657f0a202cc2e",
    "csc-float64/uniform-noreplace/right":
        "30fb0af9b75180f0ac09b68c26824f2dab45efe94c03b1938a1ddf2ad718ead8",
    "csc-float64/uniform/block-left":
        "08c2317ffd8c1e443af05848e4382507e83af9f5128165b8dd9816bc8e7db39a",
    "csc-float64/uniform/both":
        "660660643c2946c904ee6a18dcd6884c609f393dbf3c7074de9051f615364a6b",
    "csc-float64/uniform/left":
        "a418e8c1dde9a41a58a3eb2cca1be47cb0763b37442cd9da0ab14444a0bdddc7",
    "csc-float64/uniform/right":
        "2a7ecd65f8985d9460c299ccf98ef9ab7e793ddca3a6d09c3ae8c9150ff72181",
    "csr-float32/countsketch/block-left":
        "31945020c05106e28dc15e84023909aa1eb5ec62446d2d32e9f25530e31a9f7b",
    "csr-float32/countsketch/both":
        "c722889f4851b13b252d39c4240761943b362f1ff09688c012f0242d37a55ad7",
    "csr-float32/countsketch/left":
        "0b9fdc2d90312df25c54a313a3dab5966e937325dc30e8b42141677d5fbba597",
    "csr-float32/countsketch/right":
        "af4e27303394649e92fd47980f3a2e714b22105f5e99c03eaee079a943adf0d3",
    "csr-float32/leverage/block-left":
        "2773d32bbf41f8d88ac13137fea6e3518c0cd0b287f103b1ea085ac834e7cc30",
    "csr-float32/leverage/both":
        "2d559d1b9210aa2631570f1faebd2eb2d3a3f9cab0eb938cf643f14c1214823e",
    "csr-float32/leverage/left":
        "81f695c73dcf1a979143f910a6ffe608739d7cdef3fdeb0412b15473a0521885",
    "csr-float32/leverage/right":
        "0b7741e54f8d3f9dc403bc2eca94bcf0fe6750695b8dac1855b3e960474febc0",
    "csr-float32/osnap/block-left":
        "3235d25500faec6a089ef1fd7190625862c76d6db06e7dd917fc579f1cf9efff",
    "csr-float32/osnap/both":
        "c268f86a36b53697afcd01af152d64afe5fc1047903f371bbf588b10efd3bf72",
    "csr-float32/osnap/left":
        "738c6f7ee1360cc1ce950984cfe09a53cf262cc7a1157aaa9dd1d16fb119f121",
    "csr-float32/osnap/right":
        "41a30e308bee33c9c2bf9e44cc0935602f56ab948cdb0168324640e1a202fc08",
    "csr-float32/uniform-noreplace/block-left":
        "7de2b3002145a37c8705f3520be8b53009fc3b6b2ef786b607e44e0569ad2e2c",
    "csr-float32/uniform-noreplace/both":
        "58d5e11186743b234860f9996aa7c2a7811452f77024494016a8cedb5d949152",
    "csr-float32/uniform-noreplace/left":
        "53f679694b5e9f9c30c685ab0e0bd0d8661b8cd5e240e24bdd82d3b0e8fc11f7",
    "csr-float32/uniform-noreplace/right":
        "74be5f0ee627d147a6a3a8c71282e9a1116fc451cd28ff3d959f7437e44ce52e",
    "csr-float32/uniform/block-left":
        "931c3a7cd0f7c153bc01865ab7ba78dd95338574251209be94a33518faf2e8a9",
    "csr-float32/uniform/both":
        "d94ae6cd71ac8126e5ecc48ee335c6025116ab2fa25c8dba9dca07b6ecb6ebca",
    "csr-float32/uniform/left":
        "bf88f604d2fba95433813b210fe8b94986779c785796e9e98371d29a7f86d17f",
    "csr-float32/uniform/right":
        "f51b7986b105a3676caa96818e81a16913973c6ec3cc9a7a8b2bab3ef4079ac3",
    "csr-float64/countsketch/block-left":
        "150ccb25ecf7671d4a26f18f24eca807c551959564802a478a9f856117f65f8b",
    "csr-float64/countsketch/both":
        "93df4dc1e41c9b60d44caa4e9a3aade43eb1b8257493904e995cbca70de1d6da",
    "csr-float64/countsketch/left":
        "30cb4e0e9d2a02331a9dea926c299d352bb5563cd1f5c3ddf1cf10ff36021515",
    "csr-float64/countsketch/right":
        "cf185b1c74f80d8483d30904e27c877f4dfb8d3064d2215847e8ab69d36787a7",
    "csr-float64/leverage/block-left":
        "5a03c8efbb7f296d21e5854389aad3f11fbc7e2e915e182cd331edf33a83df25",
    "csr-float64/leverage/both":
        "6cda998b947202c38d646c3683d87f322171db7f9140b77722837160cf120aaa",
    "csr-float64/leverage/left":
        "773302d78bc7d23dc1709e49768ba469b036c0d2a7ac216361d4b0b974b01579",
    "csr-float64/leverage/right":
        "50cd90e16eaaaadc1cc633bc60fa66ffc330b52818e55169f826edf7f144783f",
    "csr-float64/osnap/block-left":
        "db49ff5ce783c09ce8c9adacdf81d63cec81e4d14437ff8210db9fc90bfae26e",
    "csr-float64/osnap/both":
        "be6b4d086af707e111d5aaba88f84e1647ba91e15cff78013758d3f6c27111c3",
    "csr-float64/osnap/left":
        "b13c776cc24d4e37f3ffdb30a03264d30137c23ad7dddb1366d147996ee10d06",
    "csr-float64/osnap/right":
        "7a2bcf48f74a0ccb1cc39ea3803b9a23d75eb2cb7c5b750d06f6ca9f2a20ddaf",
    "csr-float64/uniform-noreplace/block-left":
        "c27193e6287934c9affb767d750bcf9bce8fd19b131cfd1f621423d3d12cbf3c",
    "csr-float64/uniform-noreplace/both":
        "87de733801e2762c8976ebc0e59f23b5d7cd32bb5a0d3848b5dcdecff122a708",
    "csr-float64/uniform-noreplace/left":
        "492d81b9cb6faee240678d5a2ca9b166d2362e9f25e794af2fe657f0a202cc2e",
    "csr-float64/uniform-noreplace/right":
        "30fb0af9b75180f0ac09b68c26824f2dab45efe94c03b1938a1ddf2ad718ead8",
    "csr-float64/uniform/block-left":
        "08c2317ffd8c1e443af05848e4382507e83af9f5128165b8dd9816bc8e7db39a",
    "csr-float64/uniform/both":
        "05ff6f1b96653b36a04e452b943a3822856ef2215bcb8c52dc0135d7dec4352d",
    "csr-float64/uniform/left":
        "a418e8c1dde9a41a58a3eb2cca1be47cb0763b37442cd9da0ab14444a0bdddc7",
    "csr-float64/uniform/right":
        "2a7ecd65f8985d9460c299ccf98ef9ab7e793ddca3a6d09c3ae8c9150ff72181",
    "dense-c-float32/countsketch/block-left":
        "3ea166674a6e4e52d4e3c85fc7b12e9e0871addb7109b5fef59b840cb33e82e8",
    "dense-c-float32/countsketch/both":
        "a98c76868651cd6c8e6b010a3ecac9f03bb7ce8b54678832546449483176efe0",
    "dense-c-float32/countsketch/left":
        "1a3a04bbee29ac79f5229793ee940bb34d79427d5d24f696eee5c1bede38d31e",
    "dense-c-float32/countsketch/right":
        "e5a1cfea96c3fd1dab9a2d246da435b5ef00116d3bd409e8b49bc139b1cab440",
    "dense-c-float32/leverage/block-left":
        "f7a52826d55271131410fac215d1e06dcdf0f1a7d215dd6c73a2ed03df7c0f06",
    "dense-c-float32/leverage/both":
        "1373eee2563939fbc2247e11b9b46e17e4d7a092f2ef31ec0c61ee7253a4d6d4",
    "dense-c-float32/leverage/left":
        "261efc4a995cd6f62108afdcbc031df7b8b8241e2ea09e66e6a8daa3e6987aac",
    "dense-c-float32/leverage/right":
        "656be02a3d7f683df4199773c407992407ae673387b608f8d0c6ed4530e994d1",
    "dense-c-float32/osnap/block-left":
        "ce35b0aba29f6410ca60c0d9f29fcca78ba363e61bba9dc9544c6c74cdad63d8",
    "dense-c-float32/osnap/both":
        "0b793437d3b6c42f0cbd8e7d6fe72f3ad6d8e94884f3b2b68b785cd56862408a",
    "dense-c-float32/osnap/left":
        "4a44db02427ff5bf0f6a43f9b79cb48aa760d5bc2a18274bddf0ca9191650d77",
    "dense-c-float32/osnap/right":
        "93a3dd4f088d9458618c4a36aca5d4c4acd2ebf1df60f0f990515276692145e9",
    "dense-c-float32/uniform-noreplace/block-left":
        "b68b9f5933df85319000c7f031d30f868612137a16a1fd6e603614b006ffeba4",
    "dense-c-float32/uniform-noreplace/both":
        "09a8c57a2f8447270243e77148b7ace99592251afcc056aa2bdd5c09f6c54027",
    "dense-c-float32/uniform-noreplace/left":
        "c7ddb538ba8490ef853beb313036a11f46418ab2e36c69f81c7f5bf7f96f8a03",
    "dense-c-float32/uniform-noreplace/right":
        "7420a12be085e0bbc5858d29680a7d315792e809d47c24bd481bc20ff34bd824",
    "dense-c-float32/uniform/block-left":
        "0494ba4853a8769df7aab7c17e395a776220fcd076c43ffc6b990e1e57a55ddd",
    "dense-c-float32/uniform/both":
        "7c34103cf97b9822dfc639a6173223ef8d67c056824eb0103355ed3ec6594767",
    "dense-c-float32/uniform/left":
        "5a8badce638f81dc50495a2f868f8423a57bd61a73fec130eda991c79f1dba61",
    "dense-c-float32/uniform/right":
        "7db566a5718762be37a5cbf3caf78457d5544b684bd3b59c354b144b6aafccbd",
    "dense-c-float64/countsketch/block-left":
        "f0cf2b881f0e821c304a6de2ffa439fca0ce0c9723dc86addf42323b3b580244",
    "dense-c-float64/countsketch/both":
        "db9768cfa02977a49f85ad2850c02955c298017f00c95612edb16189e23d3baf",
    "dense-c-float64/countsketch/left":
        "f0361b6560a2ac3db05ddf19ba1e7ba95ac0ba622bfbeb8be9f8f9dfc2993717",
    "dense-c-float64/countsketch/right":
        "805e0edb394c77cccbcebfc9cb1cf7a1da20b71b100c63eea1ac48ec280cb0cd",
    "dense-c-float64/leverage/block-left":
        "91e6eff9b11a272dff6945c6198a23b1df70ce02d5f204b470d0dd9e86213ac8",
    "dense-c-float64/leverage/both":
        "f679625b80a4bfa6711c36b20a87c9c975381681f41839993ce38c84ad5a925c",
    "dense-c-float64/leverage/left":
        "48cc95af853dcbed842cfd7bf03ae93490ef1332b6b9f48aec3a0a7ee4773857",
    "dense-c-float64/leverage/right":
        "3578e485aaf7a4c6498da643d13ac2b58604f63edac83965d2617433095c970a",
    "dense-c-float64/osnap/block-left":
        "c964608c79dd13ff1e3e9294a9601f21dce93bc3944bd00e7779e4ea89a4c05b",
    "dense-c-float64/osnap/both":
        "08ec821486ea48332c08a32c5ff52e5eefb34a4a893527eb5e2610af4fb9358a",
    "dense-c-float64/osnap/left":
        "696381f4f64c9c9ae1ce995468b04a187c5c7296ca867597f68a06d0d022f616",
    "dense-c-float64/osnap/right":
        "088aabe6c51f0eb05071267887bc3b914c31408e555b4ef7cae585e1d14cfc3d",
    "dense-c-float64/uniform-noreplace/block-left":
        "3f5935761bb2a6618da13e44d6c73a0be8dc06515859de70d16e5e186ece5f7e",
    "dense-c-float64/uniform-noreplace/both":
        "d85394105c37e6f47d562b56d1538c75e63777b0528ae28925cf9b1c908159a1",
    "dense-c-float64/uniform-noreplace/left":
        "9eebd90cc6622f165dc2fd8846953582b7f48a4db2fd31c7cd1f7bd5a2bcfd24",
    "dense-c-float64/uniform-noreplace/right":
        "761cf7246e4cbc9cf26da8e9527d0205fc942ad1b30926cdce1221fb475599a2",
    "dense-c-float64/uniform/block-left":
        "300b220ed45cb3413f1200fae4485642360e88a7d4d818ebb5a21bcc4f3250e0",
    "dense-c-float64/uniform/both":
        "1d02ffc1396ef5d2e5c774af7abfac818d9ddc7e9da95ac56f8e01e34f47734a",
    "dense-c-float64/uniform/left":
        "4e6bbc42541ae9c032ae55d71e6cf5e08413fc157f31bc0b9d16249ce1db3931",
    "dense-c-float64/uniform/right":
        "ab9ef5989d4a7d997b33e21650db1ea3ed36949bc1dc90e7c289652a974ef03a",
    "dense-f-float32/countsketch/block-left":
        "3ea166674a6e4e52d4e3c85fc7b12e9e0871addb7109b5fef59b840cb33e82e8",
    "dense-f-float32/countsketch/both":
        "fb1c63ef80c14b5ab4c6183b06dfb1384f8928e8a7f582ee6cdcb8a7a1c33f26",
    "dense-f-float32/countsketch/left":
        "1a3a04bbee29ac79f5229793ee940bb34d79427d5d24f696eee5c1bede38d31e",
    "dense-f-float32/countsketch/right":
        "e5a1cfea96c3fd1dab9a2d246da435b5ef00116d3bd409e8b49bc139b1cab440",
    "dense-f-float32/leverage/block-left":
        "f7a52826d55271131410fac215d1e06dcdf0f1a7d215dd6c73a2ed03df7c0f06",
    "dense-f-float32/leverage/both":
        "260d5e6bf1978c8f9601f2927c59b5a5364e0d95a366eaac3ef713ce43b54ed9",
    "dense-f-float32/leverage/left":
        "261efc4a995cd6f62108afdcbc031df7b8b8241e2ea09e66e6a8daa3e6987aac",
    "dense-f-float32/leverage/right":
        "656be02a3d7f683df4199773c407992407ae673387b608f8d0c6ed4530e994d1",
    "dense-f-float32/osnap/block-left":
        "ce35b0aba29f6410ca60c0d9f29fcca78ba363e61bba9dc9544c6c74cdad63d8",
    "dense-f-float32/osnap/both":
        "8355dfb7df8846083b163e75a4f66106a615bc82c033dbd4489fe824ffe5c761",
    "dense-f-float32/osnap/left":
        "4a44db02427ff5bf0f6a43f9b79cb48aa760d5bc2a18274bddf0ca9191650d77",
    "dense-f-float32/osnap/right":
        "93a3dd4f088d9458618c4a36aca5d4c4acd2ebf1df60f0f990515276692145e9",
    "dense-f-float32/uniform-noreplace/block-left":
        "b68b9f5933df85319000c7f031d30f868612137a16a1fd6e603614b006ffeba4",
    "dense-f-float32/uniform-noreplace/both":
        "e1e5466dc0345226aacfe69aaa22321a51e1a6d648fc8d5a41a38862ead968cf",
    "dense-f-float32/uniform-noreplace/left":
        "c7ddb538ba8490ef853beb313036a11f46418ab2e36c69f81c7f5bf7f96f8a03",
    "dense-f-float32/uniform-noreplace/right":
        "7420a12be085e0bbc5858d29680a7d315792e809d47c24bd481bc20ff34bd824",
    "dense-f-float32/uniform/block-left":
        "0494ba4853a8769df7aab7c17e395a776220fcd076c43ffc6b990e1e57a55ddd",
    "dense-f-float32/uniform/both":
        "b1d696f669be7d857e8a70f6a7990cc9d9002502a30cfa6f359fdafad48749d5",
    "dense-f-float32/uniform/left":
        "5a8badce638f81dc50495a2f868f8423a57bd61a73fec130eda991c79f1dba61",
    "dense-f-float32/uniform/right":
        "7db566a5718762be37a5cbf3caf78457d5544b684bd3b59c354b144b6aafccbd",
    "dense-f-float64/countsketch/block-left":
        "f0cf2b881f0e821c304a6de2ffa439fca0ce0c9723dc86addf42323b3b580244",
    "dense-f-float64/countsketch/both":
        "ea76d67aab403ba3912201af400324170277d9ff1a20aa9c0bba56ec776da1fd",
    "dense-f-float64/countsketch/left":
        "f0361b6560a2ac3db05ddf19ba1e7ba95ac0ba622bfbeb8be9f8f9dfc2993717",
    "dense-f-float64/countsketch/right":
        "805e0edb394c77cccbcebfc9cb1cf7a1da20b71b100c63eea1ac48ec280cb0cd",
    "dense-f-float64/leverage/block-left":
        "91e6eff9b11a272dff6945c6198a23b1df70ce02d5f204b470d0dd9e86213ac8",
    "dense-f-float64/leverage/both":
        "21e004df317fcc0c7f5190b6fa2060712b2df3e336d591760b6d0c16795cc8af",
    "dense-f-float64/leverage/left":
        "48cc95af853dcbed842cfd7bf03ae93490ef1332b6b9f48aec3a0a7ee4773857",
    "dense-f-float64/leverage/right":
        "3578e485aaf7a4c6498da643d13ac2b58604f63edac83965d2617433095c970a",
    "dense-f-float64/osnap/block-left":
        "c964608c79dd13ff1e3e9294a9601f21dce93bc3944bd00e7779e4ea89a4c05b",
    "dense-f-float64/osnap/both":
        "23995eb20e6dee060d5bbc2cfb1930e7d4229c2f3223ea36ec7c4eb6b770db30",
    "dense-f-float64/osnap/left":
        "696381f4f64c9c9ae1ce995468b04a187c5c7296ca867597f68a06d0d022f616",
    "dense-f-float64/osnap/right":
        "088aabe6c51f0eb05071267887bc3b914c31408e555b4ef7cae585e1d14cfc3d",
    "dense-f-float64/uniform-noreplace/block-left":
        "3f5935761bb2a6618da13e44d6c73a0be8dc06515859de70d16e5e186ece5f7e",
    "dense-f-float64/uniform-noreplace/both":
        "6db42d51d49a545eb8c6a03729d752dc92ad82002be0192161f7b47ed2ea358a",
    "dense-f-float64/uniform-noreplace/left":
        "9eebd90cc6622f165dc2fd8846953582b7f48a4db2fd31c7cd1f7bd5a2bcfd24",
    "dense-f-float64/uniform-noreplace/right":
        "761cf7246e4cbc9cf26da8e9527d0205fc942ad1b30926cdce1221fb475599a2",
    "dense-f-float64/uniform/block-left":
        "300b220ed45cb3413f1200fae4485642360e88a7d4d818ebb5a21bcc4f3250e0",
    "dense-f-float64/uniform/both":
        "cae0d964e742f335a68e2f31e15ea23660e4a8d2ba11df2d83ecb0d41dd75249",
    "dense-f-float64/uniform/left":
        "4e6bbc42541ae9c032ae55d71e6cf5e08413fc157f31bc0b9d16249ce1db3931",
    "dense-f-float64/uniform/right":
        "ab9ef5989d4a7d997b33e21650db1ea3ed36949bc1dc90e7c289652a974ef03a",
}


@pytest.mark.parametrize("case", sorted(EXPECTED) or ["<none>"])
def test_operator_results_are_bitwise_unchanged(case):
    got = _computed()[case]
    assert got == EXPECTED[case], f"{case}: the result changed"


@pytest.mark.parametrize("case", [c[0] for c in gmr_cases()])
def test_fast_gmr_countsketch_is_the_formula_on_the_same_sketches(case):
    # fast_gmr with CountSketch draws S_C, then S_R, from the one generator
    # of rng; its sketches are our compiled loops, whose bits the digests above
    # guard.  The solve (eq. (3.3): two pseudo-inverses) runs in LAPACK and
    # BLAS, whose roundings depend on the kernels OpenBLAS picks (Haswell,
    # SkylakeX, ...): the result is compared with the formula on the same
    # sketches to a tolerance, never bit for bit.
    name, A, C, R = next(c for c in gmr_cases() if c[0] == case)
    m, n = A.shape
    X = sl.fast_gmr(A, C, R, sketch_size=(60, 50), rng=3).X
    gen = np.random.default_rng(3)
    S_C, S_R = sl.CountSketch(60, m, rng=gen), sl.CountSketch(50, n, rng=gen)
    want = (np.linalg.pinv(S_C @ C) @ np.asarray(sl.sketch_both(S_C, A, S_R))
            @ np.linalg.pinv(np.asarray(R @ S_R.T)))
    # S_C C (60 x 6) and R S_R^T (5 x 50) are well conditioned Gaussian-like
    # factors: a backward-stable solve agrees to far better than 1e-10
    np.testing.assert_allclose(X, want, rtol=1e-10, atol=1e-10 * np.abs(want).max())


_CACHE = {}


def _computed():
    if "ops" not in _CACHE:
        _CACHE["ops"] = compute_digests()
    return _CACHE["ops"]


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps({"EXPECTED": compute_digests()}, indent=1, sort_keys=True))
