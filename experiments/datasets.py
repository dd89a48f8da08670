"""The paper's data sets: where they come from, where they are found, how they are read.

Where data is looked for: ``tests/_data.py`` (the one rule of the tests, the experiments
and the benchmarks): ``$SKETCHLAB_DATA`` when it is set, and then only there;
otherwise ``~/.cache/sketchlab`` (where downloads go), then ``../shared/datasets`` next to
the checkout.

A registry entry is found under one of its file names (the first one
present wins), in each of these directories or in a sub-directory named
after the data set; Fashion-MNIST is also looked for where Debian's
``dataset-fashion-mnist`` package installs it.  When none is present and the
entry has a public URL, :func:`fetch` downloads it into :func:`data_home`,
with a progress bar, checking its size and checksum, and writing it
atomically.  Files are LIBSVM text (plain, ``.xz``, ``.bz2`` or
``.gz``), read with :func:`sklearn.datasets.load_svmlight_file`, or IDX
(``.gz`` or plain), the format of (Fashion-)MNIST.

Stand-ins.  Five of the paper's data sets cannot be had on an offline
machine.  Two real data sets stand in for them and are always named as
stand-ins: ``debian-tfidf`` (a TF-IDF matrix of Debian package descriptions,
as sparse as rcv1) for rcv1, real-sim and news20, and ``fashion-mnist`` for
mnist.

The LIBSVM URLs are those of the LIBSVM data page; they could not be reached
from the machine this package was built on, so only the checksums marked as
such below were verified (against the copies of ``../shared/datasets``, see
its SOURCES.md).
"""

import bz2
import functools
import gzip
import hashlib
import http.client
import logging
import lzma
import os
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp

# the one data-directory rule of the tests, the experiments and the benchmarks
from tests._data import data_dirs, data_home, describe_dirs, find_file  # noqa: F401 (re-exported)

logger = logging.getLogger("experiments")

LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets"
FASHION = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com"
# Where Debian's dataset-fashion-mnist package installs the original IDX files.
SYSTEM_FASHION_DIR = Path("/usr/share/datasets/fashion-mnist")
# A LIBSVM file given by path is treated as dense above this fraction of nonzeros.
DENSE_THRESHOLD = 0.1


class DatasetError(RuntimeError):
    """A data set is missing, unreadable, or differs from its registry entry."""


class NoDataError(DatasetError):
    """None of a sweep's data sets is present (the message says where it looked)."""


class DownloadError(DatasetError):
    """A download failed (offline, server error, size or checksum mismatch)."""


@dataclass(frozen=True)
class DataFile:
    """One copy of a data set's file.

    ``sha256`` (or ``md5`` where the publisher gives only that) and ``size``
    describe this exact file; they are checked after a download and by
    :func:`verify`.
    """

    name: str
    url: str | None = None
    sha256: str | None = None
    md5: str | None = None
    size: int | None = None


@dataclass(frozen=True)
class Dataset:
    """A registry entry (or a file given by path, with ``path`` set).

    ``shape`` and ``nnz`` are those of the matrix as read (rows are samples);
    ``paper_shape`` is what the paper's tables print when it differs.
    ``dense`` selects Gaussian sketches (dense) or CountSketch (sparse) in the
    GMR and SVD sweeps.  ``gamma`` is the paper's RBF scale sigma, used as
    ``K_ij = exp(-gamma ||x_i - x_j||^2)``.  ``stand_in_for`` names the paper
    data sets this one replaces; ``stand_in`` the entry used when this one is
    absent.
    """

    name: str
    files: tuple
    fmt: str = "libsvm"
    shape: tuple | None = None
    nnz: int | None = None
    dense: bool = True
    gamma: float | None = None
    paper_shape: tuple | None = None
    stand_in_for: tuple = ()
    stand_in: str | None = None
    extra_dirs: tuple = ()
    note: str = ""
    path: Path | None = None

    @property
    def label(self):
        """Display name; a stand-in says what it stands in for."""
        if self.stand_in_for:
            return f"{self.name} (stand-in for {', '.join(self.stand_in_for)})"
        return self.name

    @property
    def downloadable(self):
        return any(f.url for f in self.files)


