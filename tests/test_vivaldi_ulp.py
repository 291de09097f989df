"""The last differing rows of Batsim's corpus: workload numbers read as Batsim reads them.

The rows: on Batsim's Vivaldi no-network platforms ``energy_platform_homogeneous_no_net_{128,
256,512}.xml`` with ``test_batsim_paper_workload_seed1.json`` and
``example_workload_hpc_seed4_jobs250.json`` (pybatsim's ``easyBackfill``), jobs started at their
submission date (the zone's hosts share one point: messages cost nothing) had ``waiting_time``
``-0.000000`` on one engine and ``0.000000`` on the other.

The cause (found 2026-11-27, measured with Batsim's exact clock: an ``LD_PRELOAD`` shim printing
every ``Engine::get_clock()`` in hexadecimal): Batsim 4.2.1 reads its workload files with
RapidJSON's default flags (``workload.cpp``: ``Document::Parse``, then ``GetDouble`` for
``subtime``, ``walltime`` and every profile amount), which reads some numbers of 16-17
significant digits one ulp away from the correctly rounded value (``95.44886130889651``: ``...899f``
for ``...899e``); coburst read them correctly rounded.  The submitter then woke one ulp away,
and through the clock steps of every sleep spanning such a date later dates moved by an ulp
too (a job's end, the next submission: ``s1 + double(s2 - s1)`` is not always ``s2``); where
a job starts at its submission date, ``starting_time - submission_time`` came out as +0, -0
or -1 ulp on one engine and another on the other.  Every date Batsim reads from its clock in
those runs is now one of coburst's dates (the shim's 2030 distinct dates of the 128-host
paper run, against 164 missing before).

Checked here: a tiny Vivaldi case on both engines (fails with the correctly rounded reading:
coburst printed ``0.000000`` where Batsim prints ``-0.000000``), the six corpus pairs (from
Batsim's files beside the checkout: ``COBURST_BATSIM_DATA``, default
``../shared/data/batsim-4.2.1``), the readings of the whole and the streamed workload readers against
:func:`rapidjson_double` (hypothesis), end-to-end waiting times against Batsim's date
arithmetic written out (hypothesis), and — when RapidJSON's headers and ``g++`` are at hand
(``RAPIDJSON_REPO``, default the local mirror of Tencent/rapidjson, tag v1.1.0 as in Debian
12's Batsim build) — against RapidJSON itself.
"""

from __future__ import annotations

import csv
import json
import lzma
import os
import random
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from coburst.simulator.protocol import rapidjson_double
from coburst.simulator.workload import _batsim_numbers, _Fallback, batsim_float, load_workload
from crossengine import assert_identical, needs_batsim, run_both
from shared_data import need_batsim_data
from simharness import COBURST, workload

RAPIDJSON_REPO = Path(os.environ.get("RAPIDJSON_REPO", "/work/.mirror/Tencent+rapidjson/repo"))
#: RapidJSON's own headers where a system has them (Debian's rapidjson-dev, 1.1.0: the one the
#: real Batsim 4.2.1 is built with on Debian)
RAPIDJSON_SYSTEM = Path("/usr/include/rapidjson/document.h")
#: what RapidJSON read for each of the test's 20,000 texts (one hexadecimal double a line), as
#: a C++ program built on RapidJSON printed it here; the test checks coburst against it when
#: RapidJSON is not at hand, and checks it against RapidJSON when it is
RAPIDJSON_READINGS = Path(__file__).parent / "data" / "rapidjson_readings.txt.xz"

#: two submission dates: RapidJSON reads the second one ulp below the correctly rounded value,
#: and Batsim's submitter, sleeping ``double(s2 - s1)`` from the first, wakes one more ulp
#: before it (from the correctly rounded ``s2`` it wakes exactly there); the second's 7th
#: decimal rounds down, so pybatsim's answer (dated to the microsecond, earlier) starts the
#: job at once, at the wake date
S1, S2 = 199.2059351871436, 1774.5733772992025


def vivaldi_platform(path: Path, nb: int = 2) -> Path:
    """Hosts at one point of a Vivaldi zone: no link, no latency (messages cost nothing)."""
    hosts = "".join(f'  <host id="host{i}" coordinates="0 0 0" speed="100Mf"/>\n' for i in range(nb))
    path.write_text("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                    '<platform version="4.1">\n<zone id="AS0" routing="Vivaldi">\n'
                    '  <host id="master_host" coordinates="0 0 0" speed="100Mf"/>\n'
                    f"{hosts}</zone>\n</platform>\n")
    return path


