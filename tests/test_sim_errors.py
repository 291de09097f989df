"""Every error path of ``coburst sim``: a clear message naming the file (or peer), the place
and the problem, a non-zero exit status, no output file left behind, and all within
seconds (``--timeout 2``).

Exit statuses: 2 bad input (platform, workload, command line), 3 protocol violation by the
scheduler (or a stalled simulation), 4 scheduler gone (disconnected or silent).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from simharness import CLUSTER4, run_cli, run_sim, workload

pytestmark = pytest.mark.timeout(90)

ALLOCS = {"w0!1": "0-1", "w0!2": "2-3"}
D = {"d1": {"type": "delay", "delay": 1}, "d10": {"type": "delay", "delay": 10}}
#: seconds: every error is reported within seconds (``--timeout 2``); loose because the 2
#: cores may be shared (16 s seen at a load of 8), but below the default ``--timeout`` (30 s),
#: so an error path that waits out the default instead of the given 2 s fails
FAST = 25.0

PLATFORM_HEAD = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="root" routing="Full">
"""
PLATFORM_TAIL = """  </zone>
</platform>
"""
CLUSTER = ('<cluster id="c" prefix="node_" suffix="" radical="0-3" speed="1Gf" bw="1250MBps" lat="50us" '
           'bb_bw="2500MBps" bb_lat="500us"{extra}/>')
MASTER_ZONE = """<zone id="mz" routing="None"><host id="master_host" speed="1Gf"/></zone>
    <link id="ml" bandwidth="1250MBps" latency="100us"/>
    <zoneRoute src="mz" dst="c" gw_src="master_host" gw_dst="node_c_router"><link_ctn id="ml"/></zoneRoute>"""


def leftovers(tmp: Path, prefix: str = "out") -> list[str]:
    return sorted(p.name for p in tmp.iterdir() if p.name.startswith(prefix) or p.name.startswith(f".{prefix}"))


def check_error(rc: int, stderr: str, wall: float, tmp: Path, code: int, *fragments: str) -> None:
    assert rc == code, f"exit {rc}, expected {code}\n{stderr}"
    for fragment in fragments:
        assert fragment in stderr, f"{fragment!r} not in:\n{stderr}"
    assert "Traceback" not in stderr, stderr
    assert leftovers(tmp) == [], leftovers(tmp)
    assert wall < FAST, wall


def cli_error(tmp: Path, args: list[str], code: int, *fragments: str) -> str:
    t0 = time.monotonic()
    proc = run_cli(tmp, [*args, "-e", str(tmp / "out"), "-s", "tcp://127.0.0.1:9", "--timeout", "2"])
    check_error(proc.returncode, proc.stderr, time.monotonic() - t0, tmp, code, *fragments)
    assert proc.stdout == ""
    return proc.stderr


def sim_error(run, tmp: Path, code: int, *fragments: str) -> None:
    check_error(run.returncode, run.stderr, run.wall, tmp, code, *fragments)


@pytest.fixture
def w(tmp_path):
    return workload(tmp_path / "w.json", [{"id": 1, "subtime": 1, "res": 2, "profile": "d10"},
                                          {"id": 2, "subtime": 2, "res": 2, "profile": "d1"}], D)


def platform(tmp: Path, body: str, name: str = "p.xml") -> Path:
    path = tmp / name
    path.write_text(PLATFORM_HEAD + body + "\n" + PLATFORM_TAIL)
    return path


# ---------------------------------------------------------------------------------- platform
def test_platform_without_doctype(tmp_path, w):
    p = tmp_path / "p.xml"
    p.write_text("<?xml version='1.0'?>\n<platform version='4.1'>\n  <zone id='root' routing='Full'>\n"
                 "    <host id='master_host' speed='1Gf'/>\n  </zone>\n</platform>\n")
    cli_error(tmp_path, ["-p", str(p), "-w", str(w)], 2, "p.xml: before <platform>: no <!DOCTYPE platform ...>")


def test_platform_missing(tmp_path, w):
    cli_error(tmp_path, ["-p", str(tmp_path / "nope.xml"), "-w", str(w)], 2, "nope.xml: platform file not found")


