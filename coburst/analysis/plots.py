"""Figures of ``coburst plot`` and ``coburst report`` from the tables of :mod:`coburst.analysis.tables`.

Kinds (:data:`KINDS`); each function returns a list of :class:`Figure` (name, title,
matplotlib figure, caption):

* ``gantt``: Gantt chart of a run (through evalys, :func:`coburst.analysis.evalys_compat.gantt`),
  one per policy of the first setting (at most ``max_runs``);
* ``boxen``: letter-value plots (seaborn ``boxenplot``, ``k_depth=4`` as Kopański 2020) of
  waiting time and bounded slowdown per policy, all jobs of all runs, symlog scale;
* ``tail``: strip plot of the worst jobs' waiting times per policy (the ``tail`` highest of
  every policy, all runs pooled);
* ``ci``: mean waiting time and mean bounded slowdown per policy with 95 % bootstrap
  confidence intervals (percentile method over the jobs, seeded: deterministic);
* ``normalised``: per policy, box plot over the settings (workload parts...) of the run's
  mean divided by the baseline policy's mean on the same setting (a setting = all
  parameters except scheduler and options);
* ``timeseries``: queue compute load, queue storage load, compute and burst-buffer
  utilisation over time, one line per policy, for each setting (at most ``max_runs`` settings);
* ``pareto``: mean over settings of two run metrics per policy (default: mean bounded
  slowdown, to minimise, against utilisation, to maximise), the Pareto front joined;
* ``corr``: Pearson, Kendall and Spearman correlation heatmaps between the run metrics.

Determinism: fixed styles, seeded bootstrap, ``svg.hashsalt`` set, no dates in the files
(:func:`save`): the same tables give byte-identical PNG and SVG files.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from coburst.analysis import timeseries
from coburst.analysis.tables import group_columns, metric_columns
from coburst.errors import InputError

#: the figure kinds, in the order a report shows them
KINDS = ("gantt", "boxen", "tail", "ci", "normalised", "timeseries", "pareto", "corr")
FORMATS = ("png", "svg")
DPI = 80
LABELS = {"waiting": "waiting time (s)", "bounded_slowdown": "bounded slowdown", "mean_waiting": "mean waiting (s)",
          "mean_bounded_slowdown": "mean bounded slowdown", "utilisation": "utilisation",
          "makespan": "makespan (s)", "mean_turnaround": "mean turnaround (s)", "mean_slowdown": "mean slowdown",
          "bb_utilisation": "BB utilisation"}


@dataclass
class Figure:
    name: str     # file stem, unique in a set
    title: str
    figure: object  # matplotlib.figure.Figure
    caption: str = ""


def setup() -> None:
    """Headless, deterministic matplotlib."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    matplotlib.rcParams.update({"svg.hashsalt": "coburst", "svg.fonttype": "path", "figure.dpi": DPI,
                                "savefig.dpi": DPI, "font.size": 9, "axes.titlesize": 10,
                                "figure.max_open_warning": 0,
                                # run, policy and workload names are text, never TeX: "$x$", "a$\frac{b$"
                                # are drawn as written (no mathtext parse error, no formula)
                                "text.parse_math": False, "text.usetex": False})


def _plt():
    setup()
    import matplotlib.pyplot as plt

    return plt


def render(fig, fmt: str) -> bytes:
    """The figure's bytes in ``fmt`` (png or svg), without dates or software versions."""
    buf = io.BytesIO()
    meta = {"Date": None} if fmt == "svg" else {"Software": None} if fmt == "png" else {}
    fig.savefig(buf, format=fmt, metadata=meta)
    return buf.getvalue()


def save(figures: Sequence[Figure], out_dir: str | Path, formats: Sequence[str] = FORMATS) -> list[Path]:
    """Write every figure in every format (atomically) and close it."""
    from coburst.fileio import atomic_write

    plt = _plt()
    written = []
    for f in figures:
        for fmt in formats:
            path = Path(out_dir) / f"{f.name}.{fmt}"
            data = render(f.figure, fmt)
            with atomic_write(path, "wb") as fh:
                fh.write(data)
            written.append(path)
        plt.close(f.figure)
    return written


