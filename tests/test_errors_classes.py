"""Every class of malformed input, signal and fault ends cleanly, through the real
CLI in subprocesses: the exit status, no traceback, a message naming the file or option, no
output left, no process or temporary folder left behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from proc_support import alive, children, matching
from shared_data import need_swf, needs_swf, swf_log

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[1]
COBURST = [sys.executable, "-m", "coburst"]
PLATFORM = str(ROOT / "platforms" / "kth_sp2.xml")
SWF = swf_log()
BIG_WORKLOAD = str(ROOT / "workloads" / "kth_sp2_delay_5000.json")
WORKLOAD = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 1, "walltime": 10, "res": 1, "profile": "d"}],
            "profiles": {"d": {"type": "delay", "delay": 5}}}
#: a place nobody may write, even root (a read-only or pseudo file system)
READ_ONLY = "/sys/coburst-out/x" if os.geteuid() == 0 else None


def swf_lines(n: int = 20) -> list[str]:
    """The first ``n`` jobs of the KTH-SP2 log (the test is skipped without it)."""
    lines = [x for x in need_swf().read_text().splitlines() if x.strip() and not x.startswith(";")]
    return lines[:n]


def launcher_pids(cwd: Path) -> set[int]:
    """pybatsim launcher processes started in ``cwd`` (other runs on the machine are not counted)."""
    return matching(b"batsim.cmds.launcher", cwd=cwd)


def cli(tmp: Path, *args: str, timeout: float = 50) -> subprocess.CompletedProcess:
    """``coburst ARGS`` in ``tmp``, with its own temporary folder ``tmp/.tmp`` (checked empty)."""
    return subprocess.run([*COBURST, *map(str, args)], capture_output=True, text=True, timeout=timeout, cwd=tmp,
                          env=env(tmp))


def env(tmp: Path) -> dict[str, str]:
    (tmp / ".tmp").mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(tmp / ".tmp")}


def nothing_left(tmp: Path) -> None:
    assert launcher_pids(tmp) == set()
    assert list((tmp / ".tmp").iterdir()) == []


def check(proc: subprocess.CompletedProcess, tmp: Path, *fragments: str, code: int = 2,
          keep: set[str] = frozenset()) -> None:
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, (fragment, proc.stderr)
    left = {p.name for p in tmp.iterdir()} - set(keep) - {".tmp"}
    assert not {n for n in left if n.startswith(("out", ".out", "o.", ".o."))}, left


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """``ok.json``, and ``ok.swf`` (the first jobs of the KTH-SP2 log) when that log is at hand
    (:func:`swf_file` skips a test that needs it otherwise)."""
    f = {}
    if SWF.is_file():
        f["ok.swf"] = tmp_path / "ok.swf"
        f["ok.swf"].write_text("\n".join(swf_lines()) + "\n")
    f["ok.json"] = tmp_path / "ok.json"
    f["ok.json"].write_text(json.dumps(WORKLOAD))
    return f


def swf_file(files: dict[str, Path]) -> Path:
    """``ok.swf``; the test is skipped without the KTH-SP2 log."""
    need_swf()
    return files["ok.swf"]


# ---------------------------------------------------------------- numbers that overflow or are not finite
def test_swf_run_time_1e308(tmp_path, files):
    lines = swf_lines()
    fields = lines[3].split()
    fields[3] = "1e308"
    lines[3] = " ".join(fields)
    (tmp_path / "big.swf").write_text("\n".join(lines) + "\n")
    proc = cli(tmp_path, "workload", "swf", "big.swf", "-o", "out.json")
    check(proc, tmp_path, "big.swf", "line 4", "run_time", "out of range")


@pytest.mark.parametrize("args, option", [
    (["sim", "-p", PLATFORM, "-w", "ok.json", "--timeout", "nan", "-e", "out"], "--timeout"),
    (["run", "fcfs", "-p", PLATFORM, "-w", "ok.json", "--timeout", "inf", "-e", "out"], "--timeout"),
    (["workload", "swf", "ok.swf", "-o", "out.json", "--kappa", "nan"], "--kappa"),
    (["workload", "swf", "ok.swf", "-o", "out.json", "--seed", "-1"], "--seed"),
    (["workload", "elise", "-o", "out.json", "--walltime-factor", "1e999"], "--walltime-factor"),
    (["model", "fit-bb", "ok.swf", "--folds", "1"], "--folds"),
    (["platform", "cosched", "--nodes", "1000000000", "-o", "out.xml"], "--nodes"),
    (["sim", "-p", PLATFORM, "-w", "ok.json", "--heatmap", "aris-nas", "--heatmap-alone", "nan", "-e", "out"],
     "--heatmap-alone"),
])
def test_option_not_finite_or_out_of_range(tmp_path, files, args, option):
    if "ok.swf" in args:
        swf_file(files)
    check(cli(tmp_path, *args), tmp_path, option)


@pytest.mark.parametrize("params, where", [
    ({"s": 1.0, "loc": 0, "scale": 1e308}, "params.scale"),
    ({"s": "NaN", "loc": 0, "scale": 1.0}, "NaN"),
    ({"s": 1.0, "loc": 0, "scale": 0}, "params.scale"),
])
def test_model_numbers(tmp_path, files, params, where):
    swf_file(files)
    text = json.dumps({"distribution": "lognorm", "params": params}).replace('"NaN"', "NaN")
    (tmp_path / "m.json").write_text(text)
    check(cli(tmp_path, "workload", "swf", "ok.swf", "-o", "out.json", "--bb-model", "m.json"), tmp_path,
          "m.json", where)


# ---------------------------------------------------------------- output places checked before the work
def output_places(tmp: Path) -> list[tuple[str, str]]:
    (tmp / "pj_jobs.csv").mkdir()
    (tmp / "adir").mkdir()
    (tmp / "afile").write_text("x")
    places = [("pj", "pj_jobs.csv"), ("afile/x", "afile")]
    if READ_ONLY:
        places.append((READ_ONLY, "/sys/coburst-out"))
    else:
        (tmp / "ro").mkdir()
        os.chmod(tmp / "ro", 0o555)
        places.append((str(tmp / "ro" / "x"), "ro"))
    return places


def test_sim_export_place_checked_first(tmp_path, files):
    for prefix, named in output_places(tmp_path):
        t0 = time.monotonic()
        # the scheduler endpoint does not exist: a check after connecting would take --timeout
        # (120 s); before it, seconds (60: loose, for a loaded machine)
        proc = cli(tmp_path, "sim", "-p", PLATFORM, "-w", "ok.json", "-e", prefix, "-s", "tcp://127.0.0.1:9",
                   "--timeout", "120", timeout=180)
        check(proc, tmp_path, "-e/--export", named)
        assert time.monotonic() - t0 < 60


def test_workload_outputs_checked_first(tmp_path, files):
    swf_file(files)
    places = [(prefix + ".json", named) for prefix, named in output_places(tmp_path)
              if not prefix.endswith("/") and prefix != "pj"]
    places.append(("adir", "is a directory"))
    for target, named in places:
        proc = cli(tmp_path, "workload", "swf", "ok.swf", "-o", target)
        check(proc, tmp_path, "-o/--output", named)
    check(cli(tmp_path, "platform", "cluster", "-o", "adir"), tmp_path, "-o/--output", "adir")
    check(cli(tmp_path, "workload", "elise", "-n", "3", "-o", "afile/x.json"), tmp_path, "-o/--output", "afile")
    check(cli(tmp_path, "model", "fit-bb", "ok.swf", "--json", "adir"), tmp_path, "--json", "adir")


# ---------------------------------------------------------------- coburst run validates before starting a scheduler
@pytest.mark.parametrize("content, fragment, transport", [
    (json.dumps(WORKLOAD)[:20], "invalid JSON", "zmq"),
    ("[1, 2]", "JSON object", "zmq"),
    (None, "not found", "zmq"),
    (json.dumps(WORKLOAD)[:20], "invalid JSON", "inprocess"),
])
def test_run_validates_workload_before_the_scheduler(tmp_path, content, fragment, transport):
    if content is not None:
        (tmp_path / "w.json").write_text(content)
    t0 = time.monotonic()
    proc = cli(tmp_path, "run", "fcfs", "--transport", transport, "-p", PLATFORM, "-w", "w.json", "-e", "out")
    check(proc, tmp_path, "w.json", fragment)
    assert time.monotonic() - t0 < 25  # no wait for a scheduler (its time-out is 30 s); loose for a loaded machine
    nothing_left(tmp_path)


def test_run_scheduler_stopped_after_a_failure(tmp_path):
    """A failure after the scheduler started (here a protocol error: pybatsim's schedFcfs on a job
    submitted at 0 dies) leaves neither the process nor the temporary folder."""
    doc = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "walltime": 10, "res": 1, "profile": "d"}],
           "profiles": {"d": {"type": "delay", "delay": 5}}}
    (tmp_path / "w.json").write_text(json.dumps(doc))
    proc = cli(tmp_path, "run", "schedFcfs", "--transport", "zmq", "-p", PLATFORM, "-w", "w.json", "-e", "out",
               "--timeout", "5")
    assert proc.returncode in (3, 4), proc.stderr
    assert "Traceback" not in proc.stderr.split("its last output")[0]
    nothing_left(tmp_path)
    assert not list(tmp_path.glob("out_jobs*")) and not list(tmp_path.glob(".out*"))


# ---------------------------------------------------------------- model files of the wrong shape or encoding
def test_model_file_shapes_and_encodings(tmp_path, files):
    good = (ROOT / "models" / "bb_request.json").read_text()
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "u16.json").write_bytes(good.encode("utf-16"))
    (tmp_path / "u16le.json").write_bytes(good.encode("utf-16-le"))
    (tmp_path / "dir.json").mkdir()
    (tmp_path / "latin1.json").write_bytes(good.replace("section", "séction").encode("latin-1"))
    for name, fragment in [("list.json", "expected a JSON object"), ("u16.json", "UTF-16"),
                           ("u16le.json", "UTF-16"), ("dir.json", "is a directory"), ("latin1.json", "UTF-8"),
                           ("none.json", "not found")]:
        check(cli(tmp_path, "model", "bb", "--bb-model", name), tmp_path, name, fragment)


def test_platform_info_on_a_directory(tmp_path):
    (tmp_path / "adir").mkdir()
    check(cli(tmp_path, "platform", "info", "adir"), tmp_path, "adir", "is a directory")
    check(cli(tmp_path, "platform", "info", "nowhere.xml"), tmp_path, "nowhere.xml", "not found")


# ---------------------------------------------------------------- deep JSON
def test_deeply_nested_workload(tmp_path):
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    check(cli(tmp_path, "workload", "check", "deep.json"), tmp_path, "deep.json", "nested too deeply")
    check(cli(tmp_path, "sim", "-p", PLATFORM, "-w", "deep.json", "-e", "out"), tmp_path, "deep.json", "nested")


# ---------------------------------------------------------------- a fit with too few values
def test_fit_too_few_values(tmp_path):
    lines = []
    for line in swf_lines(6):
        fields = line.split()
        fields[9] = "1000"  # requested memory
        lines.append(" ".join(fields))
    (tmp_path / "few.swf").write_text("\n".join(lines) + "\n")
    proc = cli(tmp_path, "model", "fit-bb", "few.swf", "--json", "o.json")
    check(proc, tmp_path, "few.swf", "field 10", "too few values")


# ---------------------------------------------------------------- signals
def _wait_for_start(proc, tmp: Path, pattern: str, limit: float = 20) -> None:
    deadline = time.monotonic() + limit
    while not list(tmp.glob(pattern)) and time.monotonic() < deadline:
        time.sleep(0.05)
        assert proc.poll() is None


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_stops_sim_and_tells_pybatsim(tmp_path, sig, code):
    endpoint = f"ipc://{tmp_path}/s.sock"
    sched = subprocess.Popen([sys.executable, "-m", "batsim.cmds.launcher", str(ROOT / "schedulers" / "coburstFcfs.py"),
                              "-s", endpoint, "-t", "30000", "-v", "warning"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, cwd=tmp_path, start_new_session=True)
    try:
        sim = subprocess.Popen([*COBURST, "sim", "-p", PLATFORM, "-w", BIG_WORKLOAD, "-s", endpoint, "-e", "out", "-q"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
        _wait_for_start(sim, tmp_path, ".out_jobs.csv.*")
        time.sleep(0.5)
        sim.send_signal(sig)
        t0 = time.monotonic()
        _, err = sim.communicate(timeout=60)
        assert time.monotonic() - t0 < 20  # not waiting out the scheduler time-out (30 s); loose for a loaded machine
        assert sim.returncode == code, err
        assert "Traceback" not in err and f"interrupted by {sig.name}" in err
        assert len(err.strip().splitlines()) == 1, err
        assert not [p for p in tmp_path.iterdir() if "out" in p.name and p.suffix in (".csv", ".trace", ".part")]
        out, _ = sched.communicate(timeout=30)  # pybatsim was told: it ends by itself (its own time-out: 30000 s)
        assert b"Traceback" not in out, out.decode()
    finally:
        if sched.poll() is None:
            sched.kill()
            sched.wait()


@pytest.mark.parametrize("sig, code, transport", [(signal.SIGINT, 130, "zmq"), (signal.SIGTERM, 143, "zmq"),
                                                   (signal.SIGTERM, 143, "inprocess")])
def test_signal_stops_run(tmp_path, sig, code, transport):
    proc = subprocess.Popen([*COBURST, "run", "fcfs", "--transport", transport, "-p", PLATFORM, "-w", BIG_WORKLOAD,
                             "-e", "out", "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, env=env(tmp_path))
    _wait_for_start(proc, tmp_path, ".out_jobs.csv.*")
    time.sleep(0.5)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == code, err
    assert "Traceback" not in err and "interrupted" in err
    assert [p.name for p in tmp_path.iterdir()] == [".tmp"]
    time.sleep(0.2)
    nothing_left(tmp_path)


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_at_time_zero_before_the_engine_runs(tmp_path, sig, code):
    """A signal after the actors are created but before SimGrid's run starts (a loaded machine
    opens this window by chance; ``tools/slow_engine_run.py`` holds it open 3 s): a clean
    130/143, not SimGrid's exit-time abort ("stop-before-start madness", status 134)."""
    marker = tmp_path / ".tmp" / "engine-ready"
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "tools" / "slow_engine_run.py"), str(marker),
                             "run", "fcfs", "--transport", "zmq", "-p", PLATFORM, "-w", BIG_WORKLOAD, "-e", "out",
                             "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env=env(tmp_path))
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    marker.unlink()
    time.sleep(0.2)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert "Traceback" not in err and "madness" not in err
    assert err.strip().splitlines() == [f"coburst run: interrupted by {sig.name}: stopped, no partial output left"]
    assert [p.name for p in tmp_path.iterdir()] == [".tmp"]
    time.sleep(0.2)
    nothing_left(tmp_path)


