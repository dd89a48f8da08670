"""experiments.datasets: registry, readers, and the downloader against a local HTTP server."""

import bz2
import gzip
import hashlib
import http.server
import lzma
import os
import socket
import struct
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from tests import _data as datadirs  # the one data-directory rule

from experiments import datasets as ds


@pytest.fixture
def data_home(tmp_path, monkeypatch):
    """An empty $SKETCHLAB_DATA, and no system copy of Fashion-MNIST."""
    home = tmp_path / "data"
    home.mkdir()
    monkeypatch.setenv("SKETCHLAB_DATA", str(home))
    fashion = replace(ds.REGISTRY["fashion-mnist"], extra_dirs=())
    monkeypatch.setitem(ds.REGISTRY, "fashion-mnist", fashion)
    ds.load_cached.cache_clear()
    yield home
    ds.load_cached.cache_clear()


def _matrix(rng, m=30, n=12, density=0.3):
    A = sp.random(m, n, density=density, format="csr", random_state=rng)
    A.data = np.round(A.data * 100) / 8  # exactly representable in text
    return A


def _write_libsvm(path, A, y=None):
    y = np.arange(A.shape[0]) % 3 if y is None else y
    raw = path.with_suffix(".tmp")
    dump_svmlight_file(A, y, str(raw), zero_based=False)
    data = raw.read_bytes()
    raw.unlink()
    opener = {".xz": lzma.open, ".bz2": bz2.open, ".gz": gzip.open}.get(path.suffix, open)
    with opener(path, "wb") as fh:
        fh.write(data)
    return path


