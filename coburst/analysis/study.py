"""Distributions of waiting time and bounded slowdown across policies, and the starvation
signature of backfilling without burst-buffer reservations (Kopański 2020, §4.2).

Inputs are Batsim ``_jobs.csv`` tables (:func:`coburst.analysis.metrics.read_jobs`, rejected
jobs dropped) keyed by policy label, and the workload's jobs (for widths and BB requests,
which ``_jobs.csv`` does not carry).

* :func:`distribution` / :func:`summary`: mean and quantiles (50/90/99 %, max);
* :func:`quantile_table`: one rich table per metric, a row per policy, ratios of the mean
  against a baseline policy;
* :func:`job_classes`: narrow / medium / wide jobs by requested nodes, and "BB-hungry" jobs
  whose total request (``res * bb``) takes a large share of the platform's burst buffers;
* :func:`class_table` and :func:`starvation_signature`: how each class waits under each
  policy; the signature of §4.2 is that ``no-future-1`` (EASY reserving compute nodes only)
  makes wide and BB-hungry jobs wait far longer than ``backfill-1`` (EASY reserving burst
  buffers too) — up to, or beyond, FCFS without backfilling — while small jobs, backfilled
  ahead of them, do well.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from coburst.analysis.metrics import TAU, bounded_slowdown

__all__ = ["QUANTILES", "distribution", "summary", "quantile_table", "job_classes", "class_table",
           "starvation_signature", "Signature", "CLASS_ORDER"]

QUANTILES = (50, 90, 99)
STATS = ("mean", "p50", "p90", "p99", "max")
METRICS = {"waiting": "waiting time (s)", "bounded_slowdown": "bounded slowdown (tau = {tau:g} s)"}
CLASS_ORDER = ("narrow", "medium", "wide", "bb-hungry")


def distribution(values: Iterable[float]) -> dict[str, float]:
    """Mean, 50/90/99 % quantiles (linear interpolation) and max; NaN when empty."""
    arr = np.asarray(list(values) if not isinstance(values, (np.ndarray, pd.Series)) else values, dtype=float)
    if arr.size == 0:
        return {k: float("nan") for k in STATS}
    q = np.percentile(arr, QUANTILES)
    return {"mean": float(arr.mean()), **{f"p{p}": float(v) for p, v in zip(QUANTILES, q)}, "max": float(arr.max())}


def waiting(df: pd.DataFrame) -> np.ndarray:
    return (df["starting_time"] - df["submission_time"]).to_numpy()


def summary(df: pd.DataFrame, tau: float = TAU) -> dict[str, dict[str, float]]:
    """``{"waiting": distribution, "bounded_slowdown": distribution}`` of one run."""
    return {"waiting": distribution(waiting(df)), "bounded_slowdown": distribution(bounded_slowdown(df, tau))}


def _fmt(value: float, metric: str) -> str:
    if np.isnan(value):
        return "-"
    return f"{value:,.0f}" if metric == "waiting" else f"{value:,.2f}"


def quantile_table(runs: Mapping[str, pd.DataFrame], metric: str = "waiting", *, title: str = "",
                   baseline: str | None = None, tau: float = TAU):
    """Rich table: a row per policy, columns jobs, mean (ratio to ``baseline``), p50, p90, p99, max."""
    from rich.table import Table

    if metric not in METRICS:
        raise ValueError(f"metric must be one of {sorted(METRICS)}")
    label = METRICS[metric].format(tau=tau)
    table = Table(title=f"{title}: {label}" if title else label)
    table.add_column("policy")
    for col in ("jobs", "mean", "p50", "p90", "p99", "max"):
        table.add_column(col, justify="right")
    stats = {name: summary(df, tau)[metric] for name, df in runs.items()}
    base = stats.get(baseline) if baseline else None
    for name, s in stats.items():
        mean = _fmt(s["mean"], metric)
        if base is not None and base["mean"] and name != baseline:
            mean += f" ({s['mean'] / base['mean']:.2f}x)"
        table.add_row(name, f"{len(runs[name]):,}", mean, *(_fmt(s[k], metric) for k in ("p50", "p90", "p99", "max")))
    return table


def job_classes(jobs: Sequence[Mapping], nb_compute: int, total_bb: int, *, hungry_share: float = 0.25) -> pd.DataFrame:
    """Classes of the workload's jobs (Batsim job dicts with ``id``, ``res``, ``bb``).

    Width by requested nodes: ``narrow`` <= nb_compute/12 (8 of 96), ``medium`` <= nb_compute/3
    (32 of 96), ``wide`` above.  ``bb_hungry``: total request ``res * bb`` >= ``hungry_share``
    of the platform's burst-buffer capacity ``total_bb``.  Indexed by the job id as a string
    (the ``job_id`` column of ``_jobs.csv``).
    """
    df = pd.DataFrame({"job_id": [str(j["id"]) for j in jobs], "res": [int(j["res"]) for j in jobs],
                       "bb": [int(j.get("bb", 0)) for j in jobs]}).set_index("job_id")
    narrow, medium = nb_compute / 12, nb_compute / 3
    df["width"] = np.where(df["res"] <= narrow, "narrow", np.where(df["res"] <= medium, "medium", "wide"))
    df["bb_share"] = df["res"] * df["bb"] / total_bb if total_bb else 0.0
    df["bb_hungry"] = df["bb_share"] >= hungry_share
    return df


def _class_waits(df: pd.DataFrame, classes: pd.DataFrame) -> dict[str, np.ndarray]:
    joined = classes.reindex(df["job_id"].astype(str))
    w = waiting(df)
    width = joined["width"].to_numpy()
    hungry = joined["bb_hungry"].fillna(False).to_numpy(dtype=bool)
    return {"narrow": w[width == "narrow"], "medium": w[width == "medium"], "wide": w[width == "wide"],
            "bb-hungry": w[hungry]}


def class_table(runs: Mapping[str, pd.DataFrame], classes: pd.DataFrame, *, title: str = "",
                reference: str | None = None):
    """Rich table of waiting time per job class and policy (mean, p90, max; mean ratio to
    ``reference``)."""
    from rich.table import Table

    table = Table(title=title or "waiting time (s) by job class")
    for col in ("class", "policy", "jobs", "mean", "p90", "max"):
        table.add_column(col, justify="left" if col in ("class", "policy") else "right")
    waits = {name: _class_waits(df, classes) for name, df in runs.items()}
    for cls in CLASS_ORDER:
        ref = distribution(waits[reference][cls]) if reference in waits else None
        for k, (name, per_class) in enumerate(waits.items()):
            d = distribution(per_class[cls])
            mean = _fmt(d["mean"], "waiting")
            if ref is not None and name != reference and ref["mean"] > 0 and not np.isnan(d["mean"]):
                mean += f" ({d['mean'] / ref['mean']:.1f}x)"
            table.add_row(cls if k == 0 else "", name, f"{len(per_class[cls]):,}", mean,
                          _fmt(d["p90"], "waiting"), _fmt(d["max"], "waiting"), end_section=k == len(waits) - 1)
    return table


@dataclass
class Signature:
    """Starvation signature of ``subject`` (no-future-1) against ``reference`` (backfill-1)
    and ``baseline`` (fcfs); ratios of mean waiting times (NaN when not computable)."""

    subject: str
    reference: str
    baseline: str | None
    class_ratio: dict[str, float] = field(default_factory=dict)       # subject / reference, per class
    class_vs_baseline: dict[str, float] = field(default_factory=dict)  # subject / baseline, per class
    mean_vs_baseline: float = float("nan")      # all jobs, subject / baseline
    max_vs_baseline: float = float("nan")       # max waiting, subject / baseline
    max_vs_reference: float = float("nan")
    #: jobs delayed most by subject: (id, res, share of all BB, wait with subject, wait with reference)
    worst: list[tuple[str, int, float, float, float]] = field(default_factory=list)
    threshold: float = 2.0

    @property
    def starved(self) -> list[str]:
        """Classes (wide, bb-hungry) waiting at least ``threshold`` times longer than with the reference."""
        return [c for c in ("wide", "bb-hungry") if self.class_ratio.get(c, float("nan")) >= self.threshold]

    def verdict(self) -> str:
        s, r = self.subject, self.reference
        if not self.starved:
            ratios = ", ".join(f"{c} {self.class_ratio.get(c, float('nan')):.2f}x" for c in ("wide", "bb-hungry"))
            return f"no starvation signature: with {s}, wide / BB-hungry jobs wait {ratios} as long as with {r}"
        parts = [f"{c} jobs wait {self.class_ratio[c]:.1f}x longer than with {r}" for c in self.starved]
        text = f"starvation signature of {s} present: " + "; ".join(parts)
        if self.baseline:
            b = self.baseline
            extra = [f"{c} {self.class_vs_baseline[c]:.2f}x" for c in self.starved
                     if not np.isnan(self.class_vs_baseline.get(c, float("nan")))]
            if extra:
                text += f" (vs {b}: " + ", ".join(extra) + ")"
            text += (f"; all jobs: mean wait {self.mean_vs_baseline:.2f}x {b}, "
                     f"max wait {self.max_vs_baseline:.2f}x {b}")
        return text


def starvation_signature(runs: Mapping[str, pd.DataFrame], classes: pd.DataFrame, *, subject: str = "no-future-1",
                         reference: str = "backfill-1", baseline: str | None = "fcfs", threshold: float = 2.0,
                         top: int = 5) -> Signature | None:
    """The §4.2 comparison (module doc); None when ``subject`` or ``reference`` did not run."""
    if subject not in runs or reference not in runs:
        return None
    sig = Signature(subject, reference, baseline if baseline in runs else None, threshold=threshold)
    ws, wr = _class_waits(runs[subject], classes), _class_waits(runs[reference], classes)
    wb = _class_waits(runs[baseline], classes) if sig.baseline else None
    for cls in CLASS_ORDER:
        ms, mr = distribution(ws[cls])["mean"], distribution(wr[cls])["mean"]
        sig.class_ratio[cls] = ms / mr if mr > 0 else float("nan")
        if wb is not None:
            mb = distribution(wb[cls])["mean"]
            sig.class_vs_baseline[cls] = ms / mb if mb > 0 else float("nan")
    all_s, all_r = waiting(runs[subject]), waiting(runs[reference])
    sig.max_vs_reference = float(all_s.max() / all_r.max()) if all_r.size and all_r.max() > 0 else float("nan")
    if sig.baseline:
        all_b = waiting(runs[baseline])
        sig.mean_vs_baseline = float(all_s.mean() / all_b.mean()) if all_b.size and all_b.mean() > 0 else float("nan")
        sig.max_vs_baseline = float(all_s.max() / all_b.max()) if all_b.size and all_b.max() > 0 else float("nan")
    # the jobs the subject delays most compared with the reference
    s = runs[subject].assign(w=waiting(runs[subject]))[["job_id", "w"]].set_index("job_id")["w"]
    r = runs[reference].assign(w=waiting(runs[reference]))[["job_id", "w"]].set_index("job_id")["w"]
    both = pd.DataFrame({"s": s, "r": r}).dropna()
    both = both.join(classes[["res", "bb_share"]], how="left")
    for jid, row in both.assign(d=both["s"] - both["r"]).nlargest(top, "d").iterrows():
        sig.worst.append((str(jid), int(row["res"]), float(row["bb_share"]), float(row["s"]), float(row["r"])))
    return sig
