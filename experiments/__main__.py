"""``python -m experiments``: run the paper's sweeps, draw the figures, write the report.

Sub-commands: ``gmr``, ``kernel``, ``spsd-table``, ``eta``, ``svd``, ``estimate``
(error estimates and fixed accuracy), ``cur`` (CUR decompositions) (one sweep
each, writing ``OUT/<name>/<name>.csv`` and ``run.json``, its figures under
``OUT/figures``, and ``OUT/REPORT.md`` over the sweeps found), ``investigate``
(the studies behind the report's explanations of its disagreements),
``lstsq`` (sketched least squares against the condition number; no data
set), ``ridge`` (ridge regression on debian-tfidf against the effective
dimension), ``reproduce`` (all of these on the data that is present, then the figures and
``OUT/REPORT.md``), ``plot`` (figures from the CSV alone), ``report``
(``REPORT.md`` from the CSV alone), ``datasets`` (the registry and what is on
disk) and ``download``.

Exit status: 0 on success, 2 on an error reported in one line on stderr (no
data set found, a data set or option out of range, a results directory that
does not exist), and argparse's 2 on a usage error.
"""

import argparse
import json
import logging
import os
import shlex
import sys
import time
from pathlib import Path

from . import datasets as ds
from . import cur, estimate, eta, gmr, investigate, kernel, spsd_table, svd, svd_passes
from . import lstsq as lstsq_sweep
from .runs import ConfigError, write_run

SWEEPS = {m.NAME: m for m in (gmr, kernel, spsd_table, eta, svd, estimate, cur, investigate,
                              svd_passes)}
# sweeps that a sub-command runs after its own (svd: error against passes over A)
COMPANIONS = {"svd": ("svd-passes",)}
# reproduce runs the sweeps on the same data back to back (the loader caches files)
ORDER = ("gmr", "svd", "estimate", "cur", "kernel", "spsd-table", "eta", "investigate",
         "svd-passes")
# the sweeps that take --gamma (RBF kernels)
KERNEL_SWEEPS = ("kernel", "spsd-table", "eta", "estimate", "investigate")


class ResultsError(RuntimeError):
    """``plot`` or ``report`` on a directory without results (reported without a traceback)."""