# --------------------------------------------------------------------- helpers
def policies(runs: pd.DataFrame, baseline: str | None = None) -> list[str]:
    """Policies in order of first appearance, the baseline first."""
    order = list(dict.fromkeys(runs["policy"].astype(str)))
    if baseline in order:
        order.remove(baseline)
        order.insert(0, baseline)
    return order


def settings(runs: pd.DataFrame) -> pd.Series:
    """A label per run naming its setting (values of :func:`group_columns` that vary)."""
    cols = [c for c in group_columns(runs) if runs[c].astype(str).nunique() > 1]
    if not cols:
        return pd.Series(["all"] * len(runs), index=runs.index)
    return runs[cols].astype(str).apply(lambda r: ", ".join(f"{c}={v}" for c, v in zip(cols, r)), axis=1)


def _policy_palette(order: Sequence[str]) -> dict[str, tuple]:
    import matplotlib

    cmap = matplotlib.colormaps["tab10"]
    return {p: cmap(i % 10) for i, p in enumerate(order)}


def bootstrap_ci(values, *, seed: int = 0, n_resamples: int = 1000, confidence: float = 0.95,
                 chunk: int = 25) -> tuple:
    """Percentile bootstrap confidence interval of the mean (numpy, seeded).

    ``values``: one sample (1-D, returns ``(low, high)``) or several metrics of the same
    items (2-D ``n x k``, resampled together: returns two arrays of ``k`` bounds).  Rows
    with a non-finite value are dropped."""
    v = np.asarray(values, dtype=float)
    one = v.ndim == 1
    v = v.reshape(len(v), -1)
    v = v[np.isfinite(v).all(axis=1)]
    k = v.shape[1]
    if v.shape[0] == 0:
        lo = hi = np.full(k, np.nan)
    elif v.shape[0] == 1:
        lo = hi = v[0].copy()
    else:
        rng = np.random.default_rng(seed)
        n = v.shape[0]
        cols = [np.ascontiguousarray(v[:, c]) for c in range(k)]
        means = np.empty((n_resamples, k))
        for s in range(0, n_resamples, chunk):
            m = min(chunk, n_resamples - s)
            idx = rng.integers(0, n, size=(m, n))
            for c in range(k):  # one gather per column: faster than v[idx] on 2-D
                means[s:s + m, c] = np.take(cols[c], idx).mean(axis=1)
        alpha = (1 - confidence) / 2
        lo, hi = np.quantile(means, [alpha, 1 - alpha], axis=0)
    if one:
        return float(lo[0]), float(hi[0])
    return np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)


def _jobs_with_policy(runs: pd.DataFrame, jobs: pd.DataFrame) -> pd.DataFrame:
    if "policy" in jobs.columns:
        return jobs
    return jobs.merge(runs[["run", "policy"]], on="run", how="left")


#: per-job columns that the distribution figures (boxen, tail, ci) read; the other kinds read
#: every column, but only of the runs :func:`detail_runs` names
DISTRIBUTION_COLUMNS = ("run", "policy", "job_id", "waiting", "bounded_slowdown")


def _gantt_runs(runs: pd.DataFrame, max_runs: int) -> pd.DataFrame:
    """The runs drawn as Gantt charts: one per policy of the first setting."""
    label = settings(runs)
    return runs[label == label.iloc[0]].drop_duplicates("policy").head(max_runs)


def _timeseries_settings(runs: pd.DataFrame, max_runs: int) -> list[tuple[str, pd.DataFrame]]:
    """The first ``max_runs`` settings with their runs (one per policy) drawn over time."""
    label = settings(runs)
    return [(setting, runs[label == setting].drop_duplicates("policy"))
            for setting in list(dict.fromkeys(label))[:max_runs]]


