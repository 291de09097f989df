"""``scripts/kth_comparison.py`` end to end on real KTH data: one part, one
model, the baseline only (the whole comparison is 160 runs of minutes each): the workloads
made by the campaign's prepare step, the run, the resume (nothing run twice), the table and
the figures."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from shared_data import needs_swf
from simharness import REPO

pytestmark = pytest.mark.timeout(600)

SCRIPT = REPO / "scripts" / "kth_comparison.py"


def script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=540)


@needs_swf()  # (the campaign's prepare step converts the KTH-SP2 log read from beside the checkout)
def test_one_part_runs_resumes_and_reports(tmp_path):
    out = tmp_path / "kth"
    subset = ["--out", str(out), "--parts", "1", "--models", "alloc_only", "--policies", "backfill-sjf-1"]
    first = script(*subset, "--jobs", "1")
    assert first.returncode == 0, first.stderr + first.stdout
    run_dir = out / "runs" / "sched=backfill-sjf-1__part=01__model=alloc_only__seed=0"
    status = json.loads((run_dir / "status.json").read_text())
    assert status["state"] == "done"
    jobs_csv = (run_dir / "out_jobs.csv").read_bytes()
    assert len(jobs_csv.splitlines()) > 1000  # a whole KTH part (1/16 of 28k jobs)
    assert (run_dir / "out_decisions.csv").is_file()  # each run's decision-time profile
    assert "backfill-sjf-1" in first.stdout and "1.000" in first.stdout

    again = script(*subset, "--jobs", "1")  # resume: the finished run is skipped, not repeated
    assert again.returncode == 0, again.stderr + again.stdout
    assert json.loads((run_dir / "status.json").read_text()) == status
    assert (run_dir / "out_jobs.csv").read_bytes() == jobs_csv

    figs = tmp_path / "figs"
    rep = script(*subset, "--report-only", "--figures", str(figs))
    assert rep.returncode == 0, rep.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["alloc_only"]["parts"] == [1]
    assert summary["alloc_only"]["normalised"]["backfill-sjf-1"]["waiting"] == pytest.approx(1.0)
    for name in ("kth_alloc_only_normalised.png", "kth_alloc_only_boxen.png"):
        assert (figs / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
