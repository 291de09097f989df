"""The decision profiler's summary reads the log row by row and gives the table
the whole-file reading gave (the former implementation, kept here as the reference)."""

from __future__ import annotations

import csv
import statistics
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from coburst.adapter.profiler import DecisionProfiler, _buckets, summarize


def whole_file_summary(path):
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(_buckets(int(r["queue"])), []).append(r)
    total = sum(float(r["wall_s"]) for r in rows) or 1e-300
    out = []
    for name in [b for b in ["0-9", "10-49", "50-99", "100-499", ">=500"] if b in groups] + ["all"]:
        rs = rows if name == "all" else groups[name]
        if not rs:
            continue
        w = [float(r["wall_s"]) for r in rs]
        tried = [int(r["tried"]) for r in rs if r["tried"]]
        out.append((name, len(rs), sum(w), statistics.median(w) * 1e3, max(w) * 1e3, sum(w) / total,
                    f"{statistics.mean(tried):.0f}" if tried else "-"))
    return out


ROW = st.tuples(st.floats(0, 1e7), st.integers(0, 2000), st.integers(0, 500),
                st.floats(0, 10, allow_subnormal=False), st.none() | st.integers(0, 10**12))


@settings(max_examples=60, deadline=None)
@given(st.lists(ROW, max_size=80))
def test_streamed_summary_is_the_whole_reading(rows):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "decisions.csv"
        prof = DecisionProfiler(path)
        for now, queue, running, wall, tried in rows:
            prof.record(now, queue, running, "p", wall, tried)
        prof.close()
        assert summarize(path) == whole_file_summary(path)