def detail_runs(runs: pd.DataFrame, kinds: Sequence[str], *, max_gantt: int = 5, max_timeseries: int = 5) -> set:
    """Ids of the runs whose whole per-job rows the figures of ``kinds`` read (Gantt charts and
    time series); the other figures read :data:`DISTRIBUTION_COLUMNS` of every job."""
    out = set()
    if "gantt" in kinds:
        out.update(_gantt_runs(runs, max_gantt)["run"])
    if "timeseries" in kinds:
        for _, sel in _timeseries_settings(runs, max_timeseries):
            out.update(sel["run"])
    return out


# --------------------------------------------------------------------- kinds
def gantt(runs, jobs, *, max_runs: int = 5, **_) -> list[Figure]:
    from coburst.analysis import evalys_compat

    _plt()
    first = settings(runs).iloc[0]
    chosen = _gantt_runs(runs, max_runs)
    out = []
    for k, (_, r) in enumerate(chosen.iterrows()):
        sub = jobs[jobs["run"] == r["run"]]
        if sub.empty:
            continue
        js = evalys_compat.jobset_from_jobs(sub)
        fig = evalys_compat.gantt(js, title=f"{r['policy']} ({r['run']})")
        fig.set_size_inches(9, 3.6)
        ax = fig.axes[0]
        ax.set_xlabel("time (s)")
        ax.set_ylabel("resource")
        fig.tight_layout()
        out.append(Figure(f"gantt_{k}", f"Gantt chart: {r['policy']}",
                          fig, f"run {r['run']} ({first}); drawn by evalys"))
    return out


def _symlog(ax, axis="y"):
    (ax.set_yscale if axis == "y" else ax.set_xscale)("symlog", linthresh=1.0)


def boxen(runs, jobs, *, baseline=None, **_) -> list[Figure]:
    import seaborn as sns

    plt = _plt()
    jobs = _jobs_with_policy(runs, jobs)
    order = policies(runs, baseline)
    pal = _policy_palette(order)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, metric in zip(axes, ("waiting", "bounded_slowdown")):
        sns.boxenplot(data=jobs, x="policy", y=metric, order=order, hue="policy", hue_order=order, palette=pal,
                      k_depth=4, ax=ax, legend=False, flier_kws={"s": 2})
        if metric == "waiting":
            _symlog(ax)
            ax.set_ylim(bottom=0)
        else:
            ax.set_yscale("log")
        ax.set_ylabel(LABELS[metric])
        ax.set_xlabel("")
        ax.tick_params(axis="x", rotation=30)
    fig.tight_layout()
    return [Figure("boxen", "Distributions (boxenplots, depth 4)", fig,
                   "letter-value plots of all jobs of all runs per policy; symlog scale")]


def tail(runs, jobs, *, baseline=None, tail_jobs: int = 50, seed: int = 0, **_) -> list[Figure]:
    """Strip plot drawn with matplotlib (seaborn's jitter draws from numpy's global state)."""
    plt = _plt()
    jobs = _jobs_with_policy(runs, jobs)
    order = policies(runs, baseline)
    pal = _policy_palette(order)
    worst = (jobs.sort_values(["policy", "waiting", "run", "job_id"], ascending=[True, False, True, True],
                              kind="stable").groupby("policy", sort=False).head(tail_jobs))
    rng = np.random.default_rng(seed)
    fig, ax = plt.subplots(figsize=(8, 3.8))
    for i, p in enumerate(order):
        v = worst.loc[worst["policy"] == p, "waiting"].to_numpy(float)
        ax.scatter(i + rng.uniform(-0.25, 0.25, v.size), v, s=9, color=pal[p], alpha=0.8, edgecolor="none")
    ax.set_xticks(range(len(order)), order, rotation=30, ha="right")
    ax.set_ylabel(LABELS["waiting"])
    fig.tight_layout()
    return [Figure("tail", f"Tail: the {tail_jobs} longest waits per policy", fig,
                   f"the {tail_jobs} jobs with the longest waiting time of each policy, all runs pooled")]


