"""Scheduling metrics computed from Batsim ``_jobs.csv`` files.

Definitions (Kopański 2020, §1.8):

* waiting time ``w = start - submit``; turnaround ``t = finish - submit``;
* slowdown ``t / runtime``; bounded slowdown ``max(t / max(runtime, tau), 1)`` with
  ``tau = 600 s`` (10 minutes) by default;
* makespan: last finish time minus first submission time;
* utilisation: node-seconds used by jobs divided by ``nb_compute * makespan``.

Rejected jobs are excluded from every metric (they never ran).  Only rows of static
workloads (``w0``, ``w1``, ...) count.  IO-Aware jobs (:mod:`coburst.adapter.io_aware`) are
rejected by the scheduler and run as dynamic sub-jobs: :func:`read_jobs` folds them back
into one row per static job (:func:`fold_io_jobs`), which then counts like any other job.

Fold-back rule (:func:`fold_io_jobs`).  The ``REJECTED`` row of a static job ``J`` whose
metadata has an ``io=<phases>`` part (``[bb=...;]alloc=<compute ids>;io=<phases>``, set by
the adapter just before the rejection) and every row whose metadata says ``of=<J's
workload!id>`` (its sub-jobs: ``of=w0!7;step=<tag>[;last]``) become one row for ``J``:

* ``starting_time`` = earliest sub-job start, ``finish_time`` = latest sub-job finish,
  ``execution_time``, ``waiting_time``, ``turnaround_time`` and ``stretch`` recomputed from
  them as Batsim does (``stretch = turnaround / execution``);
* ``allocated_resources`` = the ``alloc`` part (the compute nodes held by ``J`` from its
  start to its finish); ``consumed_energy`` = the sub-jobs' sum, -1 if one of them has -1;
* ``final_state``: ``COMPLETED_WALLTIME_REACHED`` if a sub-job reached its walltime, else
  ``COMPLETED_KILLED`` if a sub-job ended otherwise than successfully, else
  ``COMPLETED_SUCCESSFULLY`` if a sub-job is marked ``last`` (the job's final phase ran),
  else ``COMPLETED_WALLTIME_REACHED`` (the adapter stopped for lack of walltime); ``success``
  = 1 iff ``COMPLETED_SUCCESSFULLY`` -- the adapter's own rule
  (:func:`coburst.adapter.io_aware.final_state`);
* ``metadata`` = ``[bb=...;]alloc=...;phases=<successful compute phases>/<phases>``;
* the other columns (id, workload, profile, submission time, requested resources and
  time) are ``J``'s; the row takes the place of ``J``'s last sub-job row (end order).

An IO-Aware static row without sub-jobs, or a sub-job naming no such row, is an error (a
truncated or mixed-up file).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from procset import ProcSet

from coburst.errors import InputError

TAU = 600.0
#: metadata keys of IO-Aware execution (written by coburst.adapter.io_aware)
IO_PHASES, IO_OF, IO_STEP, IO_LAST = "io", "of", "step", "last"
_TIMES = ("submission_time", "starting_time", "finish_time", "execution_time", "waiting_time", "turnaround_time",
          "stretch", "consumed_energy", "requested_time")

REQUIRED = ("job_id", "submission_time", "starting_time", "finish_time", "execution_time", "final_state",
            "allocated_resources", "requested_number_of_resources")


STATIC_WORKLOAD = r"w\d+"


#: the job states Batsim writes (batsim-4.2.1 src/jobs.cpp, job_state_to_string)
JOB_STATES = frozenset({"NOT_SUBMITTED", "SUBMITTED", "RUNNING", "COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED",
                        "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED", "REJECTED"})
#: time columns every job that ran has (a rejected job leaves them empty)
_RAN_TIMES = ("starting_time", "finish_time", "execution_time")


def _csv_rows(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Per non-blank CSV row of ``data`` (quotes respected, vectorised): the line it starts
    on (1-based) and its field count."""
    b = np.frombuffer(data, dtype=np.uint8)
    quotes = np.flatnonzero(b == ord('"'))
    newline = np.flatnonzero(b == ord("\n"))
    commas = np.flatnonzero(b == ord(","))
    if len(quotes):  # outside a quoted field: an even number of quotes before ("" counts twice)
        ends = newline[(np.searchsorted(quotes, newline) & 1) == 0]
        commas = commas[(np.searchsorted(quotes, commas) & 1) == 0]
    else:
        ends = newline
    if not len(ends) or ends[-1] != len(b) - 1:
        ends = np.append(ends, len(b))  # the last row has no newline
    starts = np.concatenate(([0], ends[:-1] + 1))
    fields = np.bincount(np.searchsorted(ends, commas), minlength=len(ends)) + 1
    length = ends - starts - (b[np.maximum(ends - 1, 0)] == ord("\r")) * (ends > starts)
    first_line = np.searchsorted(newline, starts) + 1
    keep = length > 0  # blank lines: skipped, as pandas does
    return first_line[keep], fields[keep]


