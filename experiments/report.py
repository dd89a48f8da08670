"""``OUT/REPORT.md``: our numbers beside the paper's, claim by claim, from the CSV alone.

The report opens with the count of claims that agree and disagree.  Each
claim of the paper's experiments (``experiments.paper.CLAIMS``) gets a
verdict per data set, by a criterion fixed before the runs and printed in
the report:

- Fast GMR rate (Figure 1): the free log-log fit of the mean error ratio
  against a has a slope in [-2.5, -1.5] (theory: -2).
- Fast GMR at a = 10: mean error ratio <= 0.05 on every data set (Section
  6.1: "close to 0.05", for dense and sparse data alike).
- faster SPSD ~ optimal at s = 10c (Figure 2): mean error within 3% of the
  optimal core's.
- Nystrom gap: Nystrom's mean error at least 10% above the optimal core's;
  on madelon, our Nystrom and optimal errors within 10% of the paper's 0.55
  and 0.42.
- Table 7: a cell agrees when the paper's value lies within our 10-90% band
  or within 15% of our mean; a data set agrees when 4 of its 5 cells do.
- eta (Table 6): equal to the paper's value when rounded to two decimals.
- Figure 3: Fast SP-SVD's mean error ratio below Practical SP-SVD's at every x.

Every disagreement gets an explanation under its verdict, drawn from the
measurements (the ``investigate`` sweep's above all, see
:mod:`experiments.investigate`), and the investigations' numbers are
tabulated at the end of the report.
"""

import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import datasets as ds
from . import paper
from .runs import read_run

YES, NO, NA, NOT_JUDGED = "✅ agrees", "❌ disagrees", "➖ not run", "➖ not judged"


@dataclass
class Verdict:
    """One claim on one data set.

    ``ok`` is None for lines that inform without judging (not counted);
    ``label`` names the claim in the report's opening count; ``why`` holds
    the explanation of a disagreement.
    """

    claim: str
    dataset: str
    text: str
    ok: bool | None
    label: str
    why: list = field(default_factory=list)


def mark(ok, not_judged=None):
    """The verdict mark of a boolean; None: not run, or, with ``not_judged`` (why), measured
    but not judged."""
    if ok is None:
        return NA if not_judged is None else f"{NOT_JUDGED} ({not_judged})"
    return YES if ok else NO


def load_caveat(rows, record):
    """The machine's load behind timings: ``" (timed under load: ...)"`` when the 1-minute
    load average recorded with any of these ``rows`` (column ``load``, taken with each
    timing; it counts this run's own threads too) exceeded the cores the run had, so that
    other processes competed for them; ``""`` otherwise."""
    loads = [r.get("load") for r in rows]
    loads = [v for v in loads if isinstance(v, (int, float)) and math.isfinite(v)]
    machine = (record or {}).get("machine", {})
    cores = machine.get("affinity") or machine.get("cores") or os.cpu_count()
    if not loads:
        return " (the machine's load was not recorded with these timings)"
    if max(loads) > cores:
        return (f" (timed under load: 1-minute load average up to {max(loads):.1f} on "
                f"{cores} cores)")
    return ""


def fmt(value, spec=".3f"):
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    return format(value, spec)


def dataset_label(dataset):
    """A data set's name for the report; stand-ins are flagged as such."""
    entry = ds.REGISTRY.get(dataset)
    if entry is not None and entry.stand_in_for:
        return f"{dataset} (**stand-in** for {', '.join(entry.stand_in_for)})"
    return dataset


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def figure_lines(out, name):
    if (Path(out) / "figures" / f"{name}.png").is_file():
        return [f"![{name}](figures/{name}.png)", ""]
    return ["(figure not drawn: run `python -m experiments plot`)", ""]


def closeness(means, table):
    """Median over the table's cells of |log(ours / paper)| (0: identical)."""
    logs = [abs(math.log(means[a] / want)) for a, want in table.items()
            if a in means and means[a] > 0]  # fmt: skip
    return float(np.median(logs)) if logs else math.nan


def percent_range(values):
    """'a-b%' (or 'a%') of a list of percentages, rounded."""
    lo, hi = round(min(values)), round(max(values))
    return f"{lo}%" if lo == hi else f"{lo}-{hi}%"


def _data_section(runs):
    from .investigate import MODEL
    from .sweeps import SWEEPS

    used, missing, replaced, quick = {}, set(), {}, False
    for name, (rows, record) in runs.items():
        for d in record.get("datasets", []):
            used[d["name"]] = d
        for r in rows:  # rows whose run.json does not describe their data set
            if "dataset" not in r or r["dataset"] == MODEL:  # no data set, or a simulation
                continue
            used.setdefault(r["dataset"], {"shape": ["?"], "storage": r.get("storage", "?"),
                                           "file": "?"})  # fmt: skip
        missing.update(record.get("missing", []))
        replaced.update(record.get("replaced", {}))
        full = SWEEPS[name].module.make_config(()).reps  # the sweep's full grid
        quick = quick or record.get("config", {}).get("reps", full) < full
    lines = ["## Data", ""]
    lines += md_table(["data set", "shape", "storage", "file"],
                      [[dataset_label(n), " x ".join(map(str, d["shape"])), d["storage"],
                        f"`{d['file']}`"] for n, d in used.items()])  # fmt: skip
    for n in used:
        entry = ds.REGISTRY.get(n)
        if entry is not None and entry.stand_in_for:
            lines += ["", f"**{n} is a stand-in**, not the paper's "
                      f"{', '.join(entry.stand_in_for)}: {entry.note}."]  # fmt: skip
    if replaced:
        pairs = ", ".join(f"{p} -> {s}" for p, s in replaced.items())
        lines += ["", f"Paper data sets replaced by stand-ins (not available here): {pairs}."]
    if missing:
        lines += ["", "Paper data sets not available here and not run: "
                  f"{', '.join(sorted(missing))}."]  # fmt: skip
    if quick:
        lines += ["", "Fewer repetitions per point than the full grid (a `--quick` run): bands "
                  "are rough."]
    return lines


