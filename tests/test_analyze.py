"""``coburst analyze`` and :mod:`coburst.analysis.tables` on real simulator outputs."""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyze_support import DF96, IO, campaign, first_jobs, outputs, run
from simharness import BATSIM, COBURST

from coburst.analysis import timeseries
from coburst.analysis.metrics import compute_metrics, read_jobs
from coburst.analysis.tables import analyze, load, write_tables
from coburst.errors import InputError

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def outs(tmp_path_factory):
    return outputs(tmp_path_factory.mktemp("analyze"))


@pytest.fixture(scope="module")
def busy(tmp_path_factory):
    """Submissions compressed 20x: jobs wait, so tau matters (without waiting every bounded
    slowdown is 1 whatever tau)."""
    return outputs(tmp_path_factory.mktemp("busy"), squeeze=20)


def test_metrics_agree_with_metrics_module(outs):
    runs, jobs = analyze([outs["fcfs"], outs["backfill-1"]], platform=outs["platform"], workload=outs["workload"])
    assert list(runs["run"]) == ["fcfs", "backfill-1"]
    for _, row in runs.iterrows():
        m = compute_metrics(read_jobs(f"{row['path']}_jobs.csv"), nb_compute=96)
        assert row["jobs"] == m.nb_jobs == 40
        assert row["mean_waiting"] == pytest.approx(m.mean_waiting)
        assert row["mean_bounded_slowdown"] == pytest.approx(m.mean_bounded_slowdown)
        assert row["utilisation"] == pytest.approx(m.utilisation)
        assert row["makespan"] == pytest.approx(m.makespan)
        assert row["engine"] == "coburst"
    # Batsim's own mean slowdown (stretch) in _schedule.csv
    sched = pd.read_csv(f"{outs['fcfs']}_schedule.csv")
    assert runs.loc[0, "mean_slowdown"] == pytest.approx(float(sched["mean_slowdown"][0]), rel=1e-6)
    assert len(jobs) == 80 and set(jobs["run"]) == {"fcfs", "backfill-1"}
    assert (jobs["waiting"] >= 0).all() and (jobs["bounded_slowdown"] >= 1).all()


def test_tau_changes_bounded_slowdown(busy):
    a, _ = analyze([busy["fcfs"]], tau=600)
    b, _ = analyze([busy["fcfs"]], tau=10)
    assert a.loc[0, "mean_waiting"] > 0
    assert b.loc[0, "tau"] == 10 and b.loc[0, "mean_bounded_slowdown"] > 1.01 * a.loc[0, "mean_bounded_slowdown"]
    with pytest.raises(InputError):
        analyze([busy["fcfs"]], tau=0)


@pytest.mark.parametrize("ext", ["parquet", "csv"])
def test_saved_tables_take_the_requested_tau(tmp_path, busy, ext):
    """Tables written with one tau and loaded with another: the bounded slowdown is recomputed
    (not silently kept), equal to analysing the outputs with that tau."""
    runs, jobs = analyze([busy["fcfs"], busy["backfill-1"]], tau=600)
    write_tables(runs, jobs, tmp_path / "t")
    if ext == "csv":
        for name in ("runs", "jobs"):
            (tmp_path / "t" / f"{name}.parquet").unlink()
    fresh_runs, fresh_jobs = analyze([busy["fcfs"], busy["backfill-1"]], tau=10)
    got_runs, got_jobs = load([tmp_path / "t"], tau=10)
    assert (got_runs["tau"] == 10).all()
    cols = [f"{s}_bounded_slowdown" for s in ("mean", "p50", "p90", "p99", "max")]
    assert np.allclose(got_runs[cols].to_numpy(float), fresh_runs[cols].to_numpy(float))
    assert not np.allclose(got_runs[cols].to_numpy(float), runs[cols].to_numpy(float))
    assert np.allclose(got_jobs["bounded_slowdown"], fresh_jobs["bounded_slowdown"])
    same_runs, _ = load([tmp_path / "t"], tau=600)
    assert np.allclose(same_runs[cols].to_numpy(float), runs[cols].to_numpy(float))


def test_bb_metrics_from_workload_and_platform(outs):
    runs, jobs = analyze([outs["fcfs"]], platform=outs["platform"], workload=outs["workload"])
    doc = json.loads(outs["workload"].read_text())
    bb = {str(j["id"]): j["res"] * j.get("bb", 0) for j in doc["jobs"]}
    raw = read_jobs(f"{outs['fcfs']}_jobs.csv")
    used = sum(bb[str(i)] * r for i, r in zip(raw["job_id"], raw["execution_time"]))
    makespan = raw["finish_time"].max() - raw["submission_time"].min()
    assert runs.loc[0, "bb_capacity"] == 12 * 40e9
    assert runs.loc[0, "bb_utilisation"] == pytest.approx(used / (12 * 40e9 * makespan))
    waiting_bb = sum(bb[str(i)] * (s - q) for i, s, q in zip(raw["job_id"], raw["starting_time"], raw["submission_time"]))
    assert runs.loc[0, "queue_load_storage"] == pytest.approx(waiting_bb / makespan / (12 * 40e9))
    assert runs.loc[0, "notes"] == ""


