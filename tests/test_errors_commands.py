"""Every command fails cleanly: one test per class of failure, each failing without
its fix.

* a failed ``coburst campaign`` leaves its output folder as it was (claimed last), so the
  same command succeeds once the input is fixed;
* output places that cannot be made, malformed or unknown Dask addresses, a wrong
  ``--batsim``: one-line errors, status 2, before anything starts;
* readers of campaign folders read finished runs only (a run in progress is counted, never
  read, and never the report's baseline);
* damaged analysis tables, non-numeric platform properties, negative bandwidths, bad
  co-scheduling options with either transport: the user's own file or option named.

Real commands on real files (``coburst.cli.main.main`` in-process, or ``python -m coburst``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from campaign_support import PLATFORM, ROOT, delay_workloads, write_spec
from shared_data import need_swf
from coburst.cli.main import main


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main([*map(str, args)])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def one_error_line(err: str) -> str:
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def small_spec(tmp_path: Path, *, workload: str = "wl/d{n}.json", prepare: dict | None = None) -> Path:
    delay_workloads(tmp_path / "wl", [20])
    spec = write_spec(tmp_path / "c.toml", {"name": "c"}, {"scheduler": "fcfs"},
                      {"path": workload, "vary": {"n": [20]}})
    if prepare is not None:
        from coburst.campaign.spec import dumps_toml, parse_toml

        _, data = parse_toml(spec)
        data["prepare"] = prepare
        spec.write_text(dumps_toml(data))
    return spec


# ---------------------------------------------------------------------------- campaign: claimed last
@pytest.mark.parametrize("existing", [False, True])
def test_a_campaign_with_a_missing_workload_leaves_its_folder_as_it_was(tmp_path, capsys, existing):
    spec = small_spec(tmp_path, workload="wl/typo{n}.json")
    out = tmp_path / "deep" / "o"
    if existing:
        out.mkdir(parents=True)
        (out / "mine.txt").write_text("the user's own file")
    code, _, err = cli(capsys, "campaign", spec, "--out", out, "-q")
    assert code == 2
    assert "file not found" in one_error_line(err) and "typo20.json" in err
    if existing:
        assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]
    else:
        assert not (tmp_path / "deep").exists()
    # the user fixes the typo: the same folder is accepted (it was refused as "another campaign")
    small_spec(tmp_path)
    code, out_text, err = cli(capsys, "campaign", tmp_path / "c.toml", "--out", out, "-q")
    assert code == 0, err
    assert "1/1 done" in out_text


def test_a_failing_prepare_step_leaves_nothing_behind(tmp_path, capsys):
    spec = small_spec(tmp_path, prepare={"run": [[sys.executable, "-c", "import sys; sys.exit(3)"]],
                                         "creates": ["made.txt"]})
    out = tmp_path / "o"
    code, _, err = cli(capsys, "campaign", spec, "--out", out, "-q")
    assert code == 2 and "exit status 3" in err
    assert not out.exists()


@pytest.mark.parametrize("place, problem", [
    ("file/o", "is a regular file, not a folder"),
    ("/proc/coburst-test/o", "cannot write there"),
])
def test_campaign_output_places_that_cannot_be_made(tmp_path, capsys, place, problem):
    spec = small_spec(tmp_path)
    (tmp_path / "file").write_text("x")
    out = place if place.startswith("/") else tmp_path / place
    code, _, err = cli(capsys, "campaign", spec, "--out", out, "-q")
    assert code == 2
    line = one_error_line(err)
    assert "--out" in line and problem in line


@pytest.mark.parametrize("address, problem", [
    ("tcp://localhost", "expected tcp://HOST:PORT"),
    ("tcp://:8786", "expected tcp://HOST:PORT"),
    ("http://localhost:8786", "expected tcp://HOST:PORT"),
    ("tcp://localhost:99999", "expected tcp://HOST:PORT"),
    ("tcp://no-such-host.invalid:8786", "unknown host 'no-such-host.invalid'"),
])
def test_bad_dask_addresses_are_refused_before_anything_starts(tmp_path, capsys, address, problem):
    spec = small_spec(tmp_path)
    out = tmp_path / "o"
    t0 = time.monotonic()
    code, _, err = cli(capsys, "campaign", spec, "--out", out, "--scheduler-address", address, "-q")
    assert code == 2
    line = one_error_line(err)
    assert "--scheduler-address" in line and problem in line
    assert not out.exists()
    assert time.monotonic() - t0 < 25  # not Dask's 30 s connection time-out


def test_a_wrong_batsim_path_is_named_and_never_replaced(tmp_path, capsys, monkeypatch):
    spec = small_spec(tmp_path)
    fake = tmp_path / "batsim-elsewhere"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("BATSIM", str(fake))  # a valid binary the command must not fall back to
    code, _, err = cli(capsys, "campaign", spec, "--out", tmp_path / "o", "--engine", "batsim",
                       "--batsim", tmp_path / "nope" / "batsim", "-q")
    assert code == 2
    line = one_error_line(err)
    assert "--batsim" in line and str(tmp_path / "nope" / "batsim") in line and "no such file" in line
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------------------- finished runs only
def test_analyze_and_report_read_finished_runs_only(tmp_path, capsys):
    spec = small_spec(tmp_path)
    out = tmp_path / "o"
    assert cli(capsys, "campaign", spec, "--out", out, "-q")[0] == 0
    (done,) = [d for d in (out / "runs").iterdir()]
    # a run in progress: its temporary folder with a partial output (a copy of a real one)
    tmp = out / "runs" / ".tmp-sched=other-0123abcd"
    shutil.copytree(done, tmp)
    (tmp / "status.json").unlink()
    (tmp / "params.json").write_text(json.dumps({"scheduler": "in-progress-policy"}))
    code, stdout, err = cli(capsys, "analyze", out, "-o", tmp_path / "tables")
    assert code == 0, err
    assert "1 in progress" in err and "only finished runs count" in err
    runs = (tmp_path / "tables" / "runs.csv").read_text()
    assert "in-progress-policy" not in runs
    code, _, err = cli(capsys, "report", out, "-o", tmp_path / "r.html", "--baseline", "in-progress-policy")
    assert code == 2 and "in-progress-policy" in err  # not a policy of a finished run: no baseline
    # naming the temporary folder itself is refused
    code, _, err = cli(capsys, "analyze", tmp, "-o", tmp_path / "t2")
    assert code == 2 and "in progress" in one_error_line(err)


# ---------------------------------------------------------------------------- damaged inputs
def _tables(tmp_path, capsys) -> Path:
    spec = small_spec(tmp_path)
    out = tmp_path / "o"
    assert cli(capsys, "campaign", spec, "--out", out, "-q")[0] == 0
    tables = tmp_path / "tables"
    assert cli(capsys, "analyze", out, "-o", tables)[0] == 0
    for p in tables.glob("*.parquet"):
        p.unlink()  # the CSV tables are read
    return tables


@pytest.mark.parametrize("table, column", [("runs", "mean_waiting"), ("jobs", "waiting")])
def test_plot_and_report_name_a_non_numeric_cell(tmp_path, capsys, table, column):
    import pandas as pd

    tables = _tables(tmp_path, capsys)
    path = tables / f"{table}.csv"
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    df.loc[0, column] = "abc"
    df.to_csv(path, index=False)
    for cmd in (["plot", tables, "--kind", "all", "-o", tmp_path / "figs"],
                ["report", tables, "-o", tmp_path / "r.html"]):
        code, _, err = cli(capsys, *cmd)
        assert code == 2, err
        line = one_error_line(err)
        assert f"{path}: line 2, column {column}: expected a number, got 'abc'" in line
    assert not (tmp_path / "r.html").exists()


def test_workload_swf_names_a_non_numeric_bb_capacity(tmp_path, capsys):
    xml = (ROOT / "platforms" / "dragonfly_small.xml").read_text()
    assert 'id="bb_capacity" value="' in xml
    import re

    bad = re.sub(r'id="bb_capacity" value="\d+"', 'id="bb_capacity" value="40 GB"', xml)
    plat = tmp_path / "p.xml"
    plat.write_text(bad)
    code, _, err = cli(capsys, "workload", "swf", need_swf(), "-p", plat,
                       "-o", tmp_path / "w.json", "--max-jobs", "10")
    assert code == 2, err
    line = one_error_line(err)
    assert "bb_capacity" in line and "'40 GB'" in line and "whole number of bytes" in line
    assert not (tmp_path / "w.json").exists()


def test_a_negative_bandwidth_is_called_negative(tmp_path, capsys):
    code, _, err = cli(capsys, "platform", "cluster", "--nodes", "4", "--bw=-5GBps", "-o", tmp_path / "p.xml")
    assert code == 2
    line = one_error_line(err)
    assert "negative" in line and "cannot read" not in line


def test_a_seed_given_as_heatmap_names_no_python_function(tmp_path):
    from coburst.errors import InputError
    from coburst.models.heatmap import bundled_path, detect_layout, load_heatmap

    seeds = [p for p in (bundled_path(n) for n in ("aris-nas",)) if detect_layout(p) == "seed"]
    seed_file = seeds[0] if seeds else None
    if seed_file is None:  # the bundled name is a pairs file: write a seed of the same applications
        seed_file = tmp_path / "seed.csv"
        seed_file.write_text("application,processes,compact_time\nbt,16,100\ncg,16,50\n")
        assert detect_layout(seed_file) == "seed"
    with pytest.raises(InputError) as info:
        load_heatmap(seed_file)
    assert "load_seed" not in str(info.value) and "seed" in str(info.value)


@pytest.mark.parametrize("transport", ["inprocess", "zmq"])
def test_a_bad_cosched_option_is_one_line_and_status_2_before_the_scheduler_starts(tmp_path, transport):
    proc = subprocess.run([sys.executable, "-m", "coburst", "run", "easy-co", "-o", '{"backfil_depth": 3}',
                           "--transport", transport, "-p", ROOT / "platforms" / "aris_cosched_small.xml",
                           "-w", ROOT / "tests" / "data" / "missing-on-purpose.json", "-e", tmp_path / "x"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2, proc.stderr
    line = one_error_line(proc.stderr)
    assert "backfil_depth" in line and "unknown option" in line and "see above" not in line
    assert "-o/--options" in line