def _libsvm(name, files, **kwargs):
    return Dataset(name=name, files=tuple(files), fmt="libsvm", **kwargs)


REGISTRY = {
    d.name: d
    for d in [
        # -- kernel data sets (the paper's Table 6); gamma is the paper's sigma
        _libsvm(
            "dna",
            [
                DataFile(
                    "dna.scale.xz",
                    sha256="64fe3a2802edd32bba8ef026abeda3900f290b95e91bc13240026be7518e9908",
                    size=51888,
                ),
                # the LIBSVM file itself (SOURCES.md: a byte-for-byte copy)
                DataFile(
                    "dna.scale",
                    url=f"{LIBSVM}/multiclass/dna.scale",
                    sha256="f74937ccb8908628058ae1819d4d46c960ce64383f622c994d4f2e6e21026494",
                ),
            ],
            shape=(2000, 180),
            nnz=91233,
            gamma=0.04,
        ),
        _libsvm(
            "splice",
            [
                DataFile(
                    "splice.xz",
                    sha256="d81a7d614f30603d0298802ebddaafc9910c796e20efe685709fcb7b7858c819",
                    size=20628,
                ),
                DataFile("splice", url=f"{LIBSVM}/binary/splice"),
            ],
            shape=(1000, 60),
            nnz=60000,
            gamma=0.02,
        ),
        _libsvm(
            "mushrooms",
            [
                DataFile(
                    "mushrooms.xz",
                    sha256="70a844081f1c679891909f2018b85a6f2869b1adf8452de6e79b13eb45288f4f",
                    size=26536,
                ),
                DataFile("mushrooms", url=f"{LIBSVM}/binary/mushrooms"),
            ],
            shape=(8124, 112),
            nnz=170604,
            gamma=0.1,
            paper_shape=(8142, 112),
            note="the paper's table prints 8,142 rows; the LIBSVM file has 8,124",
        ),
        _libsvm(
            "madelon",
            [
                DataFile(
                    "madelon.xz",
                    sha256="c30392f1165eef7c11d41d05cf41548c8157bbc2a013c768498d7dc837d6d414",
                    size=1163884,
                ),
                DataFile("madelon", url=f"{LIBSVM}/binary/madelon"),
            ],
            shape=(2000, 500),
            nnz=999999,
            gamma=3.5e-6,
        ),
        _libsvm(
            "a5a",
            [DataFile("a5a.xz"), DataFile("a5a", url=f"{LIBSVM}/binary/a5a")],
            shape=(6414, 123),
            gamma=0.3,
        ),
        _libsvm(
            "gisette",
            [
                DataFile("gisette_scale.xz"),
                DataFile("gisette_scale.bz2", url=f"{LIBSVM}/binary/gisette_scale.bz2"),
            ],
            shape=(6000, 5000),
            gamma=1.5e-3,
            paper_shape=(5000, 6000),
            note="the paper's GMR table lists it transposed (5,000 x 6,000)",
        ),
        # -- GMR / SVD data sets (the paper's Table 5)
        _libsvm(
            "mnist",
            [DataFile("mnist.xz"), DataFile("mnist.bz2", url=f"{LIBSVM}/multiclass/mnist.bz2")],
            shape=(60000, 780),
            stand_in="fashion-mnist",
        ),
        _libsvm(
            "svhn",
            [DataFile("svhn.xz"), DataFile("svhn.bz2", url=f"{LIBSVM}/multiclass/svhn.bz2")],
            shape=(73257, 3072),
            paper_shape=(19082, 3072),
            note="the paper prints 19,082 rows; LIBSVM's svhn has 73,257",
        ),
        _libsvm(
            "rcv1",
            [
                DataFile("rcv1_train.binary.xz"),
                DataFile("rcv1_train.binary.bz2", url=f"{LIBSVM}/binary/rcv1_train.binary.bz2"),
            ],
            shape=(20242, 47236),
            dense=False,
            paper_shape=(20242, 50236),
            stand_in="debian-tfidf",
        ),
        _libsvm(
            "real-sim",
            [
                DataFile("real-sim.xz"),
                DataFile("real-sim.bz2", url=f"{LIBSVM}/binary/real-sim.bz2"),
            ],
            shape=(72309, 20958),
            dense=False,
            stand_in="debian-tfidf",
        ),
        _libsvm(
            "news20",
            [
                DataFile("news20.scale.xz"),
                DataFile("news20.scale.bz2", url=f"{LIBSVM}/multiclass/news20.scale.bz2"),
            ],
            shape=(15935, 62061),
            dense=False,
            stand_in="debian-tfidf",
        ),
        # -- stand-ins
        _libsvm(
            "debian-tfidf",
            [
                DataFile(
                    "debian-tfidf.svm.xz",
                    sha256="f76747371f09ae9a8aee29d0a7687fa751a307f722588a64b625a3fdc5095cdd",
                    size=18056684,
                )
            ],
            shape=(52396, 25252),
            nnz=2072144,
            dense=False,
            stand_in_for=("rcv1", "real-sim", "news20"),
            note="TF-IDF of Debian 12 package descriptions; no public URL (built for this "
            "project, see ../shared/datasets/SOURCES.md)",
        ),
        Dataset(
            "fashion-mnist",
            files=(
                DataFile(
                    "train-images-idx3-ubyte.gz",
                    url=f"{FASHION}/train-images-idx3-ubyte.gz",
                    md5="8d4fb7e6c68d591d4c3dfef9ec88bf0d",
                ),
            ),
            fmt="idx",
            shape=(60000, 784),
            stand_in_for=("mnist",),
            extra_dirs=(SYSTEM_FASHION_DIR,),
            note="the 60,000 training images; Debian's dataset-fashion-mnist installs them "
            "in /usr/share/datasets/fashion-mnist (re-compressed, so md5 differs)",
        ),
    ]
}
ALIASES = {
    "dna.scale": "dna",
    "gisette_scale": "gisette",
    "real_sim": "real-sim",
    "fashion": "fashion-mnist",
}