def _grid(text):
    try:
        values = tuple(float(v) if "." in v else int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"--grid must be comma-separated numbers, got {text!r}")
    if not values or min(values) <= 0:
        raise argparse.ArgumentTypeError(f"--grid values must be > 0, got {text!r}")
    return values


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive int, got {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive int, got {text!r}")
    return value


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def build_parser():
    """The argument parser of ``python -m experiments``."""
    common = argparse.ArgumentParser(add_help=False)
    arg = common.add_argument
    arg("--dataset", action="append", metavar="NAME_OR_PATH",
        help="a registry name (see `datasets`) or the path of a LIBSVM/IDX file; repeatable. "
        "Default: the paper's data sets that are present (stand-ins for absent ones)")
    arg("--reps", type=_positive_int, help="repetitions per point (default 10; fewer with --quick)")
    arg("--seed", type=int, default=0, help="base seed (default 0)")
    arg("--quick", action="store_true", help="reduced grid and repetitions")
    arg("--out", type=Path, default=Path("results"), help="output directory (default results/)")
    arg("--download", action="store_true", help="download absent default data sets first")
    _progress_options(common)
    sizes = argparse.ArgumentParser(add_help=False)
    sizes.add_argument("--grid", type=_grid,
                       help="comma-separated values of a (of x = (c + r) / k for svd)")
    sizes.add_argument("--storage", choices=("auto", "dense", "sparse"), default="auto",
                       help="treat data as dense (Gaussian sketches) or sparse (CountSketch)")
    kern = argparse.ArgumentParser(add_help=False)
    kern.add_argument("--gamma", type=_positive_float,
                      help="RBF scale gamma (the paper's sigma); required for a file given by path")
    kern.add_argument("--k", type=_positive_int, help="target rank k (default 15; c = 2k)")
    kern.add_argument("--grid", type=_grid, help="comma-separated values of a = s / c")

    parser = argparse.ArgumentParser(
        prog="python -m experiments",
        description="Reproduce the figures and tables of Ye, Wang, Zhang & Zhang, "
        "'Fast Generalized Matrix Regression with Applications in Machine Learning'.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("gmr", parents=[common, sizes],
                       help="Figure 1 (Section 6.1): Fast GMR error ratio against a")
    p.add_argument("--c", type=_positive_int, help="c = r, columns of C and rows of R (default 20)")
    sub.add_parser("kernel", parents=[common, kern],
                   help="Figure 2 (Section 6.2): SPSD kernel approximations against a = s / c")
    sub.add_parser("spsd-table", parents=[common, kern],
                   help="Table 7: the fast SPSD baseline of Wang et al., every sampling variant")
    p = sub.add_parser("eta", parents=[common], help="Table 6: eta = ||K_k||^2 / ||K||^2")
    p.add_argument("--gamma", type=_positive_float, help="RBF scale (required for a path)")
    p.add_argument("--k", type=_positive_int, help="k (default 15)")
    p = sub.add_parser("svd", parents=[common, sizes],
                       help="Figure 3 (Section 6.3): single-pass SVDs against (c + r) / k")
    p.add_argument("--k", type=_positive_int, help="target rank k (default 10)")
    p = sub.add_parser("estimate", parents=[common],
                       help="sketchlab's error estimates against the true errors, fast_gmr(tol), "
                       "and what the estimate costs (not a figure of the paper)")
    p.add_argument("--gamma", type=_positive_float,
                   help="RBF scale of the kernel cases for files given by path (default: the "
                   "registry's; files without one get no kernel cases)")
    p = sub.add_parser("cur", parents=[common],
                       help="CUR decompositions: every selection and core against c = r "
                       "(Section 1's application)")
    p.add_argument("--k", type=_positive_int, help="target rank k (default 10)")
    p.add_argument("--grid", type=_grid, help="comma-separated values of c = r")
    p = sub.add_parser("investigate", parents=[common],
                       help="the studies behind the report's explanations: the kernel scale "
                       "against Table 6's eta, Table 7's attempts, Practical SP-SVD with c = r")
    p.add_argument("--gamma", type=_positive_float, help="RBF scale for files given by path")
    p.add_argument("--study", action="append", choices=investigate.STUDIES,
                   help="run only this study; repeatable (default: all)")
    p = sub.add_parser("lstsq", help="sketched least squares (sketch-and-solve, "
                       "sketch-and-precondition, SPIR, FOSSILS) against scipy.linalg.lstsq: "
                       "forward, residual and backward error against the condition number")
    p.add_argument("--reps", type=_positive_int, help="repetitions per point (default 3)")
    p.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    p.add_argument("--quick", action="store_true", help="small problems, fewer points")
    p.add_argument("--out", type=Path, default=Path("results"),
                   help="output directory (default results/)")
    p.add_argument("--m", type=_positive_int, help="rows of A (default 4000; 1000 with --quick)")
    p.add_argument("--n", type=_positive_int, help="columns of A (default 50; 20 with --quick)")
    _progress_options(p)
    p = sub.add_parser("krr", help="kernel ridge classification of Fashion-MNIST: test "
                       "accuracy against fit time (KernelRidge, Nystroem + RidgeClassifier, "
                       "SketchedKernelRidgeClassifier); not part of reproduce")
    p.add_argument("--quick", action="store_true", help="small sizes (about a minute)")
    p.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    p.add_argument("--out", type=Path, default=Path("results"),
                   help="output directory (default results/)")
    p = sub.add_parser("ridge", help="ridge regression on debian-tfidf: steps and time against "
                       "the effective dimension (Nystrom-preconditioned and plain CG, "
                       "scikit-learn's sparse_cg and lsqr); not part of reproduce")
    p.add_argument("--quick", action="store_true", help="five alphas (a few minutes)")
    p.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    p.add_argument("--out", type=Path, default=Path("results"),
                   help="output directory (default results/)")
    p = sub.add_parser("reproduce", parents=[common], help="every sweep, figures and REPORT.md")
    p.add_argument("--gamma", type=_positive_float, help="RBF scale for files given by path")
    for name, text in (("plot", "redraw the figures from the CSV files"),
                       ("report", "rewrite REPORT.md from the CSV files")):  # fmt: skip
        p = sub.add_parser(name, help=text)
        p.add_argument("--out", type=Path, default=Path("results"),
                       help="the results directory of an earlier run (default results/)")
    p = sub.add_parser("datasets", help="list the registry, the data directories and what is "
                       "on disk")
    p.add_argument("--verify", action="store_true", help="check checksums of the files present")
    p = sub.add_parser("download", help="download data sets into the first data directory "
                       "($SKETCHLAB_DATA, else ~/.cache/sketchlab)")
    p.add_argument("names", nargs="+", help="registry names")
    _progress_options(p)
    return parser


def _progress_options(parser):
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--progress", dest="progress", action="store_true", default=None,
                       help="show progress bars (default: only when stderr is a terminal)")
    group.add_argument("--no-progress", dest="progress", action="store_false",
                       help="no progress bars")


