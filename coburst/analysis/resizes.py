"""The resizes of a run in the elastic mode, per job: ``<prefix>_reconfigurations.csv``.

The simulator's elastic mode (:mod:`coburst.simulator.elastic`) writes one row per resize
(``job_id`` the job's full id ``workload!number``, ``reconfiguration_time`` the seconds the
job spent reconfiguring).  The analysis tables count them: the jobs table gains ``resizes`` and
``reconfiguration_time``, the runs table their totals.  A run without the file (any run not in
the elastic mode, Batsim's runs) has neither column.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from coburst.errors import InputError

__all__ = ["Resizes", "read_resizes"]


@dataclass
class Resizes:
    """Per job (full id): how many resizes, and the seconds spent reconfiguring."""

    counts: dict[str, int]
    seconds: dict[str, float]

    def columns(self, workload: pd.Series, job_id: pd.Series) -> dict[str, np.ndarray]:
        """The jobs-table columns for the jobs ``workload!job_id``."""
        full = workload.astype(str) + "!" + job_id.astype(str)
        return {"resizes": full.map(self.counts).fillna(0).to_numpy(np.int64),
                "reconfiguration_time": full.map(self.seconds).fillna(0.0).to_numpy(float)}

    def totals(self) -> dict[str, float]:
        return {"resizes": int(sum(self.counts.values())), "reconfiguration_time": float(sum(self.seconds.values()))}


def read_resizes(prefix: str | Path) -> Resizes | None:
    """The resizes of the run ``prefix`` (None without ``<prefix>_reconfigurations.csv``);
    a file that is not one the simulator writes raises :class:`InputError` naming it."""
    path = Path(f"{prefix}_reconfigurations.csv")
    if not path.is_file():
        return None
    try:
        df = pd.read_csv(path, dtype={"job_id": str}, keep_default_na=False, encoding="utf-8")
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise InputError(path, None, f"not a reconfigurations file: {str(exc).splitlines()[0][:200]}") from None
    missing = [c for c in ("job_id", "reconfiguration_time") if c not in df.columns]
    if missing:
        raise InputError(path, "header", f"not a reconfigurations file: missing columns {missing}")
    seconds = pd.to_numeric(df["reconfiguration_time"], errors="coerce").to_numpy(float)
    bad = np.flatnonzero(~np.isfinite(seconds) | (seconds < 0))
    if len(bad):
        i = int(bad[0])
        raise InputError(path, f"line {i + 2}, column reconfiguration_time",
                         f"{str(df['reconfiguration_time'].iloc[i])[:200]!r} is not a time (a number >= 0)")
    grouped = pd.DataFrame({"job": df["job_id"].astype(str), "s": seconds}).groupby("job", sort=False)["s"]
    return Resizes(grouped.size().astype(int).to_dict(), grouped.sum().to_dict())
