"""evalys 4.0.7 on pandas 3 and current matplotlib: what breaks and coburst's workarounds.

Found by running evalys 4.0.7 on pandas 3.1.1 / matplotlib 3.10+ (``tests/test_evalys_compat.py``
has one test per workaround that fails on the plain evalys call):

==========================================  ==================================================  ====================================
evalys call                                 what happens                                        workaround here
==========================================  ==================================================  ====================================
``Workload.from_csv(swf)``                  ``TypeError``: ``read_csv(delim_whitespace=)`` was   :func:`read_swf`
                                            removed in pandas 3
``JobSet.fragmentation()`` /                ``AttributeError``: ``Series.set_value`` removed     :func:`fragmentation`
``metrics.fragmentation``                   (pandas 1.0)
``Workload.arriving_each_day`` / ``_hour``  ``SpecificationError``: dict "renamer" in            :func:`arriving_each_day`,
and ``fraction_jobs_by_job_size``           ``SeriesGroupBy.agg`` (removed in pandas 1.0)        :func:`arriving_each_hour`,
                                                                                                 :func:`fraction_jobs_by_job_size`
``visu.details.plot_details``               ``TypeError``: ``SeriesVisualization.build()``       :func:`plot_details`
                                            needs ``legend_label``; then ``get_shared_x_axes()
                                            .join`` (removed in matplotlib 3.8)
``visu.series.plot_series``                 ``legend_label`` is a required keyword               pass it (:func:`plot_details`)
``visu.gantt.plot_gantt``                   works, but returns nothing (the figure is only in    :func:`gantt` returns the figure,
                                            pyplot's state) and labels every job (unreadable     no labels by default
                                            with thousands of jobs); ``labeler=False`` fails
``Workload.plot``                           ``TypeError``: passes ``load_label`` that            :func:`plot_workload`
                                            ``legacy.plot_load`` no longer takes
``JobSet.from_csv``, ``free_intervals``,    work, with ``Pandas4Warning`` (``inplace=`` of       :func:`quiet` / :func:`jobset_from_csv`
``detailed_utilisation``                    ``rename``/``set_index``, incompatible dtype         filter these warnings raised
                                            set-item) on every call                              from evalys's modules only
==========================================  ==================================================  ====================================

Works unchanged: ``JobSet`` (from a DataFrame or CSV), ``.utilisation``, ``.queue``,
``.free_slots``, ``.free_resources_gaps``, ``.mean_utilisation``, ``.reset_time``,
``.to_csv``; ``Workload(df)`` with ``.queue``, ``.utilisation``, ``.to_csv`` and (given the
SWF header's ``MaxProcs``, which :func:`read_swf` keeps) ``extract_periods_with_given_utilisation``;
``visu.legacy.plot_load``, ``plot_job_details``, ``plot_series``; ``visu.lifecycle``.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd

from coburst.errors import InputError

SWF_COLUMNS = ["jobID", "submission_time", "waiting_time", "execution_time", "proc_alloc", "cpu_used", "mem_used",
               "proc_req", "user_est", "mem_req", "status", "uid", "gid", "exe_num", "queue", "partition",
               "prev_jobs", "think_time"]

#: pandas' future-behaviour warnings raised from evalys's own code (never from ours)
_EVALYS_MODULES = r"evalys(\.|$)"


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Silence pandas' FutureWarning / DeprecationWarning (``Pandas4Warning``...) raised
    *from evalys's modules* -- those are evalys's to fix; the same warnings raised by any
    other module still show."""
    with warnings.catch_warnings():
        for category in (FutureWarning, DeprecationWarning, PendingDeprecationWarning):
            warnings.filterwarnings("ignore", category=category, module=_EVALYS_MODULES)
        yield


def jobset_from_csv(path: str | Path, resource_bounds=None):
    """``evalys.jobset.JobSet.from_csv`` without evalys's pandas warnings."""
    from evalys.jobset import JobSet

    with quiet():
        return JobSet.from_csv(str(path), resource_bounds=resource_bounds)