def test_bb_metrics_nan_with_note_without_workload(tmp_path, outs):
    # strip the bb= placements: nothing tells the BB requests any more
    df = pd.read_csv(f"{outs['fcfs']}_jobs.csv", dtype=str, keep_default_na=False)
    df["metadata"] = ""
    df.to_csv(tmp_path / "x_jobs.csv", index=False)
    runs, _ = analyze([tmp_path / "x"])
    assert math.isnan(runs.loc[0, "bb_utilisation"]) and math.isnan(runs.loc[0, "queue_load_storage"])
    assert "no workload" in runs.loc[0, "notes"]
    assert runs.loc[0, "nb_compute"] >= 1 and runs.loc[0, "utilisation"] > 0


def test_step_function_queue_load():
    # job a waits [0, 10) with 4 nodes, b waits [5, 20) with 2
    t, v = timeseries.step([0, 5], [10, 20], [4, 2])
    assert list(t) == [0, 5, 10, 20] and list(v) == [4, 6, 2, 0]
    assert timeseries.step_max([0, 5], [10, 20], [4, 2]) == 6
    assert timeseries.interval_mean([0, 5], [10, 20], [4, 2], 0, 20) == pytest.approx((40 + 30) / 20)
    assert list(timeseries.resample(t, v, np.array([-1, 0, 7, 15, 25]))) == [0, 4, 6, 2, 0]