def test_platform_not_xml(tmp_path, w):
    p = tmp_path / "p.xml"
    p.write_text("<platform version='4.1'>\n  <zone id='root' routing='Full'>\n  </zon>\n")
    cli_error(tmp_path, ["-p", str(p), "-w", str(w)], 2, "p.xml: line 3 column", "malformed XML")


def test_platform_wrong_root(tmp_path, w):
    p = tmp_path / "p.xml"
    p.write_text("<?xml version='1.0'?>\n<html><body/></html>\n")
    cli_error(tmp_path, ["-p", str(p), "-w", str(w)], 2, "p.xml", "root element is <html>, expected <platform>")


def test_platform_no_master(tmp_path, w):
    cli_error(tmp_path, ["-p", str(CLUSTER4), "-w", str(w), "-m", "nobody"], 2,
              "cluster4.xml: no master host", "'nobody'")


def test_platform_two_masters(tmp_path, w):
    p = platform(tmp_path, CLUSTER.format(extra="") + "\n" + MASTER_ZONE.replace(
        '<host id="master_host" speed="1Gf"/>',
        '<host id="master_host" speed="1Gf"/><host id="other" speed="1Gf"><prop id="role" value="master"/></host>'))
    cli_error(tmp_path, ["-p", str(p), "-w", str(w)], 2, "p.xml: several master hosts (master_host, other)")


def test_platform_unknown_role(tmp_path, w):
    p = platform(tmp_path, CLUSTER.format(extra="") + "\n" + MASTER_ZONE.replace(
        '<host id="master_host" speed="1Gf"/>',
        '<host id="master_host" speed="1Gf"/><host id="odd" speed="1Gf"><prop id="role" value="banana"/></host>'))
    cli_error(tmp_path, ["-p", str(p), "-w", str(w)], 2, "p.xml: host 'odd': unknown role 'banana'")


def test_platform_route_to_unknown_host(tmp_path, w):
    p = platform(tmp_path, '<host id="master_host" speed="1Gf"/><host id="node_0" speed="1Gf"/>\n'
                           '<link id="l" bandwidth="1GBps" latency="1us"/>\n'
                           '<route src="master_host" dst="nohost"><link_ctn id="l"/></route>')
    cli_error(tmp_path, ["-p", str(p), "-w", str(w)], 2, "p.xml: SimGrid cannot load the platform",
              "p.xml:7", "dst='nohost'")


def test_platform_cluster_bad_attribute_value(tmp_path, w):
    p = platform(tmp_path, CLUSTER.format(extra="").replace('speed="1Gf"', 'speed="fast"') + "\n" + MASTER_ZONE)
    cli_error(tmp_path, ["-p", str(p), "-w", str(w)], 2, "p.xml: SimGrid cannot load the platform",
              "cannot parse number:fast")


def test_platform_cluster_inconsistent_topology_does_not_abort(tmp_path, w):
    """SimGrid aborts the process on this one: coburst tries the platform in a child first."""
    p = platform(tmp_path, CLUSTER.format(extra=' topology="DRAGONFLY" topo_parameters="3,1;4,1;3,1;3"') + "\n"
                 + MASTER_ZONE)
    cli_error(tmp_path, ["-p", str(p), "-w", str(w)], 2, "p.xml: SimGrid aborted while loading the platform",
              "Insufficient number of radicals")


def test_platform_zero_cores_does_not_abort(tmp_path, w):
    p = platform(tmp_path, CLUSTER.format(extra=' core="0"') + "\n" + MASTER_ZONE)
    cli_error(tmp_path, ["-p", str(p), "-w", str(w)], 2, "p.xml: SimGrid aborted while loading the platform",
              "must have at least one core")


def test_platform_route_inside_none_zone_does_not_abort(tmp_path, w):
    p = tmp_path / "p.xml"
    p.write_text("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                 "<platform version='4.1'>\n  <zone id='root' routing='None'>\n"
                 "    <host id='master_host' speed='1Gf'/><host id='node_0' speed='1Gf'/>\n  </zone>\n</platform>\n")
    cli_error(tmp_path, ["-p", str(p), "-w", str(w)], 2,
              "p.xml: SimGrid aborted while computing the route from host 'node_0' to host 'master_host'",
              "There can't be route in an Empty zone")


