"""Co-scheduling heatmaps and application seeds (ELiSE; Kellari 2025 §4.2, Table 4.1).

A **heatmap** holds, for every ordered pair of applications ``(a, b)``, the speedup of
``a`` when it shares its nodes with ``b``: ``compact time of a / co-execution time of a``.
A pair that was never measured is ``None``.  An **application seed** lists the
applications with their compact run time (and process count, optional frequency).

Layouts read (``load_heatmap(path, layout=None)`` detects them, or is told):

``"csv"`` (matrix)
    header ``job\\co_job,<app>,<app>,...``; one row per application, first cell its name,
    then one cell per column application; empty cell = not measured.  The row names must
    be exactly the column names (any order).
``"json"``
    ``{job: {co_job: speedup or null}}``; a co-job absent from a row is not measured.
``"pairs"`` (Table 4.1)
    ``name_A,procs_A,compact_A,name_B,procs_B,compact_B,co_A_B,co_B_A`` as CSV, or as
    tab/space-separated text as printed in the thesis; ``procs_*`` are optional columns.
    speedup(A, B) = compact_A / co_A_B and speedup(B, A) = compact_B / co_B_A; empty = not
    measured.  A self pair (A, A) gives two co-execution times of the same scenario; its
    speedup is ``compact_A / mean(co_A_B, co_B_A)`` (the thesis takes the median of the
    repeated runs, and the median of two runs is their mean; this matches the bundled
    ARIS heatmap: 123.97 / 119.51 = 1.0373).  ``load_pairs`` also returns the seed.

Seeds (``load_seed``): CSV with a header naming at least the application
(``name``/``app``/``application``/``job``) and the compact time
(``median_compact_time_s``/``compact_time``/``compact``/``compact_time_s``/``runtime``);
optional ``num_of_processes``/``processes``/``procs``/``cores``, ``nodes``,
``frequency``/``freq``; other columns are kept as text in ``AppSeed.extra``.

Every malformed input raises :class:`coburst.errors.InputError` naming the file, the
place (``line 3, column 5`` or a JSON path such as ``$["bt.D.256"]["cg.D.64"]``) and the
problem.

**How ELiSE applies a heatmap** (as the shared data's README records it, see ``models/heatmaps/README.md``; helpers below):

* compact jobs run at compact speed (speedup 1);
* a co-scheduled job with neighbours runs at the *minimum* pairwise speedup over all the
  jobs it shares a node with (:meth:`Heatmap.job_speedup`);
* a co-scheduled job with *no* neighbour runs at the best value of its heatmap row
  (:meth:`Heatmap.row_best`, an optimistic stand-in for a measured "spread alone" speedup);
* a missing pair counts as the job's average speedup = mean of the measured values of
  its row (:meth:`Heatmap.row_mean`, :meth:`Heatmap.effective`);
* on every speed change ``remaining = remaining * old_speedup / new_speedup``
  (:func:`rescale_remaining`); walltime = 1.4 x compact time (:data:`WALLTIME_FACTOR`).

**Synthetic heatmaps** (:func:`synthetic`): see its docstring for the model.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from coburst.errors import InputError
from coburst.fileio import atomic_write
from coburst.validate import loads_bounded

__all__ = [
    "AppSeed",
    "Heatmap",
    "WALLTIME_FACTOR",
    "BUNDLED_DIR",
    "bundled",
    "bundled_names",
    "bundled_seed",
    "detect_layout",
    "load_heatmap",
    "load_pairs",
    "load_seed",
    "rescale_remaining",
    "synthetic",
    "write_heatmap",
]

#: ELiSE's walltime: 1.4 x the compact time; a job running past it is killed
WALLTIME_FACTOR = 1.4

#: the repository's measured heatmaps and seeds
BUNDLED_DIR = Path(__file__).resolve().parents[2] / "models" / "heatmaps"

CSV_CORNER = "job\\co_job"


# ====================================================================== data types
@dataclass(frozen=True)
class AppSeed:
    """One application of a seed: name, compact run time (s) and what the seed file holds."""

    name: str
    compact_time: float
    processes: int | None = None
    nodes: int | None = None
    frequency: float | None = None
    extra: tuple[tuple[str, str], ...] = field(default=())

    @property
    def walltime(self) -> float:
        """ELiSE's walltime: :data:`WALLTIME_FACTOR` x compact time."""
        return WALLTIME_FACTOR * self.compact_time