def _write_idx(path, arr, code=0x08):
    header = bytes([0, 0, code, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape)
    dtype = {0x08: ">u1", 0x0B: ">i2", 0x0D: ">f4", 0x0E: ">f8"}[code]
    payload = header + arr.astype(dtype).tobytes()
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wb") as fh:
        fh.write(payload)
    return path


# ---- readers -------------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["", ".xz", ".bz2", ".gz"])
def test_read_libsvm_compressions(tmp_path, suffix):
    A = _matrix(0)
    path = _write_libsvm(tmp_path / f"m.svm{suffix}", A)
    X, y = ds.read_libsvm(path, n_features=A.shape[1])
    assert X.format == "csr"
    np.testing.assert_array_equal(X.toarray(), A.toarray())
    np.testing.assert_array_equal(y, np.arange(A.shape[0]) % 3)


def test_read_libsvm_garbage(tmp_path):
    path = tmp_path / "bad.svm"
    path.write_text("1 a:b c\n")
    with pytest.raises(ds.DatasetError, match="cannot read"):
        ds.read_libsvm(path)


@pytest.mark.parametrize("code", [0x08, 0x0B, 0x0D, 0x0E])
@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_read_idx(tmp_path, code, suffix):
    rng = np.random.default_rng(1)
    arr = rng.integers(0, 120, size=(7, 4, 3))
    path = _write_idx(tmp_path / f"x-idx3-ubyte{suffix}", arr, code)
    out = ds.read_idx(path)
    assert out.shape == (7, 4, 3)
    assert out.dtype.isnative
    np.testing.assert_array_equal(out, arr)


def test_read_idx_errors(tmp_path):
    bad = tmp_path / "bad-idx1-ubyte"
    bad.write_bytes(b"\x01\x02\x08\x01" + b"\x00" * 8)
    with pytest.raises(ds.DatasetError, match="not an IDX file"):
        ds.read_idx(bad)
    short = tmp_path / "short-idx1-ubyte"
    short.write_bytes(bytes([0, 0, 8, 1]) + struct.pack(">I", 10) + b"\x00" * 4)
    with pytest.raises(ds.DatasetError, match="truncated"):
        ds.read_idx(short)


# ---- the data directories: one rule for the experiments, the tests and the benchmarks ----


def test_data_dirs_order(tmp_path, monkeypatch):
    monkeypatch.delenv("SKETCHLAB_DATA", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    cache = tmp_path / "home" / ".cache" / "sketchlab"
    assert ds.data_dirs() == [cache, datadirs.SHARED_DATA]
    assert ds.data_home() == cache  # downloads go to the first
    assert datadirs.SHARED_DATA.parent.parent == Path(ds.__file__).resolve().parents[2]
    assert "$SKETCHLAB_DATA is not set" in ds.describe_dirs()
    # $SKETCHLAB_DATA replaces the whole list
    monkeypatch.setenv("SKETCHLAB_DATA", str(tmp_path / "mine"))
    assert ds.data_dirs() == [tmp_path / "mine"]
    assert ds.data_home() == tmp_path / "mine"


def test_find_file_first_directory_wins(tmp_path, monkeypatch):
    monkeypatch.delenv("SKETCHLAB_DATA", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    shared = tmp_path / "shared"
    monkeypatch.setattr(datadirs, "SHARED_DATA", shared)
    cache = tmp_path / ".cache" / "sketchlab"
    shared.mkdir()
    (shared / "x.svm").write_text("1 1:1\n")
    assert ds.find_file("x.svm") == shared / "x.svm"
    cache.mkdir(parents=True)
    (cache / "x.svm").write_text("1 1:2\n")
    assert ds.find_file("x.svm") == cache / "x.svm"
    assert ds.find_file("absent.svm") is None
    # registry entries follow the same order
    (shared / "splice.xz").write_bytes(b"")
    assert ds.locate(ds.REGISTRY["splice"]) == shared / "splice.xz"


def test_tests_and_benchmarks_use_the_same_rule(tmp_path):
    """One rule, tests/_data.py: the experiments and the library's tests import it, and the
    asv suites (and compare.py, through them) load that file by its path."""
    from tests import conftest

    assert conftest.find_file is datadirs.find_file is ds.find_file
    assert conftest.describe_dirs is datadirs.describe_dirs is ds.describe_dirs
    repo = Path(datadirs.__file__).resolve().parents[1]
    probe = ("import sys; sys.path.insert(0, 'asv_benchmarks'); from benchmarks import common; "
             "print(common.DATA_RULE.__file__); print(common.DATA_RULE.describe_dirs())")
    env = {**os.environ, "SKETCHLAB_DATA": str(tmp_path / "mine")}
    env.pop("PYTHONPATH", None)
    out = subprocess.run([sys.executable, "-c", probe], cwd=repo, env=env, capture_output=True,
                         text=True, timeout=300, check=True).stdout.splitlines()
    assert Path(out[0]).resolve() == Path(datadirs.__file__).resolve()
    assert out[1] == f"{tmp_path / 'mine'} ($SKETCHLAB_DATA)"


def test_no_data_message_says_where_and_how(data_home):
    text = ds.no_data_message("gmr", ds.GMR_DATASETS)
    assert str(data_home) in text and "($SKETCHLAB_DATA)" in text
    assert "gisette" in text and "stand-ins debian-tfidf, fashion-mnist" in text
    assert "Set SKETCHLAB_DATA" in text and "--dataset PATH" in text


# ---- registry, lookup, loading -----------------------------------------------------


def test_registry_entries_are_consistent():
    for name, entry in ds.REGISTRY.items():
        assert entry.name == name
        assert entry.fmt in ("libsvm", "idx")
        assert entry.files, name
        if entry.stand_in:
            assert name in ds.REGISTRY[entry.stand_in].stand_in_for
    # the paper's kernel scales, and the two stand-ins named as such
    assert {n: ds.REGISTRY[n].gamma for n in ds.KERNEL_DATASETS} == {
        "dna": 0.04, "gisette": 1.5e-3, "madelon": 3.5e-6, "mushrooms": 0.1, "splice": 0.02,
        "a5a": 0.3,
    }  # fmt: skip
    assert "stand-in for rcv1, real-sim, news20" in ds.REGISTRY["debian-tfidf"].label
    assert "stand-in for mnist" in ds.REGISTRY["fashion-mnist"].label
    assert not ds.REGISTRY["debian-tfidf"].downloadable  # no public URL


def test_get_names_aliases_paths(tmp_path):
    assert ds.get("dna.scale") is ds.REGISTRY["dna"]
    assert ds.get("splice", gamma=0.5).gamma == 0.5
    assert ds.get("madelon", dense=False).dense is False
    path = _write_libsvm(tmp_path / "mine.svm.bz2", _matrix(2))
    entry = ds.get(str(path), gamma=2.0)
    assert (entry.name, entry.fmt, entry.gamma) == ("mine", "libsvm", 2.0)
    assert entry.path == path.resolve()
    idx = _write_idx(tmp_path / "imgs-idx3-ubyte.gz", np.zeros((3, 2, 2)))
    assert ds.get(idx).fmt == "idx" and ds.get(idx).dense is True
    with pytest.raises(ds.DatasetError, match="no such file"):
        ds.get("not-a-dataset")


def test_locate_and_resolve_stand_ins(data_home):
    assert ds.locate(ds.REGISTRY["dna"]) is None
    (data_home / "dna.scale").write_text("1 1:1\n")
    (data_home / "debian-tfidf.svm.xz").write_bytes(b"")
    assert ds.locate(ds.REGISTRY["dna"]) == data_home / "dna.scale"
    run, missing, replaced = ds.resolve(ds.GMR_DATASETS)
    assert [d.name for d in run] == ["debian-tfidf"]  # once, for rcv1, real-sim and news20
    assert missing == ["gisette", "mnist", "madelon", "svhn"]
    assert replaced == dict.fromkeys(["rcv1", "real-sim", "news20"], "debian-tfidf")
    run, missing, replaced = ds.resolve(ds.KERNEL_DATASETS)
    assert [d.name for d in run] == ["dna"] and replaced == {}


def test_load_dense_sparse_and_shape_check(data_home, tmp_path):
    A = _matrix(3, m=40, n=9, density=0.5)
    path = _write_libsvm(tmp_path / "x.svm.xz", A)
    data = ds.load(path)  # auto: 50% nonzeros -> dense
    assert data.dense and data.dataset.dense is True
    np.testing.assert_array_equal(data.X, A.toarray())
    sparse = ds.load(ds.get(path, dense=False))
    assert sp.issparse(sparse.X) and not sparse.dense
    # a registry file of the wrong shape is refused
    _write_libsvm(data_home / "splice.xz", A)
    with pytest.raises(ds.DatasetError, match="registry expects 1000 x 60"):
        ds.load("splice")
    # absent, no URL, no download
    with pytest.raises(ds.DatasetError, match="no public URL"):
        ds.load("debian-tfidf")


def test_load_idx(data_home, tmp_path):
    arr = np.random.default_rng(4).integers(0, 256, size=(6, 5, 5))
    data = ds.load(_write_idx(tmp_path / "t-idx3-ubyte.gz", arr))
    assert data.X.shape == (6, 25) and data.X.dtype == np.float64
    np.testing.assert_array_equal(data.X, arr.reshape(6, 25))


def test_verify(data_home):
    entry = ds.REGISTRY["splice"]
    assert ds.verify(entry) == (None, "missing")
    (data_home / "splice.xz").write_bytes(b"not the file")
    assert "DIFFERS" in ds.verify(entry)[1]
    (data_home / "splice.xz").unlink()
    (data_home / "splice").write_text("1 1:1\n")
    assert ds.verify(entry)[1].startswith("unchecked")
    payload = b"hello"
    digest = hashlib.sha256(payload).hexdigest()
    custom = replace(entry, files=(ds.DataFile("h.txt", sha256=digest),))
    (data_home / "h.txt").write_bytes(payload)
    assert ds.verify(custom) == (data_home / "h.txt", "ok (sha256)")


# ---- downloader ------------------------------------------------------------------

BODY = bytes(range(256)) * 600  # 153,600 bytes: several read chunks


class _Handler(http.server.BaseHTTPRequestHandler):
    requests = []

    def do_GET(self):  # noqa: N802 (http.server API)
        _Handler.requests.append(self.path)
        if self.path.startswith("/ok"):
            self.send_response(200)
            self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            self.wfile.write(BODY)
        elif self.path.startswith("/short"):
            # announces the whole body, sends a third, then drops the connection
            self.send_response(200)
            self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            self.wfile.write(BODY[: len(BODY) // 3])
            self.wfile.flush()
            self.close_connection = True
        else:
            self.send_error(404, "no such file")

    def log_message(self, *args):
        pass


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    for var in ("http_proxy", "HTTP_PROXY"):
        monkeypatch.delenv(var, raising=False)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    _Handler.requests = []
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _leftovers(folder):
    return sorted(p.name for p in Path(folder).iterdir())


def test_download_success(server, tmp_path):
    dest = tmp_path / "sub" / "file.bin"
    sha = hashlib.sha256(BODY).hexdigest()
    md5 = hashlib.md5(BODY).hexdigest()
    out = ds.download(f"{server}/ok", dest, sha256=sha, md5=md5, size=len(BODY), progress=False)
    assert out == dest and dest.read_bytes() == BODY
    assert _leftovers(dest.parent) == ["file.bin"]  # no temporary file left


def test_download_checksum_mismatch(server, tmp_path):
    dest = tmp_path / "file.bin"
    with pytest.raises(ds.DownloadError, match="sha256 mismatch"):
        ds.download(f"{server}/ok", dest, sha256="0" * 64, progress=False)
    with pytest.raises(ds.DownloadError, match="md5 mismatch"):
        ds.download(f"{server}/ok", dest, md5="0" * 32, progress=False)
    with pytest.raises(ds.DownloadError, match="expected 5 bytes"):
        ds.download(f"{server}/ok", dest, size=5, progress=False)
    assert _leftovers(tmp_path) == []


def test_download_interrupted(server, tmp_path):
    dest = tmp_path / "file.bin"
    (tmp_path / "keep.bin").write_bytes(b"another file, untouched")
    with pytest.raises(ds.DownloadError, match=f"got {len(BODY) // 3} of {len(BODY)} bytes"):
        ds.download(f"{server}/short", dest, progress=False)
    assert _leftovers(tmp_path) == ["keep.bin"]


def test_download_http_error(server, tmp_path):
    with pytest.raises(ds.DownloadError, match="HTTP 404"):
        ds.download(f"{server}/missing", tmp_path / "f", progress=False)
    assert _leftovers(tmp_path) == []


def test_download_offline(tmp_path):
    with socket.socket() as sock:  # a port nobody listens on: connection refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ds.DownloadError, match="offline"):
        ds.download(f"http://127.0.0.1:{port}/ok", tmp_path / "f", progress=False, timeout=5)
    assert _leftovers(tmp_path) == []


def test_fetch_downloads_once_into_data_home(server, data_home):
    entry = ds.Dataset(
        "served", files=(ds.DataFile("served.svm", url=f"{server}/ok",
                                     sha256=hashlib.sha256(BODY).hexdigest()),)  # fmt: skip
    )
    assert ds.fetch(entry, progress=False) == data_home / "served.svm"
    assert ds.fetch(entry, progress=False) == data_home / "served.svm"
    assert _Handler.requests == ["/ok"]
    assert (data_home / "served.svm").read_bytes() == BODY


def test_fetch_offline_registry_entry(data_home, monkeypatch):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    remote = ds.DataFile("splice", url=f"http://127.0.0.1:{port}/splice")
    entry = replace(ds.REGISTRY["splice"], files=(remote,))
    with pytest.raises(ds.DownloadError, match="put it in the data directory"):
        ds.load(entry)
    assert _leftovers(data_home) == []


# ---- the real data sets (skipped when absent) --------------------------------------


@pytest.mark.parametrize("name", ["dna", "splice", "mushrooms", "madelon", "debian-tfidf"])
def test_shared_copies_match_registry(name):
    entry = ds.REGISTRY[name]
    path, status = ds.verify(entry)
    if path is None:
        pytest.skip(f"{name} not in {ds.describe_dirs()}")
    if status.startswith("unchecked"):
        pytest.skip(f"no checksum known for {path}")
    assert status == "ok (sha256)"


@pytest.mark.parametrize("name", ["dna", "splice", "mushrooms"])
def test_real_shapes(name):
    entry = ds.REGISTRY[name]
    if ds.locate(entry) is None:
        pytest.skip(f"{name} not in {ds.describe_dirs()}")
    data = ds.load(entry, download=False)
    assert data.X.shape == entry.shape
    assert np.count_nonzero(data.X) == entry.nnz


def test_cli_download(server, data_home, monkeypatch, capsys):
    from experiments.__main__ import main

    served = ds.Dataset("served", files=(ds.DataFile("served.bin", url=f"{server}/ok"),))
    monkeypatch.setitem(ds.REGISTRY, "served", served)
    assert main(["download", "served", "--no-progress"]) == 0
    assert (data_home / "served.bin").read_bytes() == BODY
    assert str(data_home / "served.bin") in capsys.readouterr().out
    broken = ds.Dataset("broken", files=(ds.DataFile("broken.bin", url=f"{server}/short"),))
    monkeypatch.setitem(ds.REGISTRY, "broken", broken)
    assert main(["download", "broken", "--no-progress"]) == 2
    assert "interrupted" in capsys.readouterr().err
    assert not (data_home / "broken.bin").exists()
