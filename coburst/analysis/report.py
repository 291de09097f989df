"""One self-contained HTML report of a set of runs (``coburst report``).

:func:`build_report` writes one HTML file: every figure of :mod:`coburst.analysis.plots`
embedded as a base64 PNG (``<img src="data:image/png;base64,...">``), a summary per policy
(means over runs, and ratios to the baseline), the run table; tables are sortable by
clicking a header (a few lines of inline JavaScript; no CDN, no network, opens from
``file://``).  A JSON manifest (``<script type="application/json" id="manifest">``) lists
the figures and tables, so that a test can check that each one is in the page.  On load, an
inline script marks images that failed to decode (``data-broken="1"``) and records the
count on ``<body data-images-ok=... data-images-broken=...>``.

Deterministic: the same tables give the same bytes (no date; figures as in
:func:`coburst.analysis.plots.render`).
"""

from __future__ import annotations

import base64
import html
import json
import math
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from coburst.analysis import plots
from coburst.analysis.metrics import TAU
from coburst.analysis.tables import group_columns, metric_columns
from coburst.errors import InputError

SUMMARY_METRICS = ("mean_waiting", "p90_waiting", "max_waiting", "mean_bounded_slowdown", "mean_slowdown",
                   "mean_turnaround", "makespan", "utilisation", "bb_utilisation", "queue_load_compute",
                   "queue_load_storage", "cosched_mean_slowdown", "cosched_mean_job_speedup",
                   "cosched_slowdown_count_percent")