def test_the_dates_are_ones_rapidjson_reads_otherwise():
    """The case of the cross-engine test is what it says (guards against a silent change of
    :data:`S1`/:data:`S2` or of the readers)."""
    LD = np.longdouble
    r1, r2 = rapidjson_double(repr(S1)), rapidjson_double(repr(S2))
    assert r1 == S1 and r2 == S2 - np.spacing(S2)
    assert r1 + float(LD(r2) - LD(r1)) == r2 - np.spacing(S2)  # Batsim: waiting_time -0.000000
    assert S1 + float(LD(S2) - LD(S1)) == S2  # the correctly rounded reading's: 0.000000
    assert float("%.6f" % S2) < r2  # pybatsim answers at an earlier date: the job starts at once


@needs_batsim
@pytest.mark.timeout(300)
def test_tiny_vivaldi_waiting_time_sign_as_batsim(tmp_path):
    """Two jobs on a link-free Vivaldi zone: the second starts at its submission date, which
    Batsim's clock reaches 2 ulp early (its reading of the first date is one ulp up)."""
    platform = vivaldi_platform(tmp_path / "vivaldi.xml")
    wl = workload(tmp_path / "w.json", [
        {"id": 0, "subtime": S1, "walltime": 3000, "res": 1, "profile": "long"},
        {"id": 1, "subtime": S2, "walltime": 3000, "res": 1, "profile": "short"},
    ], {"long": {"type": "delay", "delay": 2000}, "short": {"type": "delay", "delay": 10}}, nb_res=2)
    batsim, coburst = run_both(tmp_path, workloads=[wl], platform=platform, scheduler="easyBackfill")
    rows = {r["job_id"]: r for r in coburst.rows()}
    assert rows["1"]["starting_time"] == rows["1"]["submission_time"] == "1774.573377"
    assert rows["1"]["waiting_time"] == "-0.000000", "coburst no longer wakes where Batsim wakes"
    assert rows["0"]["waiting_time"] == "0.000000"
    assert_identical(batsim, coburst)


@needs_batsim
@pytest.mark.timeout(600)
@pytest.mark.parametrize("hosts", [128, 256, 512])
@pytest.mark.parametrize("wl_name", ["test_batsim_paper_workload_seed1.json",
                                     "example_workload_hpc_seed4_jobs250.json"])
def test_batsim_corpus_vivaldi_rows(tmp_path, hosts, wl_name):
    """The corpus pairs that differed (5 of these 6) are identical to Batsim, ``_jobs.csv``
    byte for byte with every message, ``_schedule.csv`` and ``_machine_states.csv``."""
    platform = need_batsim_data("platforms", f"energy_platform_homogeneous_no_net_{hosts}.xml")
    batsim, coburst = run_both(tmp_path, workloads=[need_batsim_data("workloads", wl_name)], platform=platform,
                               scheduler="easyBackfill")
    assert_identical(batsim, coburst)


# ------------------------------------------------------------------ the reading of workload numbers
def _texts():
    """Number texts as workload files hold them: Python's repr (json.dump), C's %.17g / %.6f,
    exponents, and digit strings of any length with a point anywhere."""
    value = st.floats(min_value=-1e12, max_value=1e15, allow_nan=False, allow_infinity=False)
    digits = st.text("0123456789", min_size=1, max_size=25)
    return st.one_of(
        value.map(repr), value.map(lambda x: "%.17g" % x), value.map(lambda x: "%.6f" % x),
        value.map(lambda x: "%.16e" % x),
        st.tuples(digits, digits).map(lambda t: f"{t[0].lstrip('0') or '0'}.{t[1]}"),
        st.tuples(digits, st.integers(-30, 30)).map(lambda t: f"{t[0][0]}.{t[0][1:] or '0'}e{t[1]}"),
    )


@settings(max_examples=2000, deadline=None)
@given(_texts())
def test_batsim_float_is_rapidjson_double(text):
    """:func:`batsim_float`'s shortcuts (short texts, significands RapidJSON holds exactly) and
    the streamed reader's ``Decimal`` text give :func:`rapidjson_double`'s value, bit for bit."""
    try:
        ref = rapidjson_double(text)
    except ValueError:  # past the double range: refused later, naming the field
        assert batsim_float(text) == float(text)
        return
    assert batsim_float(text) == ref
    number = Decimal(text)
    try:
        assert _batsim_numbers(number) == ref
        assert _batsim_numbers({"a": [number, {"b": number}], "n": 3}) == {"a": [ref, {"b": ref}], "n": 3}
    except _Fallback:  # the streamed reader leaves such numbers to the whole reading
        assert len(number.as_tuple().digits) > 17 or number.adjusted() >= 15


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.floats(min_value=0, max_value=1e7, allow_nan=False), min_size=1, max_size=12),
       st.floats(min_value=1e-3, max_value=1e6, allow_nan=False))