def read_raw_jobs(path: str | Path) -> pd.DataFrame:
    """Every row of a Batsim ``_jobs.csv`` as written (time columns as floats, NaN where
    empty; ``job_id``, ``workload_name``, ``allocated_resources`` and ``metadata`` as text).

    Checked, with the line and column named: every row has the header's field count; time
    columns are numbers, ``submission_time`` and ``requested_number_of_resources`` present
    and finite, start, finish and execution times present and finite for every job that ran
    (Batsim leaves them empty for a rejected job), no infinite time; ``final_state`` is a
    Batsim job state."""
    import io

    from coburst.validate import decode_text, read_bytes

    text_cols = ("job_id", "workload_name", "profile", "final_state", "allocated_resources", "metadata")
    data = read_bytes(path, "jobs file")
    text = decode_text(data, str(path))  # UTF-16, NUL bytes, bad UTF-8: named
    if not text.strip():
        raise InputError(path, None, "empty file: not a Batsim _jobs.csv (no header)")
    lines, fields = _csv_rows(data)
    bad = np.flatnonzero(fields != fields[0])
    if len(bad):
        i = int(bad[0])
        raise InputError(path, f"line {lines[i]}", f"{fields[i]} fields, the header has {fields[0]}")
    try:
        df = pd.read_csv(io.StringIO(text), dtype={c: str for c in text_cols}, keep_default_na=False,
                         na_values={c: [""] for c in _TIMES})
    except pd.errors.ParserError as exc:
        raise InputError(path, None, f"not a Batsim _jobs.csv: {exc}") from None
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise InputError(path, "header", f"not a Batsim _jobs.csv: missing columns {missing}")

    def fail(i: int, col: str, problem) -> None:
        raw = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, usecols=[col])[col].iloc[i]
        raise InputError(path, f"line {lines[i + 1]}, column {col}", problem(raw))

    states = df["final_state"]
    bad = np.flatnonzero(~states.isin(JOB_STATES).to_numpy())
    if len(bad):
        fail(int(bad[0]), "final_state",
             lambda raw: f"unknown job state {raw!r} (Batsim's: {', '.join(sorted(JOB_STATES))})")
    ran = (states != "REJECTED").to_numpy()
    for col in (*_TIMES, "requested_number_of_resources"):
        if col not in df.columns:
            continue
        column = df[col]
        if pd.api.types.is_numeric_dtype(column.dtype):
            values = column.to_numpy(float)
        else:  # some cell is not a number
            values = pd.to_numeric(column.replace("", None), errors="coerce").to_numpy(float)
            text_cells = column.astype(str).str.strip().to_numpy() != ""
            bad = np.flatnonzero(text_cells & np.isnan(values))
            if len(bad):
                fail(int(bad[0]), col, lambda raw: f"{raw!r} is " + (
                    "not finite" if raw.strip().lower().lstrip("+-") in ("nan", "inf", "infinity") else "not a number"))
        required = col in ("submission_time", "requested_number_of_resources")
        need = True if required else ran if col in _RAN_TIMES else False
        bad = np.flatnonzero(np.isinf(values) | (need & np.isnan(values)))
        if len(bad):
            i = int(bad[0])
            fail(i, col, lambda raw: f"{raw!r} is not finite" if raw.strip() else
                 "empty" + ("" if required else f" (the job is {states.iloc[i]})"))
        if col in _TIMES:
            df[col] = values
    return df