#: higher is better for these (ratios to the baseline are read the other way)
HIGHER_BETTER = ("utilisation", "bb_utilisation", "cosched_mean_job_speedup")

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.8em}
figure{margin:1em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.85em;color:#555}
table{border-collapse:collapse;font-size:.8em;margin:.5em 0}
th,td{border:1px solid #ddd;padding:.2em .5em;text-align:right;white-space:nowrap}
th{background:#f3f3f3;cursor:pointer;user-select:none;position:sticky;top:0}
th[data-sort=asc]::after{content:' \\25B2'}th[data-sort=desc]::after{content:' \\25BC'}
td.t,th.t{text-align:left}.wrap{overflow:auto;max-height:36em}.notes{color:#a50}
"""

JS = """
(function(){
function key(row,i){var c=row.cells[i];var v=c.getAttribute('data-v');
 if(v!==null&&v!==''){var f=parseFloat(v);if(!isNaN(f))return f;}return null;}
function sortBy(th){var table=th.closest('table');var tbody=table.tBodies[0];
 var i=Array.prototype.indexOf.call(th.parentNode.children,th);
 var dir=th.getAttribute('data-sort')==='asc'?'desc':'asc';
 Array.prototype.forEach.call(th.parentNode.children,function(h){h.removeAttribute('data-sort');});
 th.setAttribute('data-sort',dir);var s=dir==='asc'?1:-1;
 var rows=Array.prototype.slice.call(tbody.rows);
 rows.sort(function(a,b){var x=key(a,i),y=key(b,i);
  if(x!==null&&y!==null)return s*(x-y);if(x!==null)return -1;if(y!==null)return 1;
  return s*a.cells[i].textContent.localeCompare(b.cells[i].textContent);});
 rows.forEach(function(r){tbody.appendChild(r);});}
document.querySelectorAll('table.sortable th').forEach(function(th){
 th.addEventListener('click',function(){sortBy(th);});});
function checkImages(){var ok=0,bad=0;document.querySelectorAll('img').forEach(function(im){
  if(im.complete&&im.naturalWidth>0&&im.getAttribute('data-broken')!=='1'){ok++;}else{bad++;im.setAttribute('data-broken','1');}});
 document.body.setAttribute('data-images-ok',ok);document.body.setAttribute('data-images-broken',bad);}
if(document.readyState==='complete')checkImages();else window.addEventListener('load',checkImages);
})();
"""


def _fmt(v) -> tuple[str, str]:
    """(text, data-v) of a cell."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-", ""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v)), ""
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}", str(int(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isinf(f):
            return str(f), ""
        a = abs(f)
        text = f"{f:,.0f}" if a >= 1000 else f"{f:.3g}" if a < 0.01 and f != 0 else f"{f:,.3f}".rstrip("0").rstrip(".")
        return text, repr(f)
    return str(v), ""


def html_table(df: pd.DataFrame, table_id: str, text_cols: Sequence[str] = ()) -> str:
    """A sortable HTML table of ``df`` (numbers carry their raw value in ``data-v``)."""
    esc = html.escape
    out = [f'<div class="wrap"><table class="sortable" id="{esc(table_id)}"><thead><tr>']
    for c in df.columns:
        cls = ' class="t"' if c in text_cols or df[c].dtype == object or str(df[c].dtype) == "str" else ""
        out.append(f"<th{cls}>{esc(str(c))}</th>")
    out.append("</tr></thead><tbody>")
    cols = list(df.columns)
    textual = {c for c in cols if c in text_cols or df[c].dtype == object or str(df[c].dtype) == "str"}
    for row in df.itertuples(index=False, name=None):
        out.append("<tr>")
        for c, v in zip(cols, row):
            text, dv = _fmt(v)
            attrs = (' class="t"' if c in textual else "") + (f' data-v="{dv}"' if dv else "")
            out.append(f"<td{attrs}>{esc(text)}</td>")
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def resolve_baseline(runs_df: pd.DataFrame, baseline: str | None) -> str | None:
    """The policy label named by ``baseline`` (a policy label, or a scheduler name that
    designates one policy); InputError when it names none."""
    if baseline is None:
        return None
    labels = list(dict.fromkeys(runs_df["policy"].astype(str)))
    if baseline in labels:
        return baseline
    if "scheduler" in runs_df.columns:
        match = list(dict.fromkeys(runs_df.loc[runs_df["scheduler"].astype(str) == baseline, "policy"].astype(str)))
        if len(match) == 1:
            return match[0]
        if len(match) > 1:
            raise InputError("--baseline", baseline, f"names several policies ({', '.join(match)}); give one of them")
    raise InputError("--baseline", baseline, f"no such policy; policies: {', '.join(labels)}")


def summary_table(runs_df: pd.DataFrame, baseline: str | None) -> pd.DataFrame:
    """Per policy: runs, means over runs of the summary metrics, and with a baseline the
    mean over settings of the ratio to the baseline's value on the same setting."""
    metrics = [m for m in SUMMARY_METRICS if m in metric_columns(runs_df)]
    order = plots.policies(runs_df, baseline)
    g = runs_df.groupby("policy", sort=False)
    out = pd.DataFrame({"policy": order, "runs": g.size().reindex(order).to_numpy()})
    for m in metrics:
        out[m] = g[m].mean().reindex(order).to_numpy(float)
    if baseline:
        ratios = plots.normalised_table(runs_df, baseline, metrics)
        rg = ratios.groupby("policy", sort=False)
        for m in ("mean_waiting", "mean_bounded_slowdown", "makespan", "utilisation"):
            if m in metrics:
                out[f"{m} / {baseline}"] = rg[m].mean().reindex(order).to_numpy(float)
    return out


def _img(fig: plots.Figure) -> str:
    data = base64.b64encode(plots.render(fig.figure, "png")).decode("ascii")
    esc = html.escape
    return (f'<figure id="fig-{esc(fig.name)}" data-figure="{esc(fig.name)}"><img alt="{esc(fig.title)}" '
            f'src="data:image/png;base64,{data}" onerror="this.setAttribute(\'data-broken\',\'1\')">'
            f"<figcaption>{esc(fig.title)}: {esc(fig.caption)}</figcaption></figure>")


def build_report(runs_df: pd.DataFrame, jobs_df: pd.DataFrame, out_html: str | Path, baseline: str | None = None,
                 *, title: str = "coburst report", kinds: Sequence[str] = plots.KINDS, max_gantt: int = 3,
                 max_timeseries: int = 2, seed: int = 0, detail_jobs: pd.DataFrame | None = None,
                 n_jobs: int | None = None) -> dict:
    """Write the HTML report of ``runs_df`` / ``jobs_df`` (:func:`coburst.analysis.tables.analyze`)
    to ``out_html`` atomically and return its manifest (``{"figures": [names], "tables":
    [ids], "runs": n, "baseline": label}``).

    ``baseline``: a policy label or a scheduler name (ratios and normalised plots against
    it; default: the first policy).  ``kinds``: figure kinds (:data:`coburst.analysis.plots.KINDS`);
    ``max_gantt`` Gantt charts (one per policy of the first setting), ``max_timeseries``
    settings in the time-series figures.  ``detail_jobs`` / ``n_jobs`` (:func:`report_outputs`):
    ``jobs_df`` then holds only the distribution columns, the Gantt charts and time series read
    ``detail_jobs``, and the page counts ``n_jobs``.  Raises :class:`coburst.errors.InputError` for an
    unknown baseline or kind, or empty tables."""
    from coburst.fileio import atomic_write

    if runs_df is None or runs_df.empty:
        raise InputError("report", None, "no run to report")
    for k in kinds:
        if k not in plots.KINDS:
            raise InputError("--kinds", k, f"unknown kind; one of {', '.join(plots.KINDS)}")
    base = resolve_baseline(runs_df, baseline) or plots.policies(runs_df)[0]
    plt = plots._plt()
    esc = html.escape
    figures_html, names = [], []
    for kind in kinds:
        opts = {"baseline": base, "seed": seed}
        if kind == "gantt":
            opts["max_runs"] = max_gantt
        if kind == "timeseries":
            opts["max_runs"] = max_timeseries
        try:
            per_run = detail_jobs is not None and kind in ("gantt", "timeseries")
            figs = plots.make(kind, runs_df, detail_jobs if per_run else jobs_df, **opts)
        except InputError:
            raise
        for f in figs:
            figures_html.append(f'<section class="kind-{esc(kind)}"><h3>{esc(f.title)}</h3>{_img(f)}</section>')
            names.append(f.name)
            plt.close(f.figure)
    summary = summary_table(runs_df, base)
    groups = [c for c in group_columns(runs_df) if runs_df[c].astype(str).nunique() > 1]
    show = ["run", "policy"] + groups + [m for m in metric_columns(runs_df) if m in SUMMARY_METRICS
                                         or m.startswith("p99_") or m == "max_bounded_slowdown"]
    run_table = runs_df[[c for c in dict.fromkeys(show) if c in runs_df.columns]]
    notes = sorted({n for t in runs_df.get("notes", pd.Series(dtype=str)).fillna("") for n in str(t).split("; ") if n})
    manifest = {"figures": names, "tables": ["summary", "runs"], "runs": int(len(runs_df)), "baseline": base}
    params = [c for c in group_columns(runs_df) if c in runs_df.columns]
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{esc(title)}</title><style>{CSS}</style></head><body>",
             f"<h1>{esc(title)}</h1>",
             f"<p>{len(runs_df)} run(s), {len(jobs_df) if n_jobs is None else n_jobs:,} jobs, {len(summary)} policies; baseline "
             f"<b>{esc(base)}</b>; bounded slowdown with tau = {esc(str(runs_df['tau'].iloc[0]))} s. "
             f"Parameters: {esc(', '.join(params) or '-')}. Click a column header to sort.</p>",
             '<script type="application/json" id="manifest">' + json.dumps(manifest, sort_keys=True).replace("<", "\\u003c")
             + "</script>"]
    if notes:
        parts.append('<ul class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    parts += ["<h2>Summary per policy</h2>", "<p>Means over runs; ratios: mean over settings of the run's value "
              f"divided by {esc(base)}'s on the same setting.</p>", html_table(summary, "summary", ("policy",)),
              "<h2>Figures</h2>", *figures_html, "<h2>Runs</h2>", html_table(run_table, "runs", ("run", "policy")),
              f"<script>{JS}</script>", "</body></html>", ""]
    text = "\n".join(parts)
    with atomic_write(out_html) as fh:
        fh.write(text)
    return manifest


