"""``read_raw_jobs`` types the columns it does not convert (extra columns, ``success``) as the
whole-file reading does, however the file is cut into chunks (before, a column of
numbers in one chunk and text in another came out as a mix of ints and strings)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from coburst.analysis.metrics import _read_raw_jobs_whole, read_raw_jobs

HEADER = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,"
          "final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,"
          "allocated_resources,consumed_energy,metadata,extra\n")

CELL = st.one_of(st.integers(-10**6, 10**6).map(str), st.sampled_from(["", "x", "1.5", "007", "1e3", "True"]))


@settings(max_examples=40, deadline=None)
@given(st.lists(CELL, min_size=1, max_size=300), st.integers(200, 6000), st.booleans())
@example(["0", "0", "0", "0", "0", "True"], 200, False)  # ints in one chunk, a boolean in the next
def test_chunked_reading_types_like_the_whole_reading(extras, chunk_bytes, fractions):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "out_jobs.csv"
        rows = [f"{i},w0,p,{i},{2.5 if fractions and i % 7 == 3 else 1},10,1,COMPLETED_SUCCESSFULLY,{i},1,{i + 1},"
                f"0,1,1,0-1,-1,,{e}\n" for i, e in enumerate(extras)]
        path.write_text(HEADER + "".join(rows))
        whole = _read_raw_jobs_whole(path)
        chunked = read_raw_jobs(path, chunk_bytes=chunk_bytes)
        assert list(chunked.dtypes) == list(whole.dtypes)
        assert chunked.equals(whole)
        assert [type(v) for v in chunked["extra"]] == [type(v) for v in whole["extra"]]
