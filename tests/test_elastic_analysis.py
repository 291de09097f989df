"""The analysis tables of elastic runs: each job's resizes and reconfiguration time, from the
run's ``_reconfigurations.csv``; runs without one are as before; a damaged one is named."""

from __future__ import annotations

import csv
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd
import pytest

from cli_support import call

REPO = Path(__file__).resolve().parents[1]
PLATFORM = REPO / "platforms" / "cluster16.xml"
WORKLOAD = REPO / "workloads" / "malleable_small.json"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("elastic-analysis")
    for policy in ("equipartition", "easyBackfill"):
        proc = subprocess.run([sys.executable, "-m", "coburst", "run", policy, "-p", str(PLATFORM), "-w", str(WORKLOAD),
                               "-e", str(tmp / policy), "-q"], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    return tmp


def test_resizes_per_job_and_per_run(runs, tmp_path):
    code, err = call("analyze", runs / "equipartition", runs / "easyBackfill", "-o", tmp_path / "an")
    assert code == 0, err
    with open(runs / "equipartition_reconfigurations.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    counts, seconds = Counter(r["job_id"] for r in rows), defaultdict(float)
    for r in rows:
        seconds[r["job_id"]] += float(r["reconfiguration_time"])
    assert len(counts) >= 2  # (the case resizes several jobs)
    jobs = pd.read_csv(tmp_path / "an" / "jobs.csv", dtype={"job_id": str})
    elastic = jobs[jobs["run"] == "equipartition"]
    got = {f"w0!{j}": (n, t) for j, n, t in zip(elastic["job_id"], elastic["resizes"], elastic["reconfiguration_time"])}
    assert {k: n for k, (n, _) in got.items() if n} == dict(counts)
    assert all(abs(t - seconds.get(k, 0.0)) < 1e-9 for k, (_, t) in got.items())
    assert jobs[jobs["run"] == "easyBackfill"]["resizes"].isna().all()  # (Batsim's run: no such file)
    table = pd.read_csv(tmp_path / "an" / "runs.csv").set_index("run")
    assert table.loc["equipartition", "resizes"] == len(rows)
    assert table.loc["equipartition", "reconfiguration_time"] == pytest.approx(sum(seconds.values()))


@pytest.mark.parametrize("text, problem", [
    ("job_id,date\nw0!1,3.0\n", "header: not a reconfigurations file: missing columns ['reconfiguration_time']"),
    ("job_id,reconfiguration_time\nw0!1,2.0\nw0!1,abc\n", "line 3, column reconfiguration_time: 'abc' is not a time"),
    ("job_id,reconfiguration_time\nw0!1,-1\n", "line 2, column reconfiguration_time: '-1' is not a time"),
])
def test_a_damaged_reconfigurations_file_is_named(runs, tmp_path, text, problem):
    for suffix in ("jobs.csv", "schedule.csv"):
        (tmp_path / f"r_{suffix}").write_bytes((runs / f"equipartition_{suffix}").read_bytes())
    (tmp_path / "r_reconfigurations.csv").write_text(text)
    code, err = call("analyze", tmp_path / "r", "-o", tmp_path / "an")
    assert code == 2
    assert f"r_reconfigurations.csv: {problem}" in err, err
    assert "Traceback" not in err and not (tmp_path / "an").exists()


def test_resizes_are_metrics_not_settings(runs):
    """Runs of one workload with and without resizes stay one setting (the columns are
    metrics, not parameters that would split the comparison)."""
    from coburst.analysis.tables import analyze, group_columns, metric_columns

    runs_df, _ = analyze([runs / "equipartition", runs / "easyBackfill"])
    assert "resizes" not in group_columns(runs_df) and "reconfiguration_time" not in group_columns(runs_df)
    assert {"resizes", "reconfiguration_time"} <= set(metric_columns(runs_df))