def test_platform_missing_route(tmp_path, w):
    p = platform(tmp_path, '<host id="master_host" speed="1Gf"/><host id="node_0" speed="1Gf"/>'
                           '<host id="node_1" speed="1Gf"/><link id="l" bandwidth="1GBps" latency="1us"/>'
                           '<route src="master_host" dst="node_0"><link_ctn id="l"/></route>'
                           '<route src="master_host" dst="node_1"><link_ctn id="l"/></route>')
    # Batsim only needs the routes a run uses: a warning, then the run goes on (here: no
    # scheduler listens, exit 4); a run needing the route stops naming it (test_batsim_accepts.py)
    proc = run_cli(tmp_path, ["-p", str(p), "-w", str(w), "-e", str(tmp_path / "out"), "-s", "tcp://127.0.0.1:9",
                              "--timeout", "2"])
    assert proc.returncode == 4, proc.stderr
    assert f"warning: {p}: no route between some hosts: node_0 -> node_1" in proc.stderr


# ---------------------------------------------------------------------------------- workload
def write(tmp: Path, text: str) -> Path:
    path = tmp / "bad.json"
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, fragments", [
    ('{"nb_res": 4,\n "profiles": {},\n "jobs": [\n  {"id": 1,, "subtime": 0}]}',
     ["bad.json: line 4 column 12: invalid JSON"]),
    ('[1, 2]', ["bad.json: a workload must be a JSON object"]),
    ('{"profiles": {}, "jobs": []}', ["bad.json: the 'nb_res' field is missing"]),
    ('{"nb_res": 4, "jobs": []}', ["bad.json: the 'profiles' object is missing"]),
    ('{"nb_res": 4, "profiles": {}}', ["bad.json: jobs: expected a list of jobs"]),
    ('{"nb_res": 4, "profiles": {"d1": {"type": "delay", "delay": 1}}, '
     '"jobs": [{"id": 1, "subtime": 0, "profile": "d1"}]}', ["bad.json: jobs[0]: job lacks field 'res'"]),
    ('{"nb_res": 4, "profiles": {"d1": {"type": "delay", "delay": 1}}, '
     '"jobs": [{"id": 1, "subtime": 0, "res": "4", "profile": "d1"}]}',
     ['bad.json: jobs[0].res: expected an integer number of resources, got "4"']),
    ('{"nb_res": 4, "profiles": {"d1": {"type": "delay", "delay": 1}}, '
     '"jobs": [{"id": 1, "subtime": 0, "res": 4.0, "profile": "d1"}]}', ["bad.json: jobs[0].res", "got 4.0"]),
    ('{"nb_res": 4, "profiles": {"d1": {"type": "delay", "delay": 1}}, '
     '"jobs": [{"id": 1, "subtime": "soon", "res": 4, "profile": "d1"}]}',
     ['bad.json: jobs[0].subtime: expected a number, got "soon"']),
    ('{"nb_res": 4, "profiles": {"d1": {"type": "delay", "delay": 1}}, '
     '"jobs": [{"id": 1, "subtime": 0, "walltime": 0, "res": 4, "profile": "d1"}]}',
     ["bad.json: jobs[0].walltime: must be > 0, got 0"]),
    ('{"nb_res": 4, "profiles": {"d1": {"type": "delay", "delay": 1}}, '
     '"jobs": [{"id": 1, "subtime": 0, "res": 4, "profile": "nope"}]}',
     ['bad.json: jobs[0].profile: unknown profile "nope"']),
    ('{"nb_res": 4, "profiles": {"d1": {"type": "delay", "delay": 1}}, "jobs": ['
     '{"id": 1, "subtime": 0, "res": 4, "profile": "d1"}, {"id": 1, "subtime": 1, "res": 4, "profile": "d1"}]}',
     ["bad.json: jobs[1].id: duplicate job id 1 (also jobs[0])"]),
    ('{"nb_res": 4, "profiles": {"a": {"type": "composed", "seq": ["b"]}, "b": {"type": "composed", "seq": ["a"]}},'
     ' "jobs": []}', ["bad.json: profiles.a: composed profiles form a cycle: a -> b -> a"]),
    ('{"nb_res": 4, "profiles": {"a": {"type": "composed", "seq": ["x"]}}, "jobs": []}',
     ["bad.json: profiles.a.seq[0]: unknown profile 'x'"]),
    ('{"nb_res": 4, "profiles": {"p": {"type": "banana"}}, "jobs": []}',
     ['bad.json: profiles.p.type: unknown or unsupported profile type "banana"']),
    ('{"nb_res": 4, "profiles": {"p": {"type": "delay", "delay": 0}}, "jobs": []}',
     ["bad.json: profiles.p.delay: must be > 0, got 0"]),
    ('{"nb_res": 4, "profiles": {"p": {"type": "parallel", "cpu": [1, 2], "com": [0]}}, "jobs": []}',
     ["bad.json: profiles.p.com: expected a list of 2x2 = 4 numbers"]),
    ('{"nb_res": 4, "profiles": {"p": {"type": "parallel", "cpu": [1, 2], "com": [0, 0, 0, 0]}}, '
     '"jobs": [{"id": 1, "subtime": 0, "res": 3, "profile": "p"}]}',
     ["bad.json: jobs[0].res: the job requests 3 resources but its 'parallel' profile 'p' has 2 executors"]),
    ('{"nb_res": 4, "profiles": {"p": {"type": "delay", "delay": 1}, "p": {"type": "delay", "delay": 2}},'
     ' "jobs": []}', ["bad.json: profiles.p: duplicate profile name"]),
    ('{"nb_res": 4, "profiles": {"p": {"type": "parallel_homogeneous_pfs"}}, "jobs": []}',
     ["bad.json: profiles.p: profile of type 'parallel_homogeneous_pfs' needs 'bytes_to_read' or"]),
])
def test_workload_errors(tmp_path, text, fragments):
    cli_error(tmp_path, ["-p", str(CLUSTER4), "-w", str(write(tmp_path, text))], 2, *fragments)


