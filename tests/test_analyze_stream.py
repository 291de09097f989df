"""``coburst analyze`` in bounded memory: the chunked ``_jobs.csv`` reader agrees with
the whole-file one (rows, and errors: file, line, column, problem, also at chunk boundaries),
the streamed fold-back of IO-Aware sub-jobs with :func:`fold_io_jobs`, and the CLI's jobs tables
are written in row groups whose size does not depend on the file, with memory that does not
follow the file's length."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from coburst.analysis.metrics import (_read_raw_jobs_whole, fold_io_jobs, iter_folded_jobs, read_raw_jobs)
from coburst.errors import InputError

HEADER = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,"
          "final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,"
          "allocated_resources,consumed_energy,metadata")


def _row(i: int, submit: float = 0.0, wait: float = 1.0, run: float = 5.0, state="COMPLETED_SUCCESSFULLY",
         meta: str = "", workload: str = "w0", nodes: int = 2, alloc: str | None = None) -> str:
    if state == "REJECTED":
        return f'{i},{workload},p,{submit:.6f},{nodes},10.000000,0,REJECTED,,,,,,,,,"{meta}"'
    start, finish = submit + wait, submit + wait + run
    alloc = alloc if alloc is not None else f"{i % 7}-{i % 7 + nodes - 1}"
    return (f"{i},{workload},p,{submit:.6f},{nodes},10.000000,{int(state == 'COMPLETED_SUCCESSFULLY')},{state},"
            f"{start:.6f},{run:.6f},{finish:.6f},{wait:.6f},{wait + run:.6f},{(wait + run) / run:.6f},{alloc},"
            f'-1.000000,"{meta}"')


def _outcome(fn, path):
    try:
        return "ok", fn(path)
    except InputError as exc:
        return "error", str(exc)


def _same(path, chunk_bytes):
    kind, ref = _outcome(_read_raw_jobs_whole, path)
    got_kind, got = _outcome(lambda p: read_raw_jobs(p, chunk_bytes=chunk_bytes), path)
    assert got_kind == kind, (ref, got)
    if kind == "ok":
        pd.testing.assert_frame_equal(got, ref)
    else:
        assert got == ref


#: damage done to one line of a valid file (None: left valid)
_DAMAGE = st.sampled_from([
    None, "field", "state", "number", "inf", "empty_start", "empty_submit", "nul", "utf8", "quote_newline",
    "blank", "short"])


def _damaged(line: str, how: str | None) -> str:
    cells = line.split(",")
    if how not in ("field", "short", "blank", "quote_newline") and len(cells) < 13:
        return line  # a row already cut short by an earlier damage: nothing to change in it
    if how == "field":
        return line + ",x"
    if how == "short":
        return ",".join(cells[:5])
    if how == "state":
        cells[7] = "DONE"
    elif how == "number":
        cells[9] = "abc"
    elif how == "inf":
        cells[12] = "inf"
    elif how == "empty_start" and cells[7] != "REJECTED":
        cells[8] = ""
    elif how == "empty_submit":
        cells[3] = " "
    elif how == "nul":
        cells[2] = "p\x00"
    elif how == "utf8":
        cells[2] = "p\udcff"
    elif how == "quote_newline":
        cells[-1] = '"a,b\nc;""q"""'
    elif how == "blank":
        return line + "\n"
    return ",".join(cells)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(0, 40), damage=st.lists(st.tuples(st.integers(0, 39), _DAMAGE), max_size=3),
       chunk=st.integers(1, 400), crlf=st.booleans(), last_newline=st.booleans(), bom=st.booleans())
# a row whose quoted metadata holds a newline (a CSV row as it stands), then a row of too many
# fields: both readers name the second row's line (the whole-file reader once named the first)
@example(n=2, damage=[(0, "quote_newline"), (1, "field")], chunk=1, crlf=False, last_newline=False, bom=False)
@example(n=2, damage=[(0, "quote_newline"), (1, "field")], chunk=400, crlf=True, last_newline=True, bom=False)
def test_chunked_reader_is_the_whole_file_reader(tmp_path, n, damage, chunk, crlf, last_newline, bom):
    """Random files, valid or damaged anywhere (chunks of a few bytes to a few rows: errors
    fall on chunk boundaries): the same rows, or the same error."""
    lines = [HEADER] + [_row(i, submit=float(i), state="REJECTED" if i % 5 == 4 else "COMPLETED_SUCCESSFULLY",
                             meta="bb=1:5" if i % 3 else "") for i in range(n)]
    for at, how in damage:
        if 1 + at < len(lines):
            lines[1 + at] = _damaged(lines[1 + at], how)
    eol = "\r\n" if crlf else "\n"
    text = eol.join(lines) + (eol if last_newline else "")
    data = text.encode("utf-8", errors="surrogateescape")
    path = tmp_path / "r_jobs.csv"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    _same(path, chunk)


@pytest.mark.parametrize("content", [b"", b"  \n\n", HEADER.encode(), HEADER.encode() + b"\n\n\n",
                                     b"\xff\xfe" + HEADER.encode("utf-16-le"), b"a,b\n1,2\n",
                                     (HEADER + "\n" + _row(0) + "\n" + _row(1)[:-1]).encode()])
def test_chunked_reader_edge_files(tmp_path, content):
    path = tmp_path / "e_jobs.csv"
    path.write_bytes(content)
    for chunk in (1, 7, 1 << 20):
        _same(path, chunk)