def ci(runs, jobs, *, baseline=None, seed: int = 0, n_resamples: int = 1000, **_) -> list[Figure]:
    plt = _plt()
    jobs = _jobs_with_policy(runs, jobs)
    order = policies(runs, baseline)
    pal = _policy_palette(order)
    metrics = ("waiting", "bounded_slowdown")
    groups = {p: g for p, g in jobs.groupby("policy", sort=False)}
    means, lo, hi = (np.full((len(order), len(metrics)), np.nan) for _ in range(3))
    for i, p in enumerate(order):
        if p in groups:
            v = groups[p][list(metrics)].to_numpy(float)
            means[i] = np.nanmean(v, axis=0)
            lo[i], hi[i] = bootstrap_ci(v, seed=seed, n_resamples=n_resamples)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    x = np.arange(len(order))
    for j, (ax, metric) in enumerate(zip(axes, metrics)):
        ax.bar(x, means[:, j], color=[pal[p] for p in order])
        ax.errorbar(x, means[:, j], yerr=[means[:, j] - lo[:, j], hi[:, j] - means[:, j]], fmt="none",
                    ecolor="black", capsize=4)
        ax.set_xticks(x, order, rotation=30, ha="right")
        ax.set_ylabel(f"mean {LABELS[metric]}")
    fig.tight_layout()
    return [Figure("ci", "Means with 95 % bootstrap confidence intervals", fig,
                   f"bootstrap over jobs, {n_resamples} resamples, percentile method, seed {seed}")]


def normalised_table(runs: pd.DataFrame, baseline: str, metrics: Sequence[str]) -> pd.DataFrame:
    """Per run: each metric divided by the baseline policy's value on the same setting."""
    label = settings(runs)
    base = runs[runs["policy"] == baseline].assign(_s=label[runs["policy"] == baseline])
    base = base.drop_duplicates("_s").set_index("_s")
    out = runs[["run", "policy"]].copy()
    out["setting"] = label
    for m in metrics:
        ref = label.map(base[m]) if m in base.columns else np.nan
        with np.errstate(divide="ignore", invalid="ignore"):
            out[m] = runs[m].to_numpy(float) / pd.to_numeric(ref, errors="coerce").to_numpy(float)
    return out


NORMALISED_METRICS = ("mean_waiting", "mean_bounded_slowdown", "mean_turnaround", "makespan", "utilisation")


def normalised(runs, jobs, *, baseline=None, **_) -> list[Figure]:
    plt = _plt()
    order = policies(runs, baseline)
    base = baseline if baseline in order else order[0]
    metrics = [m for m in NORMALISED_METRICS if m in runs.columns]
    table = normalised_table(runs, base, metrics)
    pal = _policy_palette(order)
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.0 * len(metrics), 3.6), squeeze=False)
    for ax, m in zip(axes[0], metrics):
        data = [table.loc[table["policy"] == p, m].dropna().to_numpy() for p in order]
        bp = ax.boxplot(data, patch_artist=True, widths=0.6)
        for patch, p in zip(bp["boxes"], order):
            patch.set_facecolor(pal[p])
        ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
        ax.set_xticks(range(1, len(order) + 1), order, rotation=40, ha="right")
        ax.set_title(f"{LABELS.get(m, m)} / {base}")
    fig.tight_layout()
    n = table["setting"].nunique()
    return [Figure("normalised", f"Means normalised to {base}", fig,
                   f"each run's mean divided by {base}'s on the same setting; box over {n} setting(s)")]