def test_campaign_folder_and_cli_tables(tmp_path, outs):
    camp = campaign(tmp_path / "camp", outs)
    proc = subprocess.run([str(COBURST), "analyze", str(camp), "-q"], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = camp / "analysis"
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == 4  # the failed run is not analysed
    assert {"scheduler", "options", "part", "seed", "engine", "wall_s", "workload", "platform"} <= set(runs.columns)
    assert sorted(runs["part"]) == [1, 1, 2, 2]
    assert runs["bb_utilisation"].notna().all()  # workload and platform from params.json
    pq = pd.read_parquet(out / "runs.parquet")
    assert list(pq["run"]) == list(runs["run"].astype(str))
    assert np.allclose(pq["mean_waiting"], runs["mean_waiting"])
    jobs = pd.read_parquet(out / "jobs.parquet")
    assert len(jobs) == 4 * 40 and set(jobs["run"]) == set(runs["run"])


def test_io_aware_subjobs_folded(tmp_path):
    w = first_jobs(IO, tmp_path / "io.json", 12)
    prefix = run("backfill-1", w, tmp_path / "io", "--enable-dynamic-jobs")
    raw = pd.read_csv(f"{prefix}_jobs.csv")
    assert (raw["workload_name"] != "w0").any()  # sub-jobs were run
    runs, jobs = analyze([prefix], workload=w, platform=DF96)
    assert runs.loc[0, "jobs"] + runs.loc[0, "rejected"] == 12 and runs.loc[0, "rejected"] == 0
    assert sorted(jobs["job_id"].astype(int)) == list(range(12))


@pytest.mark.parametrize("make, problem", [
    (lambda d: d / "missing", "not a Batsim output"),
    (lambda d: (d / "empty").mkdir() or d / "empty", "no *_jobs.csv"),
    (lambda d: (d / "bad_jobs.csv").write_text("a,b\n1,2\n") and d / "bad", "missing columns"),
])
def test_cli_bad_input_exit_2_nothing_written(tmp_path, make, problem):
    src = make(tmp_path)
    out = tmp_path / "tables"
    proc = subprocess.run([str(COBURST), "analyze", str(src), "-o", str(out)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2
    assert problem in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (out / "runs.csv").exists() and not list(out.glob("*.parquet")) if out.exists() else True


def _field(line: str, header: str, col: str, value: str) -> str:
    """``line`` (a simple CSV row: no quoted commas before the last field) with ``col`` set."""
    cols = header.split(",")
    parts = line.split(",", len(cols) - 1)
    parts[cols.index(col)] = value
    return ",".join(parts)


@pytest.mark.parametrize("mutate, where, problem", [
    (lambda h, rows: rows.__setitem__(4, rows[4][:30]), "line 6", "fields, the header has 17"),
    (lambda h, rows: rows.__setitem__(2, rows[2] + ",x"), "line 4", "18 fields, the header has 17"),
    (lambda h, rows: rows.__setitem__(3, _field(rows[3], h, "requested_number_of_resources", "abc")),
     "line 5, column requested_number_of_resources", "'abc' is not a number"),
    (lambda h, rows: rows.__setitem__(0, _field(rows[0], h, "submission_time", "nan")),
     "line 2, column submission_time", "'nan' is not finite"),
    (lambda h, rows: rows.__setitem__(7, _field(rows[7], h, "finish_time", "inf")),
     "line 9, column finish_time", "'inf' is not finite"),
    (lambda h, rows: rows.__setitem__(5, _field(rows[5], h, "starting_time", "")),
     "line 7, column starting_time", "empty (the job is COMPLETED_SUCCESSFULLY)"),
    (lambda h, rows: rows.__setitem__(1, _field(rows[1], h, "final_state", "DONE")),
     "line 3, column final_state", "unknown job state 'DONE'"),
    (lambda h, rows: rows.clear() or rows.append(""), None, "empty file"),
])
def test_malformed_jobs_csv_named_exit_2(tmp_path, outs, mutate, where, problem):
    """A damaged ``_jobs.csv`` (here a real one, edited): file, line and column, and the problem
    in one message, status 2, no table written (it was read silently, NaN in the tables)."""
    header, *rows = Path(f"{outs['fcfs']}_jobs.csv").read_text().splitlines()
    mutate(header, rows)
    bad = tmp_path / "bad_jobs.csv"
    bad.write_text("\n".join([header, *rows]) + "\n" if rows != [""] else "")
    with pytest.raises(InputError) as ei:
        analyze([bad])
    assert ei.value.where == where and problem in ei.value.problem, str(ei.value)
    out = tmp_path / "tables"
    proc = subprocess.run([str(COBURST), "analyze", str(bad), "-o", str(out)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [f"coburst analyze: error: {bad}: " + (f"{where}: " if where else "")
                                                + ei.value.problem]
    assert not out.exists() or not list(out.iterdir())


def test_utf16_jobs_csv_named(tmp_path, outs):
    bad = tmp_path / "u16_jobs.csv"
    bad.write_text(Path(f"{outs['fcfs']}_jobs.csv").read_text(), encoding="utf-16")
    with pytest.raises(InputError, match="UTF-16"):
        analyze([bad])


@pytest.mark.skipif(not BATSIM, reason="needs the real Batsim 4.2.1 (environment variable BATSIM)")
def test_analyze_outputs_of_real_batsim(tmp_path):
    out = tmp_path / "demo"
    proc = subprocess.run([str(COBURST), "demo", "-o", str(out), "--jobs", "30", "--engine", "batsim", "--batsim",
                           BATSIM], capture_output=True, text=True, timeout=600, env={**os.environ})
    assert proc.returncode == 0, proc.stderr
    runs, jobs = analyze([out])
    assert set(runs["run"]) == {"fcfs", "easy"} and set(runs["engine"]) == {"batsim"}
    for _, row in runs.iterrows():
        m = compute_metrics(read_jobs(f"{row['path']}_jobs.csv"))
        assert row["jobs"] == 30 and row["mean_waiting"] == pytest.approx(m.mean_waiting)
        assert row["utilisation"] == pytest.approx(m.utilisation)


def test_policy_labels_and_settings_of_a_campaign():
    """A campaign's bookkeeping option (``decision_log``) names no policy, and the per-run
    columns (run id, scheduler spec) define no setting: runs are normalised per part."""
    from coburst.analysis.plots import settings
    from coburst.analysis.tables import group_columns, policy_label
    assert policy_label({"scheduler": "window-1", "options": '{"decision_log": "{prefix}_decisions.csv"}'}) == \
        "window-1"
    assert policy_label({"scheduler": "window-1", "options": '{"decision_log": "x", "window": 16}'}) == \
        'window-1 {"window": 16}'
    runs = pd.DataFrame({"run": ["a1", "b1", "a2", "b2"], "run_id": ["a1", "b1", "a2", "b2"],
                         "scheduler": ["a", "b", "a", "b"], "scheduler_spec": ["sa", "sb", "sa", "sb"],
                         "policy": ["a", "b", "a", "b"], "part": [1, 1, 2, 2], "seed": [0, 0, 0, 0]})
    assert "run_id" not in group_columns(runs) and "scheduler_spec" not in group_columns(runs)
    assert settings(runs).nunique() == 2


_plain = st.text(alphabet="ab1 .;=", max_size=4)
_quoted = st.text(alphabet='ab,\n"; ', max_size=5).map(lambda t: '"' + t.replace('"', '""') + '"')
_rows = st.lists(st.lists(st.one_of(_plain, _quoted), min_size=1, max_size=5), min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(rows=_rows, crlf=st.booleans(), blank=st.integers(0, 6), last_newline=st.booleans())
def test_csv_row_counting_matches_the_csv_module(rows, crlf, blank, last_newline):
    """The vectorised row scan of the ``_jobs.csv`` check (line where each row starts, field
    count; quoted commas, quotes and newlines; blank lines skipped) agrees with Python's csv."""
    import csv
    import io

    from coburst.analysis.metrics import _csv_rows

    eol = "\r\n" if crlf else "\n"
    lines = [",".join(r) for r in rows]
    lines.insert(min(blank, len(lines)), "")
    text = eol.join(lines) + (eol if last_newline else "")
    reader = csv.reader(io.StringIO(text, newline=""))
    expected, line = [], 1
    for row in reader:
        if row:  # csv gives [] for a blank line
            expected.append((line, len(row)))
        line = reader.line_num + 1
    got_lines, got_fields = _csv_rows(text.encode())
    assert list(zip(got_lines.tolist(), got_fields.tolist())) == expected