# The data sets of each experiment of the paper, in the order of its figures.
GMR_DATASETS = ("gisette", "mnist", "madelon", "rcv1", "real-sim", "news20", "svhn")
KERNEL_DATASETS = ("dna", "gisette", "madelon", "mushrooms", "splice", "a5a")


def no_data_message(sweep, names):
    """Why sweep ``sweep`` has nothing to run: where it looked, and how to point it at data."""
    entries = [get(n) for n in names]
    stand_ins = sorted({e.stand_in for e in entries if e.stand_in})
    system = sorted({str(d) for e in entries + [REGISTRY[s] for s in stand_ins]
                     for d in e.extra_dirs})  # fmt: skip
    wanted = ", ".join(names)
    if stand_ins:
        wanted += f" (or the stand-ins {', '.join(stand_ins)})"
    where = describe_dirs() + (f", and {', '.join(system)}" if system else "")
    return (
        f"{sweep}: no data set found. Looked for {wanted} in {where}. Set SKETCHLAB_DATA to "
        "the directory that holds the files (e.g. `SKETCHLAB_DATA=/path/to/datasets python -m "
        "experiments reproduce`), download them (`python -m experiments download NAME`, or "
        "--download), or pass your own file with --dataset PATH; `python -m experiments "
        "datasets` lists the file names each data set may have."
    )


def _search_dirs(dataset):
    dirs = []
    for home in data_dirs():
        dirs += [home, home / dataset.name]
    return [*dirs, *dataset.extra_dirs]


