"""What the real Batsim 4.2.1 printed, kept as test data: record, replay, check.

Every cross-engine test runs Batsim through one door, :func:`batsim_run`.  A run is named by
a *case key*: a digest of everything that decides what Batsim prints — the contents of the
platform, workload, event and scheduler files, the scheduler's options, Batsim's command-line
options — with the test's temporary folder written as ``{TMP}`` so that the key is the same on
every machine.

* **Replay** (no Batsim binary): the run's recording is written back into the test's folder —
  every file the run created (``_jobs.csv``, ``_schedule.csv``, ``_machine_states.csv``, the
  Pajé trace, energy files, the messages the scheduler received, its log), with Batsim's exit
  status and output — and the test goes on comparing coburst with it.  A case with fixed
  inputs and no recording fails, naming the command that records it.
* **Live** (``BATSIM`` set, or ``batsim`` on ``PATH``): Batsim runs, and its outputs are checked
  against the recording (:func:`recording_differences`): the recordings stay what Batsim prints.
* **Record** (``COBURST_BATSIM_RECORD=DIR`` and a Batsim binary): each live run is also staged
  as ``DIR/<test module>/<key>.json``; ``scripts/record_batsim.py`` runs the suite this way and
  packs the staged runs into ``tests/data/batsim_recorded/<test module>.json.xz``.

Tests with random inputs (hypothesis, or marked ``batsim_live``) run live only; without a
binary they skip, saying so.

A pack is one xz-compressed JSON object: ``{"format": 1, "cases": {key: case}, "blobs":
{digest: text}}``; a case holds Batsim's exit status, the command's output, and its files as
``{relative path: blob digest}`` (the same contents stored once).
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import re
import shutil
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
PACKS = TESTS / "data" / "batsim_recorded"
FORMAT = 1
TMP = "{TMP}"

#: the real Batsim 4.2.1: ``BATSIM``, else ``batsim`` on ``PATH`` (as a Nix shell gives it)
BATSIM = os.environ.get("BATSIM") or shutil.which("batsim") or ""
#: staging folder of a recording run (``scripts/record_batsim.py`` sets it)
RECORD_DIR = os.environ.get("COBURST_BATSIM_RECORD", "")

RECORD_COMMAND = "BATSIM=/path/to/batsim .venv/bin/python scripts/record_batsim.py"

#: set by ``conftest.py`` for the running test: its inputs are random (runs live only)
LIVE_ONLY = {"value": False}


@dataclass
class Outcome:
    """What one Batsim run left: exit status, output, and the files it created."""
    returncode: int
    stdout: str = ""
    stderr: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # relative path -> text ({TMP} for the folder)


# -- case keys ------------------------------------------------------------------------------------

def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _tmp_forms(tmp: Path) -> list[str]:
    forms = {str(tmp), str(tmp.resolve())}
    return sorted(forms, key=len, reverse=True)


def to_placeholder(text: str, tmp: Path) -> str:
    for form in _tmp_forms(tmp):
        text = text.replace(form, TMP)
    return text


def from_placeholder(text: str, tmp: Path) -> str:
    return text.replace(TMP, str(tmp))


def _file_digest(path: Path, tmp: Path) -> str:
    data = path.read_bytes()
    try:
        data = to_placeholder(data.decode("utf-8"), tmp).encode("utf-8")
    except UnicodeDecodeError:
        pass
    return "file:" + _digest(data)[:24]


def _normal(value: Any, tmp: Path) -> Any:
    """``value`` with every existing file named by its contents and the test folder as {TMP}."""
    if isinstance(value, dict):
        return {str(k): _normal(v, tmp) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_normal(v, tmp) for v in value]
    if isinstance(value, Path):
        value = str(value)
    if isinstance(value, str):
        if "\0" not in value and 0 < len(value) < 4096:
            try:
                path = Path(value)
                if path.is_absolute() and path.is_file():
                    return _file_digest(path, tmp)
            except OSError:
                pass
        return to_placeholder(value, tmp)
    return value


def case_key(description: dict[str, Any], tmp: Path) -> str:
    """The key of a run described by ``description`` (file paths named by their contents)."""
    text = json.dumps(_normal(description, tmp), sort_keys=True, separators=(",", ":"))
    return _digest(text.encode())[:32]


# -- packs ----------------------------------------------------------------------------------------

def current_module() -> str:
    """The running test's module (``test_x``), from pytest's own variable."""
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    name = current.split("::", 1)[0]
    return Path(name).stem or "unknown"


def pack_path(module: str) -> Path:
    return PACKS / f"{module}.json.xz"


@lru_cache(maxsize=None)
def load_pack(module: str) -> dict[str, Any]:
    path = pack_path(module)
    if not path.is_file():
        return {"format": FORMAT, "cases": {}, "blobs": {}}
    data = json.loads(lzma.decompress(path.read_bytes()).decode("utf-8"))
    if data.get("format") != FORMAT:
        raise AssertionError(f"{path}: recording format {data.get('format')}, expected {FORMAT}: "
                             f"record again ({RECORD_COMMAND})")
    return data


def lookup(module: str, key: str) -> Outcome | None:
    pack = load_pack(module)
    case = pack["cases"].get(key)
    if case is None:
        return None
    blobs = pack["blobs"]
    return Outcome(case["returncode"], blobs[case["stdout"]], blobs[case["stderr"]], dict(case.get("extra", {})),
                   {name: blobs[d] for name, d in case["files"].items()})


def encode_case(outcome: Outcome, blobs: dict[str, str]) -> dict[str, Any]:
    def put(text: str) -> str:
        d = _digest(text.encode("utf-8", "surrogatepass"))[:24]
        blobs[d] = text
        return d
    return {"returncode": outcome.returncode, "stdout": put(outcome.stdout), "stderr": put(outcome.stderr),
            "extra": outcome.extra, "files": {name: put(text) for name, text in sorted(outcome.files.items())}}


def write_pack(module: str, cases: dict[str, Outcome]) -> Path:
    """Write ``cases`` as the pack of ``module`` (deterministic bytes)."""
    blobs: dict[str, str] = {}
    encoded = {key: encode_case(cases[key], blobs) for key in sorted(cases)}
    data = {"format": FORMAT, "cases": encoded, "blobs": dict(sorted(blobs.items()))}
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
    PACKS.mkdir(parents=True, exist_ok=True)
    path = pack_path(module)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(lzma.compress(text.encode("utf-8"), preset=9))
    tmp.replace(path)
    return path


def all_cases(module: str) -> dict[str, Outcome]:
    pack = load_pack(module)
    return {key: o for key in pack["cases"] if (o := lookup(module, key)) is not None}


# -- files of a run -------------------------------------------------------------------------------

#: what a recording keeps of the scheduler's output (tests look for its last lines: a traceback,
#: a warning)
SCHED_OUTPUT_TAIL = 20000


def kept(name: str) -> bool:
    """Whether a file a run created is recorded: Batsim's outputs and the messages, not the logs
    (wall-clock times and ports) nor pybatsim's own files in the scheduler's folder."""
    return not name.endswith(".log") and not name.startswith("scheduler-")


def prune(outcome: Outcome) -> Outcome:
    """The part of a run that is recorded and compared."""
    extra = dict(outcome.extra)
    if isinstance(extra.get("sched_output"), str):
        extra["sched_output"] = extra["sched_output"][-SCHED_OUTPUT_TAIL:]
    return Outcome(outcome.returncode, outcome.stdout, outcome.stderr, extra,
                   {name: text for name, text in outcome.files.items() if kept(name)})

def snapshot(tmp: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for path in tmp.rglob("*"):
        if path.is_file():
            st = path.stat()
            out[path.relative_to(tmp).as_posix()] = (st.st_mtime_ns, st.st_size)
    return out


def created_files(tmp: Path, before: dict[str, tuple[int, int]]) -> dict[str, str]:
    """Files created or changed since ``before``, as text with the folder written {TMP}."""
    out = {}
    for name, stamp in snapshot(tmp).items():
        if before.get(name) == stamp:
            continue
        out[name] = to_placeholder((tmp / name).read_bytes().decode("utf-8", "surrogateescape"), tmp)
    return out


def restore_files(tmp: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(from_placeholder(text, tmp).encode("utf-8", "surrogateescape"))


# -- comparing a live run with its recording ------------------------------------------------------

_COLOUR = re.compile(r'"[0-9.]+ [0-9.]+ [0-9.]+"')
#: ``_schedule.csv`` columns that are wall-clock readings
WALL_CLOCK = ("scheduling_time", "simulation_time")


def _schedule_normal(text: str) -> str:
    lines = text.splitlines()
    if len(lines) != 2:
        return text
    head, row = lines[0].split(","), lines[1].split(",")
    return "\n".join(f"{k}={v}" for k, v in zip(head, row) if k not in WALL_CLOCK)


def _messages_normal(text: str) -> list[Any]:
    """A message log (one JSON object a line, ``raw`` the message): messages decoded, so that
    hash-map orders (host properties) do not count."""
    out = []
    for line in text.splitlines():
        try:
            entry = json.loads(line)
            raw = entry.get("raw") if isinstance(entry, dict) else None
            out.append({**entry, "raw": json.loads(raw)} if isinstance(raw, str) else entry)
        except ValueError:
            out.append(line)
    return out


#: pytest's base folder of a test run (another one in each run, ``popen-gwN`` under xdist): a
#: test's inputs written beside the run's own folder are named through it in the messages
_PYTEST_BASE = re.compile(r"/tmp/pytest-of-[^/]+/pytest-[0-9]+/(?:popen-gw[0-9]+/)?")


#: an absolute path (in a JSON string, or in one inside a message) into Batsim's data, the SWF
#: logs or the checkout (``SIMULATION_BEGINS`` names the workload files): the folders above
#: those differ from one machine or clone to the next (``../shared`` may be a link)
_DATA_PREFIX = re.compile(r'(?:(?<=")|(?<=\\"))/[^"\\]*?/(?=(?:batsim-4\.2\.1|swf|platforms|workloads|models|tests/data)/)')


def comparable(name: str, text: str) -> Any:
    """What of a recorded file must stay the same from one Batsim run to the next (None: nothing;
    logs carry wall-clock times and ports)."""
    if name.endswith(".log"):
        return None
    text = _PYTEST_BASE.sub("{PYTEST}/", text)
    text = _DATA_PREFIX.sub("{ROOT}/", text)
    if name.endswith("_schedule.csv"):
        return _schedule_normal(text)
    if name.endswith(".trace"):
        return _COLOUR.sub('"COLOUR"', text)
    if name.endswith(".jsonl"):
        return _messages_normal(text)
    return text


def _machines_shared(jobs_csv: str) -> bool:
    """Whether some machine ran two jobs at once in a ``_jobs.csv`` (compute sharing, storage
    machines shared by I/O jobs): Batsim then draws on it the job first in a set ordered by
    heap address, so its Pajé trace changes from one run to the next."""
    import csv
    import io

    from procset import ProcSet

    spans: dict[int, list[tuple[float, float]]] = {}
    for row in csv.DictReader(io.StringIO(jobs_csv)):
        try:
            start, finish = float(row["starting_time"]), float(row["finish_time"])
            machines = ProcSet.from_str(row["allocated_resources"])
        except (KeyError, ValueError, TypeError):
            continue
        for m in machines:
            spans.setdefault(m, []).append((start, finish))
    for intervals in spans.values():
        intervals.sort()
        for (_, end), (begin, _) in zip(intervals, intervals[1:]):
            if begin < end:
                return True
    return False


#: how Batsim's crashes end: an abort (SimGrid's ``xbt_die``, a failed assertion), and now and
#: then a segmentation fault instead, raised while the abort unwinds (seen once in a whole live
#: run of the corpus, on a case that aborts every time: the same output, another signal)
CRASH_STATUSES = {-6, -11}


def recording_differences(recorded: Outcome, live: Outcome) -> list[str]:
    out = []
    if recorded.returncode != live.returncode and not {recorded.returncode, live.returncode} <= CRASH_STATUSES:
        out.append(f"exit status: recorded {recorded.returncode}, live {live.returncode}")
    for name in sorted(set(recorded.files) | set(live.files)):
        if name not in live.files or name not in recorded.files:
            out.append(f"{name}: {'recorded' if name in recorded.files else 'live'} only")
            continue
        a, b = comparable(name, recorded.files[name]), comparable(name, live.files[name])
        if a != b and name.endswith("_schedule.trace"):
            jobs = live.files.get(name[: -len("_schedule.trace")] + "_jobs.csv")
            if jobs is not None and _machines_shared(jobs):
                continue  # (which job Batsim draws on a shared machine is not reproducible)
        if a != b:
            out.append(f"{name} differs")
    return out


# -- the door -------------------------------------------------------------------------------------

def _stage(module: str, key: str, outcome: Outcome) -> None:
    folder = Path(RECORD_DIR) / module
    folder.mkdir(parents=True, exist_ok=True)
    blobs: dict[str, str] = {}
    case = encode_case(outcome, blobs)
    tmp = folder / f".{key}.{os.getpid()}"
    tmp.write_text(json.dumps({"case": case, "blobs": blobs}, sort_keys=True), encoding="utf-8")
    tmp.replace(folder / f"{key}.json")


def read_staged(path: Path) -> Outcome:
    data = json.loads(path.read_text(encoding="utf-8"))
    case, blobs = data["case"], data["blobs"]
    return Outcome(case["returncode"], blobs[case["stdout"]], blobs[case["stderr"]], case.get("extra", {}),
                   {name: blobs[d] for name, d in case["files"].items()})


def batsim_run(tmp: Path, description: dict[str, Any], live: Callable[[], Outcome]) -> Outcome:
    """Run Batsim (``live``) or replay its recording, for the case ``description`` whose files go
    to ``tmp``.  ``live`` returns an :class:`Outcome` without files; the files are the ones the
    run created in ``tmp``."""
    module = current_module()
    key = case_key(description, tmp)
    if not BATSIM:
        if LIVE_ONLY["value"]:
            pytest.skip("cross-engine test with random inputs: runs live only (set BATSIM to the real "
                        "Batsim 4.2.1, or put batsim on PATH)")
        recorded = lookup(module, key)
        if recorded is None:
            raise AssertionError(
                f"no recording of the real Batsim for this case ({module}, key {key}): record it with "
                f"{RECORD_COMMAND} (see tests/data/batsim_recorded/README.md)")
        restore_files(tmp, recorded.files)
        for name, text in recorded.extra.items():
            recorded.extra[name] = from_placeholder(text, tmp) if isinstance(text, str) else text
        recorded.stdout, recorded.stderr = (from_placeholder(recorded.stdout, tmp),
                                            from_placeholder(recorded.stderr, tmp))
        return recorded
    before = snapshot(tmp)
    outcome = live()
    outcome.files = created_files(tmp, before)
    stored = prune(Outcome(outcome.returncode, to_placeholder(outcome.stdout, tmp),
                           to_placeholder(outcome.stderr, tmp),
                           {k: to_placeholder(v, tmp) if isinstance(v, str) else v for k, v in outcome.extra.items()},
                           outcome.files))
    if RECORD_DIR:
        if not LIVE_ONLY["value"]:
            _stage(module, key, stored)
        return outcome
    if not LIVE_ONLY["value"]:
        recorded = lookup(module, key)
        if recorded is None:
            raise AssertionError(f"no recording of this Batsim run ({module}, key {key}): record it with "
                                 f"{RECORD_COMMAND}")
        diffs = recording_differences(recorded, stored)
        assert not diffs, (f"the real Batsim no longer prints what was recorded ({module}, key {key}): "
                           + "; ".join(diffs) + f" — record again with {RECORD_COMMAND}")
    return outcome