def jobset_from_jobs(jobs: pd.DataFrame, resource_bounds=None):
    """A ``JobSet`` from coburst's per-job table (:mod:`coburst.analysis.tables`) or from a
    Batsim ``_jobs.csv`` DataFrame; jobs without allocation are dropped."""
    from evalys.jobset import JobSet
    from procset import ProcSet

    if "submit" in jobs.columns:  # coburst's per-job table
        df = pd.DataFrame({"job_id": jobs["job_id"].astype(str).to_numpy(object),
                           "submission_time": jobs["submit"].to_numpy(float),
                           "starting_time": jobs["start"].to_numpy(float),
                           "finish_time": jobs["finish"].to_numpy(float),
                           "execution_time": jobs["runtime"].to_numpy(float),
                           "waiting_time": jobs["waiting"].to_numpy(float),
                           "requested_number_of_resources": jobs["nodes"].to_numpy(float),
                           "allocated_resources": jobs["allocated_resources"].astype(str).to_numpy(object)})
    else:
        df = jobs.copy()
        df["allocated_resources"] = df["allocated_resources"].astype(str)
    df = df[df["allocated_resources"].str.strip().ne("") & df["allocated_resources"].ne("nan")].copy()
    if df.empty:
        raise InputError("jobs", None, "no job with an allocation: nothing to draw")
    df["allocated_resources"] = [ProcSet.from_str(a) for a in df["allocated_resources"]]
    with quiet():
        return JobSet(df.reset_index(drop=True), resource_bounds=resource_bounds)


