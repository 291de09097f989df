"""Every input the real Batsim 4.2.1 runs runs on coburst with the
same result; a check Batsim does not make is a warning (stderr, file and place), unless
coburst could not simulate the input correctly.

Each case is a small input of our own reproducing what Batsim's own corpus showed
(``tests/test_batsim_corpus.py`` runs that corpus, read from ``../shared/data/batsim-4.2.1``
or ``COBURST_BATSIM_DATA``, case by case; ``scripts/batsim_corpus.py`` prints it as a table):

* far dates (Batsim's ``test_long_workload.json`` submits jobs up to 1e17 s): no 2**32 s
  limit, and the scheduler's dates read back as RapidJSON reads them; negative submission
  times (Batsim does not check them): a warning;
* white space before the ``<?xml ...?>`` declaration (six of Batsim's platforms);
* hosts without a route between them (``small_platform_pfs0.xml``,
  ``simple_coalloc_platform.xml``): a warning; where a run uses such a route it is empty
  (no latency, no bandwidth limit), as SimGrid 3.32 makes it in Batsim;
* profiles no job uses are left out of ``SIMULATION_BEGINS`` (Batsim frees them at load);
* a master host in a nested ``Full`` zone without a route to itself
  (``properties_example.xml``: SimGrid 4.1 crashed on that route asked outside an actor).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crossengine import assert_identical, needs_batsim, run_both
from shared_data import needs_batsim_data
from simharness import BATSIM, REPO, run_sim, workload

from coburst.simulator.protocol import batsim_date, rapidjson_double

HEAD = ("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
        "<platform version=\"4.1\">\n")


def full_zone(routes: str, storage: bool = False) -> str:
    """master_host, node_0, node_1 (and a storage host ``pfs``) in one Full zone."""
    pfs = ('<host id="pfs" speed="1Gf"><prop id="role" value="storage"/></host>\n'
           '<link id="lp" bandwidth="250MBps" latency="20us"/>\n') if storage else ""
    return (HEAD + '<zone id="AS0" routing="Full">\n'
            '<host id="master_host" speed="1Gf"/>\n<host id="node_0" speed="1Gf"/>\n'
            '<host id="node_1" speed="1Gf"/>\n' + pfs +
            '<link id="l0" bandwidth="125MBps" latency="100us"/>\n'
            '<link id="l1" bandwidth="100MBps" latency="50us"/>\n'
            '<route src="master_host" dst="node_0"><link_ctn id="l0"/></route>\n'
            '<route src="master_host" dst="node_1"><link_ctn id="l1"/></route>\n'
            + routes + "</zone>\n</platform>\n")


NODES = '<route src="node_0" dst="node_1"><link_ctn id="l0"/><link_ctn id="l1"/></route>\n'
TO_PFS = ('<route src="node_0" dst="pfs"><link_ctn id="l0"/><link_ctn id="lp"/></route>\n'
          '<route src="node_1" dst="pfs"><link_ctn id="l1"/><link_ctn id="lp"/></route>\n')


def write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text)
    return path


# ------------------------------------------------------------------ RapidJSON's number reading
def test_rapidjson_reads_a_17_digit_date_one_ulp_away():
    """Measured on Batsim 4.2.1 (test_long_workload.json): pybatsim answers
    ``"now": 100000000000.00003`` and Batsim's request-reply actor sleeps until
    100000000000.000046 = 1e11 + 3 ulp; the correctly rounded value is 1e11 + 2 ulp."""
    ulp = 2.0 ** -16
    assert float("100000000000.00003") == 1e11 + 2 * ulp
    assert rapidjson_double("100000000000.00003") == 1e11 + 3 * ulp
    assert batsim_date(1e11 + 2 * ulp) == 1e11 + 3 * ulp
    assert batsim_date(5) == 5 and batsim_date(12.345678) == 12.345678


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=10 ** 15 - 1), st.integers(min_value=0, max_value=15))
def test_rapidjson_is_exact_up_to_15_digits(digits, decimals):
    """Up to 15 significant digits RapidJSON's fast path is the correctly rounded value
    (so the dates of ordinary runs, printed with 6 decimals, are unchanged)."""
    text = str(digits)
    if decimals and decimals < len(text):
        text = text[:-decimals] + "." + text[-decimals:]
    assert rapidjson_double(text) == float(text)
    assert rapidjson_double("-" + text) == float("-" + text)
    assert rapidjson_double(text + "e3") == float(text + "e3")


# ------------------------------------------------------------------ far dates
def far_workload(tmp: Path) -> Path:
    """Far dates, some of whose message dates print with 17 digits (RapidJSON one ulp off)."""
    return workload(tmp / "far.json", [
        {"id": 0, "subtime": 1, "res": 2, "profile": "d"},
        {"id": 1, "subtime": 1e10, "res": 1, "profile": "d"},
        {"id": 2, "subtime": 1e11, "walltime": 30, "res": 1, "profile": "d"},
        {"id": 3, "subtime": 123456789012.5, "walltime": 10, "res": 2, "profile": "long"},
    ] + [{"id": 10 + i, "subtime": 1e11 * (1 + i / 7) + i * 0.123, "res": 1, "profile": "d"} for i in range(12)],
        {"d": {"type": "delay", "delay": 20.2}, "long": {"type": "delay", "delay": 50}}, nb_res=2)


def test_far_dates_run(tmp_path):
    """No 2**32 s limit on dates (Batsim has none); the outputs print them in full."""
    p = write(tmp_path, "p.xml", full_zone(NODES))
    run = run_sim(tmp_path, platform=p, workloads=[far_workload(tmp_path)], scheduler="easyBackfill").check()
    rows = run.jobs()
    assert rows["w0!1"]["submission_time"] == "10000000000.000000"
    assert rows["w0!2"]["submission_time"] == "100000000000.000000"
    assert rows["w0!3"]["final_state"] == "COMPLETED_WALLTIME_REACHED"
    assert float(rows["w0!2"]["finish_time"]) > 1e11 + 20


def test_far_dates_same_in_process_and_over_zeromq(tmp_path):
    """The in-process link gets pybatsim's floats without JSON text: they are read back as
    Batsim would read their ``repr`` (1e11 + 2 ulp -> 1e11 + 3 ulp), as over ZeroMQ."""
    from test_inprocess import assert_same_outputs

    p = write(tmp_path, "p.xml", full_zone(NODES))
    assert_same_outputs(tmp_path, scheduler="easyBackfill", workloads=[far_workload(tmp_path)], platform=p)


@needs_batsim
def test_far_dates_identical_to_batsim(tmp_path):
    p = write(tmp_path, "p.xml", full_zone(NODES))
    assert_identical(*run_both(tmp_path, platform=p, workloads=[far_workload(tmp_path)], scheduler="easyBackfill"))


def edge_workload(tmp: Path, subtime: float) -> Path:
    return workload(tmp / "edge.json", [{"id": 0, "subtime": 1, "res": 1, "profile": "d"},
                                        {"id": 1, "subtime": subtime, "res": 1, "profile": "d"}],
                    {"d": {"type": "delay", "delay": 10}}, nb_res=2)


def test_dates_batsim_cannot_print_are_refused(tmp_path):
    """Batsim's one bound: ``%6f`` into 32 characters (an assertion aborts it from 1e23 s)."""
    p = write(tmp_path, "p.xml", full_zone(NODES))
    run = run_sim(tmp_path, platform=p, workloads=[edge_workload(tmp_path, 2e23)], start_scheduler=False)
    assert run.returncode == 2
    assert "edge.json: jobs[1].subtime: 2e+23 s: Batsim 4.2.1 aborts on such a date" in run.stderr