def read_jobs(path: str | Path, static_only: bool = True) -> pd.DataFrame:
    """Read a Batsim ``_jobs.csv`` for metrics: one row per job that ran.

    With ``static_only`` (default), IO-Aware sub-jobs are folded back into their static
    job's row (:func:`fold_io_jobs`) and other dynamic jobs dropped; otherwise every row is
    kept as written.  Rejected jobs are dropped in both cases."""
    df = read_raw_jobs(path)
    if static_only:
        df = fold_io_jobs(df, source=str(path))
        if "workload_name" in df.columns:
            df = df[df["workload_name"].astype(str).str.fullmatch(STATIC_WORKLOAD)]
    return df[df["final_state"] != "REJECTED"].reset_index(drop=True)


def parse_metadata(meta: str) -> dict[str, str]:
    """``k=v;k=v;flag`` -> dict (a flag maps to ``""``)."""
    out = {}
    for part in str(meta).split(";"):
        if part:
            key, _, value = part.partition("=")
            out[key] = value
    return out


def fold_io_jobs(df: pd.DataFrame, source: str = "jobs table") -> pd.DataFrame:
    """Fold IO-Aware sub-jobs back into their static job's row (module doc: fold-back rule).

    ``df``: rows as :func:`read_raw_jobs` gives them.  Rows of other jobs are kept as they
    are and in their order; the result has the same columns."""
    if "metadata" not in df.columns or "workload_name" not in df.columns or df.empty:
        return df
    meta = df["metadata"].astype(str)
    of = meta.str.extract(rf"(?:^|;){IO_OF}=([^;]*)", expand=False)
    is_static = (df["final_state"] == "REJECTED") & meta.str.contains(rf"(?:^|;){IO_PHASES}=\d+(?:;|$)")
    is_sub = of.notna()
    if not is_static.any() and not is_sub.any():
        return df
    key = df["workload_name"].astype(str) + "!" + df["job_id"].astype(str)
    statics = {k: i for k, i in zip(key[is_static], df.index[is_static])}
    orphans = sorted(set(of[is_sub]) - set(statics))
    if orphans:
        raise InputError(source, f"sub-job of {orphans[0]}", "IO-Aware sub-jobs of a job without its rejected "
                         "static row (io= metadata)")
    missing = sorted(set(statics) - set(of[is_sub]))
    if missing:
        raise InputError(source, f"job {missing[0]}", "IO-Aware job (io= metadata) without any sub-job row")
    subs = df[is_sub].assign(_of=of[is_sub], _pos=np.arange(len(df))[is_sub.to_numpy()])
    steps = meta[is_sub].str.extract(rf"(?:^|;){IO_STEP}=([^;]*)", expand=False).fillna("")
    subs = subs.assign(
        _walltime=subs["final_state"] == "COMPLETED_WALLTIME_REACHED",
        _failed=subs["final_state"] != "COMPLETED_SUCCESSFULLY",
        _last=meta[is_sub].str.contains(rf"(?:^|;){IO_LAST}(?:;|$)"),
        _phase=steps.str.fullmatch(r"c\d+") & (subs["final_state"] == "COMPLETED_SUCCESSFULLY"),
        _energy_unknown=subs["consumed_energy"] < 0 if "consumed_energy" in subs else True)
    groups = subs.groupby("_of", sort=False).agg(
        start=("starting_time", "min"), finish=("finish_time", "max"), pos=("_pos", "max"),
        walltime=("_walltime", "any"), failed=("_failed", "any"), last=("_last", "any"), phases=("_phase", "sum"),
        energy=("consumed_energy", "sum") if "consumed_energy" in subs else ("_pos", "size"),
        energy_unknown=("_energy_unknown", "any"))

    keys, idx = list(statics), list(statics.values())
    g = groups.loc[keys]
    smeta = df.loc[idx, "metadata"].astype(str)
    bb = smeta.str.extract(r"(?:^|;)(bb=[^;]*)", expand=False)
    alloc = smeta.str.extract(r"(?:^|;)alloc=([^;]*)", expand=False).fillna("")
    nb_phases = smeta.str.extract(rf"(?:^|;){IO_PHASES}=(\d+)", expand=False)
    ok, wall = "COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"
    state = np.where(g["walltime"], wall, np.where(g["failed"], "COMPLETED_KILLED", np.where(g["last"], ok, wall)))
    start, finish = g["start"].to_numpy(float), g["finish"].to_numpy(float)
    submit = df.loc[idx, "submission_time"].to_numpy(float)
    execution = finish - start
    with np.errstate(divide="ignore", invalid="ignore"):
        stretch = np.where(execution > 0, (finish - submit) / execution, np.inf)
    done = g["phases"].astype(int).astype(str).to_numpy(object)
    phases_part = ";alloc=" + alloc.to_numpy(object) + ";phases=" + done + "/" + nb_phases.to_numpy(object)
    metadata = np.where(bb.notna().to_numpy(), bb.fillna("").to_numpy(object) + phases_part,
                        np.array([x[1:] for x in phases_part], dtype=object))
    values = {"success": (state == ok).astype(int), "final_state": state, "starting_time": start,
              "execution_time": execution, "finish_time": finish, "waiting_time": start - submit,
              "turnaround_time": finish - submit, "stretch": stretch,
              "consumed_energy": np.where(g["energy_unknown"], -1.0, g["energy"].to_numpy(float)),
              "allocated_resources": alloc.to_numpy(object), "metadata": metadata}
    out = df.copy()
    for col, value in values.items():
        if col in out.columns:
            out.loc[idx, col] = value
    position = pd.Series(np.arange(len(df), dtype=float), index=df.index)
    position.loc[idx] = g["pos"].to_numpy(float) + 0.5  # just after its last sub-job's row
    keep = ~is_sub
    order = position[keep].sort_values(kind="stable").index
    return out.loc[order].reset_index(drop=True)