def series_of_run(run_row: pd.Series, jobs: pd.DataFrame, grid: np.ndarray) -> dict[str, np.ndarray]:
    """Queue loads and utilisations of one run resampled on ``grid``, normalised by the
    run's capacities (module :mod:`coburst.analysis.timeseries`)."""
    nb = float(run_row.get("nb_compute") or np.nan)
    cap = float(run_row.get("bb_capacity")) if pd.notna(run_row.get("bb_capacity")) else np.nan
    s, st, f = jobs["submit"].to_numpy(float), jobs["start"].to_numpy(float), jobs["finish"].to_numpy(float)
    n, bb = jobs["nodes"].to_numpy(float), jobs["bb_bytes"].to_numpy(float)
    out = {}
    for key, (on, off, w, c) in {"queue_compute": (s, st, n, nb), "queue_storage": (s, st, bb, cap),
                                 "util_compute": (st, f, n, nb), "util_bb": (st, f, bb, cap)}.items():
        if not np.isfinite(w).all() or not np.isfinite(c) or c <= 0:
            out[key] = np.full(grid.size, np.nan)
            continue
        t, v = timeseries.step(on, off, w)
        out[key] = timeseries.resample(t, v, grid) / c
    return out


def timeseries_plot(runs, jobs, *, baseline=None, max_runs: int = 5, points: int = 600, **_) -> list[Figure]:
    plt = _plt()
    order = policies(runs, baseline)
    pal = _policy_palette(order)
    out = []
    titles = {"queue_compute": "queue compute load (requested nodes / nodes)",
              "queue_storage": "queue storage load (requested BB / BB capacity)",
              "util_compute": "compute utilisation", "util_bb": "burst-buffer utilisation"}
    by_run = {r: g for r, g in jobs.groupby("run", sort=False)}
    for k, (setting, sel) in enumerate(_timeseries_settings(runs, max_runs)):
        sel = sel.set_index("policy").reindex([p for p in order if p in set(sel["policy"])]).reset_index()
        with_jobs = [r for r in sel["run"] if r in by_run and len(by_run[r])]
        if not with_jobs:
            continue  # runs whose every job was rejected: nothing happened in time
        t1 = max(float(by_run[r]["finish"].max()) for r in with_jobs)
        t0 = min(float(by_run[r]["submit"].min()) for r in with_jobs)
        grid = np.linspace(t0, t1, points)
        fig, axes = plt.subplots(4, 1, figsize=(9, 8), sharex=True)
        for _, r in sel.iterrows():
            if r["run"] not in by_run:
                continue
            ser = series_of_run(r, by_run[r["run"]], grid)
            for ax, key in zip(axes, titles):
                ax.step(grid, ser[key], where="post", color=pal[r["policy"]], label=r["policy"], linewidth=0.9)
        for ax, key in zip(axes, titles):
            ax.set_title(titles[key], loc="left")
            if not ax.lines or all(np.isnan(line.get_ydata()).all() for line in ax.lines):
                ax.text(0.5, 0.5, "not available (no BB requests or capacity)", transform=ax.transAxes,
                        ha="center", va="center", color="grey")
        axes[0].legend(loc="upper right", fontsize=7, ncol=2)
        axes[-1].set_xlabel("time (s)")
        fig.tight_layout()
        out.append(Figure(f"timeseries_{k}", f"Queue load and utilisation over time: {setting}", fig,
                          f"{setting}; {points} points, loads relative to the platform's capacity"))
    return out


def pareto_front(x: np.ndarray, y: np.ndarray, minimise_x=True, maximise_y=True) -> np.ndarray:
    """Indices of the non-dominated points, by increasing x."""
    xs = x if minimise_x else -x
    ys = -y if maximise_y else y
    keep = []
    for i in range(len(x)):
        if not (np.isfinite(xs[i]) and np.isfinite(ys[i])):
            continue
        dominated = np.any((xs <= xs[i]) & (ys <= ys[i]) & ((xs < xs[i]) | (ys < ys[i])))
        if not dominated:
            keep.append(i)
    return np.array(sorted(keep, key=lambda i: xs[i]), dtype=int)