@needs_batsim
def test_the_last_dates_batsim_prints(tmp_path):
    p = write(tmp_path, "p.xml", full_zone(NODES))
    assert_identical(*run_both(tmp_path, platform=p, workloads=[edge_workload(tmp_path, 9e22)],
                               scheduler="easyBackfill"))
    run = run_sim(tmp_path, platform=p, workloads=[edge_workload(tmp_path, 2e23)], scheduler="easyBackfill",
                  engine="batsim", prefix="b23", wait=60)
    assert run.returncode != 0 and "buf_size" in run.stderr, run.report()


def test_negative_submission_time_warns_and_runs(tmp_path):
    """Batsim does not check subtime >= 0: such a job is submitted at the start and keeps its
    date in the outputs (measured on Batsim 4.2.1: waiting_time 5.000060 for subtime -5)."""
    w = workload(tmp_path / "neg.json", [{"id": 0, "subtime": -5, "res": 1, "profile": "d"},
                                         {"id": 1, "subtime": 3, "res": 1, "profile": "d"}],
                 {"d": {"type": "delay", "delay": 7}}, nb_res=2)
    p = write(tmp_path, "p.xml", full_zone(NODES))
    run = run_sim(tmp_path, platform=p, workloads=[w], scheduler="easyBackfill").check()
    assert f"warning: {w}: jobs[0].subtime: negative submission time -5" in run.stderr
    row = run.jobs()["w0!0"]
    assert row["submission_time"] == "-5.000000" and float(row["waiting_time"]) >= 5


