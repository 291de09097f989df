"""Co-scheduling metrics (Kellari 2025 §2.3) on a hand-made ``_jobs.csv``."""

from __future__ import annotations

import pytest

from coburst.analysis.cosched import cosched_metrics
from coburst.errors import InputError

HEADER = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,"
          "final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,"
          "allocated_resources,consumed_energy,metadata")


def write(tmp_path, rows):
    path = tmp_path / "o_jobs.csv"
    path.write_text(HEADER + "\n" + "\n".join(rows) + "\n")
    return path


def row(jid, res, start, run, wait, meta, state="COMPLETED_SUCCESSFULLY"):
    sub = start - wait
    return (f"{jid},w0,p,{sub:f},{res},100.000000,1,{state},{start:f},{run:f},{start + run:f},{wait:f},"
            f"{wait + run:f},{(wait + run) / run:f},0-{res - 1},-1.000000,\"{meta}\"")


def test_hand_computed(tmp_path):
    # job 1: 2 units x 5 cores = 10 cores, run 10 s after 10 s of waiting, speedup 1.25
    # job 2: 4 units = 20 cores, run 20 s, no wait, speedup 0.8; job 3 rejected
    path = write(tmp_path, [row(1, 2, 10, 10, 10, "bb=1;speedup=1.250000"), row(2, 4, 0, 20, 0, "speedup=0.800000"),
                            '3,w0,p,0.000000,1,1.000000,0,REJECTED,,,,,,,,,""'])
    m = cosched_metrics(path, total_cores=40, cores_per_unit=5, baseline_makespan=30.0)
    assert m["jobs"] == 2 and m["makespan"] == 20.0
    assert m["mean_slowdown"] == pytest.approx((2.0 + 1.0) / 2)
    assert m["mean_slowdown_per_processor"] == pytest.approx((2.0 / 10 + 1.0 / 20) / 2)
    assert m["utilisation"] == pytest.approx((10 * 10 + 20 * 20) / (40 * 20))
    assert m["mean_job_speedup"] == pytest.approx((1.25 + 0.8) / 2)
    assert m["weighted_mean_job_speedup"] == pytest.approx((100 * 1.25 + 400 * 0.8) / 500)
    assert m["slowdown_count_percent"] == pytest.approx(50.0)
    assert m["makespan_speedup"] == pytest.approx(1.5)


def test_bad_speedup_and_no_job(tmp_path):
    with pytest.raises(InputError, match="line 2, metadata"):
        cosched_metrics(write(tmp_path, [row(1, 1, 0, 5, 0, "speedup=-1")]), total_cores=4)
    with pytest.raises(InputError, match="no job ran"):
        cosched_metrics(write(tmp_path, ['3,w0,p,0.000000,1,1.000000,0,REJECTED,,,,,,,,,""']), total_cores=4)
