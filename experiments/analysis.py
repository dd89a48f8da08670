"""Summaries of tidy rows shared by the figures and the report (no I/O here)."""

import math
from collections import defaultdict

import numpy as np


def group(rows, *keys):
    """Rows grouped by the values of ``keys``, in first-seen order."""
    out = defaultdict(list)
    for row in rows:
        out[tuple(row[k] for k in keys)].append(row)
    return dict(out)


def unique(rows, key):
    """Distinct values of ``key`` in first-seen order (NaN skipped)."""
    seen = []
    for row in rows:
        v = row[key]
        if not (isinstance(v, float) and math.isnan(v)) and v not in seen:
            seen.append(v)
    return seen


def band(values, low=10, high=90):
    """(mean, 10th percentile, 90th percentile, count) of finite values."""
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
    if v.size == 0:
        return math.nan, math.nan, math.nan, 0
    return float(v.mean()), float(np.percentile(v, low)), float(np.percentile(v, high)), int(v.size)


def curve(rows, x, y):
    """Sorted x values with the mean and 10-90% band of ``y`` at each.

    Returns
    -------
    dict of ndarray
        ``x``, ``mean``, ``p10``, ``p90``, ``n``.
    """
    by_x = group([r for r in rows if np.isfinite(r[x])], x)
    xs = sorted(k[0] for k in by_x)
    stats = np.array([band([r[y] for r in by_x[(v,)]]) for v in xs]).reshape(-1, 4)
    return {
        "x": np.asarray(xs, dtype=float),
        "mean": stats[:, 0],
        "p10": stats[:, 1],
        "p90": stats[:, 2],
        "n": stats[:, 3].astype(int),
    }


def fit_power_law(a, err, power=2.0):
    """Fit ``err ~ alpha / a^power`` on log-log axes.

    Returns
    -------
    dict
        ``slope`` and ``alpha_free`` of the free least-squares line
        ``log err = log alpha_free + slope log a``, its ``r2``, and ``alpha``,
        the constant with the slope fixed at ``-power`` (the geometric mean of
        ``err a^power``).  Points with err <= 0 are left out.
    """
    a = np.asarray(a, dtype=float)
    err = np.asarray(err, dtype=float)
    keep = np.isfinite(err) & (err > 0) & (a > 0)
    la, le = np.log(a[keep]), np.log(err[keep])
    if la.size < 2:
        return {"slope": math.nan, "alpha_free": math.nan, "r2": math.nan, "alpha": math.nan}
    slope, intercept = np.polyfit(la, le, 1)
    resid = le - (intercept + slope * la)
    total = ((le - le.mean()) ** 2).sum()
    return {
        "slope": float(slope),
        "alpha_free": float(np.exp(intercept)),
        "r2": float(1 - (resid**2).sum() / total) if total > 0 else math.nan,
        "alpha": float(np.exp((le + power * la).mean())),
    }


def value_at(rows, x, y, at):
    """Mean of ``y`` over the rows with ``x == at`` (NaN when there are none)."""
    vals = [r[y] for r in rows if r[x] == at]
    return band(vals)[0]


def fit_two_terms(a, err):
    """Fit ``err ~ alpha / a^2 + beta / a`` with alpha, beta >= 0 (non-negative least squares).

    The shape Theorem 1 gives the error ratio when the sketch sizes are
    ``a c`` and ``rho`` is small (the ``c / (eps rho^2)`` term of the sketch
    size): the 1/a term dominates for a above about alpha / beta.  Residuals
    are weighted by 1/err, so every point counts in relative terms.

    Returns
    -------
    dict
        ``alpha``, ``beta`` and ``rel_rms``, the root-mean-square relative
        residual of the fit.
    """
    from scipy.optimize import nnls

    a = np.asarray(a, dtype=float)
    err = np.asarray(err, dtype=float)
    keep = np.isfinite(err) & (err > 0) & (a > 0)
    a, err = a[keep], err[keep]
    if a.size < 2:
        return {"alpha": math.nan, "beta": math.nan, "rel_rms": math.nan}
    design = np.column_stack([1.0 / a**2, 1.0 / a]) / err[:, None]
    (alpha, beta), _ = nnls(design, np.ones_like(err))
    fitted = alpha / a**2 + beta / a
    return {
        "alpha": float(alpha),
        "beta": float(beta),
        "rel_rms": float(np.sqrt(np.mean((fitted / err - 1.0) ** 2))),
    }