@needs_batsim
def test_negative_submission_time_identical_to_batsim(tmp_path):
    w = workload(tmp_path / "neg.json", [{"id": 0, "subtime": -5, "res": 1, "profile": "d"},
                                         {"id": 1, "subtime": 3, "res": 1, "profile": "d"}],
                 {"d": {"type": "delay", "delay": 7}}, nb_res=2)
    p = write(tmp_path, "p.xml", full_zone(NODES))
    assert_identical(*run_both(tmp_path, platform=p, workloads=[w], scheduler="easyBackfill"))


# ------------------------------------------------------------------ XML declaration after blank lines
def delays(tmp: Path) -> Path:
    return workload(tmp / "w.json", [{"id": i, "subtime": 1 + i, "res": 1 + i % 2, "profile": "d"} for i in range(4)],
                    {"d": {"type": "delay", "delay": 7}, "unused": {"type": "delay", "delay": 3}}, nb_res=2)


def test_blank_lines_before_the_xml_declaration_warn_and_run(tmp_path):
    p = write(tmp_path, "p.xml", "\n\n" + full_zone(NODES))
    run = run_sim(tmp_path, platform=p, workloads=[delays(tmp_path)], scheduler="easyBackfill").check()
    assert f"warning: {p}: line 3: white space before the <?xml ...?> declaration" in run.stderr
    assert len(run.rows()) == 4


def test_malformed_xml_after_blank_lines_names_the_right_line(tmp_path):
    p = write(tmp_path, "p.xml", "\n\n" + full_zone(NODES).replace("<host id=\"node_0\"", "<host id=\"node_0\"<"))
    run = run_sim(tmp_path, platform=p, workloads=[delays(tmp_path)], start_scheduler=False)
    assert run.returncode == 2
    assert f"{p}: line 8 column" in run.stderr and "malformed XML" in run.stderr


@needs_batsim
def test_blank_lines_and_unused_profiles_identical_to_batsim(tmp_path):
    p = write(tmp_path, "p.xml", "\n\n" + full_zone(NODES))
    b, c = run_both(tmp_path, platform=p, workloads=[delays(tmp_path)], scheduler="easyBackfill")
    assert_identical(b, c)
    begins = json.loads(next(m["raw"] for m in c.messages() if m["dir"] == "in"))
    assert list(begins["events"][0]["data"]["profiles"]["w0"]) == ["d"]  # "unused" left out, as Batsim


# ------------------------------------------------------------------ routes Batsim does not need
def test_storage_host_without_route_to_the_master_warns_and_runs(tmp_path):
    p = write(tmp_path, "p.xml", full_zone(NODES + TO_PFS, storage=True))
    run = run_sim(tmp_path, platform=p, workloads=[delays(tmp_path)], scheduler="easyBackfill").check()
    assert f"warning: {p}: no route between some hosts: pfs -> master_host" in run.stderr
    assert len(run.rows()) == 4


@needs_batsim
def test_storage_host_without_route_to_the_master_identical_to_batsim(tmp_path):
    p = write(tmp_path, "p.xml", full_zone(NODES + TO_PFS, storage=True))
    assert_identical(*run_both(tmp_path, platform=p, workloads=[delays(tmp_path)], scheduler="easyBackfill"))


def comm_workload(tmp: Path) -> Path:
    return workload(tmp / "comm.json", [{"id": 0, "subtime": 1, "res": 2, "profile": "c"}],
                    {"c": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e6}}, nb_res=2)


def test_a_missing_route_a_job_uses_costs_nothing(tmp_path):
    """SimGrid 3.32 answers an undeclared route with an empty one: the job's 1 MB per pair
    travels in no time, the job lasts its computation alone (1 s)."""
    p = write(tmp_path, "p.xml", full_zone(""))  # node_0 <-> node_1 not connected
    run = run_sim(tmp_path, platform=p, workloads=[comm_workload(tmp_path)], scheduler="easyBackfill").check()
    assert f"warning: {p}: no route between some hosts: node_0 -> node_1, node_1 -> node_0" in run.stderr
    assert run.jobs()["w0!0"]["execution_time"] == "1.000000"


