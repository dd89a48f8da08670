"""``python -m experiments``: run the paper's sweeps, draw the figures, write the report.

Sub-commands: one per sweep of the table in :mod:`experiments.sweeps` (``gmr``,
``kernel``, ``spsd-table``, ``eta``, ``svd``, ``svd-passes``, ``estimate``, ``cur``,
``investigate``, ``lstsq``, ``krr``, ``spectrum``), each writing
``OUT/<name>/<name>.csv`` and ``run.json``, its figures under ``OUT/figures``, and ``OUT/REPORT.md`` over the sweeps
found; ``reproduce`` (the table's sweeps marked for it, on the data that is present, then
the figures and ``OUT/REPORT.md``), ``plot`` (figures from the CSV alone), ``report``
(``REPORT.md`` from the CSV alone), ``datasets`` (the registry and what is on disk) and
``download``.

Exit status: 0 on success, 2 on an error reported in one line on stderr (no
data set found, a data set or option out of range, a results directory that
does not exist), and argparse's 2 on a usage error.
"""

import argparse
import inspect
import json
import logging
import os
import shlex
import sys
import time
import warnings
from pathlib import Path

from . import datasets as ds
from .runs import (ConfigError, load_average, positive_float, positive_int, read_run,
                   write_run)
from .sweeps import SWEEPS, TABLE

REPO = Path(__file__).resolve().parents[1]


class ResultsError(RuntimeError):
    """``plot`` or ``report`` on a directory without results (reported without a traceback)."""


