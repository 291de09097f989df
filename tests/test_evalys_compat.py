"""evalys 4.0.7 on pandas 3: each workaround of :mod:`coburst.analysis.evalys_compat` next
to the plain evalys call it replaces, which fails (so each test fails without its workaround)."""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from shared_data import need_swf  # noqa: E402

from coburst.analysis import evalys_compat as ec  # noqa: E402

evalys = pytest.importorskip("evalys")
from evalys.jobset import JobSet  # noqa: E402
from evalys.workload import Workload  # noqa: E402


@pytest.fixture(scope="module")
def swf(tmp_path_factory):
    src = need_swf().read_text().splitlines()
    header = [line for line in src[:60] if line.startswith(";")]
    body = [line for line in src if not line.startswith(";")][:300]
    p = tmp_path_factory.mktemp("swf") / "kth300.swf"
    p.write_text("\n".join(header + body) + "\n")
    return p


@pytest.fixture(scope="module")
def jobs_csv(tmp_path_factory):
    from analyze_support import ALLOC, first_jobs, run

    root = tmp_path_factory.mktemp("ev")
    return f"{run('fcfs', first_jobs(ALLOC, root / 'w.json', 30, 40), root / 'o')}_jobs.csv"


def test_read_swf(swf):
    with pytest.raises(TypeError, match="delim_whitespace"):
        Workload.from_csv(str(swf))
    w = ec.read_swf(swf)
    assert len(w.df) == 300 and w.MaxProcs == 100 and w.UnixStartTime == 843480031
    assert w.queue is not None and w.utilisation is not None


def test_fragmentation(jobs_csv):
    js = ec.jobset_from_csv(jobs_csv)
    with pytest.raises(AttributeError, match="set_value"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        js.fragmentation()
    f = ec.fragmentation(js)
    assert len(f) == js.MaxProcs and ((f >= 0) & (f <= 1)).all()
    with ec.quiet():
        gaps = js.free_resources_gaps()
    g0 = np.asarray(gaps[0], dtype=float)
    assert f[0] == pytest.approx(0 if g0.size == 0 else 1 - (g0 ** 2).sum() / g0.sum() ** 2)


@pytest.mark.parametrize("name", ["arriving_each_day", "arriving_each_hour", "fraction_jobs_by_job_size"])
def test_arrival_statistics(swf, name):
    w = ec.read_swf(swf)
    with pytest.raises(pd.errors.SpecificationError):
        getattr(w, name)
    out = getattr(ec, name)(ec.read_swf(swf))
    assert out["jobs"].sum() == pytest.approx(300 / (w.MaxJobs if name != "fraction_jobs_by_job_size" else 300))
    if name != "fraction_jobs_by_job_size":
        assert out["procs"].sum() == pytest.approx(1.0)


def test_plot_details(jobs_csv):
    from evalys.visu import details

    js = ec.jobset_from_csv(jobs_csv)
    with pytest.raises(TypeError, match="legend_label"):
        details.plot_details(js)
    fig = ec.plot_details(js)
    assert len(fig.axes) >= 4


def test_plot_workload(swf):
    w = ec.read_swf(swf)
    with pytest.raises(TypeError, match="load_label"):
        w.plot()
    fig = ec.plot_workload(w)
    assert len(fig.axes) == 2 and fig.axes[0].lines


def test_gantt_returns_figure_without_labels(jobs_csv):
    from evalys.visu import gantt

    js = ec.jobset_from_csv(jobs_csv)
    assert gantt.plot_gantt(js) is None  # evalys gives no handle on its figure
    with pytest.raises(TypeError):
        gantt.plot_gantt(js, labeler=False)
    fig = ec.gantt(js)
    ax = fig.axes[0]
    assert not ax.texts  # no per-job annotation
    n_rects = sum(len(list(a.intervals())) for a in js.df["allocated_resources"])
    assert sum(len(c.get_paths()) for c in ax.collections) == n_rects


def test_warnings_of_evalys_silenced_only(jobs_csv):
    with warnings.catch_warnings(record=True) as raw:
        warnings.simplefilter("always")
        JobSet.from_csv(jobs_csv)
    assert any("evalys" in w.filename for w in raw)  # evalys warns on pandas 3
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        ec.jobset_from_csv(jobs_csv)
        with ec.quiet():
            warnings.warn("not from evalys", FutureWarning)
    assert [str(w.message) for w in ours] == ["not from evalys"]
