"""coburst.analysis.study: quantile summaries, job classes, starvation signature."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from rich.console import Console

from coburst.analysis.study import (class_table, distribution, job_classes, quantile_table,
                                    starvation_signature, summary)


def frame(waits: dict[str, float], run: float = 1000.0) -> pd.DataFrame:
    """A _jobs.csv-like table: every job submitted at 0, runs ``run`` seconds."""
    ids = list(waits)
    start = np.array([waits[i] for i in ids], dtype=float)
    return pd.DataFrame({"job_id": ids, "workload_name": "w0", "submission_time": 0.0, "starting_time": start,
                         "finish_time": start + run, "execution_time": run})


JOBS = [{"id": 0, "res": 2, "bb": 0}, {"id": 1, "res": 20, "bb": 10}, {"id": 2, "res": 90, "bb": 1},
        {"id": 3, "res": 40, "bb": 30}]


def test_distribution_and_summary():
    d = distribution([0, 10, 20, 30, 40])
    assert d == {"mean": 20.0, "p50": 20.0, "p90": 36.0, "p99": 39.6, "max": 40.0}
    assert all(math.isnan(v) for v in distribution([]).values())
    s = summary(frame({"0": 0.0, "1": 600.0}, run=100.0))
    # bounded slowdown: max(turnaround / max(run, 600), 1)
    assert s["bounded_slowdown"]["max"] == (700 / 600) and s["bounded_slowdown"]["p50"] == (1 + 700 / 600) / 2


def test_job_classes():
    c = job_classes(JOBS, nb_compute=96, total_bb=1000)
    assert c["width"].tolist() == ["narrow", "medium", "wide", "wide"]
    assert c["bb_hungry"].tolist() == [False, False, False, True]  # 40 * 30 >= 250; 20 * 10 < 250


def test_signature_and_tables():
    classes = job_classes(JOBS, nb_compute=96, total_bb=1000)
    runs = {"fcfs": frame({"0": 500, "1": 500, "2": 900, "3": 900}),
            "no-future-1": frame({"0": 0, "1": 10, "2": 1000, "3": 2000}),
            "backfill-1": frame({"0": 0, "1": 10, "2": 100, "3": 100})}
    sig = starvation_signature(runs, classes)
    assert sig.class_ratio["wide"] == 15.0 and sig.class_ratio["bb-hungry"] == 20.0
    assert sig.starved == ["wide", "bb-hungry"] and "starvation signature of no-future-1 present" in sig.verdict()
    assert sig.max_vs_baseline == 2000 / 900 and sig.worst[0][0] == "3"
    calm = starvation_signature({**runs, "no-future-1": runs["backfill-1"]}, classes)
    assert calm.starved == [] and calm.verdict().startswith("no starvation signature")
    assert starvation_signature({"fcfs": runs["fcfs"]}, classes) is None
    console = Console(width=150, record=True)
    console.print(quantile_table(runs, "waiting", baseline="fcfs"))
    console.print(quantile_table(runs, "bounded_slowdown"))
    console.print(class_table(runs, classes, reference="backfill-1"))
    text = console.export_text()
    assert "no-future-1" in text and "bb-hungry" in text and "(15.0x)" in text