def show_progress(args):
    """Progress bars when asked (--progress / --no-progress), else when stderr is a terminal."""
    if args.progress is not None:
        return args.progress
    return sys.stderr.isatty()


def _options(args, name):
    """The sweep-specific options present on ``args`` (None when not given)."""
    keys = {"gmr": ("c", "grid", "storage"), "svd": ("k", "grid", "storage"),
            "kernel": ("k", "grid", "gamma"), "spsd-table": ("k", "grid", "gamma"),
            "eta": ("k", "gamma"), "estimate": ("gamma",), "cur": ("k", "grid"),
            "investigate": ("gamma", "study"), "svd-passes": ("k",)}[name]  # fmt: skip
    return {k: getattr(args, k, None) for k in keys if getattr(args, k, None) is not None}


def _select(module, args):
    """(specs to run, paper data sets missing, {paper data set: stand-in}) for a sweep."""
    if args.dataset:
        return tuple(args.dataset), [], {}
    if args.download:
        for name in module.DEFAULT_DATASETS:
            entry = ds.get(name)
            if ds.locate(entry) is None and entry.downloadable:
                try:
                    ds.fetch(entry, progress=show_progress(args))
                except ds.DatasetError as exc:
                    logging.getLogger("experiments").warning("%s", exc)
    chosen, missing, replaced = ds.resolve(module.DEFAULT_DATASETS)
    return tuple(d.name for d in chosen), missing, replaced


def run_sweep(name, args, options=None):
    """Run one sweep as the CLI does and write its CSV and run.json; returns the rows.

    Raises
    ------
    experiments.datasets.NoDataError
        None of the sweep's data sets is present (the message says where the
        sweep looked and how to set SKETCHLAB_DATA).
    """
    module = SWEEPS[name]
    specs, missing, replaced = _select(module, args)
    options = _options(args, name) if options is None else options
    config = module.make_config(specs, quick=args.quick, reps=args.reps, seed=args.seed, **options)
    if not specs:
        raise ds.NoDataError(ds.no_data_message(name, module.DEFAULT_DATASETS))
    started = time.perf_counter()
    rows = module.run(config, show_progress=show_progress(args))
    loaded = module.load_all(config)
    path = write_run(args.out, name, config, rows, module.COLUMNS, started=started,
                     datasets=loaded, missing=missing, replaced=replaced,
                     seeds=_seed_rule(config), command=args.command_line)  # fmt: skip
    wall = time.perf_counter() - started
    print(f"{name}: {len(rows)} rows -> {path} ({wall:.1f} s)")
    for line in module.summary(rows):
        print(f"  {line}")
    for paper_name, stand_in in replaced.items():
        print(f"  {paper_name}: not available, stand-in {stand_in} used")
    if missing:
        print(f"  not available: {', '.join(missing)}")
    return rows


