"""SWF 2.2 parser and selection policy: real KTH log (``shared_data.need_swf``: skipped without
it), and every malformed-input path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from coburst.errors import InputError
from coburst.workloads.jobmodels import select_jobs
from coburst.workloads.swf import FIELDS, parse_line, read_swf
from shared_data import need_swf

ROOT = Path(__file__).resolve().parents[1]

GOOD = """; Version: 2.2
; Computer: test
; MaxNodes: 8
    1      0   10    100    4   -1   -1    4    200   -1  1  1  1 -1 -1 -1 -1 -1
    2     50    0     30    2   -1   -1   -1     -1   -1  1  1  1 -1 -1 -1 -1 -1

    3     60    0     -1    2   -1   -1    2    100   -1  0  1  1 -1 -1 -1 -1 -1
    4     70    0     40   16   -1   -1   16    100   -1  1  1  1 -1 -1 -1 -1 -1
    5     80    0     40   -1   -1   -1   -1    100   -1  1  1  1 -1 -1 -1 -1 -1
    6     -1    0     40    1   -1   -1    1    100   -1  1  1  1 -1 -1 -1 -1 -1
    7     90    0    500    1   -1   -1    1    100 2048  1  1  1 -1 -1 -1 -1 -1
"""


def write(tmp_path: Path, text: str, name: str = "log.swf") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "coburst", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


def test_reads_header_and_records(tmp_path):
    log = read_swf(write(tmp_path, GOOD))
    assert log.header["Version"] == "2.2"
    assert log.header["MaxNodes"] == "8"
    assert [j.job_number for j in log.jobs] == [1, 2, 3, 4, 5, 6, 7]
    first = log.jobs[0]
    assert (first.submit_time, first.run_time, first.requested_procs, first.requested_time) == (0, 100, 4, 200)
    assert first.line == 4
    assert log.jobs[6].requested_memory == 2048


def test_kth_log_is_parsed_and_filtered_like_the_thesis():
    log = read_swf(need_swf())
    assert len(log.jobs) == 28476
    assert log.header["Installation"].startswith("Swedish Royal Institute")
    kept, report = select_jobs(log.jobs, 96)
    # Kopański 2020, §2.3: 28453 jobs left after dropping jobs wider than 96 nodes
    assert report.kept == len(kept) == 28453
    assert report.dropped["wider than the platform (96 nodes)"] == 14
    assert all(k.res <= 96 for k in kept)
    assert all(k.swf.requested_memory == -1 for k in kept)  # KTH records no memory


def test_selection_policy_for_unknown_fields(tmp_path):
    kept, report = select_jobs(read_swf(write(tmp_path, GOOD)).jobs, nb_res=8)
    by_number = {k.swf.job_number: k for k in kept}
    assert sorted(by_number) == [1, 2, 7]
    # job 2: requested processors -1 -> allocated processors; requested time -1 -> run time
    assert by_number[2].res == 2 and by_number[2].walltime == 30
    assert report.procs_from_allocated == 1 and report.walltime_from_runtime == 1
    # job 7: run time above requested time is kept (killed at walltime)
    assert by_number[7].walltime == 100
    assert report.dropped == {"unknown or zero run time": 1, "wider than the platform (8 nodes)": 1,
                              "unknown processor count": 1, "unknown submit time": 1}
    assert report.records == 7


def test_selection_orders_by_submit_time_and_truncates(tmp_path):
    text = "\n".join(f"{n} {t} 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1" for n, t in ((1, 30), (2, 10), (3, 10)))
    kept, report = select_jobs(read_swf(write(tmp_path, text)).jobs, nb_res=4, max_jobs=2)
    assert [k.swf.job_number for k in kept] == [2, 3]
    assert report.truncated == 1


@pytest.mark.parametrize("line, message", [
    ("1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1", "expected 18 fields, found 17"),
    ("1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1 7", "expected 18 fields, found 19"),
    ("1 0 0 ten 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1", "field 4 (run_time) is not a number: 'ten'"),
    ("1 0 0 10 1.5 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1", "field 5 (allocated_procs) must be an integer"),
    ("1 0 0 nan 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1", "field 4 (run_time) is not finite"),
])
def test_malformed_line_names_file_and_line(tmp_path, line, message):
    path = write(tmp_path, GOOD + line + "\n")
    with pytest.raises(InputError) as err:
        read_swf(path)
    text = str(err.value)
    assert text.startswith(f"{path}: line 12: ")
    assert message in text


def test_parse_line_skips_comments_and_blanks():
    assert parse_line("; comment") is None
    assert parse_line("   ") is None
    assert len(FIELDS) == 18


def test_missing_empty_and_binary_files(tmp_path):
    with pytest.raises(InputError, match="SWF file not found"):
        read_swf(tmp_path / "nope.swf")
    with pytest.raises(InputError, match="no job records"):
        read_swf(write(tmp_path, "; Version: 2.2\n\n"))
    binary = tmp_path / "bin.swf"
    binary.write_bytes(b"; ok\n\xff\xfe\x00\x01\n")
    with pytest.raises(InputError, match=r"line 2: not a text file"):
        read_swf(binary)


def test_cli_reports_malformed_swf_without_traceback(tmp_path):
    path = write(tmp_path, GOOD + "8 100 0 x 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1\n")
    proc = run_cli("workload", "swf", str(path), "-o", str(tmp_path / "w.json"))
    assert proc.returncode == 2
    assert f"{path}: line 12: field 4 (run_time) is not a number: 'x'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "w.json").exists()


def test_cli_reports_missing_swf_and_empty_selection(tmp_path):
    proc = run_cli("workload", "swf", str(tmp_path / "missing.swf"), "-o", str(tmp_path / "w.json"))
    assert proc.returncode == 2 and "missing.swf: SWF file not found" in proc.stderr
    wide = write(tmp_path, "1 0 0 10 500 -1 -1 500 20 -1 1 1 1 -1 -1 -1 -1 -1\n")
    proc = run_cli("workload", "swf", str(wide), "-o", str(tmp_path / "w.json"))
    assert proc.returncode == 2 and "no job left after filtering" in proc.stderr