def _io_file(path, n_static: int, rng) -> None:
    """IO-Aware rows: rejected static rows with ``io=`` metadata, their sub-jobs interleaved with
    delay jobs, in end order."""
    rows, t = [], 0.0
    pending = []
    for j in range(n_static):
        rows.append(_row(j, submit=t, state="REJECTED", meta=f"bb=3:10;alloc={j % 4};io=3"))
        for k in range(int(rng.integers(1, 4))):
            state = "COMPLETED_SUCCESSFULLY" if rng.random() < 0.8 else "COMPLETED_WALLTIME_REACHED"
            last = ";last" if k == 2 else ""
            pending.append((t + rng.random() * 50, _row(1000 + 10 * j + k, submit=t, run=1.0 + k, state=state,
                                                       workload="io", meta=f"of=w0!{j};step=c{k}{last}")))
        rows.append(_row(500 + j, submit=t))
        t += 3.0
    pending.sort(key=lambda p: p[0])
    for k, (_, row) in enumerate(pending):  # sub-jobs spread among the other rows
        rows.insert(int(rng.integers(n_static, len(rows) + 1)), row)
    path.write_text(HEADER + "\n" + "\n".join(rows) + "\n")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12), chunk=st.integers(50, 3000))
def test_streamed_fold_is_fold_io_jobs(tmp_path, seed, n, chunk):
    path = tmp_path / "io_jobs.csv"
    _io_file(path, n, np.random.default_rng(seed))
    ref = fold_io_jobs(_read_raw_jobs_whole(path), source=str(path))
    got = pd.concat(list(iter_folded_jobs(path, chunk)), ignore_index=True)
    pd.testing.assert_frame_equal(got, ref, check_dtype=False)


def test_streamed_fold_errors(tmp_path):
    path = tmp_path / "bad_jobs.csv"
    path.write_text(HEADER + "\n" + "\n".join([_row(i) for i in range(30)] + [
        _row(99, state="REJECTED", meta="alloc=0;io=2")]) + "\n")
    with pytest.raises(InputError) as whole:
        fold_io_jobs(_read_raw_jobs_whole(path), source=str(path))
    with pytest.raises(InputError) as streamed:
        list(iter_folded_jobs(path, 100))
    assert str(streamed.value) == str(whole.value)


def _big(path, n: int) -> None:
    rng = np.random.default_rng(1)
    submit = np.cumsum(rng.integers(0, 30, n)).astype(float)
    with open(path, "w") as fh:
        fh.write(HEADER + "\n")
        for i in range(n):
            fh.write(_row(i, submit=float(submit[i]), wait=float(i % 50), run=float(1 + i % 300),
                          meta="speedup=1.0" if i % 11 == 0 else "") + "\n")


def _cli_peak(prefix, out, chunk_bytes: int, row_group: int):
    from coburst.analysis.tables import JobsWriter, analyze_stream, write_run_tables

    tracemalloc.start()
    try:
        with JobsWriter(out, row_group=row_group) as writer:
            runs = analyze_stream([prefix], sink=writer.write, chunk_bytes=chunk_bytes)
            write_run_tables(runs, out)
        return tracemalloc.get_traced_memory()[1], writer.row_groups
    finally:
        tracemalloc.stop()


def test_cli_path_memory_does_not_follow_the_file(tmp_path):
    """The CLI's path (jobs tables written as the run is read): 10x the rows, row groups of the
    same size, and a peak of traced memory far from 10x (only a few numbers per job stay)."""
    n, chunk_bytes, row_group = 4_000, 64 << 10, 1_000
    peaks = {}
    for k in (1, 10):
        prefix = tmp_path / f"r{k}"
        _big(f"{prefix}_jobs.csv", n * k)
        peaks[k], groups = _cli_peak(prefix, tmp_path / f"out{k}", chunk_bytes, row_group)
        assert groups[:-1] == [row_group] * (len(groups) - 1) and 0 < groups[-1] <= row_group
        assert sum(groups) == n * k
        jobs = pd.read_parquet(tmp_path / f"out{k}" / "jobs.parquet")
        assert len(jobs) == n * k and jobs["job_id"].tolist() == [str(i) for i in range(n * k)]
    assert peaks[10] < 4 * peaks[1], peaks


def test_cli_tables_are_write_tables(tmp_path):
    """Streamed (several row groups and CSV pieces) or whole, the same tables: CSV byte for byte,
    Parquet row for row; a table of one row group: the same Parquet bytes too."""
    from coburst.analysis.tables import analyze, write_tables

    prefix = tmp_path / "r"
    _big(f"{prefix}_jobs.csv", 3_000)
    runs, jobs = analyze([prefix])
    write_tables(runs, jobs, tmp_path / "whole")
    for row_group, chunk in ((700, 20_000), (1 << 16, 1 << 20)):
        out = tmp_path / f"s{row_group}"
        _, groups = _cli_peak(prefix, out, chunk, row_group)
        for name in ("runs.csv", "jobs.csv", "runs.parquet"):
            assert (out / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name
        pd.testing.assert_frame_equal(pd.read_parquet(out / "jobs.parquet"),
                                      pd.read_parquet(tmp_path / "whole" / "jobs.parquet"))
        if len(groups) == 1:
            assert (out / "jobs.parquet").read_bytes() == (tmp_path / "whole" / "jobs.parquet").read_bytes()