@needs_swf()
def test_signal_stops_a_long_conversion(tmp_path):
    proc = subprocess.Popen([*COBURST, "workload", "swf", str(SWF), "-o", "out.json", "--model", "io-aware"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    time.sleep(1.5)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    if proc.returncode == 0:  # finished first: nothing to check
        return
    assert proc.returncode == 143, err
    assert "Traceback" not in err
    left = sorted(p.name for p in tmp_path.iterdir())
    if left:  # the signal came after the atomic rename (a fast machine): the result is whole
        assert left == ["out.json"], left
        reference = tmp_path / "ref"
        reference.mkdir()
        subprocess.run([*COBURST, "workload", "swf", str(SWF), "-o", "out.json", "--model", "io-aware"],
                       check=True, capture_output=True, cwd=reference)
        assert (tmp_path / "out.json").read_bytes() == (reference / "out.json").read_bytes()


def test_zmq_run_with_a_deep_tmpdir(tmp_path):
    """A Unix socket path holds at most 107 bytes: with a deep TMPDIR (pytest-xdist's are)
    the private endpoint goes under /tmp instead, and is removed afterwards."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    (tmp_path / "w.json").write_text(json.dumps(WORKLOAD))
    proc = subprocess.Popen([*COBURST, "run", "fcfs", "--transport", "zmq", "-p", PLATFORM, "-w", "w.json",
                             "-e", "out", "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, env={**os.environ, "TMPDIR": str(deep)})
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert (tmp_path / "out_jobs.csv").exists() and not list(deep.iterdir())
    assert not list(Path("/tmp").glob(f"coburst-run-{proc.pid}-*"))  # its folder under /tmp removed


@pytest.mark.parametrize("where", ["a_file", "/sys/coburst-demo"])
def test_demo_output_folder_checked_first(tmp_path, where):
    (tmp_path / "a_file").write_text("x")
    proc = subprocess.run([*COBURST, "demo", "-o", where, "--jobs", "5"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "-o/--output" in proc.stderr, proc.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_signal_during_platform_check_stops_the_check(tmp_path, sig):
    """The platform pre-check runs in a forked child (SimGrid aborts on some platforms): a
    SIGTERM to the simulator kills the check with it (status 143), and so does a SIGKILL
    (``PR_SET_PDEATHSIG``): no check outlives its simulator."""
    # the full layout (n(n-1)/2 routes, 55 MB): a check that lasts seconds (the linear one: < 1 s)
    proc = subprocess.run([*COBURST, "platform", "cosched", "--nodes", "800", "--layout", "full", "-o", "p.xml"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    (tmp_path / "w.json").write_text(json.dumps(WORKLOAD))
    sim = subprocess.Popen([*COBURST, "sim", "-p", "p.xml", "-w", "w.json", "-s", f"ipc://{tmp_path}/s.sock",
                            "-e", "out", "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           cwd=tmp_path, env={**env(tmp_path), "COBURST_CACHE": str(tmp_path / "cache")})
    try:
        deadline = time.monotonic() + 60
        while not children(sim.pid) and time.monotonic() < deadline:
            assert sim.poll() is None, sim.communicate()
            time.sleep(0.02)
        (check_pid,) = children(sim.pid)
        time.sleep(0.3)
        assert alive(check_pid)  # still checking the 800-node platform (~3 s)
        sim.send_signal(sig)
        _, err = sim.communicate(timeout=20)
    finally:
        if sim.poll() is None:
            sim.kill()
            sim.wait()
    if sig == signal.SIGTERM:
        assert sim.returncode == 143, err
        assert "Traceback" not in err and "interrupted by SIGTERM" in err
    gone = time.monotonic()
    while alive(check_pid) and time.monotonic() < gone + 30:
        time.sleep(0.01)
    # killed with the simulator, not left to finish its check (which takes seconds more)
    assert time.monotonic() - gone < 2.0 and not alive(check_pid)
    stamps = tmp_path / "cache" / "platforms"  # (platform-scans/ may remember the file's XML scan)
    assert not stamps.exists() or not any(stamps.rglob("*"))  # not marked checked


def test_a_signal_inside_a_c_extension_callback_exits_as_a_signal(tmp_path, monkeypatch, capsys):
    """SIGTERM while a C parser (ijson) calls back into Python (building a workload mapping):
    the extension reports a ``SystemError`` whose cause is the ``Interrupted``; the command
    still exits 143 with its one-line message, not a traceback (seen once in a live run)."""
    import json

    from coburst.cli.main import main
    from coburst.errors import Interrupted
    from coburst.simulator import workload as workload_module

    def interrupted_scan(path, name, stream=None):
        try:
            raise Interrupted(15)
        except Interrupted as exc:
            raise SystemError("<class 'decimal.Decimal'> returned a result with an exception set") from exc

    monkeypatch.setattr(workload_module, "load_workload", interrupted_scan)
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}],
                             "profiles": {"d": {"type": "delay", "delay": 1}}}))
    platform = Path(__file__).resolve().parents[1] / "platforms" / "cluster16.xml"
    code = main(["run", "fcfs", "-p", str(platform), "-w", str(w), "-e", str(tmp_path / "out"), "-q"])
    err = capsys.readouterr().err
    assert code == 143, err
    assert "coburst run: interrupted by SIGTERM: stopped, no partial output left" in err
    assert not list(tmp_path.glob("out*"))
