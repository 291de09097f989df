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
    max ms, share of the total time, mean tried)``.

    The log is read row by row (a long simulation's log holds millions of decisions): only
    each decision's wall time is kept, as an 8-byte double in an ``array`` per bucket (the
    median needs them all), and ``tried`` as a running sum and count per bucket."""
    from array import array

    walls: dict[str, array] = {}
    tried: dict[str, list[int]] = {}  # bucket -> [sum, count]
    every = array("d")
    every_tried = [0, 0]
    with open(path, encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f):
            name = _buckets(int(r["queue"]))
            w = float(r["wall_s"])
            walls.setdefault(name, array("d")).append(w)
            every.append(w)
            if r["tried"]:
                t, acc = int(r["tried"]), tried.setdefault(name, [0, 0])
                acc[0] += t
                acc[1] += 1
                every_tried[0] += t
                every_tried[1] += 1
    total = sum(every) or 1e-300
    out = []
    order = ["0-9", "10-49", "50-99", "100-499", ">=500"]
    for name in [b for b in order if b in walls] + ["all"]:
        w = every if name == "all" else walls[name]
        if not w:
            continue
        acc = every_tried if name == "all" else tried.get(name, [0, 0])
        out.append((name, len(w), sum(w), statistics.median(w) * 1e3, max(w) * 1e3, sum(w) / total,
                    f"{acc[0] / acc[1]:.0f}" if acc[1] else "-"))
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