@needs_batsim
def test_a_missing_route_a_job_uses_identical_to_batsim(tmp_path):
    p = write(tmp_path, "p.xml", full_zone(""))
    assert_identical(*run_both(tmp_path, platform=p, workloads=[comm_workload(tmp_path)], scheduler="easyBackfill"))


# ------------------------------------------------------------------ master in a nested Full zone
NESTED = (HEAD + '<zone id="AS0" routing="Full">\n'
          '  <zone id="AS3" routing="Full"><host id="master_host" speed="42f"/></zone>\n'
          '  <cluster id="acme" prefix="node-" suffix=".x" radical="0-3" speed="1Gf" bw="125MBps" lat="50us"'
          ' bb_bw="2.25GBps" bb_lat="500us"/>\n'
          '  <link id="master_link" bandwidth="100GBps" latency="1us" sharing_policy="FATPIPE"/>\n'
          '  <zoneRoute src="AS3" dst="acme" gw_src="master_host" gw_dst="node-acme_router.x">'
          '<link_ctn id="master_link"/></zoneRoute>\n'
          '</zone>\n</platform>\n')


def test_master_in_a_nested_full_zone_runs(tmp_path):
    p = write(tmp_path, "p.xml", NESTED)
    run = run_sim(tmp_path, platform=p, workloads=[delays(tmp_path)], scheduler="easyBackfill")
    assert run.returncode == 0, run.report()


@needs_batsim
def test_master_in_a_nested_full_zone_identical_to_batsim(tmp_path):
    p = write(tmp_path, "p.xml", NESTED)
    assert_identical(*run_both(tmp_path, platform=p, workloads=[delays(tmp_path)], scheduler="easyBackfill"))


# ------------------------------------------------------------------ Batsim's own corpus
@pytest.mark.skipif(not BATSIM, reason="cross-engine: needs the real Batsim 4.2.1 binary in BATSIM")
@needs_batsim_data()
def test_batsim_corpus_script(tmp_path):
    """``scripts/batsim_corpus.py`` on a slice of the corpus, from its default folder (the
    shared corpus); the whole corpus runs case by case in ``tests/test_batsim_corpus.py``."""
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "batsim_corpus.py"),
                           "--platforms", "platforms/small_platform.xml", "--workloads", "workloads/test_[cd]*.json",
                           "-j", "2", "--wait", "60"], capture_output=True, text=True, timeout=280)
    table = proc.stdout.split("# table (sorted)\n", 1)[-1].splitlines()[1:]
    rows = [line.split(" | ") for line in table if line.count(" | ") >= 5]
    # test_case_study1, test_delays (x3 schedulers); fillerSched with several jobs waiting included
    assert [(r[1], r[2]) for r in rows] == [(w, s) for w in ("workloads/test_case_study1.json",
                                                              "workloads/test_delays.json")
                                            for s in ("easyBackfill", "fillerSched", "schedFcfs")], proc.stdout
    assert all(r[3] == r[4] == "ok" and r[5] == "identical" for r in rows), proc.stdout
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


def test_a_warning_quoting_huge_host_names_is_cut(tmp_path):
    """Host names of 100,000 characters without a route between them: the warning names them
    cut to a few hundred characters, with their size, never whole."""
    long_a, long_b = "a" * 100_000, "b" * 100_000
    text = full_zone("").replace('id="node_0"', f'id="{long_a}"').replace('id="node_1"', f'id="{long_b}"')
    text = text.replace('dst="node_0"', f'dst="{long_a}"').replace('dst="node_1"', f'dst="{long_b}"')
    p = write(tmp_path, "p.xml", text)
    w = workload(tmp_path / "w.json", [{"id": 0, "subtime": 1, "res": 1, "profile": "d"}],
                 {"d": {"type": "delay", "delay": 1}}, nb_res=2)
    run = run_sim(tmp_path, platform=p, workloads=[w], scheduler="easyBackfill").check()
    warning = next(line for line in run.stderr.splitlines() if "no route between some hosts" in line)
    assert f"{'a' * 200}... (100000 characters) -> {'b' * 200}... (100000 characters)" in warning
    assert len(run.stderr) < 3000, len(run.stderr)