def build_parser():
    """The argument parser of ``python -m experiments``: one sub-command per row of the
    sweeps' table (``experiments.sweeps``), then reproduce, plot, report, datasets, download."""
    common = argparse.ArgumentParser(add_help=False)
    arg = common.add_argument
    arg("--reps", type=positive_int,
        help="repetitions per point (default: the sweep's full grid; fewer with --quick)")
    arg("--seed", type=int, default=0, help="base seed (default 0)")
    arg("--quick", action="store_true", help="reduced grid and repetitions")
    arg("--out", type=Path, default=Path("results"), help="output directory (default results/)")
    _progress_options(common)
    data = argparse.ArgumentParser(add_help=False)
    data.add_argument("--dataset", action="append", metavar="NAME_OR_PATH",
                      help="a registry name (see `datasets`) or the path of a LIBSVM/IDX file; "
                      "repeatable. Default: the paper's data sets that are present (stand-ins "
                      "for absent ones)")
    data.add_argument("--download", action="store_true",
                      help="download absent default data sets first")

    parser = argparse.ArgumentParser(
        prog="python -m experiments",
        description="Reproduce the figures and tables of Ye, Wang, Zhang & Zhang, "
        "'Fast Generalized Matrix Regression with Applications in Machine Learning'.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for sweep in TABLE:
        parents = [common, data] if sweep.module.DEFAULT_DATASETS else [common]
        sweep.module.add_options(sub.add_parser(sweep.name, parents=parents, help=sweep.help))
    p = sub.add_parser("reproduce", parents=[common, data],
                       help="every sweep but " + ", ".join(s.name for s in TABLE
                                                            if not s.reproduce)
                       + ", then the figures and REPORT.md")
    p.add_argument("--gamma", type=positive_float, help="RBF scale for files given by path")
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


def _options(args, module):
    """The sweep's own options present on ``args`` (those its ``make_config`` takes by keyword,
    beyond quick, reps and seed), without the ones not given."""
    params = inspect.signature(module.make_config).parameters.values()
    names = [p.name for p in params if p.kind is p.KEYWORD_ONLY
             and p.name not in ("quick", "reps", "seed")]  # fmt: skip
    return {k: getattr(args, k) for k in names if getattr(args, k, None) is not None}


def _select(module, args):
    """(specs to run, paper data sets missing, {paper data set: stand-in}) for a sweep."""
    if getattr(args, "dataset", None):
        return tuple(args.dataset), [], {}
    if getattr(args, "download", False):
        for name in module.DEFAULT_DATASETS:
            entry = ds.get(name)
            if ds.locate(entry) is None and entry.downloadable:
                try:
                    ds.fetch(entry, progress=show_progress(args))
                except ds.DatasetError as exc:
                    logging.getLogger("experiments").warning("%s", exc)
    chosen, missing, replaced = ds.resolve(module.DEFAULT_DATASETS)
    return tuple(d.name for d in chosen), missing, replaced


def _where(filename):
    """A warning's file, relative to the checkout or to its installed package."""
    path = Path(filename).resolve()
    for root in (REPO, *(Path(p) for p in sys.path if p)):
        try:
            return str(path.relative_to(Path(root).resolve()))
        except ValueError:
            continue
    return path.name


def _warnings_record(caught):
    """The warnings caught during a sweep, one entry per (category, place): how many, and
    the first message (run.json's ``warnings``)."""
    kinds = {}
    for w in caught:
        key = (w.category.__name__, f"{_where(w.filename)}:{w.lineno}")
        if key not in kinds:
            kinds[key] = {"category": key[0], "where": key[1], "count": 0,
                          "message": str(w.message)}
        kinds[key]["count"] += 1
    return list(kinds.values())


def run_sweep(name, args, options=None):
    """Run one sweep as the CLI does and write its CSV and run.json; returns the rows.

    The warnings that the sweep's library calls raise are recorded in its run.json (and
    counted on one line here and in the report), not printed.

    Raises
    ------
    experiments.datasets.NoDataError
        None of the sweep's data sets is present (the message says where the
        sweep looked and how to set SKETCHLAB_DATA).
    """
    module = SWEEPS[name].module
    specs, missing, replaced = _select(module, args)
    options = _options(args, module) if options is None else options
    config = module.make_config(specs, quick=args.quick, reps=args.reps, seed=args.seed, **options)
    if module.DEFAULT_DATASETS and not specs:
        raise ds.NoDataError(ds.no_data_message(name, module.DEFAULT_DATASETS))
    started = time.perf_counter()
    load_before = load_average()
    with warnings.catch_warnings(record=True) as caught:
        rows = module.run(config, show_progress=show_progress(args))
    warned = _warnings_record(caught)
    loaded = module.load_all(config)
    path = write_run(args.out, name, config, rows, module.COLUMNS, started=started,
                     datasets=loaded, missing=missing, replaced=replaced,
                     seeds=_seed_rule(config), command=args.command_line,
                     extra={"warnings": warned,
                            "load_average": {"start": load_before, "end": load_average()}})
    wall = time.perf_counter() - started
    print(f"{name}: {len(rows)} rows -> {path} ({wall:.1f} s)")
    for line in module.summary(rows):
        print(f"  {line}")
    for paper_name, stand_in in replaced.items():
        print(f"  {paper_name}: not available, stand-in {stand_in} used")
    if missing:
        print(f"  not available: {', '.join(missing)}")
    if warned:
        kinds = ", ".join(f"{w['count']} {w['category']} ({w['where']})" for w in warned)
        print(f"  warnings, recorded in {path.parent / 'run.json'}: {kinds}")
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
        "rule": "a CSV's `seed` column is derive_seed(base_seed, ...) (experiments.runs, the "
        "keys in the sweep's module) and is passed as rng= to the library call of that row",
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
    hint = (f"run `python -m experiments reproduce --out {out}` (or one sweep) first, or pass "
            "the --out of an earlier run")  # fmt: skip
    if not out.is_dir():
        raise ResultsError(f"results directory {out} does not exist; {hint}")
    if not any((out / name / f"{name}.csv").is_file() for name in SWEEPS):
        expected = ", ".join(f"{name}/{name}.csv" for name in SWEEPS)
        raise ResultsError(f"no results under {out} (looked for {expected}); {hint}")
    return out


def _figures(name, out):
    """The figures of sweep ``name``, from its CSV alone (as ``plot`` draws them)."""
    rows, _ = read_run(out, name)
    return SWEEPS[name].module.plot(rows, out / "figures") if rows else []


def _dispatch(args):
    from . import plotting, report

    if args.command in SWEEPS:
        rows = run_sweep(args.command, args)
        if rows:  # its figures, and REPORT.md over every sweep found under --out
            figures = _figures(args.command, args.out)
            for name in SWEEPS[args.command].then:
                try:
                    run_sweep(name, args)
                except ds.NoDataError:
                    print(f"{name}: skipped, no data set found", file=sys.stderr)
                    continue
                figures += _figures(name, args.out)
            print(f"figures: {len(figures)} PNG files in {args.out / 'figures'}")
            print(f"report: {report.write_report(args.out)}")
        return 0
    if args.command == "reproduce":
        started = time.perf_counter()
        chosen = [sweep for sweep in TABLE if sweep.reproduce]
        skipped = []
        for sweep in chosen:
            try:
                run_sweep(sweep.name, args, {"gamma": args.gamma} if args.gamma and "gamma" in
                          inspect.signature(sweep.module.make_config).parameters else {})
            except ds.NoDataError:
                skipped.append(sweep.name)
                print(f"{sweep.name}: skipped, no data set found", file=sys.stderr)
        if len(skipped) == len(chosen):  # nothing ran: say where we looked, once
            wanted = dict.fromkeys(n for s in chosen for n in s.module.DEFAULT_DATASETS)
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