def report_outputs(paths: Sequence[str | Path], out_html: str | Path, *, tau: float = TAU,
                   workload: str | Path | None = None, platform: str | Path | None = None,
                   kinds: Sequence[str] = plots.KINDS, max_gantt: int = 3, max_timeseries: int = 2,
                   **options) -> dict:
    """:func:`build_report` of Batsim outputs (prefixes, folders, campaign folders; and
    ``coburst analyze`` folders), read in bounded memory: the runs are read chunk by chunk
    (:func:`coburst.analysis.tables.analyze_runs`) keeping only the columns the distribution
    figures read (:data:`coburst.analysis.plots.DISTRIBUTION_COLUMNS`, a few dozen bytes per
    job instead of the whole per-job table), then the few runs drawn as Gantt charts or time
    series are read again whole.  The page is the one :func:`build_report` writes from
    :func:`coburst.analysis.tables.load`'s tables."""
    from coburst.analysis import tables

    if any(tables.is_tables_dir(p) for p in paths):  # tables already materialised: read them
        runs_df, jobs_df = tables.load(paths, tau, workload=workload, platform=platform)
        return build_report(runs_df, jobs_df, out_html, kinds=kinds, max_gantt=max_gantt,
                            max_timeseries=max_timeseries, **options)
    tables._check_tau(tau)
    found = tables.discover(paths)
    if not found:
        raise InputError(", ".join(map(str, paths)) or "(no input)", None, "no finished run to analyse")
    pieces: list[pd.DataFrame] = []
    count = 0
    columns = list(plots.DISTRIBUTION_COLUMNS)

    def keep(df: pd.DataFrame) -> None:
        nonlocal count
        count += len(df)
        pieces.append(df[columns].copy())

    runs_df = tables.analyze_runs(found, tau, workload=workload, platform=platform, sink=keep)
    jobs_df = pd.concat(pieces, ignore_index=True) if pieces else pd.DataFrame(columns=columns)
    pieces.clear()
    chosen = plots.detail_runs(runs_df, kinds, max_gantt=max_gantt, max_timeseries=max_timeseries)
    whole: list[pd.DataFrame] = []
    if chosen:
        tables.analyze_runs([r for r in found if r.run in chosen], tau, workload=workload, platform=platform,
                            sink=whole.append)
    detail = pd.concat(whole, ignore_index=True) if whole else jobs_df.iloc[:0]
    return build_report(runs_df, jobs_df, out_html, kinds=kinds, max_gantt=max_gantt,
                        max_timeseries=max_timeseries, detail_jobs=detail, n_jobs=count, **options)
