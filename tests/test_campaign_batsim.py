"""``coburst campaign --engine batsim``: the same campaign on the real Batsim 4.2.1 gives the
same ``_jobs.csv`` bytes as on coburst's engine (delay jobs: no SimGrid rounding at stake).

Needs the real binary in the environment variable ``BATSIM`` (skipped otherwise, naming it)."""

from __future__ import annotations

import json
import os
import re

import pytest

from campaign_support import PLATFORM, delay_workloads, jobs_files, run_campaign

from simharness import BATSIM  # noqa: E402  (BATSIM, else batsim on PATH)


@pytest.mark.skipif(not BATSIM, reason="cross-engine campaign test: needs the real Batsim 4.2.1 binary in the "
                                       "environment variable BATSIM (BATSIM=/path/to/batsim)")
def test_batsim_engine_campaign_matches_coburst(tmp_path):
    delay_workloads(tmp_path / "wl", [30, 60])
    spec = tmp_path / "c.toml"
    spec.write_text(f'''
platforms = ["{PLATFORM}"]
[[schedulers]]
scheduler = "easyBackfill"
[[schedulers]]
scheduler = "backfill-sjf-1"
[[workloads]]
path = "wl/d{{n}}.json"
vary = {{ n = [30, 60] }}
''')
    real = run_campaign(spec, "--out", tmp_path / "batsim", "--engine", "batsim", "--jobs", "2")
    assert real.returncode == 0, real.stdout + real.stderr
    ours = run_campaign(spec, "--out", tmp_path / "coburst", "--engine", "coburst", "--jobs", "2")
    assert ours.returncode == 0, ours.stdout + ours.stderr
    a, b = jobs_files(tmp_path / "batsim"), jobs_files(tmp_path / "coburst")
    assert len(a) == 4 and a == b
    for name in a:
        params = json.loads((tmp_path / "batsim" / "runs" / name / "params.json").read_text())
        assert params["engine"] == "batsim"
        schedule = (tmp_path / "batsim" / "runs" / name / "out_schedule.csv").read_text()
        assert re.match(r"v?4\.2\.1,", schedule.splitlines()[1])  # written by the real Batsim (a build from
        # its git tag prints v4.2.1)
    # the other engine into the same folder is refused
    again = run_campaign(spec, "--out", tmp_path / "batsim", "--engine", "coburst")
    assert again.returncode == 2 and "--engine batsim, not coburst" in again.stderr
