"""``coburst sim`` accepts the whole command line of Batsim 4.2.1: every option of
``batsim --help`` is either accepted (same spelling, short and long forms, same defaults)
or refused with a clear message naming it.

The option list comes from tests/data/batsim_ref/batsim-4.2.1-help.txt (``batsim --help``
of the real 4.2.1 binary); when $BATSIM names a Batsim binary, its ``--help`` is parsed too
and ``--dump-execution-context`` outputs are compared with it.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from coburst.simulator import arguments as simargs
from coburst.simulator import options as simopts
from coburst.cli.main import build_parser, main
from coburst.errors import InputError

pytestmark = pytest.mark.timeout(60)

HELP_FILE = Path(__file__).parent / "data" / "batsim_ref" / "batsim-4.2.1-help.txt"
BATSIM = os.environ.get("BATSIM", "")

#: Batsim options coburst refuses, by long spelling
REFUSED = {"--enable-redis", "--no-sched"}
#: options that print something and exit
EXITING = {"--help", "--version", "--simgrid-version"}

OPTION_LINE = re.compile(r"^\s+(?:(-[A-Za-z]), )?(--[A-Za-z-]+)(?:, (--[A-Za-z-]+))?(.*)$")


def parse_help(text: str) -> dict[str, dict]:
    """{long: {"short", "alias", "args", "default"}} from a docopt usage text (Batsim's --help)."""
    options: dict[str, dict] = {}
    lines = text.splitlines()
    current = None
    for line in lines:
        m = OPTION_LINE.match(line)
        if m and line.startswith("  -"):
            short, first, second, rest = m.groups()
            # "--WS, --workflow-start": the long name is the second one
            long, alias = (second, first) if second else (first, None)
            nargs = len(re.findall(r"<[^>]+>", rest.split("  ")[0] if rest.strip().startswith("<") or
                                    rest.strip().startswith("(") else ""))
            current = options[long] = {"short": short, "alias": alias, "args": nargs, "default": None}
            line = rest
        if current is not None:
            d = re.search(r"\[default: ([^\]]*)\]", line)
            if d:
                current["default"] = d.group(1)
        if not line.strip():
            current = None
    usage = text.split("Usage:")[1].split("\n\n")[0]
    for flag in re.findall(r"batsim (--[a-z-]+)\s*$", usage, flags=re.M):
        options.setdefault(flag, {"short": None, "alias": None, "args": 0, "default": None})
    return options


def help_texts() -> list[tuple[str, str]]:
    texts = [("checked-in", HELP_FILE.read_text())]
    if BATSIM:
        texts.append(("$BATSIM", subprocess.run([BATSIM, "--help"], capture_output=True, text=True,
                                                timeout=30).stdout))
    return texts


BATSIM_OPTIONS = parse_help(HELP_FILE.read_text())

SAMPLE_VALUES = {"--mmax": ["2"], "--redis-port": ["6380"], "--verbosity": ["debug"],
                 "--workflow-jobs-limit": ["3"], "--sg-cfg": ["network/model:CM02"],
                 "--sg-log": ["root.thresh:info"], "--add-role-to-hosts": ["node_3:storage"],
                 "--workflow-start": ["cut.dax", "12.5"], "--socket-endpoint": ["ipc:///tmp/x"]}


def argv_for(long: str, spelling: str | None = None, tmp: Path | None = None) -> list[str]:
    info = BATSIM_OPTIONS[long]
    spelling = spelling or long
    base = ["sim", "-p", "platform.xml", "-w", "w.json"]
    if long in ("--platform", "--workload"):
        return base + [spelling, "other.json" if long == "--workload" else "p2.xml"]
    values = SAMPLE_VALUES.get(long, ["value"] * info["args"])
    if long == "--sched-cfg-file":
        assert tmp is not None
        values = [str(tmp / "cfg.txt")]
    return base + [spelling, *values]


def test_help_file_lists_every_option():
    assert len(BATSIM_OPTIONS) == 38
    assert {"--platform", "--workload", "--mmax", "--sched-cfg-file", "--forward-unknown-events", "--help",
            "--version", "--simgrid-version", "--workflow-start"} <= set(BATSIM_OPTIONS)
    assert BATSIM_OPTIONS["--workflow-start"] == {"short": None, "alias": "--WS", "args": 2, "default": None}
    assert BATSIM_OPTIONS["--master-host"]["default"] == "master_host"
    assert BATSIM_OPTIONS["--verbosity"]["short"] == "-v"


@pytest.mark.parametrize("source,text", help_texts(), ids=lambda x: x if len(x) < 20 else "")
def test_help_text_matches_checked_in_list(source, text):
    assert parse_help(text) == BATSIM_OPTIONS, source


@pytest.mark.parametrize("long", sorted(set(BATSIM_OPTIONS) - EXITING))
def test_every_option_accepted_or_refused_clearly(long, tmp_path):
    (tmp_path / "cfg.txt").write_text("{}")
    parser = build_parser()
    info = BATSIM_OPTIONS[long]
    spellings = [s for s in (long, info["short"], info["alias"]) if s]
    parsed = []
    for spelling in spellings:
        args = parser.parse_args(argv_for(long, spelling, tmp_path))
        args.socket_endpoint = getattr(args, "socket_endpoint", "tcp://localhost:28000")
        parsed.append(vars(args))
        if long in REFUSED:
            with pytest.raises(InputError) as err:
                simargs.batsim_options(args)
            assert long in str(err.value) and "not supported by coburst sim" in str(err.value)
        else:
            simargs.batsim_options(args)
    assert all(p == parsed[0] for p in parsed[1:]), "short/long/alias forms differ"


@pytest.mark.parametrize("long", sorted(o for o, i in BATSIM_OPTIONS.items() if i["default"] is not None))
def test_defaults_as_batsim(long):
    args = build_parser().parse_args(["sim", "-p", "p.xml"])
    dest = long.lstrip("-").replace("-", "_")
    default = BATSIM_OPTIONS[long]["default"]
    value = getattr(args, dest)
    if default == "false":
        assert value is False
    else:
        assert str(value) == default


def test_refused_options_exit_2_with_message(tmp_path, capsys):
    for long in sorted(REFUSED):
        rc = main(argv_for(long, tmp=tmp_path))
        err = capsys.readouterr().err
        assert rc == 2, long
        assert long in err and "not supported" in err and "Traceback" not in err


def test_exiting_options(capsys):
    for argv, expected in ((["sim", "--version"], "4.2.1"), (["sim", "--simgrid-version"], ".")):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 0
        out = capsys.readouterr().out
        assert out.endswith("\n") and expected in out and len(out.splitlines()) == 1
    with pytest.raises(SystemExit) as stop:
        main(["sim", "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    for long in BATSIM_OPTIONS:
        assert long in out or BATSIM_OPTIONS[long]["alias"] in out, long


def test_long_options_abbreviate_like_docopt():
    parser = build_parser()
    args = parser.parse_args(["sim", "-p", "p", "--dump-exec", "--mmax-w", "--forward-prof"])
    assert args.dump_execution_context and args.mmax_workload and args.forward_profiles_on_submission
    with pytest.raises(SystemExit):
        parser.parse_args(["sim", "-p", "p", "--enable"])  # ambiguous, as in docopt


DUMPS = [
    ([], '{"socket_endpoint":"tcp://localhost:28000","redis_enabled":false,"redis_hostname":"127.0.0.1",'
         '"redis_port":6379,"redis_prefix":"default","export_prefix":"out","external_scheduler":true}'),
    (["-e", "foo", "-s", "tcp://x:1", "--no-sched"],
     '{"socket_endpoint":"tcp://x:1","redis_enabled":false,"redis_hostname":"127.0.0.1","redis_port":6379,'
     '"redis_prefix":"default","export_prefix":"foo","external_scheduler":false}'),
    (["--redis-port", "abc", "--enable-redis", "--redis-hostname", "h", "--redis-prefix", "p", "-E"],
     '{"socket_endpoint":"tcp://localhost:28000","redis_enabled":true,"redis_hostname":"h","redis_port":0,'
     '"redis_prefix":"p","export_prefix":"out","external_scheduler":true}'),
    (["-e", 'a"b\\c\té', "--redis-port=12"],
     '{"socket_endpoint":"tcp://localhost:28000","redis_enabled":false,"redis_hostname":"127.0.0.1",'
     '"redis_port":12,"redis_prefix":"default","export_prefix":"a\\"b\\\\c\\té","external_scheduler":true}'),
]


@pytest.mark.parametrize("extra,expected", DUMPS)
def test_dump_execution_context(extra, expected, capsys, tmp_path):
    # printed before any check of the inputs (the platform does not exist), exit status 0
    rc = main(["sim", "-p", str(tmp_path / "missing.xml"), "--dump-execution-context", *extra])
    assert rc == 0
    assert capsys.readouterr().out == expected + "\n"
    if BATSIM:
        real = subprocess.run([BATSIM, "-p", str(tmp_path / "missing.xml"), "--dump-execution-context", *extra],
                              capture_output=True, text=True, timeout=30)
        assert real.stdout == expected + "\n"


def options_for(*argv: str) -> dict:
    args = build_parser().parse_args(["sim", "-p", "p.xml", "-w", "w.json", *argv])
    return simargs.batsim_options(args)


def test_batsim_options_defaults():
    assert options_for() == {
        "mmax": 0, "mmax_workload": False, "energy": False, "forward_profiles_on_submission": False,
        "enable_compute_sharing": False, "disable_storage_sharing": False, "sched_config": "",
        "sg_cfg": [], "sg_log": [], "schedule_tracing": True, "machine_state_tracing": True,
        "redis_hostname": "127.0.0.1", "redis_port": 6379, "redis_prefix": "default",
        "forward_unknown_events": False, "verbosity": "information", "workflow_jobs_limit": 0,
        "ignore_beyond_last_workflow": False}


def test_batsim_options_values(tmp_path):
    cfg = tmp_path / "cfg.json"
    cfg.write_bytes(b'{"a": 1}\r\n\xc3\xa9\n')
    o = options_for("--mmax", "3", "--mmax-workload", "--forward-profiles-on-submission", "--enable-compute-sharing",
                    "--disable-storage-sharing", "--sched-cfg-file", str(cfg), "--sg-cfg", "network/model:CM02",
                    "--sg-cfg", "precision/timing:1e-9", "--sg-log", "root.thresh:info", "--disable-schedule-tracing",
                    "--disable-machine-state-tracing", "-q", "--forward-unknown-events")
    assert o["mmax"] == 3 and o["mmax_workload"] and o["forward_profiles_on_submission"]
    assert o["enable_compute_sharing"] and o["disable_storage_sharing"]
    assert o["sched_config"] == '{"a": 1}\r\né\n'  # verbatim file content
    assert o["sg_cfg"] == ["network/model:CM02", "precision/timing:1e-9"] and o["sg_log"] == ["root.thresh:info"]
    assert not o["schedule_tracing"] and not o["machine_state_tracing"]
    assert o["verbosity"] == "quiet"
    assert o["forward_unknown_events"] is False  # Batsim ignores it without --events
    assert options_for("--sched-cfg", "x y")["sched_config"] == "x y"
    assert options_for("--mmax", "-4")["mmax"] == 0  # Batsim: only a value > 0 limits


@pytest.mark.parametrize("argv,fragment", [
    (["--mmax", "two"], "--mmax: 'two': expected an integer"),
    (["--redis-port", "80x"], "--redis-port: '80x': expected an integer"),
    (["--workflow-jobs-limit", "-1"], "--workflow-jobs-limit: -1: must be >= 0"),
    (["--sg-cfg", "nocolon"], "--sg-cfg: 'nocolon': expected OPTION_NAME:OPTION_VALUE"),
    (["--sched-cfg-file", "/nonexistent/cfg"], "--sched-cfg-file: /nonexistent/cfg: cannot read"),
])
def test_bad_values(argv, fragment):
    with pytest.raises(InputError) as err:
        options_for(*argv)
    assert fragment in str(err.value)


def test_sched_cfg_options_are_exclusive():
    with pytest.raises(SystemExit):
        build_parser().parse_args(["sim", "-p", "p", "--sched-cfg", "a", "--sched-cfg-file", "b"])


def test_simulation_begins_config_order():
    o = options_for("--sched-cfg", "abc", "--redis-port", "7000", "--forward-profiles-on-submission")
    cfg = simopts.simulation_begins_config(o, dynamic_jobs=True, ack_dynamic_jobs=False, profile_reuse=True)
    assert list(cfg) == ["redis-enabled", "redis-hostname", "redis-port", "redis-prefix",
                         "profiles-forwarded-on-submission", "dynamic-jobs-enabled", "dynamic-jobs-acknowledged",
                         "profile-reuse-enabled", "sched-config", "forward-unknown-events"]
    assert cfg["sched-config"] == "abc" and cfg["redis-port"] == 7000
    assert cfg["profiles-forwarded-on-submission"] and cfg["profile-reuse-enabled"]
    assert not simopts.simulation_begins_config(o, dynamic_jobs=False, ack_dynamic_jobs=False,
                                               profile_reuse=True)["profile-reuse-enabled"]


@pytest.mark.parametrize("mmax,by_workload,nb_res,expected", [
    (0, False, [4, 8], None), (3, False, [4, 8], 3), (0, True, [4, 8], 8), (5, True, [4, 8], 5),
    (9, True, [4, 8], 8), (0, True, [], None),
    (2, True, [], None),  # Batsim: min(2, -1) = -1, i.e. no limit when no -w workload
])
def test_machine_limit(mmax, by_workload, nb_res, expected):
    # batsim.cpp load_workloads_and_workflows
    assert simopts.machine_limit({"mmax": mmax, "mmax_workload": by_workload}, nb_res) == expected


def test_roles():
    assert simargs.parse_roles(["a,b:storage", "c:compute_node", "d:master", "a:compute"]) == {
        "a": "compute", "b": "storage", "c": "compute_node", "d": "master"}
    for bad in ("a", "a:b:storage", ":storage", "a:", "a,,b:storage", "a:gpu"):
        with pytest.raises(InputError):
            simargs.parse_roles([bad])


def test_simulator_config_carries_options(tmp_path):
    args = build_parser().parse_args(["sim", "-p", "p.xml", "-w", "w.json", "--mmax", "2", "--sched-cfg", "s",
                                      "--enable-dynamic-jobs", "--enable-profile-reuse"])
    config = simargs.simulator_config_from_args(args)
    assert config.batsim_options["mmax"] == 2 and config.batsim_options["sched_config"] == "s"
    assert config.dynamic_jobs and config.profile_reuse and config.forward_unknown_events is False
    # coburst run shares the options
    run_args = build_parser().parse_args(["run", "easy", "-p", "p.xml", "-w", "w.json", "--disable-schedule-tracing"])
    run_args.socket_endpoint = "ipc:///tmp/x"
    assert simargs.simulator_config_from_args(run_args).batsim_options["schedule_tracing"] is False


def test_the_engine_defaults_are_the_command_line_defaults():
    """coburst.simulator.options.DEFAULTS (what the engine uses without a command line) is what
    `coburst sim` parses from no option at all."""
    import argparse

    from coburst.simulator.options import DEFAULTS, default_batsim_options

    parser = argparse.ArgumentParser(add_help=False)
    simargs.add_sim_options(parser)
    assert simargs.batsim_options(parser.parse_args(["-p", "unused"])) == DEFAULTS
    fresh = default_batsim_options()
    fresh["sg_cfg"].append("x:y")
    assert DEFAULTS["sg_cfg"] == []
