"""
CUR of a term-document matrix
=============================

A CUR decomposition ``A ~ C U R`` keeps actual columns and rows of ``A``, so
its factors stay readable: for a term-document matrix they are documents and
terms.  Here a synthetic corpus (documents drawn from a few topics, word
frequencies following Zipf's law) is decomposed with :func:`sketchlab.cur`
at several numbers of columns and rows, beside the best rank-k error.
"""

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp

import sketchlab as sl

gen = np.random.default_rng(0)
n_terms, n_docs, n_topics = 2000, 800, 8
zipf = 1.0 / np.arange(1, n_terms + 1)
topics = [zipf[gen.permutation(n_terms)] for _ in range(n_topics)]
rows, cols, vals = [], [], []
for doc in range(n_docs):
    p = topics[doc % n_topics]
    words = gen.choice(n_terms, size=150, p=p / p.sum())
    terms, counts = np.unique(words, return_counts=True)
    rows += list(terms)
    cols += [doc] * terms.size
    vals += list(np.log1p(counts))
A = sp.csr_matrix((vals, (rows, cols)), shape=(n_terms, n_docs))  # terms x documents
print(f"{A.shape[0]} terms x {A.shape[1]} documents, {A.nnz} nonzeros")

k = n_topics
s = np.linalg.svd(A.toarray(), compute_uv=False)
best = np.sqrt(np.sum(s[k:] ** 2) / np.sum(s ** 2))

sizes = [10, 20, 40, 80]
fig, ax = plt.subplots(figsize=(6, 4))
for select in ["approx-leverage", "uniform", "deim"]:
    errors = [sl.cur(A, c, k=k, select=select, rng=1).error(A, relative=True) for c in sizes]
    ax.semilogx(sizes, errors, "o-", label=select)
    print(f"{select:16s} relative error with {sizes[-1]} columns and rows: {errors[-1]:.4f}")
ax.axhline(best, color="k", linestyle="--", label=f"best rank {k}")
ax.set_xlabel("columns and rows kept (c = r)")
ax.set_ylabel("‖A − C U R‖_F / ‖A‖_F")
ax.set_title("CUR of a synthetic term-document matrix")
ax.legend()
fig.tight_layout()

d = sl.cur(A, 40, k=k, rng=1)
print("first documents kept (columns):", np.sort(d.columns)[:10])
print("first terms kept (rows):", np.sort(d.rows)[:10])
plt.show()
