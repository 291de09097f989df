"""Decision-time profiler: one CSV row per scheduling decision.

Batsim's tools report the simulation, not the scheduler; this records where a policy spends
its time.  :class:`DecisionProfiler` is fed by :class:`~coburst.adapter.scheduler.CoburstScheduler`
when the option ``"decision_log": "<path.csv>"`` is given; columns:

``date``
    simulated date of the decision (s);
``queue`` / ``running``
    waiting and running jobs when the policy was called;
``policy``
    the policy's label;
``wall_s``
    wall-clock seconds spent in the policy's ``make_decisions``;
``tried``
    the policy's own count of the work done (execution plans for ``plan-*``, permutations
    for ``maxutil``, combinations checked for ``window``; empty for the other policies).

:func:`summarize` condenses such a file (``coburst run`` prints it).
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

__all__ = ["DecisionProfiler", "summarize", "decision_time_table", "COLUMNS"]

COLUMNS = ("date", "queue", "running", "policy", "wall_s", "tried")


class DecisionProfiler:
    """Writes the decision log (module doc), row by row."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._file = open(self.path, "w", encoding="utf-8", newline="", buffering=1)  # noqa: SIM115 - closed by close()
        self._file.write(",".join(COLUMNS) + "\n")
        self.rows = 0

    def record(self, now: float, queue: int, running: int, policy: str, wall_s: float, tried: int | None) -> None:
        self._file.write(f"{now:.6f},{queue},{running},{policy},{wall_s:.6f},{'' if tried is None else tried}\n")
        self.rows += 1

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()


def _buckets(q: int) -> str:
    for hi, name in ((10, "0-9"), (50, "10-49"), (100, "50-99"), (500, "100-499")):
        if q < hi:
            return name
    return ">=500"


def summarize(path: str | Path) -> list[tuple[str, int, float, float, float, float, str]]:
    """Per queue-length bucket and overall: ``(bucket, decisions, total s, median ms,
    max ms, share of the total time, mean tried)``."""
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(_buckets(int(r["queue"])), []).append(r)
    total = sum(float(r["wall_s"]) for r in rows) or 1e-300
    out = []
    order = ["0-9", "10-49", "50-99", "100-499", ">=500"]
    for name in [b for b in order if b in groups] + ["all"]:
        rs = rows if name == "all" else groups[name]
        if not rs:
            continue
        w = [float(r["wall_s"]) for r in rs]
        tried = [int(r["tried"]) for r in rs if r["tried"]]
        out.append((name, len(rs), sum(w), statistics.median(w) * 1e3, max(w) * 1e3, sum(w) / total,
                    f"{statistics.mean(tried):.0f}" if tried else "-"))
    return out


def decision_time_table(path: str | Path):
    """:func:`summarize` as a rich table (for ``coburst run``'s report)."""
    from rich.table import Table

    table = Table(title=f"decision time ({path})")
    for col in ("queue", "decisions", "total s", "median ms", "max ms", "share", "mean tried"):
        table.add_column(col, justify="right")
    for name, n, total, med, mx, share, tried in summarize(path):
        table.add_row(name, str(n), f"{total:.3f}", f"{med:.3f}", f"{mx:.3f}", f"{share:.0%}", tried)
    return table