def get(spec, *, gamma=None, dense=None):
    """The registry entry named ``spec``, or an entry for the file at path ``spec``.

    Parameters
    ----------
    spec : str or os.PathLike
        A registry name (see ``REGISTRY``) or the path of a LIBSVM or IDX file.
    gamma : float, optional
        RBF scale; overrides the registry's (required for kernel sweeps on a path).
    dense : bool, optional
        Force dense (Gaussian sketches) or sparse (CountSketch) handling; by
        default a file given by path is dense when more than 10% of its
        entries are nonzero.

    Raises
    ------
    DatasetError
        ``spec`` is neither a registry name nor an existing file.
    """
    key = ALIASES.get(str(spec), str(spec))
    if key in REGISTRY:
        entry = REGISTRY[key]
        changes = {}
        if gamma is not None:
            changes["gamma"] = float(gamma)
        if dense is not None:
            changes["dense"] = bool(dense)
        return replace(entry, **changes) if changes else entry
    path = Path(spec).expanduser()
    if not path.is_file():
        raise DatasetError(
            f"dataset must be one of {sorted(REGISTRY)} or the path of a LIBSVM/IDX file, "
            f"got {str(spec)!r} (no such file)"
        )
    fmt = "idx" if "idx" in path.name and "ubyte" in path.name else "libsvm"
    name = path.name
    for suffix in (".gz", ".xz", ".bz2", ".svm", ".txt", ".libsvm"):
        name = name.removesuffix(suffix)
    return Dataset(
        name=name,
        files=(DataFile(path.name),),
        fmt=fmt,
        dense=True if (dense is None and fmt == "idx") else dense,
        gamma=None if gamma is None else float(gamma),
        path=path.resolve(),
    )


def locate(dataset):
    """Path of the first copy of ``dataset`` present on disk, or None."""
    if dataset.path is not None:
        return dataset.path if dataset.path.is_file() else None
    for f in dataset.files:
        for d in _search_dirs(dataset):
            p = d / f.name
            if p.is_file():
                return p
    return None


def fetch(dataset, *, progress=True, timeout=60.0):
    """Path of ``dataset`` on disk, downloading it into :func:`data_home` if absent.

    Raises
    ------
    DatasetError
        Not present and no public URL.
    DownloadError
        The download failed (offline, HTTP error, size or checksum mismatch);
        nothing is left behind in the data directory.
    """
    path = locate(dataset)
    if path is not None:
        return path
    remote = [f for f in dataset.files if f.url]
    names = ", ".join(f.name for f in dataset.files)
    if not remote:
        raise DatasetError(
            f"dataset {dataset.name!r} not found: looked for {names} in "
            f"{', '.join(str(d) for d in _search_dirs(dataset))}; it has no public URL, "
            "so put the file in one of these directories by hand (or set SKETCHLAB_DATA to "
            "the directory that holds it)"
        )
    f = remote[0]
    dest = data_home() / f.name
    download(f.url, dest, sha256=f.sha256, md5=f.md5, size=f.size, progress=progress,
             timeout=timeout)  # fmt: skip
    return dest


