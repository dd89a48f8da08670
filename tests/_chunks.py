"""A dask chunk loader that records every read, for the tests of the dask
fronts (one pass per product, one read per chunk, a killed worker): the
chunk at (i0, j0) appends the id of the reading process to the file
"<i0>-<j0>" in ``counter_dir`` (appends of a few bytes are atomic, so
processes may share the folder)."""

import itertools
import os
from pathlib import Path

import dask.array as da
import numpy as np
import scipy.sparse as sp


def chunk_content(i0, j0, h, w, fmt, seed):
    gen = np.random.default_rng([seed, i0, j0])
    if fmt == "dense":
        return gen.standard_normal((h, w))
    X = sp.random(h, w, density=0.05, format=fmt, random_state=gen)
    X.data -= 0.5
    return X


def counted_chunk(counter_dir, fmt, seed, block_info=None):
    (i0, i1), (j0, j1) = block_info[None]["array-location"]
    with open(Path(counter_dir) / f"{i0}-{j0}", "a") as fh:
        fh.write(f"{os.getpid()}\n")
    return chunk_content(i0, j0, i1 - i0, j1 - j0, fmt, seed)


def counted_matrix(counter_dir, chunks, fmt="csr", seed=7):
    """(dask array read through ``counted_chunk``, the same matrix in memory)."""
    meta = np.empty((0, 0)) if fmt == "dense" else sp.csr_matrix((0, 0))
    A = da.map_blocks(counted_chunk, chunks=chunks, dtype=np.float64, meta=meta,
                      counter_dir=str(counter_dir), fmt=fmt, seed=seed)
    rows = np.concatenate(([0], np.cumsum(A.chunks[0])))
    cols = np.concatenate(([0], np.cumsum(A.chunks[1])))
    grid = [[chunk_content(i0, j0, i1 - i0, j1 - j0, fmt, seed)
             for j0, j1 in itertools.pairwise(cols)] for i0, i1 in itertools.pairwise(rows)]
    X = np.block(grid) if fmt == "dense" else sp.bmat(grid, format=fmt)
    return A, X


def reads(counter_dir):
    """{chunk file name: [pid of each read]}."""
    return {p.name: p.read_text().split() for p in Path(counter_dir).iterdir()}