def test_workload_missing(tmp_path):
    cli_error(tmp_path, ["-p", str(CLUSTER4), "-w", str(tmp_path / "gone.json")], 2,
              "gone.json: workload file not found")


# ---------------------------------------------------------------------------------- command line
def test_unknown_option(tmp_path, w):
    err = cli_error(tmp_path, ["-p", str(CLUSTER4), "-w", str(w), "--bogus"], 2, "unrecognized arguments: --bogus")
    assert "usage: coburst" in err


def test_bad_role_option(tmp_path, w):
    cli_error(tmp_path, ["-p", str(CLUSTER4), "-w", str(w), "-r", "node_0"], 2,
              "-r/--add-role-to-hosts: 'node_0': expected HOST[,HOST...]:ROLE")
    cli_error(tmp_path, ["-p", str(CLUSTER4), "-w", str(w), "-r", "node_9:storage"], 2,
              "-r/--add-role-to-hosts: node_9: no host named 'node_9'")


def test_no_workload(tmp_path):
    cli_error(tmp_path, ["-p", str(CLUSTER4)], 2, "-w/--workload: give at least one workload")


def test_profile_reuse_needs_dynamic_jobs(tmp_path, w):
    cli_error(tmp_path, ["-p", str(CLUSTER4), "-w", str(w), "--enable-profile-reuse"], 2,
              "--enable-profile-reuse: profile reuse needs --enable-dynamic-jobs")


def test_bad_speed_hook(tmp_path, w):
    cli_error(tmp_path, ["-p", str(CLUSTER4), "-w", str(w), "--speed-hook", "no_such_module:Hook"], 2,
              "--speed-hook: no_such_module:Hook: cannot import module 'no_such_module'")