def download(url, dest, *, sha256=None, md5=None, size=None, progress=True, timeout=60.0):
    """Download ``url`` to ``dest`` atomically, checking its size and checksum.

    The bytes go to a temporary file next to ``dest`` that is renamed onto
    ``dest`` (``os.replace``) only once complete and checked, so an
    interrupted or wrong download never leaves a partial file under the
    final name.

    Parameters
    ----------
    url : str
    dest : str or os.PathLike
    sha256, md5 : str, optional
        Expected hex digest of the file.
    size : int, optional
        Expected size in bytes (also checked against the server's Content-Length).
    progress : bool
        Show a tqdm progress bar (on stderr).
    timeout : float
        Seconds to wait for the server at each step.

    Returns
    -------
    Path
        ``dest``.

    Raises
    ------
    DownloadError
        The server cannot be reached (offline), answers with an error, closes
        the connection early, or the file's size or checksum differs.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    logger.info("downloading %s to %s", url, dest)
    hashes = {"sha256": hashlib.sha256(), "md5": hashlib.md5()}
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            got, length = _stream(url, out, hashes, dest.name, progress, timeout)
        if length is not None and got != length:
            raise DownloadError(
                f"download of {url} interrupted: got {got} of {length} bytes "
                "(the server closed the connection early)"
            )
        if size is not None and got != size:
            raise DownloadError(f"download of {url}: expected {size} bytes, got {got}")
        for algo, want in (("sha256", sha256), ("md5", md5)):
            if want is not None and hashes[algo].hexdigest() != want.lower():
                raise DownloadError(
                    f"download of {url}: {algo} mismatch, expected {want}, "
                    f"got {hashes[algo].hexdigest()} (corrupted or a different version)"
                )
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    logger.info("downloaded %s (%d bytes, %s)", dest, got, _checked(sha256, md5, size))
    return dest


def _stream(url, out, hashes, desc, progress, timeout):
    """Copy the body of ``url`` into ``out``; returns (bytes read, Content-Length)."""
    from tqdm.auto import tqdm

    try:
        response = urllib.request.urlopen(url, timeout=timeout)
    except urllib.error.HTTPError as exc:
        raise DownloadError(f"download of {url} failed: HTTP {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DownloadError(
            f"cannot download {url}: {reason}. This machine seems to be offline or the "
            "server unreachable; fetch the file elsewhere and put it in the data directory "
            f"{data_home()} (or point SKETCHLAB_DATA at a directory that has it)"
        ) from exc
    with response:
        length = response.headers.get("Content-Length")
        length = int(length) if length is not None else None
        got = 0
        with tqdm(total=length, unit="B", unit_scale=True, desc=desc, disable=not progress) as bar:
            while True:
                try:
                    chunk = response.read(1 << 16)
                except (OSError, http.client.HTTPException) as exc:
                    raise DownloadError(
                        f"download of {url} interrupted after {got} bytes: {exc!r}"
                    ) from exc
                if not chunk:
                    break
                out.write(chunk)
                for h in hashes.values():
                    h.update(chunk)
                got += len(chunk)
                bar.update(len(chunk))
    return got, length


def _checked(sha256, md5, size):
    done = [n for n, v in (("sha256", sha256), ("md5", md5), ("size", size)) if v is not None]
    return "checked: " + ", ".join(done) if done else "no checksum known"


def file_digest(path, algo="sha256"):
    """Hex digest of a file, read in 1 MiB chunks."""
    h = hashlib.new(algo)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def verify(dataset):
    """Check the copy on disk against its registry checksum.

    Returns
    -------
    (path, status) : (Path or None, str)
        ``status`` is "missing", "ok (sha256)", "ok (md5)", "unchecked (no
        checksum known for this copy)" or "DIFFERS from the expected sha256".
    """
    path = locate(dataset)
    if path is None:
        return None, "missing"
    if any(path.parent == Path(d) for d in dataset.extra_dirs):
        return path, "unchecked (a system package's copy; its bytes differ from the download's)"
    entry = next((f for f in dataset.files if f.name == path.name), None)
    if entry is None or (entry.sha256 is None and entry.md5 is None):
        return path, "unchecked (no checksum known for this copy)"
    algo, want = ("sha256", entry.sha256) if entry.sha256 else ("md5", entry.md5)
    if file_digest(path, algo) == want:
        return path, f"ok ({algo})"
    return path, f"DIFFERS from the expected {algo} (another version or re-compressed copy)"


def _open(path):
    name = str(path)
    if name.endswith(".xz"):
        return lzma.open(path, "rb")
    if name.endswith(".bz2"):
        return bz2.open(path, "rb")
    if name.endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


def read_libsvm(path, n_features=None):
    """Read a LIBSVM/svmlight text file (plain, .xz, .bz2 or .gz).

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,)
    """
    from sklearn.datasets import load_svmlight_file

    try:
        with _open(path) as fh:
            X, y = load_svmlight_file(fh, n_features=n_features)
    except (ValueError, OSError, EOFError, lzma.LZMAError) as exc:
        raise DatasetError(f"cannot read {path} as LIBSVM text: {exc}") from exc
    return X.tocsr(), y


_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path):
    """Read an IDX file (the (Fashion-)MNIST format), plain or .gz.

    Returns
    -------
    ndarray
        Of the shape stored in the header, native byte order.
    """
    with _open(path) as fh:
        data = fh.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _IDX_DTYPES:
        raise DatasetError(f"{path} is not an IDX file (bad magic number {data[:4]!r})")
    dtype, ndim = np.dtype(_IDX_DTYPES[data[2]]), data[3]
    header = 4 + 4 * ndim
    shape = tuple(int(v) for v in np.frombuffer(data[4:header], dtype=">u4"))
    count = int(np.prod(shape))
    if len(data) != header + count * dtype.itemsize:
        raise DatasetError(
            f"{path}: IDX header says shape {shape} ({count * dtype.itemsize} bytes of data), "
            f"the file holds {len(data) - header} (truncated?)"
        )
    arr = np.frombuffer(data, dtype=dtype, count=count, offset=header).reshape(shape)
    return arr.astype(dtype.newbyteorder("="))


@dataclass(frozen=True)
class Data:
    """A loaded data set: ``X`` (rows are samples), dense ndarray or CSR."""

    dataset: Dataset
    X: object
    path: Path

    @property
    def dense(self):
        return not sp.issparse(self.X)


def load(dataset, *, download=True, progress=True):
    """Read ``dataset`` (a :class:`Dataset` or a spec for :func:`get`).

    Dense data sets come back as C-ordered float64 arrays, sparse ones as
    float64 CSR.  A registry entry's shape is checked.

    Raises
    ------
    DatasetError
        Missing (and not downloadable, or ``download=False``), unreadable, or
        not of the registry's shape.
    """
    if not isinstance(dataset, Dataset):
        dataset = get(dataset)
    path = fetch(dataset, progress=progress) if download else locate(dataset)
    if path is None:
        raise DatasetError(f"dataset {dataset.name!r} not found in {describe_dirs()}")
    if dataset.fmt == "idx":
        arr = read_idx(path)
        X = arr.reshape(arr.shape[0], -1).astype(np.float64)
        X = X if dataset.dense is not False else sp.csr_matrix(X)
    else:
        n_features = dataset.shape[1] if dataset.shape else None
        X, _ = read_libsvm(path, n_features=n_features)
        dense = dataset.dense
        if dataset.path is not None and dense is None:
            dense = X.nnz > DENSE_THRESHOLD * X.shape[0] * X.shape[1]
        if dense:
            X = np.ascontiguousarray(X.toarray())
    if dataset.shape is not None and tuple(X.shape) != tuple(dataset.shape):
        raise DatasetError(
            f"{path}: read a {X.shape[0]} x {X.shape[1]} matrix, the registry expects "
            f"{dataset.shape[0]} x {dataset.shape[1]} (a different version of {dataset.name}?)"
        )
    if dataset.path is not None and dataset.dense is None:
        dataset = replace(dataset, dense=not sp.issparse(X))
    return Data(dataset=dataset, X=X, path=path)


@functools.lru_cache(maxsize=6)
def load_cached(spec, *, gamma=None, dense=None):
    """:func:`load` of ``get(spec, gamma=gamma, dense=dense)``, remembered, so that
    the sweeps of one process read each file once."""
    return load(get(spec, gamma=gamma, dense=dense))


def resolve(names):
    """Split the paper's data set names into those to run and those missing.

    Each name is replaced by its stand-in when it is absent and the stand-in
    is present (a stand-in shared by several names runs once).

    Returns
    -------
    run : list of Dataset
    missing : list of str
        Paper data sets that are neither present nor replaced.
    replaced : dict
        Paper data set name -> the stand-in run in its place.
    """
    run, missing, replaced, seen = [], [], {}, set()
    for name in names:
        entry = get(name)
        chosen = entry if locate(entry) is not None else None
        if chosen is None and entry.stand_in and locate(REGISTRY[entry.stand_in]) is not None:
            chosen = REGISTRY[entry.stand_in]
            replaced[name] = chosen.name
        if chosen is None:
            missing.append(name)
        elif chosen.name not in seen:
            seen.add(chosen.name)
            run.append(chosen)
    return run, missing, replaced