def pareto(runs, jobs, *, baseline=None, pareto_x: str = "mean_bounded_slowdown", pareto_y: str = "utilisation",
           **_) -> list[Figure]:
    plt = _plt()
    for m in (pareto_x, pareto_y):
        if m not in runs.columns:
            raise InputError("--pareto", m, f"no such metric; one of {', '.join(metric_columns(runs))}")
    order = policies(runs, baseline)
    means = runs.groupby("policy", sort=False)[[pareto_x, pareto_y]].mean().reindex(order)
    x, y = means[pareto_x].to_numpy(float), means[pareto_y].to_numpy(float)
    front = pareto_front(x, y)
    pal = _policy_palette(order)
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for i, p in enumerate(order):
        ax.scatter([x[i]], [y[i]], color=pal[p], s=40, zorder=3, label=p,
                   edgecolor="black" if i in set(front) else "none")
        ax.annotate(p, (x[i], y[i]), textcoords="offset points", xytext=(4, 4), fontsize=7)
    if len(front):
        ax.plot(x[front], y[front], color="black", linewidth=0.8, linestyle="--", zorder=2, label="Pareto front")
    ax.set_xlabel(f"{LABELS.get(pareto_x, pareto_x)} (lower is better)")
    ax.set_ylabel(f"{LABELS.get(pareto_y, pareto_y)} (higher is better)")
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return [Figure("pareto", "Pareto plot", fig, f"means over runs per policy; front: {', '.join(order[i] for i in front)}")]


CORR_METRICS = ("mean_waiting", "p90_waiting", "max_waiting", "mean_turnaround", "mean_slowdown",
                "mean_bounded_slowdown", "makespan", "utilisation", "bb_utilisation", "queue_load_compute",
                "queue_load_storage", "cosched_mean_slowdown", "cosched_mean_slowdown_per_processor",
                "cosched_mean_job_speedup", "cosched_weighted_mean_job_speedup", "cosched_slowdown_count_percent")


def corr(runs, jobs, **_) -> list[Figure]:
    plt = _plt()
    cols = [c for c in CORR_METRICS if c in runs.columns]
    data = runs[cols].apply(pd.to_numeric, errors="coerce")
    cols = [c for c in cols if data[c].notna().sum() >= 3 and data[c].nunique() > 1]
    if len(runs) < 3 or len(cols) < 2:
        return []
    data = data[cols]
    fig, axes = plt.subplots(1, 3, figsize=(4.2 * 3 + 1, 4.6))
    for ax, method in zip(axes, ("pearson", "kendall", "spearman")):
        c = data.corr(method=method).to_numpy()
        im = ax.imshow(c, vmin=-1, vmax=1, cmap="RdBu_r")
        ax.set_xticks(range(len(cols)), cols, rotation=90, fontsize=6)
        ax.set_yticks(range(len(cols)), cols if ax is axes[0] else [""] * len(cols), fontsize=6)
        ax.set_title(method.capitalize())
        if len(cols) <= 10:
            for i in range(len(cols)):
                for j in range(len(cols)):
                    if np.isfinite(c[i, j]):
                        ax.text(j, i, f"{c[i, j]:.2f}", ha="center", va="center", fontsize=5)
    fig.subplots_adjust(left=0.17, right=0.9, bottom=0.3, top=0.92, wspace=0.08)
    fig.colorbar(im, ax=list(axes), shrink=0.8)
    return [Figure("corr", "Correlations between metrics", fig, f"over {len(runs)} runs")]


FUNCTIONS = {"gantt": gantt, "boxen": boxen, "tail": tail, "ci": ci, "normalised": normalised,
             "timeseries": timeseries_plot, "pareto": pareto, "corr": corr}


def make(kind: str, runs: pd.DataFrame, jobs: pd.DataFrame, **options) -> list[Figure]:
    """Figures of one kind (module doc)."""
    if kind not in FUNCTIONS:
        raise InputError("--kind", kind, f"unknown kind; one of {', '.join(KINDS)}")
    if runs.empty:
        raise InputError("tables", None, "no run to plot")
    return FUNCTIONS[kind](runs, jobs, **options)