def test_workload_numbers_read_as_batsim_reads_them(tmp_path, subtimes, delay):
    """Subtimes, walltimes and profile amounts of a workload file (written by ``json.dump``:
    Python's repr) are RapidJSON's readings, by the whole and by the streamed reader alike."""
    subtimes = sorted(subtimes)
    path = workload(tmp_path / "w.json", [
        {"id": i, "subtime": s, "walltime": s / 3 + 1.1, "res": 1, "profile": "d"} for i, s in enumerate(subtimes)
    ], {"d": {"type": "delay", "delay": delay},
        "p": {"type": "parallel_homogeneous", "cpu": delay * 1e6 + 0.1, "com": delay / 7}}, nb_res=1)
    text = json.loads(path.read_text(), parse_float=str)
    want = [(rapidjson_double(j["subtime"]) if isinstance(j["subtime"], str) else float(j["subtime"]),
             rapidjson_double(j["walltime"])) for j in text["jobs"]]
    whole = load_workload(path, "w0")
    streamed = load_workload(path, "w0", stream=True)
    assert streamed.stream is not None  # the streamed reader read it (not the whole-reading fallback)
    for wl in (whole, streamed):
        assert [(j.subtime, j.walltime) for j in wl.iter_jobs()] == want
        assert wl.profiles["d"].data["delay"] == rapidjson_double(text["profiles"]["d"]["delay"])
        assert wl.profiles["p"].data["cpu"] == rapidjson_double(text["profiles"]["p"]["cpu"])
        assert wl.profiles["p"].data["com"] == rapidjson_double(text["profiles"]["p"]["com"])


def test_the_corpus_date_is_read_one_ulp_up(tmp_path):
    """``95.44886130889651`` (job 6 of Batsim's ``test_batsim_paper_workload_seed1.json``): the
    first date where the two readings part."""
    path = tmp_path / "w.json"
    path.write_text('{"nb_res": 1, "jobs": [{"id": 6, "subtime": 95.44886130889651, "res": 1, "profile": "d"}],'
                    ' "profiles": {"d": {"type": "delay", "delay": 1}}}')
    for stream in (False, True):
        (job,) = list(load_workload(path, "w0", stream=stream).iter_jobs())
        assert job.subtime.hex() == "0x1.7dcba24c8899fp+6"  # RapidJSON's; float(text) is ...899e
    assert float("95.44886130889651").hex() == "0x1.7dcba24c8899ep+6"


def _rapidjson_reader(tmp: Path) -> Path | None:
    """A C++ program reading numbers as Batsim does (RapidJSON v1.1.0, default flags), or None."""
    gxx = shutil.which("g++")
    git_dir = RAPIDJSON_REPO if (RAPIDJSON_REPO / "HEAD").exists() else RAPIDJSON_REPO / ".git"
    if gxx is None:
        return None
    if (git_dir / "HEAD").exists():
        archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", "v1.1.0", "include"],
                                 capture_output=True, check=False)
        if archive.returncode != 0:
            return None
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
    elif RAPIDJSON_SYSTEM.is_file():
        (tmp / "include").symlink_to(RAPIDJSON_SYSTEM.parent.parent)
    else:
        return None
    source = tmp / "rjread.cpp"
    source.write_text("""#include <rapidjson/document.h>
#include <cstdio>
#include <iostream>
#include <string>
int main() {  // one number a line -> RapidJSON's double (Document::Parse, GetDouble) in hex
  std::string line;
  while (std::getline(std::cin, line)) {
    rapidjson::Document doc;
    std::string text = "[" + line + "]";
    doc.Parse(text.c_str());
    if (doc.HasParseError() || !doc[0].IsNumber()) std::printf("error\\n");
    else std::printf("%a\\n", doc[0].GetDouble());
  }
}
""")
    exe = tmp / "rjread"
    build = subprocess.run([gxx, "-O1", "-w", "-I", str(tmp / "include"), "-o", str(exe), str(source)],
                           capture_output=True, text=True, check=False)
    return exe if build.returncode == 0 else None


def _rapidjson_readings(tmp: Path, texts: list[str]) -> list[str]:
    """RapidJSON's reading of each text: live when g++ and RapidJSON are at hand (checked against
    the recording, or recorded when there is none), else the recording."""
    recorded = lzma.decompress(RAPIDJSON_READINGS.read_bytes()).decode().split() \
        if RAPIDJSON_READINGS.is_file() else None
    exe = _rapidjson_reader(tmp)
    if exe is None:
        assert recorded is not None, f"no RapidJSON at hand and no recording of its readings ({RAPIDJSON_READINGS})"
        return recorded
    out = subprocess.run([str(exe)], input="\n".join(texts) + "\n", capture_output=True, text=True,
                         check=True).stdout.split()
    if recorded is None:
        RAPIDJSON_READINGS.write_bytes(lzma.compress(("\n".join(out) + "\n").encode(), preset=9))
    else:
        assert out == recorded, "RapidJSON no longer reads the texts as recorded"
    return out