@dataclass(frozen=True)
class Metrics:
    nb_jobs: int
    mean_waiting: float
    mean_bounded_slowdown: float
    mean_turnaround: float
    max_waiting: float
    utilisation: float
    makespan: float

    def as_dict(self) -> dict[str, float]:
        return dict(self.__dict__)


def bounded_slowdown(df: pd.DataFrame, tau: float = TAU) -> np.ndarray:
    turnaround = (df["finish_time"] - df["submission_time"]).to_numpy()
    return bounded_slowdown_of(turnaround, df["execution_time"].to_numpy(), tau)


def bounded_slowdown_of(turnaround: np.ndarray, runtime: np.ndarray, tau: float = TAU) -> np.ndarray:
    """max(turnaround / max(runtime, tau), 1), element-wise."""
    return np.maximum(turnaround / np.maximum(runtime, tau), 1.0)


def node_count(alloc: str, requested: int = 0) -> int:
    """Nodes of an allocation (a job without allocation counts its request)."""
    return len(ProcSet.from_str(alloc)) if alloc else int(requested)


def compute_metrics(df: pd.DataFrame, nb_compute: int | None = None, tau: float = TAU) -> Metrics:
    """Metrics of one run.  ``nb_compute`` defaults to the highest resource id used + 1."""
    if df.empty:
        return Metrics(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    waiting = (df["starting_time"] - df["submission_time"]).to_numpy()
    turnaround = (df["finish_time"] - df["submission_time"]).to_numpy()
    nodes = np.array([node_count(a, r) for a, r in zip(df["allocated_resources"],
                                                         df["requested_number_of_resources"])])
    if nb_compute is None:
        nb_compute = max((ProcSet.from_str(a).max + 1 for a in df["allocated_resources"] if a),
                         default=int(nodes.max()))
    makespan = float(df["finish_time"].max() - df["submission_time"].min())
    used = float(np.sum(nodes * df["execution_time"].to_numpy()))
    return Metrics(
        nb_jobs=len(df),
        mean_waiting=float(waiting.mean()),
        mean_bounded_slowdown=float(bounded_slowdown(df, tau).mean()),
        mean_turnaround=float(turnaround.mean()),
        max_waiting=float(waiting.max()),
        utilisation=used / (nb_compute * makespan) if makespan > 0 else 0.0,
        makespan=makespan,
    )


def metrics_table(runs: dict[str, pd.DataFrame], nb_compute: int | None = None, baseline: str | None = None,
                  energy: dict[str, float] | None = None):
    """A rich table comparing runs; ratios against ``baseline`` when given; an ``energy (kJ)``
    column when ``energy`` gives runs their energy in J (:func:`read_energy`'s ``energy``)."""
    from rich.table import Table

    energy = {k: v for k, v in (energy or {}).items() if v == v}  # NaN: the run had no -E
    table = Table(title="Scheduling metrics" + (f" (ratio vs {baseline})" if baseline else ""))
    for col in ("scheduler", "jobs", "mean wait (s)", "mean bounded slowdown (tau=600s)", "utilisation",
                "makespan (s)") + (("energy (kJ)",) if energy else ()):
        table.add_column(col, justify="left" if col == "scheduler" else "right")
    computed = {name: compute_metrics(df, nb_compute) for name, df in runs.items()}
    base = computed.get(baseline) if baseline else None
    for name, m in computed.items():
        def cell(value: float, ref: float | None, fmt: str) -> str:
            text = format(value, fmt)
            if base is not None and ref:
                text += f" ({value / ref:.2f}x)"
            return text

        table.add_row(name, str(m.nb_jobs),
                      cell(m.mean_waiting, base.mean_waiting if base else None, ",.1f"),
                      cell(m.mean_bounded_slowdown, base.mean_bounded_slowdown if base else None, ",.2f"),
                      cell(m.utilisation, base.utilisation if base else None, ".1%"),
                      cell(m.makespan, base.makespan if base else None, ",.0f"),
                      *([cell(energy[name] / 1e3, energy.get(baseline, 0) / 1e3 if base else None, ",.1f")
                         if name in energy else "-"] if energy else []))
    return table


def _csv_numbers(path: Path, columns: tuple[str, ...], what: str) -> pd.DataFrame:
    """A small numeric CSV of Batsim's (header first), its ``columns`` checked finite numbers
    ("NA" allowed where Batsim writes it), errors naming line and column."""
    import io

    from coburst.validate import decode_text, read_bytes

    text = decode_text(read_bytes(path, what), str(path))
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise InputError(path, None, f"not a Batsim {what}: {exc}") from None
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(path, "header", f"not a Batsim {what}: missing columns {missing}")
    for col in columns:
        values = pd.to_numeric(df[col], errors="coerce").to_numpy(float)
        bad = np.flatnonzero(~np.isfinite(values))
        if len(bad):
            i = int(bad[0])
            raise InputError(path, f"line {i + 2}, column {col}", f"{df[col].iloc[i]!r} is not a finite number")
        df[col] = values
    return df


def read_energy(prefix: str | Path) -> dict[str, float]:
    """Energy of one run (``coburst sim -E`` or ``batsim -E``), NaN when it ran without it.

    * ``energy`` (J): ``_schedule.csv``'s ``consumed_joules``, Batsim's metric: the
      platform's energy from the first job submission to the last job end;
    * ``energy_total`` (J): the last ``energy`` of ``_consumed_energy.csv``: from time 0 to
      the last traced event (a job start or end, a pstate change).

    A run without ``<prefix>_consumed_energy.csv`` had no energy simulation (its
    ``consumed_joules`` is Batsim's placeholder 0): both NaN.
    """
    trace = Path(f"{prefix}_consumed_energy.csv")
    if not trace.is_file():
        return {"energy": float("nan"), "energy_total": float("nan")}
    energy = _csv_numbers(trace, ("time", "energy"), "_consumed_energy.csv")
    total = float(energy["energy"].iloc[-1]) if len(energy) else 0.0
    schedule = Path(f"{prefix}_schedule.csv")
    joules = float("nan")
    if schedule.is_file():
        joules = float(_csv_numbers(schedule, ("consumed_joules",), "_schedule.csv")["consumed_joules"].iloc[0])
    return {"energy": joules, "energy_total": total}


def job_energy(df: pd.DataFrame) -> np.ndarray:
    """Each job's ``consumed_energy`` (J) from a ``_jobs.csv`` table, NaN where Batsim wrote
    -1 (no energy simulation) or nothing."""
    if "consumed_energy" not in df.columns:
        return np.full(len(df), np.nan)
    values = pd.to_numeric(df["consumed_energy"], errors="coerce").to_numpy(float)
    return np.where(values >= 0, values, np.nan)
