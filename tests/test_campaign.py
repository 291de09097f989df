"""``coburst campaign``: spec errors, run ids, the directory contract, failures, status, and
the resume after ``kill -9`` (no run lost, none repeated, same bytes as an uninterrupted run).

Real simulations (``coburst run`` processes on small delay workloads), no mocks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from campaign_support import (PLATFORM, ROOT, campaign_cmd, delay_workloads, jobs_files, marked_campaign, marks_of,
                              run_campaign)
from coburst.campaign.spec import dumps_toml, load_campaign
from coburst.cli.main import main
from coburst.errors import InputError
from shared_data import swf_dir


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main(["campaign", *map(str, args)])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


SMALL = f'''
platforms = ["{PLATFORM}"]

[campaign]
name = "small"

[[schedulers]]
scheduler = "easyBackfill"

[[schedulers]]
name = "sjf"
scheduler = "backfill-sjf-1"

[[workloads]]
path = "wl/d{{n}}.json"
vary = {{ n = [20, 30] }}
labels = {{ model = "delay" }}
'''


# ---------------------------------------------------------------------------- spec errors
@pytest.mark.parametrize("text, where, problem", [
    ("[campaign\nname = 1\n", "line 1, column 10", "invalid TOML"),
    ("[[schedulers]]\nscheduler = \"fcfs\"\noptons = {}\n", "schedulers[0].optons", "unknown key"),
    ("[campain]\n", "campain", "unknown key"),
    ("[[schedulers]]\nscheduler = \"fcfs\"\n[[platforms]]\npath = \"p.xml\"\n", None, "missing [[workloads]]"),
    ("[campaign]\nengines = [\"simgrid\"]\n", "campaign.engines", "unknown engine"),
    ("[campaign]\nseeds = [1, 1]\n", "campaign.seeds", "listed twice"),
    ("platforms = [\"p.xml\"]\nworkloads = [\"w{x}.json\"]\n[[schedulers]]\nscheduler = \"fcfs\"\n",
     "workloads[0].path", "unknown placeholder {x}"),
    ("platforms = [\"p.xml\"]\n[[schedulers]]\nscheduler = \"fcfs\"\n[[workloads]]\npath = \"w.json\"\n"
     "labels = {seed = 1}\n", "workloads[0].labels.seed", "not usable as a label"),
    ("platforms = [\"p.xml\"]\nworkloads = [\"w.json\", \"w.json\"]\n[[schedulers]]\nscheduler = \"fcfs\"\n",
     "workloads[1].path / schedulers[0].scheduler", "two runs with the same parameters"),
])
def test_spec_errors_name_file_place_and_problem(tmp_path, capsys, text, where, problem):
    spec = write(tmp_path / "bad.toml", text)
    code, out, err = cli(capsys, spec, "--out", tmp_path / "o")
    assert code == 2, (out, err)
    assert err.startswith(f"coburst campaign: error: {spec}: " + (f"{where}: " if where else "")), err
    assert problem in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()  # nothing written for a bad spec


def test_missing_input_file_and_missing_spec(tmp_path, capsys):
    spec = write(tmp_path / "c.toml", SMALL)  # wl/ not made
    code, _, err = cli(capsys, spec, "--out", tmp_path / "o")
    assert code == 2
    assert f"{spec}: workloads[0].path: file not found: {tmp_path / 'wl' / 'd20.json'} (and 1 more)" in err
    code, _, err = cli(capsys, tmp_path / "nope.toml")
    assert code == 2 and "nope.toml: campaign file not found" in err
    code, _, err = cli(capsys, "status", tmp_path / "nope")
    assert code == 2 and "no such campaign file or output folder" in err


def test_run_ids_are_readable_padded_and_unique(tmp_path):
    spec = write(tmp_path / "c.toml", f'''
platforms = ["{PLATFORM}", "other/x.xml"]
[campaign]
seeds = [0, 10]
engines = ["coburst", "batsim"]
[[schedulers]]
scheduler = "window-1"
grid = {{ depth = [2, 10], mode = ["a b", "c"] }}
[[schedulers]]
scheduler = "{"x" * 200}.py"
[[workloads]]
path = "w_{{part:02d}}.json"
vary = {{ part = [1, 12] }}
[[workloads]]
path = "v.json"
''')
    camp = load_campaign(spec)
    ids = [r.run_id for r in camp.runs]
    assert len(ids) == len(set(ids)) == 2 * 2 * 3 * 5 * 2
    assert "sched=window-1__depth=02__mode=a_b__part=01__plat=kth_sp2__seed=00__engine=coburst" in ids
    # the workload without the label: told apart by its name
    assert any(i.startswith("sched=window-1__depth=10__mode=c__wl=v__plat=x__seed=10") for i in ids), ids[:5]
    long = [i for i in ids if i.startswith("sched=xxx")]
    assert long and all(len(i) <= 150 and "__h=" in i for i in long)
    run = camp.runs[0]
    assert run.params["options"] == '{"depth":2,"mode":"a b"}' and run.params["part"] == 1
    assert run.params["platform"] == str(PLATFORM) and run.params["workload"] == str(tmp_path / "w_01.json")
    # a stored copy read from another place gives the same ids
    again = load_campaign(tmp_path / "elsewhere.toml", text=spec.read_text(), base_dir=tmp_path)
    assert [r.run_id for r in again.runs] == ids


def test_dumps_toml_round_trip(tmp_path):
    import tomllib

    data = {"campaign": {"name": "x", "seeds": [0, 1], "timeout": 2.5, "sim_args": ["--a"]},
            "prepare": {"run": [["echo", "{out}"]]},
            "schedulers": [{"scheduler": "fcfs", "options": {"k": True, "s": "a\"b"}}],
            "platforms": ["p.xml"], "workloads": [{"path": "w.json", "labels": {"part": 1}}]}
    assert tomllib.loads(dumps_toml(data)) == data


# ---------------------------------------------------------------------------- runs, contract, failures
def test_campaign_runs_resumes_and_records_failures(tmp_path, capsys):
    delay_workloads(tmp_path / "wl", [20, 30])
    spec = write(tmp_path / "c.toml", SMALL + '''
[[schedulers]]
name = "broken"
scheduler = "backfill-sjf-1"
options = { no_such_option = 1 }
''')
    out = tmp_path / "o"
    code, stdout, err = cli(capsys, spec, "--out", out, "--jobs", "2")
    assert code == 1, (stdout, err)
    assert "4/6 done, 2 failed, 0 pending" in stdout
    assert "failed sched=broken__n=20__model=delay__seed=0: " in stdout
    runs = out / "runs"
    ok = runs / "sched=sjf__n=30__model=delay__seed=0"
    params = json.loads((ok / "params.json").read_text())
    assert params["scheduler"] == "sjf" and params["scheduler_spec"] == "backfill-sjf-1" and params["n"] == 30
    assert params["model"] == "delay" and params["seed"] == 0 and params["engine"] == "coburst"
    assert params["options"] == "{}" and params["workload"] == str(tmp_path / "wl" / "d30.json")
    status = json.loads((ok / "status.json").read_text())
    assert status["state"] == "done" and status["error"] is None and status["wall_s"] > 0
    assert (ok / "out_jobs.csv").read_text().count("\n") == 31
    bad = json.loads((runs / "sched=broken__n=30__model=delay__seed=0" / "status.json").read_text())
    assert bad["state"] == "failed" and "no_such_option" in bad["error"] and "unknown option" in bad["error"]
    assert (out / "campaign.toml").read_text() == spec.read_text()
    assert not [p for p in runs.iterdir() if p.name.startswith(".")]

    # the same command again: nothing to run (the failures are kept)
    before = {p.name: (p / "status.json").stat().st_mtime_ns for p in runs.iterdir()}
    code, stdout, _ = cli(capsys, spec, "--out", out)
    assert code == 1 and "ran 0 in" in stdout
    assert before == {p.name: (p / "status.json").stat().st_mtime_ns for p in runs.iterdir()}

    # status: counts and the failures' errors
    code, stdout, _ = cli(capsys, "status", out)
    assert code == 0
    assert "6 runs" in stdout and "done     4" in stdout and "failed   2" in stdout and "pending  0" in stdout
    assert "FAILED sched=broken__n=20__model=delay__seed=0" in stdout and "no_such_option" in stdout
    code, stdout2, _ = cli(capsys, "status", spec)  # the spec file gives the same (with --out: its folder)
    assert code == 0

    # --retry-failed runs the failures again (they fail again), the done runs stay untouched
    code, stdout, _ = cli(capsys, spec, "--out", out, "--retry-failed", "--only", "n=20")
    assert code == 1 and "ran 1 in" in stdout and "0 pending" in stdout
    after = {p.name: (p / "status.json").stat().st_mtime_ns for p in runs.iterdir()}
    changed = {k for k in after if after[k] != before[k]}
    assert changed == {"sched=broken__n=20__model=delay__seed=0"}

    # another spec into the same folder is refused, nothing touched
    other = write(tmp_path / "other.toml", SMALL.replace("[20, 30]", "[20]"))
    code, _, err = cli(capsys, other, "--out", out)
    assert code == 2 and "holds another campaign" in err
    code, _, err = cli(capsys, spec, "--out", out, "--engine", "batsim", "--batsim", "/bin/true")
    assert code == 2 and "--engine coburst, not batsim" in err


def test_dry_run_and_only(tmp_path, capsys):
    delay_workloads(tmp_path / "wl", [20, 30])
    spec = write(tmp_path / "c.toml", SMALL)
    code, stdout, _ = cli(capsys, spec, "--out", tmp_path / "o", "--dry-run", "--only", "scheduler=sjf")
    assert code == 0
    assert stdout.splitlines()[:2] == ["pending  sched=sjf__n=20__model=delay__seed=0",
                                       "pending  sched=sjf__n=30__model=delay__seed=0"]
    code, _, err = cli(capsys, spec, "--only", "colour=red", "--dry-run")
    assert code == 2 and "--only: 'colour=red': unknown parameter 'colour'" in err


def test_prepare_step_runs_once(tmp_path, capsys):
    delay_workloads(tmp_path / "src", [20])
    spec = write(tmp_path / "c.toml", f'''
platforms = ["{PLATFORM}"]
[prepare]
run = [["{{python}}", "-c", "import shutil, sys; open('count', 'a').write('x'); shutil.copy('src/d20.json', sys.argv[1])", "{{out}}/w{{seed}}.json"]]
creates = ["{{out}}/w{{seed}}.json"]
[campaign]
seeds = [3]
[[schedulers]]
scheduler = "fcfs"
[[workloads]]
path = "{{out}}/w{{seed}}.json"
''')
    out = tmp_path / "o"
    for _ in range(2):
        code, stdout, err = cli(capsys, spec, "--out", out)
        assert code == 0, err
    assert (tmp_path / "count").read_text() == "x"
    assert (out / "runs" / "sched=fcfs__wl=w3__seed=3" / "out_jobs.csv").is_file() or \
        (out / "runs" / "sched=fcfs__seed=3" / "out_jobs.csv").is_file(), list((out / "runs").iterdir())


# ---------------------------------------------------------------------------- kill -9 and resume
def test_kill_9_midway_loses_nothing_and_repeats_nothing(tmp_path):
    sizes, policies = [20, 30, 40, 50], ["fcfs", "backfill-1"]
    marks = tmp_path / "marks.txt"
    spec = marked_campaign(tmp_path, sizes, policies, marks)
    out = tmp_path / "o"
    proc = subprocess.Popen(campaign_cmd(spec, "--out", out, "--jobs", "2", "-q"), cwd=ROOT, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runs = out / "runs"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done = [d for d in runs.iterdir() if not d.name.startswith(".")] if runs.is_dir() else []
        if len(done) >= 3:
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)  # the campaign's whole process group
    proc.wait()
    time.sleep(0.5)  # its simulations stop on their own (PR_SET_PDEATHSIG)
    published = {d.name for d in runs.iterdir() if not d.name.startswith(".")}
    assert 3 <= len(published) < len(sizes) * len(policies), "kill not mid-way: make the runs longer"
    for d in published:  # whatever is published is complete
        assert json.loads((runs / d / "status.json").read_text())["state"] == "done"
        assert (runs / d / "out_jobs.csv").is_file()
    first = marks_of(marks)
    assert all(first.count(r) == 1 for r in published)

    done = run_campaign(spec, "--out", out, "--jobs", "2")
    assert done.returncode == 0, done.stderr
    second = marks_of(marks)[len(first):]
    all_ids = {d.name for d in runs.iterdir()}
    assert len(all_ids) == len(sizes) * len(policies) and not [d for d in all_ids if d.startswith(".")]
    # nothing repeated: the second invocation ran exactly the runs not published before, once each
    assert sorted(second) == sorted(all_ids - published)
    # nothing lost, same bytes as an uninterrupted campaign
    ref = run_campaign(spec, "--out", tmp_path / "ref", "--jobs", "2")
    assert ref.returncode == 0, ref.stderr
    assert jobs_files(out) == jobs_files(tmp_path / "ref")


def test_second_campaign_in_the_same_folder_is_refused(tmp_path):
    spec = marked_campaign(tmp_path, [20, 30, 40, 50], ["fcfs"], tmp_path / "marks.txt")
    out = tmp_path / "o"
    proc = subprocess.Popen(campaign_cmd(spec, "--out", out, "--jobs", "1", "-q"), cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not (out / "runs").is_dir() and time.monotonic() < deadline:
            time.sleep(0.02)
        second = run_campaign(spec, "--out", out)
        assert second.returncode == 2
        assert f"{out}: another campaign is running in this folder (pid {proc.pid})" in second.stderr
        status = run_campaign("status", out)
        assert f"a campaign is running here: pid {proc.pid}" in status.stdout
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == 0


def test_report_uses_the_analysis(tmp_path, capsys):
    delay_workloads(tmp_path / "wl", [20, 30])
    spec = write(tmp_path / "c.toml", SMALL)
    out = tmp_path / "o"
    assert cli(capsys, spec, "--out", out)[0] == 0
    code, stdout, err = cli(capsys, "report", out, "-o", tmp_path / "r.html", "--baseline", "easyBackfill")
    assert code == 0, err
    html = (tmp_path / "r.html").read_text()
    assert "sjf" in html and "easyBackfill" in html


def test_load_campaign_api_errors_are_input_errors(tmp_path):
    with pytest.raises(InputError) as info:
        load_campaign(write(tmp_path / "c.toml", "[[schedulers]]\n"))
    assert "schedulers[0]: missing key 'scheduler'" in str(info.value)


def test_a_workload_entry_runs_on_the_platforms_it_names(tmp_path):
    """``[[workloads]] platforms = [...]`` pairs a workload with some platforms only; a name no
    platform has is an error naming the place."""
    delay_workloads(tmp_path / "wl", [20])
    other = tmp_path / "other.xml"
    other.write_text(PLATFORM.read_text())
    text = f'''
[[platforms]]
path = "{PLATFORM}"
name = "kth"
[[platforms]]
path = "{other}"
name = "copy"
[[schedulers]]
scheduler = "fcfs"
[[workloads]]
path = "wl/d20.json"
name = "only_kth"
platforms = ["kth"]
[[workloads]]
path = "wl/d20.json"
name = "both"
'''
    camp = load_campaign(write(tmp_path / "c.toml", text))
    assert sorted(r.run_id for r in camp.runs) == ["sched=fcfs__wl=both__plat=copy__seed=0",
                                                   "sched=fcfs__wl=both__plat=kth__seed=0",
                                                   "sched=fcfs__wl=only_kth__plat=kth__seed=0"]
    with pytest.raises(InputError, match=r"workloads\[0\]\.platforms\[0\].*no platform named 'nope'"):
        load_campaign(write(tmp_path / "d.toml", text.replace('platforms = ["kth"]', 'platforms = ["nope"]')))


# ---------------------------------------------------------------------------- {swf_dir}
#: a prepare step reading an SWF log from {swf_dir} (it copies a delay workload: the log is
#: only checked)
SWF_SPEC = f'''
platforms = ["{PLATFORM}"]
[prepare]
run = [["{{python}}", "-c", "import shutil, sys; shutil.copy('src/d20.json', sys.argv[2])", "{{swf_dir}}/log.swf",
        "{{out}}/w.json"]]
creates = ["{{out}}/w.json"]
[[schedulers]]
scheduler = "fcfs"
[[workloads]]
path = "{{out}}/w.json"
'''


def test_swf_dir_placeholder(tmp_path, monkeypatch):
    """``{swf_dir}``: ``$COBURST_SWF_DIR`` (made absolute), else ``../shared/data/swf`` beside
    the checkout, as the tests' own ``shared_data.swf_dir``; arguments starting with it are the
    prepare step's inputs."""
    spec = write(tmp_path / "c.toml", SWF_SPEC)
    monkeypatch.delenv("COBURST_SWF_DIR", raising=False)
    camp = load_campaign(spec)
    assert camp.prepare_run[0][3] == str(ROOT.parent / "shared" / "data" / "swf" / "log.swf")
    assert camp.prepare_run[0][3] == str(swf_dir() / "log.swf")
    assert camp.prepare_inputs == [("prepare.run[0][3]", swf_dir() / "log.swf")]
    monkeypatch.setenv("COBURST_SWF_DIR", str(tmp_path / "logs"))
    assert load_campaign(spec).prepare_run[0][3] == str(tmp_path / "logs" / "log.swf")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COBURST_SWF_DIR", "rel")
    assert load_campaign(spec).prepare_run[0][3] == str(tmp_path / "rel" / "log.swf")
    with pytest.raises(InputError, match="not usable as a label"):
        load_campaign(write(tmp_path / "d.toml", SWF_SPEC + 'labels = { swf_dir = "x" }\n'))


def test_a_missing_swf_log_is_named_before_the_prepare_step(tmp_path, capsys, monkeypatch):
    delay_workloads(tmp_path / "src", [20])
    spec = write(tmp_path / "c.toml", SWF_SPEC)
    logs = tmp_path / "logs"
    monkeypatch.setenv("COBURST_SWF_DIR", str(logs))
    out = tmp_path / "o"
    code, _, err = cli(capsys, spec, "--out", out)
    assert code == 2 and "Traceback" not in err
    assert err.strip() == (f"coburst campaign: error: {spec}: prepare.run[0][3]: file not found: {logs / 'log.swf'} "
                           "({swf_dir} is $COBURST_SWF_DIR, else ../shared/data/swf beside the coburst checkout)")
    assert not (out / "w.json").exists()
    logs.mkdir()
    (logs / "log.swf").write_text("")
    code, _, err = cli(capsys, spec, "--out", out)
    assert code == 0, err
    (logs / "log.swf").unlink()  # the prepare step's outputs exist: the log is not needed again
    code, _, err = cli(capsys, spec, "--out", out)
    assert code == 0, err