def record_reproduce(out, wall, command):
    """``OUT/reproduce.json``: the command and total wall time of a ``reproduce`` run."""
    record = {
        "command": command,
        "wall_time_s": round(wall, 1),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    with open(Path(out) / "reproduce.json", "w") as fh:
        json.dump(record, fh, indent=2)
        fh.write("\n")


def _seed_rule(config):
    return {
        "base_seed": config.seed,
        "rule": "every CSV row's `seed` is derive_seed(base_seed, dataset, rep, key) "
        "(experiments.runs) and is passed as rng= to the library call of that row",
    }


def main(argv=None):
    """Entry point; returns the exit status."""
    argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
    args = build_parser().parse_args(argv)
    args.command_line = shlex.join(["python", "-m", "experiments", *argv])
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    try:
        return _dispatch(args)
    except (ds.DatasetError, ConfigError, ResultsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _results_dir(out):
    """``out`` when it holds the CSV of at least one sweep, else ResultsError."""
    from .report import SECTIONS

    hint = (f"run `python -m experiments reproduce --out {out}` (or one sweep) first, or pass "
            "the --out of an earlier run")  # fmt: skip
    if not out.is_dir():
        raise ResultsError(f"results directory {out} does not exist; {hint}")
    if not any((out / name / f"{name}.csv").is_file() for name in SECTIONS):
        expected = ", ".join(f"{name}/{name}.csv" for name in SECTIONS)
        raise ResultsError(f"no results under {out} (looked for {expected}); {hint}")
    return out


def _dispatch(args):
    from . import plotting, report

    if args.command == "lstsq":
        return lstsq_sweep.main(args, show_progress(args))
    if args.command in SWEEPS:
        rows = run_sweep(args.command, args)
        if rows:  # its figure, and REPORT.md over every sweep found under --out
            figures = plotting.plot_sweep(args.command, rows, args.out / "figures")
            for name in COMPANIONS.get(args.command, ()):
                try:
                    more = run_sweep(name, args)
                except ds.NoDataError:
                    print(f"{name}: skipped, no data set found", file=sys.stderr)
                    continue
                figures += plotting.plot_sweep(name, more, args.out / "figures")
            print(f"figures: {len(figures)} PNG files in {args.out / 'figures'}")
            print(f"report: {report.write_report(args.out)}")
        return 0
    if args.command == "krr":
        from . import krr

        return krr.main(args.out, quick=args.quick, seed=args.seed)
    if args.command == "ridge":
        from . import ridge

        return ridge.main(args.out, quick=args.quick, seed=args.seed)
    if args.command == "reproduce":
        started = time.perf_counter()
        skipped = []
        for name in ORDER:
            kernel_sweep = name in KERNEL_SWEEPS
            try:
                run_sweep(name, args, {"gamma": args.gamma} if args.gamma and kernel_sweep else {})
            except ds.NoDataError:
                skipped.append(name)
                print(f"{name}: skipped, no data set found", file=sys.stderr)
        if len(skipped) == len(ORDER):  # nothing ran: say where we looked, once
            wanted = dict.fromkeys(n for name in ORDER for n in SWEEPS[name].DEFAULT_DATASETS)
            raise ds.NoDataError(ds.no_data_message("reproduce", list(wanted)))
        figures = plotting.plot_all(args.out)
        record_reproduce(args.out, time.perf_counter() - started, args.command_line)
        path = report.write_report(args.out)
        print(f"figures: {len(figures)} PNG files in {args.out / 'figures'}")
        print(f"report: {path} (total {time.perf_counter() - started:.0f} s)")
        for line in report.verdicts(args.out):
            print(f"  {line}")
        return 0
    if args.command == "plot":
        for f in plotting.plot_all(_results_dir(args.out)):
            print(f)
        return 0
    if args.command == "report":
        print(report.write_report(_results_dir(args.out)))
        return 0
    if args.command == "datasets":
        _list_datasets(args.verify)
        return 0
    if args.command == "download":
        for name in args.names:
            print(ds.fetch(ds.get(name), progress=show_progress(args)))
        return 0
    raise AssertionError(args.command)  # pragma: no cover


def _list_datasets(verify):
    hint = "" if os.environ.get("SKETCHLAB_DATA") else " (set SKETCHLAB_DATA to use one of yours)"
    print(f"data directories, searched in order: {ds.describe_dirs()}; downloads go to "
          f"{ds.data_home()}{hint}")
    for entry in ds.REGISTRY.values():
        if verify:
            path, status = ds.verify(entry)
        else:
            path = ds.locate(entry)
            status = "present" if path else "missing"
            status += ", downloadable" if not path and entry.downloadable else ""
        shape = "x".join(str(v) for v in entry.shape) if entry.shape else "?"
        print(f"{entry.label:52s} {shape:>12s}  {status}{'  ' + str(path) if path else ''}")


if __name__ == "__main__":
    sys.exit(main())