# ---------------------------------------------------------------------------------- protocol
@pytest.mark.parametrize("violation, fragments", [
    ("unknown_job", ["EXECUTE_JOB: job 'w0!999' does not exist"]),
    ("outside", ["EXECUTE_JOB w0!1: allocation 2-5 is outside the platform (resource ids are 0-3)"]),
    ("wrong_size", ["EXECUTE_JOB w0!1: allocation 0 has 1 resources but the job requests 2"]),
    ("twice", ["EXECUTE_JOB: job 'w0!1' cannot be executed: its state is RUNNING"]),
    ("overlap", ["EXECUTE_JOB w0!2: resource 0 (node_0) is already computing another job"]),
    ("malformed_json", ["malformed message from the scheduler (invalid JSON"]),
    ("call_past", ["CALL_ME_LATER: asked to be called at 0.000000, which is not after the current time 1.000000"]),
    ("call_now", ["CALL_ME_LATER: asked to be called at 1.000000, which is not after the current time 1.000000"]),
    ("register", ["REGISTER_PROFILE received but dynamic job registration is disabled",
                  "--enable-dynamic-jobs"]),
    ("events_after_end", ["answered SIMULATION_ENDS with events (CALL_ME_LATER)"]),
])
def test_protocol_violations(tmp_path, w, violation, fragments):
    run = run_sim(tmp_path, workloads=[w], scheduler="violator", timeout=2,
                  options={"violation": violation, "allocs": {} if violation == "overlap" else ALLOCS})
    sim_error(run, tmp_path, 3, "coburst sim: error:", *fragments)


def test_register_job_without_dynamic_jobs(tmp_path, w):
    """A REGISTER_JOB alone, in an existing workload with an existing profile."""
    run = run_sim(tmp_path, workloads=[w], scheduler="violator", options={"violation": "register_job"}, timeout=2)
    sim_error(run, tmp_path, 3, "REGISTER_JOB received but dynamic job registration is disabled",
              "--enable-dynamic-jobs")


def test_scheduler_killed_mid_run(tmp_path, w):
    run = run_sim(tmp_path, workloads=[w], scheduler="violator", options={"violation": "suicide"}, timeout=2)
    sim_error(run, tmp_path, 4, "coburst sim: error: the scheduler at tcp://127.0.0.1:")
    assert "disconnected" in run.stderr or "did not answer" in run.stderr
    assert run.sched_returncode == -9


def test_scheduler_silent_past_timeout(tmp_path, w):
    run = run_sim(tmp_path, workloads=[w], scheduler="violator", options={"violation": "silent"}, timeout=2)
    sim_error(run, tmp_path, 4, "did not answer within 2 s (simulated time 1.000000)")
    assert run.wall >= 2


def test_no_scheduler_at_all(tmp_path, w):
    run = run_sim(tmp_path, workloads=[w], start_scheduler=False, timeout=2)
    sim_error(run, tmp_path, 4, "did not connect within 2 s", "is it running and listening on that endpoint?")


def test_scheduler_that_never_executes_a_job(tmp_path, w):
    run = run_sim(tmp_path, workloads=[w], scheduler="violator", options={"violation": "idle"}, timeout=2)
    sim_error(run, tmp_path, 3, "the simulation cannot progress: 2 submitted job(s) (w0!1, w0!2) were never "
                                "executed nor rejected")


def test_dynamic_jobs_without_registration_finished(tmp_path, w):
    """Batsim would wait forever; coburst reports the stall."""
    run = run_sim(tmp_path, workloads=[w], scheduler="dynamic", options={"finish": False, "allocs": ALLOCS},
                  args=["--enable-dynamic-jobs"], timeout=2)
    sim_error(run, tmp_path, 3, "never sent NOTIFY registration_finished")


def test_no_outputs_overwritten_on_error(tmp_path, w):
    """A failed run leaves earlier results of the same prefix untouched."""
    run_sim(tmp_path, workloads=[w], scheduler="schedFcfs").check()
    # like Batsim 4.2.1, a run writes _jobs.csv, _schedule.csv and (tracing is on by default)
    # _machine_states.csv and _schedule.trace
    outputs = ["out_jobs.csv", "out_machine_states.csv", "out_schedule.csv", "out_schedule.trace"]
    assert leftovers(tmp_path) == outputs
    before = {name: (tmp_path / name).read_bytes() for name in outputs}
    bad = run_sim(tmp_path, workloads=[w], scheduler="violator", options={"violation": "outside"}, timeout=2)
    assert bad.returncode == 3
    assert {name: (tmp_path / name).read_bytes() for name in outputs} == before
    assert leftovers(tmp_path) == outputs  # and no temporary file left behind
    shutil.rmtree(tmp_path, ignore_errors=True)