def read_swf(path: str | Path):
    """``evalys.workload.Workload.from_csv`` for SWF files on pandas 3 (whitespace-separated
    columns read with ``sep=r"\\s+"``; header ``; Key: value`` lines become attributes such
    as ``MaxProcs``, ``UnixStartTime``; checkpoint records, status > 1, dropped as evalys does)."""
    from evalys.workload import Workload

    source = str(path)
    metadata: dict[str, str] = {}
    try:
        with open(source, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if not line.startswith(";"):
                    break
                m = re.search(r"^;\s(.*?):\s(.*)", line)
                if m:
                    metadata[m.group(1).strip()] = " ".join(m.group(2).split())
        df = pd.read_csv(source, comment=";", names=SWF_COLUMNS, header=None, sep=r"\s+")
    except FileNotFoundError:
        raise InputError(source, None, "SWF file not found") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise InputError(source, None, f"not an SWF file: {exc}") from None
    if df.shape[1] != len(SWF_COLUMNS) or df.isna().any().any():
        raise InputError(source, None, f"not an SWF file: expected {len(SWF_COLUMNS)} fields per line")
    df = df[df["status"] <= 1]
    with quiet():
        return Workload(df, "swf", **{k.replace(" ", ""): v for k, v in metadata.items()})


def fragmentation(jobset, p: int = 2) -> pd.Series:
    """``JobSet.fragmentation()`` (Gehr and Schneider, CCGRID 2009): for each resource,
    ``1 - sum(f^p) / (sum f)^p`` over its free slots ``f``; 0 without free slot."""
    with quiet():
        gaps = jobset.free_resources_gaps()
    values = []
    for fi in gaps:
        fi = np.asarray(fi, dtype=float)
        values.append(0.0 if fi.size == 0 else float(1 - (np.sum(fi ** p) / np.sum(fi) ** p)))
    return pd.Series(values, dtype=float)


def _by_period(workload, fmt: str, name: str) -> pd.DataFrame:
    import datetime

    df = workload.df
    start = int(workload.UnixStartTime)
    period = [datetime.datetime.fromtimestamp(start + t, tz=datetime.timezone.utc).strftime(fmt)
              for t in df["submission_time"]]
    grouped = df.assign(**{name: period}).groupby(name)
    max_jobs = getattr(workload, "MaxJobs", len(df)) or len(df)
    out = pd.DataFrame({"jobs": grouped["jobID"].count().astype(float) / max_jobs,
                        "procs": grouped["proc_req"].sum().astype(float) / df["proc_req"].sum()})
    return out


def arriving_each_day(workload) -> pd.DataFrame:
    """``Workload.arriving_each_day``: share of jobs (of ``MaxJobs``) and of requested
    processors submitted on each day of the week (``Mon``..``Sun``; UTC, evalys used the
    machine's local time zone)."""
    out = _by_period(workload, "%u", "day")
    days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    out.index = [days[int(d) - 1] for d in out.index]
    return out


def arriving_each_hour(workload) -> pd.DataFrame:
    """``Workload.arriving_each_hour``: the same per hour of the day (``"00"`` to ``"23"``, UTC)."""
    return _by_period(workload, "%H", "hour")


def fraction_jobs_by_job_size(workload) -> pd.DataFrame:
    """``Workload.fraction_jobs_by_job_size``: share of jobs per allocated processor count."""
    df = workload.df
    return pd.DataFrame({"jobs": df.groupby("proc_alloc")["jobID"].count().astype(float) / len(df)})


def gantt(jobset, *, title: str = "Gantt chart", labels: bool = False, **kwargs):
    """``evalys.visu.gantt.plot_gantt`` returning its figure: draws through evalys's
    ``GanttVisualization``; jobs unlabelled unless ``labels`` (evalys labels every job)."""
    from evalys import utils
    from evalys.visu import core
    from evalys.visu import gantt as egantt

    layout = core.SimpleLayout(wtitle=title)
    plot = layout.inject(egantt.GanttVisualization, spskey="all", title=title)
    if not labels:
        plot.labeler = egantt.NOLABEL
        plot._annotate = _no_annotation  # evalys adds an (empty) annotation artist per job otherwise
        plot._draw = lambda df: _fast_draw(plot, df)
    utils.bulksetattr(plot, **kwargs)
    with quiet():
        plot.build(jobset)
    return layout.fig


def _no_annotation(rect, label):
    return None


def _fast_draw(plot, df) -> None:
    """evalys's ``GanttVisualization._draw`` (one rectangle per job and allocation interval,
    evalys's colours, alpha and edges) as one ``PolyCollection`` instead of one artist per
    rectangle added through ``DataFrame.apply`` -- 2.8 s for 1800 jobs, over a second more
    to render."""
    import functools

    from matplotlib.collections import PolyCollection

    colorer = functools.partial(plot.colorer, palette=plot.palette)
    verts, colors = [], []
    for job in df.to_dict("records"):
        x0, d = job["starting_time"], job["execution_time"]
        c = colorer(job)
        for itv in job["allocated_resources"].intervals():
            y0, y1 = itv.inf, itv.sup + 1
            verts.append(((x0, y0), (x0 + d, y0), (x0 + d, y1), (x0, y1)))
            colors.append(c)
    plot._ax.add_collection(PolyCollection(verts, facecolors=colors, edgecolors="black", linewidths=0.5,
                                           alpha=plot.alpha))


def plot_details(jobset, *, title: str = "Workload overview", **kwargs):
    """``evalys.visu.details.plot_details`` working on current evalys and matplotlib:
    utilisation, queue, job life cycles and Gantt chart in four stripes with a shared
    time axis; returns the figure."""
    from evalys import utils
    from evalys.visu import details, gantt as egantt, lifecycle, series

    layout = details.DetailsLayout(wtitle=title)
    visualizations = {"gantt": egantt.GanttVisualization, "lifecycle": lifecycle.LifecycleVisualization,
                      "queue": series.QueueSeriesVisualization,
                      "utilization": series.UtilizationSeriesVisualization}
    with quiet():
        for key, cls in visualizations.items():
            plot = layout.inject(cls, spskey=key)
            if key == "gantt":
                plot.labeler = egantt.NOLABEL
                plot._annotate = _no_annotation
            utils.bulksetattr(plot, **kwargs)
            if issubclass(cls, series.SeriesVisualization):
                plot.build(jobset, legend_label=key)
            else:
                plot.build(jobset)
    layout.fig.set_size_inches(10, 10)
    axes = layout.fig.get_axes()
    for a in axes[1:]:
        if a.get_shared_x_axes().get_siblings(a) == [a]:  # not yet shared (evalys shares some)
            a.sharex(axes[0])
    layout.fig.tight_layout()
    return layout.fig


def plot_workload(workload, *, normalize: bool = False):
    """``Workload.plot()`` (utilisation and queue over time) on current evalys, whose
    ``plot_load`` lost the ``load_label`` keyword ``Workload.plot`` still passes; returns
    the figure."""
    import matplotlib.pyplot as plt
    from evalys.visu import legacy

    fig, axes = plt.subplots(nrows=2, sharex=True, figsize=(10, 6))
    with quiet():
        for ax, name in zip(axes, ("utilisation", "queue")):
            legacy.plot_load(getattr(workload, name), workload.MaxProcs, ax=ax, normalize=normalize,
                             legend_label=name, UnixStartTime=workload.UnixStartTime,
                             TimeZoneString=getattr(workload, "TimeZoneString", "UTC"))
    return fig
