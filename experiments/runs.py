"""What every sweep shares: seeds, tidy CSV, and the record of a run.

A sweep writes ``OUT/<name>/<name>.csv`` (one tidy row per measurement) and
``OUT/<name>/run.json`` (its frozen config, the seeds, package versions, the
machine and the wall time), so that a figure or a report can be redrawn, and
a number traced back, from these two files alone.
"""

import argparse
import csv
import dataclasses
import json
import math
import os
import platform
import shlex
import sys
import time
import zlib
from importlib import metadata
from pathlib import Path

import numpy as np

PACKAGES = (
    "sketchlab", "numpy", "scipy", "numba", "scikit-learn", "threadpoolctl", "matplotlib", "tqdm",
)  # fmt: skip


class ConfigError(ValueError):
    """A sweep option out of range (reported by the CLI without a traceback)."""


# ---- command-line option types (argparse ``type=``), shared by the sweeps' add_options ----


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive int, got {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive int, got {text!r}")
    return value


def positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def grid(text):
    """Comma-separated positive numbers (ints where written without a point)."""
    try:
        values = tuple(float(v) if "." in v else int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"--grid must be comma-separated numbers, got {text!r}")
    if not values or min(values) <= 0:
        raise argparse.ArgumentTypeError(f"--grid values must be > 0, got {text!r}")
    return values


def storage_option(parser):
    """``--storage``: how the gmr and svd sweeps treat a data set."""
    parser.add_argument("--storage", choices=("auto", "dense", "sparse"), default="auto",
                        help="treat data as dense (Gaussian sketches) or sparse (CountSketch)")


def load_average():
    """The machine's 1-minute load average now (NaN where the platform has none), recorded
    with each timing so that the report can say which timings competed for the cores."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return math.nan


def derive_seed(*keys):
    """A 63-bit seed from a base seed and keys (ints or strings), via SeedSequence.

    Every random call of a sweep gets its own seed ``derive_seed(seed,
    dataset, rep, ...)``, written in its CSV row, so any single row can be
    recomputed by passing that seed as ``rng=`` to the library.
    """
    entropy = [zlib.crc32(k.encode()) if isinstance(k, str) else int(k) for k in keys]
    return int(np.random.SeedSequence(entropy).generate_state(1, np.uint64)[0] >> np.uint64(1))


def progress(iterable=None, *, total=None, desc=None, enabled=True):
    """A tqdm progress bar on stderr (a no-op wrapper when ``enabled`` is False)."""
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, disable=not enabled, leave=False,
                dynamic_ncols=True)  # fmt: skip


def package_versions():
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def machine_info():
    """Cores, CPU, BLAS (through threadpoolctl) and Numba's threading."""
    import numba
    from threadpoolctl import threadpool_info

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "blas": [
            {k: lib.get(k) for k in ("internal_api", "version", "num_threads", "threading_layer")}
            for lib in threadpool_info()
        ],
        "numba_threads": numba.get_num_threads(),
        "numba_threading_layer": numba.config.THREADING_LAYER,
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


def write_csv(path, rows, columns):
    """Write tidy ``rows`` (dicts) with the given column order; floats in repr precision."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(columns), extrasaction="raise")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _cell(row.get(k)) for k in columns})
    return path


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, (float, np.floating)):
        return "" if math.isnan(value) else repr(float(value))
    if isinstance(value, (np.integer, np.bool_)):
        return value.item()
    return value


def read_csv(path):
    """Rows of a CSV written by :func:`write_csv`: numbers parsed, blanks as NaN."""
    with open(path, newline="") as fh:
        return [{k: _parse(v) for k, v in row.items()} for row in csv.DictReader(fh)]


def _parse(text):
    if text == "":
        return math.nan
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"True": True, "False": False}.get(text, text)


def config_dict(config):
    """A frozen config dataclass as JSON-ready data."""
    return json.loads(json.dumps(dataclasses.asdict(config), default=str))


def write_run(out, name, config, rows, columns, *, started, datasets=(), missing=(), replaced=None,
              seeds=None, command=None, extra=None):
    """Write ``OUT/<name>/<name>.csv`` and ``OUT/<name>/run.json``.

    Parameters
    ----------
    out : path
        The results directory (``--out``).
    name : str
        The sweep (``gmr``, ``kernel``, ...).
    config : frozen dataclass
    rows : list of dict
    columns : sequence of str
    started : float
        ``time.perf_counter()`` at the start of the sweep (wall time is taken now).
    datasets : list of experiments.datasets.Data
        What was run (name, file, shape, stand-in status are recorded).
    missing : sequence of str
        Paper data sets that were not available (and not replaced).
    replaced : dict, optional
        Paper data set -> the stand-in run in its place.
    seeds : dict, optional
        The base seed and the rule deriving each row's seed, recorded verbatim.
    command : str, optional
        The command line (default: this process's).
    extra : dict, optional
        More entries of the record (the CLI's: the warnings caught, the load average).

    Returns
    -------
    Path
        The CSV written.
    """
    wall = time.perf_counter() - started
    folder = Path(out) / name
    csv_path = write_csv(folder / f"{name}.csv", rows, columns)
    record = {
        "sweep": name,
        "command": command or shlex.join([Path(sys.executable).name, *sys.argv]),
        "config": config_dict(config),
        "wall_time_s": round(wall, 3),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "rows": len(rows),
        "datasets": [
            {
                "name": d.dataset.name,
                "file": str(d.path),
                "shape": list(d.X.shape),
                "storage": "dense" if d.dense else "sparse",
                "stand_in_for": list(d.dataset.stand_in_for),
            }
            for d in datasets
        ],
        "missing": list(missing),
        "replaced": dict(replaced or {}),
        "seeds": seeds or {},
        "versions": package_versions(),
        "machine": machine_info(),
        **(extra or {}),
    }
    with open(folder / "run.json", "w") as fh:
        json.dump(record, fh, indent=2, default=str)
        fh.write("\n")
    return csv_path


def read_run(out, name):
    """(rows, record) of sweep ``name`` under ``out``; (None, None) when absent."""
    folder = Path(out) / name
    csv_path = folder / f"{name}.csv"
    if not csv_path.is_file():
        return None, None
    record = {}
    if (folder / "run.json").is_file():
        with open(folder / "run.json") as fh:
            record = json.load(fh)
    return read_csv(csv_path), record