def _runs_section(runs):
    body = []
    for name, (_, record) in runs.items():
        cfg = record.get("config", {})
        body.append([name, f"`{record.get('command', '')}`", cfg.get("reps", ""),
                     cfg.get("seed", ""), fmt(record.get("wall_time_s"), ".1f"),
                     record.get("finished", "")])  # fmt: skip
    lines = ["## Runs", ""]
    lines += md_table(["sweep", "command", "reps", "seed", "wall time (s)", "finished"], body)
    records = [r for _, r in runs.values()]
    machine = next((r["machine"] for r in records if r.get("machine")), None)
    versions = next((r["versions"] for r in records if r.get("versions")), None)
    if machine:
        libs = {f"{b.get('internal_api')} {b.get('version') or ''}".strip()
                + f" ({b.get('num_threads')} threads)" for b in machine.get("blas", [])}
        blas = ", ".join(sorted(libs))
        lines += ["", f"Machine: {machine.get('cpu')}, {machine.get('cores')} cores, BLAS {blas}, "
                  f"Numba {machine.get('numba_threads')} threads "
                  f"({machine.get('numba_threading_layer')} layer)."]  # fmt: skip
    if versions:
        lines += ["", "Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items() if v) + "."]
    lines += _warnings_lines(runs)
    return lines + ["", "Configs and seeds: `<sweep>/run.json`; the `seed` column of each CSV "
                    "is the `rng` of that row's library call."]  # fmt: skip


def _warnings_lines(runs):
    """What the library warned during the runs (recorded in each ``run.json``, not printed)."""
    lines = []
    for name, (_, record) in runs.items():
        for w in record.get("warnings", []):
            lines.append(f"- {name}: {w['count']} x {w['category']} from `{w['where']}`, e.g. "
                         f"\"{w['message']}\"")
    if not lines:
        return []
    return ["", "Warnings raised during the runs (kept out of the terminal; every one is in "
            "`<sweep>/run.json`):", "", *lines]


def _headline(verdicts, runs):
    counted = [v for v in verdicts if v.ok is not None]
    bad = [v for v in counted if not v.ok]
    if not counted:
        return ["**No claim could be checked: no sweep results were found.**"]
    good = len(counted) - len(bad)
    if bad:
        text = (f"**{good} of {len(counted)} claims agree; {len(bad)} disagree"
                f"{'s' if len(bad) == 1 else ''}: {'; '.join(v.label for v in bad)}.** "
                "Under each disagreement (Verdicts) the report says what the investigations "
                "found; their numbers close the report.")  # fmt: skip
    else:
        text = f"**All {len(counted)} claims agree.**"
    from .sweeps import TABLE

    missing = sorted(s.title for s in TABLE if s.reproduce and s.name not in runs)
    if missing:
        text += f" Not run: {', '.join(missing)}."
    return [text]


def build_report(out, wall_time=None):
    """(markdown text, verdict lines) of the report on the CSV files under ``out``."""
    from .sweeps import TABLE

    runs = {}
    for sweep in TABLE:
        rows, record = read_run(out, sweep.name)
        if rows:
            runs[sweep.name] = (rows, record)
    verdicts, body = [], []
    for sweep in TABLE:
        if sweep.name in runs:
            body += sweep.module.section(out, runs[sweep.name][0], verdicts, runs) + [""]
        elif sweep.reproduce:
            body += [f"## {sweep.title}", "", "Not run (no CSV found).", ""]
    explain = {}
    for sweep in TABLE:
        explain.update(getattr(sweep.module, "EXPLAIN", {}))
    for v in verdicts:
        if v.ok is False:
            v.why = explain[v.claim](v, runs) if v.claim in explain else []
    head = [f"# Reproduction report: {paper.TITLE}", "", *_headline(verdicts, runs), "",
            f"Written {time.strftime('%Y-%m-%d %H:%M')} from the CSV files under `{out}` "
            "(`python -m experiments report` rewrites it, `plot` redraws the figures). "
            "Figures, tables, sections, algorithms, theorems and equations are numbered as "
            "printed in the paper."]  # fmt: skip
    total = _reproduce_record(out) if wall_time is None else {"wall_time_s": wall_time}
    if total:
        head += ["", f"Total wall time of `reproduce`: {total['wall_time_s']:.0f} s"
                 + (f" (`{total['command']}`)." if total.get("command") else ".")]  # fmt: skip
    head += [""] + _data_section(runs) + ["", "## Verdicts", ""]
    for v in verdicts:
        head.append(f"- {v.text}")
        head += [f"  - Why: {line}" if i == 0 else f"  - {line}" for i, line in enumerate(v.why)]
    return "\n".join(head + [""] + body + _runs_section(runs)) + "\n", [v.text for v in verdicts]


def _reproduce_record(out):
    path = Path(out) / "reproduce.json"
    if not path.is_file():
        return None
    with open(path) as fh:
        return json.load(fh)


def write_report(out, wall_time=None):
    """Write ``OUT/REPORT.md``; returns its path."""
    text, _ = build_report(out, wall_time)
    path = Path(out) / "REPORT.md"
    path.write_text(text, encoding="utf-8")
    return path


def verdicts(out):
    """The verdict lines of the report (the CLI prints them)."""
    return build_report(out)[1]