class Heatmap:
    """Speedups of ordered application pairs; ``None`` = not measured.

    ``apps`` fixes the order (the CSV column order).  ``values`` maps ``(a, b)`` to the
    speedup of ``a`` next to ``b``; every speedup must be finite and > 0.
    """

    __slots__ = ("_apps", "_index", "_values")

    def __init__(self, apps: Sequence[str], values: Mapping[tuple[str, str], float | None]):
        apps = tuple(apps)
        index = {}
        for i, a in enumerate(apps):
            if not isinstance(a, str) or not a:
                raise ValueError(f"application name must be a non-empty string, got {a!r}")
            if a in index:
                raise ValueError(f"duplicate application {a!r}")
            index[a] = i
        clean: dict[tuple[str, str], float] = {}
        for (a, b), v in values.items():
            if a not in index or b not in index:
                raise ValueError(f"unknown application in pair ({a!r}, {b!r})")
            if v is None:
                continue
            v = float(v)
            if not math.isfinite(v) or v <= 0:
                raise ValueError(f"speedup of ({a!r}, {b!r}) must be finite and > 0, got {v!r}")
            clean[(a, b)] = v
        self._apps = apps
        self._index = index
        self._values = clean

    # ------------------------------------------------------------------ access
    @property
    def apps(self) -> tuple[str, ...]:
        return self._apps

    def __len__(self) -> int:
        return len(self._apps)

    def __contains__(self, app: object) -> bool:
        return app in self._index

    def _check(self, app: str) -> None:
        if app not in self._index:
            raise KeyError(f"unknown application {app!r}")

    def speedup(self, a: str, b: str) -> float | None:
        """Measured speedup of ``a`` when co-located with ``b``, or ``None`` if not measured."""
        self._check(a)
        self._check(b)
        return self._values.get((a, b))

    def row(self, a: str) -> list[float | None]:
        """``a``'s row in ``apps`` order."""
        self._check(a)
        return [self._values.get((a, b)) for b in self._apps]

    def measured_row(self, a: str) -> list[float]:
        return [v for v in self.row(a) if v is not None]

    def row_best(self, a: str) -> float | None:
        """Best measured value of ``a``'s row (ELiSE: speed of a co-scheduled job alone)."""
        vals = self.measured_row(a)
        return max(vals) if vals else None

    def row_mean(self, a: str) -> float | None:
        """Mean measured value of ``a``'s row (ELiSE: the job's average speedup)."""
        vals = self.measured_row(a)
        return math.fsum(vals) / len(vals) if vals else None

    def effective(self, a: str, b: str) -> float:
        """Speedup ELiSE uses for ``a`` next to ``b``: measured, else ``row_mean(a)``,
        else 1.0 when ``a``'s whole row is unmeasured."""
        v = self.speedup(a, b)
        if v is None:
            v = self.row_mean(a)
        return 1.0 if v is None else v

    def job_speedup(self, a: str, neighbours: Iterable[str] = (), *, co_scheduled: bool = True) -> float:
        """ELiSE's speed of a running job ``a``.

        compact job -> 1.0; co-scheduled with neighbours -> min of :meth:`effective` over
        the neighbours; co-scheduled alone -> :meth:`row_best` (1.0 if the row is empty).
        """
        self._check(a)
        if not co_scheduled:
            return 1.0
        neigh = list(neighbours)
        if not neigh:
            best = self.row_best(a)
            return 1.0 if best is None else best
        return min(self.effective(a, b) for b in neigh)

    def values(self) -> dict[tuple[str, str], float]:
        """Measured pairs only (a copy)."""
        return dict(self._values)

    @property
    def n_measured(self) -> int:
        return len(self._values)

    def mean(self) -> float | None:
        """Mean over measured ordered pairs."""
        if not self._values:
            return None
        return math.fsum(self._values.values()) / len(self._values)

    def to_matrix(self) -> np.ndarray:
        """``len(apps) x len(apps)`` float array, NaN where not measured."""
        n = len(self._apps)
        m = np.full((n, n), np.nan)
        for (a, b), v in self._values.items():
            m[self._index[a], self._index[b]] = v
        return m

    def to_dict(self) -> dict[str, dict[str, float | None]]:
        """The JSON layout ``{job: {co_job: speedup or null}}``."""
        return {a: {b: self._values.get((a, b)) for b in self._apps} for a in self._apps}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Heatmap):
            return NotImplemented
        return self._apps == other._apps and self._values == other._values

    def __repr__(self) -> str:
        return f"Heatmap({len(self._apps)} apps, {self.n_measured} measured pairs)"