@pytest.mark.timeout(300)
def test_readings_against_rapidjson_itself(tmp_path):
    """:func:`rapidjson_double`, :func:`batsim_float` and the streamed reader's Decimal path
    against RapidJSON v1.1.0 itself on 20,000 texts (seeded; measured identical)."""
    rng = random.Random(22)
    texts = []
    for _ in range(20000):
        x = rng.uniform(0, 10 ** rng.randint(0, 15))
        kind = rng.randrange(6)
        if kind == 0:
            texts.append(repr(x))
        elif kind == 1:
            texts.append("%.17g" % x)
        elif kind == 2:
            texts.append("%.20f" % -x)
        elif kind == 3:
            texts.append("%.16e" % x)
        else:
            digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 25)))
            cut = rng.randint(0, len(digits))
            texts.append(f"{digits[:cut].lstrip('0') or '0'}.{digits[cut:] or '0'}")
    out = _rapidjson_readings(tmp_path, texts)
    assert len(out) == len(texts)
    wrong = []
    for text, hexa in zip(texts, out):
        ref = float.fromhex(hexa)
        try:
            streamed = _batsim_numbers(Decimal(text))
        except _Fallback:  # read by the whole reading: the file's own text
            streamed = batsim_float(text)
        got = (rapidjson_double(text), batsim_float(text), streamed)
        if got != (ref, ref, ref):
            wrong.append((text, hexa, [g.hex() for g in got]))
    assert not wrong, wrong[:10]
    assert sum(float(t) != float.fromhex(h) for t, h in zip(texts, out)) > 100  # the readings do part


# ------------------------------------------------------------------ the dates, end to end
def _reference_waits(s1: float, s2: float) -> tuple[str, str]:
    """The printed ``waiting_time`` of the two jobs of :func:`test_wake_dates_as_a_reference`,
    by Batsim 4.2.1's arithmetic written out: RapidJSON's dates; the submitter sleeps
    ``double(r2 - r1)`` from ``r1`` (``job_submitter.cpp``, long double difference); pybatsim
    answers each submission at the date it was sent, printed ``%6f`` (later: the request-reply
    actor sleeps until it, a clock step inside the submitter's sleep: ``now += step``, the
    sleep's remaining time ``-= step``, SimGrid's countdown); a job starts at its decision's
    date; ``waiting_time`` is the long double ``start - submission`` printed ``%f``."""
    LD = np.longdouble
    r1, r2 = rapidjson_double(repr(s1)), rapidjson_double(repr(s2))
    remaining = float(LD(r2) - LD(r1))
    now = r1  # the first sleep, from 0: 0 + r1
    answer = float("%.6f" % now)
    start1 = now
    if answer > now:  # the decision waits for its date, ahead of the submitter's wake
        step = answer - now
        now, remaining = now + step, remaining - step
        start1 = now
    now = now + remaining  # the submitter wakes: the second submission
    answer = float("%.6f" % now)
    start2 = now + (answer - now) if answer > now else now
    return "%f" % float(LD(start1) - LD(r1)), "%f" % float(LD(start2) - LD(r2))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(s1=S1, gap=S2 - S1)
@given(st.floats(min_value=1, max_value=500), st.floats(min_value=1, max_value=5000))
def test_wake_dates_as_a_reference(tmp_path, s1, gap):
    """coburst (in-process, pybatsim's ``easyBackfill``) on a link-free Vivaldi zone prints the
    waiting times :func:`_reference_waits` computes (no Batsim needed): the reading of the
    dates and the clock's steps together, on random dates (a 16-17 digit ``repr`` is read one
    ulp away about a third of the time)."""
    s2 = s1 + gap
    platform = vivaldi_platform(tmp_path / "vivaldi.xml")
    wl = workload(tmp_path / "w.json", [
        {"id": 0, "subtime": s1, "walltime": gap + 1000, "res": 1, "profile": "long"},
        {"id": 1, "subtime": s2, "walltime": 100, "res": 1, "profile": "short"},
    ], {"long": {"type": "delay", "delay": gap + 100}, "short": {"type": "delay", "delay": 10}}, nb_res=2)
    out = tmp_path / "out"
    run = subprocess.run([str(COBURST), "run", "easyBackfill", "-q", "-p", str(platform), "-w", str(wl),
                          "-e", str(out / "o")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    with open(out / "o_jobs.csv", newline="") as f:
        rows = {r["job_id"]: r for r in csv.DictReader(f)}
    assert (rows["0"]["waiting_time"], rows["1"]["waiting_time"]) == _reference_waits(s1, s2)