def rescale_remaining(remaining: float, old_speedup: float, new_speedup: float) -> float:
    """ELiSE's rule on a speed change: ``remaining * old_speedup / new_speedup``."""
    return remaining * old_speedup / new_speedup


# ====================================================================== reading helpers
def _read_text(path: str | Path) -> str:
    """Read ``path`` as UTF-8 (a UTF-8 BOM is dropped); InputError for anything else
    (:func:`coburst.validate.read_text`: missing, a directory, UTF-16/32, NUL bytes, bad UTF-8)."""
    from coburst.validate import read_text

    return read_text(path)


def _parse_positive(text: str, source, where: str, what: str = "speedup") -> float:
    t = text.strip()
    try:
        v = float(t)
    except ValueError:
        raise InputError(source, where, f"{what} {text!r} is not a number") from None
    if not math.isfinite(v):
        raise InputError(source, where, f"{what} {text!r} is not finite")
    if v <= 0:
        raise InputError(source, where, f"{what} {text!r} must be > 0")
    return v


def _json_path(*keys: str) -> str:
    return "$" + "".join(f"[{json.dumps(k)}]" for k in keys)


def _csv_rows(text: str, source, delimiter: str = ",") -> list[tuple[int, list[str]]]:
    """Non-blank rows with their 1-based line numbers."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    rows = []
    try:
        start = 1
        for row in reader:
            if any(c.strip() for c in row):
                rows.append((start, [c.strip() for c in row]))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(source, f"line {reader.line_num}", f"malformed CSV: {exc}") from None
    return rows


_PAIR_COLS = {"name_a", "compact_a", "name_b", "compact_b", "co_a_b", "co_b_a"}


def detect_layout(path: str | Path, text: str | None = None) -> str:
    """``"json"``, ``"csv"`` (matrix), ``"pairs"`` (Table 4.1) or ``"seed"``."""
    if text is None:
        text = _read_text(path)
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")) or str(path).endswith(".json"):
        return "json"
    first = stripped.splitlines()[0] if stripped else ""
    cells = {c.strip().lower() for c in re.split(r"[,\t ]+", first) if c.strip()}
    if _PAIR_COLS <= cells:
        return "pairs"
    if str(path).endswith(".seed.csv") or (
        cells & set(_SEED_NAME) and cells & set(_SEED_COMPACT)
    ):
        return "seed"
    return "csv"


# ====================================================================== heatmap loaders
def load_heatmap(path: str | Path, layout: str | None = None, *, apps: Iterable[str] | None = None) -> Heatmap:
    """Read a heatmap in ``layout`` (``"csv"``, ``"json"``, ``"pairs"``; None = detect).

    ``apps``, if given (e.g. the names of a seed), is the set of known applications: a pair
    naming any other application is an error.
    """
    text = _read_text(path)
    if layout is None:
        layout = detect_layout(path, text)
    known = None if apps is None else set(apps)
    if layout == "csv":
        return _parse_matrix_csv(text, path, known)
    if layout == "json":
        return _parse_json(text, path, known)
    if layout == "pairs":
        return _parse_pairs(text, path, known)[0]
    if layout == "seed":
        raise InputError(path, None, "this is an application seed, not a heatmap (it lists application, processes, compact time); "
                         "give it where a seed is expected (e.g. coburst workload elise --seed-apps)")
    raise ValueError(f"unknown heatmap layout {layout!r} (csv, json, pairs)")


def load_pairs(path: str | Path, *, apps: Iterable[str] | None = None) -> tuple[Heatmap, list[AppSeed]]:
    """Read the Table 4.1 layout: the heatmap and the seed (name, processes, compact time)."""
    text = _read_text(path)
    return _parse_pairs(text, path, None if apps is None else set(apps))


def _unknown(source, where, name, known) -> None:
    if known is not None and name not in known:
        raise InputError(source, where, f"unknown application {name!r}")


def _parse_matrix_csv(text: str, source, known) -> Heatmap:
    rows = _csv_rows(text, source)
    if not rows:
        raise InputError(source, "line 1", "empty file, expected a header 'job\\co_job,<app>,...'")
    hline, header = rows[0]
    cols = header[1:]
    if not cols:
        raise InputError(source, f"line {hline}", "header names no co-job column")
    seen: dict[str, int] = {}
    for j, name in enumerate(cols, start=2):
        if not name:
            raise InputError(source, f"line {hline}, column {j}", "empty application name in header")
        if name in seen:
            raise InputError(source, f"line {hline}, column {j}", f"duplicate column {name!r} (also column {seen[name]})")
        seen[name] = j
        _unknown(source, f"line {hline}, column {j}", name, known)
    colset = set(cols)
    values: dict[tuple[str, str], float] = {}
    row_line: dict[str, int] = {}
    for line, row in rows[1:]:
        if len(row) != len(header):
            raise InputError(source, f"line {line}", f"ragged row: {len(row)} fields, the header has {len(header)}")
        a = row[0]
        if not a:
            raise InputError(source, f"line {line}, column 1", "empty application name")
        if a not in colset:
            raise InputError(source, f"line {line}, column 1", f"unknown application {a!r} (not a column of the header)")
        if a in row_line:
            raise InputError(source, f"line {line}, column 1", f"duplicate row {a!r} (first on line {row_line[a]})")
        row_line[a] = line
        for j, (b, cell) in enumerate(zip(cols, row[1:]), start=2):
            if cell == "":
                continue
            values[(a, b)] = _parse_positive(cell, source, f"line {line}, column {j} ({a} next to {b})")
    missing = [c for c in cols if c not in row_line]
    if missing:
        raise InputError(source, f"line {hline}, column {seen[missing[0]]}", f"application {missing[0]!r} has no row")
    return Heatmap(cols, values)


class _Pairs(list):
    """A JSON object as its raw (key, value) pairs, so duplicate keys can be reported."""


#: a heatmap JSON nests two levels ({job: {co_job: speedup}}): deeper is refused at once
HEATMAP_DEPTH = 32


def _to_dicts(node, source, path: tuple[str, ...] = ()):
    """Turn parsed ``_Pairs`` into dicts; InputError (with the JSON path) on a duplicate key."""
    if isinstance(node, _Pairs):
        out = {}
        for k, v in node:
            if k in out:
                raise InputError(source, _json_path(*path, k), f"duplicate key {k!r}")
            out[k] = _to_dicts(v, source, (*path, k))
        return out
    if isinstance(node, list):
        return [_to_dicts(v, source, (*path, str(i))) for i, v in enumerate(node)]
    return node


def _parse_json(text: str, source, known) -> Heatmap:
    try:
        raw = loads_bounded(text, source, HEATMAP_DEPTH, object_pairs_hook=_Pairs)
    except json.JSONDecodeError as exc:
        raise InputError(source, f"line {exc.lineno}, column {exc.colno}", f"invalid JSON: {exc.msg}") from None
    doc = _to_dicts(raw, source)
    if not isinstance(doc, dict):
        raise InputError(source, "$", f"expected an object {{job: {{co_job: speedup}}}}, got {type(doc).__name__}")
    apps = list(doc)
    appset = set(apps)
    values: dict[tuple[str, str], float] = {}
    for a, row in doc.items():
        if not a:
            raise InputError(source, _json_path(a), "empty application name")
        _unknown(source, _json_path(a), a, known)
        if not isinstance(row, dict):
            raise InputError(source, _json_path(a), f"expected an object {{co_job: speedup}}, got {type(row).__name__}")
        for b, v in row.items():
            where = _json_path(a, b)
            if b not in appset:
                raise InputError(source, where, f"unknown application {b!r} (not a job of the heatmap)")
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise InputError(source, where, f"speedup {v!r} is not a number")
            v = float(v)
            if not math.isfinite(v):
                raise InputError(source, where, f"speedup {v!r} is not finite")
            if v <= 0:
                raise InputError(source, where, f"speedup {v!r} must be > 0")
            values[(a, b)] = v
    return Heatmap(apps, values)


def _split_text_rows(text: str, source) -> tuple[str, list[tuple[int, list[str]]]]:
    """Rows of a Table 4.1 file: comma-, tab- or space-separated (from the header line)."""
    lines = text.splitlines()
    first = next((ln for ln in lines if ln.strip()), "")
    if "," in first:
        return ",", _csv_rows(text, source, ",")
    if "\t" in first:
        return "\t", _csv_rows(text, source, "\t")
    rows = [(i, ln.split()) for i, ln in enumerate(lines, start=1) if ln.strip()]
    return " ", rows


def _parse_pairs(text: str, source, known) -> tuple[Heatmap, list[AppSeed]]:
    delim, rows = _split_text_rows(text, source)
    if not rows:
        raise InputError(source, "line 1", "empty file, expected a header name_A,procs_A,compact_A,...")
    hline, header = rows[0]
    lower = [h.lower() for h in header]
    col: dict[str, int] = {}
    for j, h in enumerate(lower):
        if h in col:
            raise InputError(source, f"line {hline}, column {j + 1}", f"duplicate column {header[j]!r}")
        col[h] = j
    need = ["name_a", "compact_a", "name_b", "compact_b", "co_a_b", "co_b_a"]
    for n in need:
        if n not in col:
            raise InputError(source, f"line {hline}", f"missing column {n!r} (Table 4.1 layout)")
    trailing_ok = delim != ","  # pasted text may drop trailing empty co_* cells
    co_cols = {col["co_a_b"], col["co_b_a"]}
    order: list[str] = []
    seeds: dict[str, tuple[float, int | None, int]] = {}  # name -> (compact, procs, line)
    values: dict[tuple[str, str], float] = {}
    pair_line: dict[frozenset, int] = {}

    def cell(row, name):
        j = col.get(name)
        return "" if j is None or j >= len(row) else row[j]

    for line, row in rows[1:]:
        if len(row) != len(header):
            short_ok = trailing_ok and len(row) < len(header) and all(j in co_cols for j in range(len(row), len(header)))
            if not short_ok:
                raise InputError(source, f"line {line}", f"ragged row: {len(row)} fields, the header has {len(header)}")
        names = {}
        for side in ("a", "b"):
            jn = col[f"name_{side}"]
            name = cell(row, f"name_{side}")
            if not name:
                raise InputError(source, f"line {line}, column {jn + 1}", f"empty name_{side.upper()}")
            _unknown(source, f"line {line}, column {jn + 1}", name, known)
            jc = col[f"compact_{side}"]
            compact = _parse_positive(cell(row, f"compact_{side}"), source, f"line {line}, column {jc + 1}", "compact time")
            procs = None
            if f"procs_{side}" in col:
                jp = col[f"procs_{side}"]
                ptxt = cell(row, f"procs_{side}")
                if ptxt:
                    if not re.fullmatch(r"\d+", ptxt) or int(ptxt) <= 0:
                        raise InputError(source, f"line {line}, column {jp + 1}", f"process count {ptxt!r} is not a positive integer")
                    procs = int(ptxt)
            if name in seeds:
                c0, p0, l0 = seeds[name]
                if c0 != compact:
                    raise InputError(source, f"line {line}, column {jc + 1}",
                                     f"compact time {compact!r} of {name!r} differs from {c0!r} on line {l0}")
                if procs is not None and p0 is not None and procs != p0:
                    raise InputError(source, f"line {line}, column {col[f'procs_{side}'] + 1}",
                                     f"process count {procs} of {name!r} differs from {p0} on line {l0}")
                if p0 is None and procs is not None:
                    seeds[name] = (c0, procs, l0)
            else:
                seeds[name] = (compact, procs, line)
                order.append(name)
            names[side] = name
        a, b = names["a"], names["b"]
        key = frozenset((a, b))
        if key in pair_line:
            raise InputError(source, f"line {line}", f"duplicate pair ({a}, {b}) (first on line {pair_line[key]})")
        pair_line[key] = line
        co = {}
        for which in ("co_a_b", "co_b_a"):
            txt = cell(row, which)
            co[which] = None if txt == "" else _parse_positive(
                txt, source, f"line {line}, column {col[which] + 1}", "co-execution time")
        ca, cb = seeds[a][0], seeds[b][0]
        if a == b:
            times = [t for t in co.values() if t is not None]
            if times:
                values[(a, a)] = ca / (math.fsum(times) / len(times))
        else:
            if co["co_a_b"] is not None:
                values[(a, b)] = ca / co["co_a_b"]
            if co["co_b_a"] is not None:
                values[(b, a)] = cb / co["co_b_a"]
    seed_list = [AppSeed(n, seeds[n][0], seeds[n][1]) for n in order]
    return Heatmap(order, values), seed_list


# ====================================================================== seeds
_SEED_NAME = ("name", "app", "application", "job")
_SEED_COMPACT = ("median_compact_time_s", "compact_time_s", "compact_time", "compact", "runtime")
_SEED_PROCS = ("num_of_processes", "processes", "procs", "cores")
_SEED_NODES = ("nodes", "num_of_nodes")
_SEED_FREQ = ("frequency", "freq")


def load_seed(path: str | Path, *, apps: Iterable[str] | None = None) -> list[AppSeed]:
    """Read an application seed CSV (see the module docstring for the columns).

    ``apps``, if given (e.g. ``heatmap.apps``), is the set of known applications.
    """
    text = _read_text(path)
    known = None if apps is None else set(apps)
    source = path
    rows = _csv_rows(text, source)
    if not rows:
        raise InputError(source, "line 1", "empty file, expected a header name,...,compact time")
    hline, header = rows[0]
    lower = [h.lower() for h in header]
    col: dict[str, int] = {}
    for j, h in enumerate(lower):
        if h in col:
            raise InputError(source, f"line {hline}, column {j + 1}", f"duplicate column {header[j]!r}")
        col[h] = j

    def pick(names, required, what):
        for n in names:
            if n in col:
                return col[n]
        if required:
            raise InputError(source, f"line {hline}", f"no {what} column (one of {', '.join(names)})")
        return None

    jn = pick(_SEED_NAME, True, "application name")
    jc = pick(_SEED_COMPACT, True, "compact time")
    jp = pick(_SEED_PROCS, False, "")
    jnodes = pick(_SEED_NODES, False, "")
    jf = pick(_SEED_FREQ, False, "")
    used = {j for j in (jn, jc, jp, jnodes, jf) if j is not None}
    seen: dict[str, int] = {}
    out: list[AppSeed] = []
    for line, row in rows[1:]:
        if len(row) != len(header):
            raise InputError(source, f"line {line}", f"ragged row: {len(row)} fields, the header has {len(header)}")
        name = row[jn]
        if not name:
            raise InputError(source, f"line {line}, column {jn + 1}", "empty application name")
        if name in seen:
            raise InputError(source, f"line {line}, column {jn + 1}", f"duplicate row {name!r} (first on line {seen[name]})")
        _unknown(source, f"line {line}, column {jn + 1}", name, known)
        seen[name] = line
        compact = _parse_positive(row[jc], source, f"line {line}, column {jc + 1}", "compact time")

        def integer(j, what):
            if j is None or row[j] == "":
                return None
            if not re.fullmatch(r"\d+", row[j]) or int(row[j]) <= 0:
                raise InputError(source, f"line {line}, column {j + 1}", f"{what} {row[j]!r} is not a positive integer")
            return int(row[j])

        procs = integer(jp, "process count")
        nodes = integer(jnodes, "node count")
        freq = None
        if jf is not None and row[jf] != "":
            try:
                freq = float(row[jf])
            except ValueError:
                raise InputError(source, f"line {line}, column {jf + 1}", f"frequency {row[jf]!r} is not a number") from None
            if not math.isfinite(freq) or freq < 0:
                raise InputError(source, f"line {line}, column {jf + 1}", f"frequency {row[jf]!r} must be finite and >= 0")
        extra = tuple((header[j], row[j]) for j in range(len(header)) if j not in used)
        out.append(AppSeed(name, compact, procs, nodes, freq, extra))
    return out


# ====================================================================== writing
def _fmt(v: float | None, decimals: int | None) -> str:
    if v is None:
        return ""
    return repr(float(v)) if decimals is None else f"{v:.{decimals}f}"


def write_heatmap(heatmap: Heatmap, path: str | Path, *, decimals: int | None = None) -> None:
    """Write ``heatmap`` atomically; JSON if ``path`` ends in ``.json``, else canonical CSV.

    Canonical CSV: header ``job\\co_job,<apps in order>``, one row per application in the
    same order, empty cell = not measured, CRLF line ends (RFC 4180, as ELiSE's export).
    Values are written with ``repr`` (shortest text that reads back to the same float), so
    ``load_heatmap(p) == heatmap`` and writing again gives the same bytes.  ``decimals``
    rounds instead (``decimals=4`` reproduces ELiSE's CSV export byte for byte).
    JSON: ``{job: {co_job: speedup or null}}`` compact, with a trailing newline.
    """
    for a in heatmap.apps:
        if any(ch in a for ch in ",\"\r\n") or a != a.strip():
            raise ValueError(f"application name {a!r} cannot be written to the canonical CSV")
    p = Path(path)
    if p.suffix == ".json":
        doc = heatmap.to_dict()
        if decimals is not None:
            doc = {a: {b: (None if v is None else round(v, decimals)) for b, v in r.items()} for a, r in doc.items()}
        with atomic_write(p) as fh:
            fh.write(json.dumps(doc, indent=None, separators=(",", ":"), sort_keys=False) + "\n")
        return
    lines = [",".join([CSV_CORNER, *heatmap.apps])]
    for a in heatmap.apps:
        lines.append(",".join([a, *(_fmt(v, decimals) for v in heatmap.row(a))]))
    with atomic_write(p, newline="") as fh:
        fh.write("".join(ln + "\r\n" for ln in lines))


# ====================================================================== bundled data
def bundled_names() -> list[str]:
    """Names of the bundled heatmaps (``models/heatmaps/<name>.heatmap.*``)."""
    names = {f.name.split(".heatmap.")[0] for f in BUNDLED_DIR.glob("*.heatmap.*")}
    return sorted(names)


def bundled_path(name: str) -> Path:
    """The file of a bundled heatmap (CSV preferred, the JSON export otherwise)."""
    for candidate in (f"{name}.heatmap.csv", f"{name}.heatmap.json"):
        if (BUNDLED_DIR / candidate).is_file():
            return BUNDLED_DIR / candidate
    raise KeyError(f"no bundled heatmap {name!r} (have: {', '.join(bundled_names())})")


def bundled(name: str) -> Heatmap:
    """A bundled measured heatmap by name: ``aris-nas``, ``aris-spec``, ``grvingt-nas``,
    ``marconi-npb256-fig2`` (CSV preferred, the JSON export otherwise), or
    ``aris-npb-extract`` (the Table 4.1 excerpt)."""
    for candidate in (f"{name}.heatmap.csv", f"{name}.heatmap.json"):
        if (BUNDLED_DIR / candidate).is_file():
            return load_heatmap(BUNDLED_DIR / candidate)
    if (BUNDLED_DIR / f"{name}.csv").is_file():
        return load_heatmap(BUNDLED_DIR / f"{name}.csv", "pairs")
    raise KeyError(f"no bundled heatmap {name!r} (have: {', '.join(bundled_names() + ['aris-npb-extract'])})")


def bundled_seed(name: str) -> list[AppSeed]:
    """The bundled application seed ``models/heatmaps/<name>.seed.csv``."""
    p = BUNDLED_DIR / f"{name}.seed.csv"
    if not p.is_file():
        have = sorted(f.name[: -len(".seed.csv")] for f in BUNDLED_DIR.glob("*.seed.csv"))
        raise KeyError(f"no bundled seed {name!r} (have: {', '.join(have)})")
    return load_seed(p)


# ====================================================================== synthetic
def synthetic(
    apps: int | Sequence[str],
    *,
    memory_intensity: Sequence[float] | None = None,
    mean_pair_speedup: float = 1.0,
    seed: int = 0,
    spread: float = 0.05,
    gain: float = 0.35,
    contention: float = 0.3,
) -> Heatmap:
    """A synthetic, fully measured heatmap driven by one memory intensity per application.

    Model: every application ``a`` has a memory intensity ``m_a`` in [0, 1] (drawn
    uniformly from ``numpy.random.default_rng(seed)`` unless given), and::

        s(a, b) = c * exp(gain * m_a - contention * m_b + spread * eps_ab),  eps ~ N(0, 1)

    * ``gain * m_a``: a memory-bound job *gains* from co-scheduling because it is spread on
      half the cores of each socket, so each of its processes gets more memory bandwidth
      and cache (ft, cg, mg rows of the measured heatmaps are well above 1);
    * ``- contention * m_b``: a memory-bound *neighbour* takes that bandwidth back, so every
      job slows down next to it (the mg and sp columns are the lowest);
    * ``spread`` (lognormal noise, independent per ordered pair) is what the rank-one model
      misses.

    Why this form: on the bundled measured heatmaps ``log s(a, b)`` is close to additive in
    a row effect and a column effect (R^2 0.92 Grvingt, 0.87 ARIS SPEC, 0.80 Marconi), and
    the row and column effects are strongly anti-correlated (r = -0.85 to -0.97): one latent
    "memory intensity" explains both.  The default ranges match the data (row and column
    effects span 0.23-0.44 and 0.22-0.36 in log, residual sd 0.03-0.08).  The exponential
    keeps every speedup > 0 for any parameters.

    Finally ``c`` is chosen so that the mean over all ``n^2`` ordered pairs (self pairs
    included, as in ELiSE's n x n matrix) equals ``mean_pair_speedup`` (to float rounding).
    Draw order: intensities (only if not given), then the ``n x n`` noise in row-major order.
    """
    if isinstance(apps, (int, np.integer)) and not isinstance(apps, bool):
        n = int(apps)
        if n < 1:
            raise ValueError("apps must be >= 1")
        width = len(str(n - 1))
        names = [f"app{i:0{width}d}" for i in range(n)]
    else:
        names = list(apps)
        n = len(names)
        if n < 1:
            raise ValueError("apps must name at least one application")
    if not (math.isfinite(mean_pair_speedup) and mean_pair_speedup > 0):
        raise ValueError("mean_pair_speedup must be finite and > 0")
    for label, v in (("spread", spread), ("gain", gain), ("contention", contention)):
        if not math.isfinite(v) or v < 0:
            raise ValueError(f"{label} must be finite and >= 0")
    rng = np.random.default_rng(seed)
    if memory_intensity is None:
        m = rng.random(n)
    else:
        m = np.asarray(memory_intensity, dtype=float)
        if m.shape != (n,):
            raise ValueError(f"memory_intensity needs {n} values, got shape {m.shape}")
        if not np.all(np.isfinite(m)) or np.any(m < 0) or np.any(m > 1):
            raise ValueError("memory_intensity values must be in [0, 1]")
    eps = rng.standard_normal((n, n))
    raw = np.exp(gain * m[:, None] - contention * m[None, :] + spread * eps)
    s = raw * (mean_pair_speedup / math.fsum(raw.ravel()) * (n * n))
    values = {(names[i], names[j]): float(s[i, j]) for i in range(n) for j in range(n)}
    return Heatmap(names, values)
