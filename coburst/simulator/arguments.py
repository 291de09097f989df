"""Batsim 4.2.1's command-line options: the simulator's configuration as users give it.

Every option of ``batsim --help`` (4.2.1, ``src/batsim.cpp parse_main_args``) with the same
spelling, short and long forms and defaults (:func:`add_sim_options`, shared by ``coburst
sim``, ``coburst run`` and campaign runs), validated like Batsim validates them into a
:class:`~coburst.simulator.engine.SimulatorConfig` (:func:`simulator_config_from_args`) and
the plain dict ``config.batsim_options`` (:func:`batsim_options`; defaults in
:mod:`coburst.simulator.options`).  Options that need a part of Batsim coburst does not
simulate are refused with an :class:`~coburst.errors.InputError` naming the option (exit
status 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from coburst.errors import InputError
from coburst.platforms.roles import parse_roles  # noqa: F401 - (-r's reading, with the file's roles)
from coburst.validate import TIMEOUT, check_output

VERBOSITY_LEVELS = ("quiet", "network-only", "information", "debug")

#: Batsim options coburst refuses: argparse dest -> (spelling, why)
UNSUPPORTED = {
    "enable_redis": ("--enable-redis", "the Redis data storage is not supported: coburst sim always sends jobs "
                                       "and profiles inside the protocol messages"),
    "no_sched": ("--no-sched", "the scheduler-less mode (Batsim's batexec: every job started at time 0 on "
                               "machines 0..res-1, no _jobs.csv rows) is not supported; run a scheduler instead"),
}


def add_sim_options(parser: argparse.ArgumentParser) -> None:
    """The Batsim 4.2.1 options (shared by ``sim`` and ``run``; ``-s`` and the options that
    make ``batsim`` exit early are added by :func:`register`)."""
    # Input options
    parser.add_argument("-p", "--platform", required=True, metavar="PLATFORM_FILE",
                        help="SimGrid XML platform")
    parser.add_argument("-w", "--workload", action="append", default=[], metavar="WORKLOAD_FILE",
                        help="Batsim JSON workload (repeatable; named w0, w1, ...)")
    parser.add_argument("-W", "--workflow", action="append", default=[], metavar="WORKFLOW_FILE",
                        help="workflow (Pegasus DAX) file: its tasks are submitted as delay jobs as their "
                             "parents complete (repeatable; named wf0, wf1, ...)")
    parser.add_argument("--WS", "--workflow-start", dest="workflow_start", action="append", default=[], nargs=2,
                        metavar=("CUT_WORKFLOW_FILE", "START_TIME"),
                        help="a workflow started at START_TIME (repeatable; named wfc0, wfc1, ...)")
    parser.add_argument("--events", action="append", default=[], metavar="EVENTS_FILE",
                        help="external events file: one JSON event per line (machine_unavailable, "
                             "machine_available; other types with --forward-unknown-events); repeatable")
    # Most common options
    parser.add_argument("-m", "--master-host", default="master_host", metavar="NAME",
                        help="name of the master host [default: master_host, as Batsim 4.2]")
    parser.add_argument("-r", "--add-role-to-hosts", action="append", default=[], metavar="HOSTS:ROLE",
                        help="give ROLE (compute_node|storage|master) to comma-separated hosts (repeatable)")
    parser.add_argument("-E", "--energy", action="store_true",
                        help="simulate energy as Batsim does (SimGrid's host_energy plugin: wattage_per_state, "
                             "pstates, sleep_pstates; SET_RESOURCE_STATE, QUERY consumed_energy; writes "
                             "PREFIX_consumed_energy.csv and PREFIX_pstate_changes.csv)")
    # Execution context options (-s/--socket-endpoint: see register)
    parser.add_argument("--enable-redis", action="store_true", help="Redis data storage (refused)")
    parser.add_argument("--redis-hostname", default="127.0.0.1", metavar="REDIS_HOST",
                        help="only forwarded in SIMULATION_BEGINS' config [default: 127.0.0.1]")
    parser.add_argument("--redis-port", default="6379", metavar="REDIS_PORT",
                        help="only forwarded in SIMULATION_BEGINS' config [default: 6379]")
    parser.add_argument("--redis-prefix", default="default", metavar="PREFIX",
                        help="only forwarded in SIMULATION_BEGINS' config [default: default]")
    # Output options
    parser.add_argument("-e", "--export", default="out", metavar="PREFIX",
                        help="output prefix: PREFIX_jobs.csv, PREFIX_schedule.csv, PREFIX_schedule.trace, "
                             "PREFIX_machine_states.csv [default: out]")
    parser.add_argument("--disable-schedule-tracing", action="store_true",
                        help="do not write PREFIX_schedule.trace (Pajé)")
    parser.add_argument("--disable-machine-state-tracing", action="store_true",
                        help="do not write PREFIX_machine_states.csv")
    # Platform size limit options
    parser.add_argument("--mmax", default="0", metavar="NB",
                        help="use only the first NB compute machines; 0 means no limit [default: 0]")
    parser.add_argument("--mmax-workload", action="store_true",
                        help="limit the compute machines to the largest 'nb_res' of the workloads")
    # Job-related options
    parser.add_argument("--forward-profiles-on-submission", action="store_true",
                        help="attach the job's profile to JOB_SUBMITTED")
    parser.add_argument("--enable-dynamic-jobs", action="store_true",
                        help="let the scheduler register jobs and profiles")
    parser.add_argument("--acknowledge-dynamic-jobs", action="store_true",
                        help="send JOB_SUBMITTED back for dynamically registered jobs")
    parser.add_argument("--enable-profile-reuse", action="store_true",
                        help="keep profiles of finished jobs usable by later dynamic jobs")
    # Verbosity options
    parser.add_argument("-v", "--verbosity", default="information", choices=VERBOSITY_LEVELS,
                        metavar="VERBOSITY_LEVEL",
                        help="quiet, network-only, information or debug (accepted for Batsim compatibility)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    # Workflow options (no effect without workflows, as in Batsim)
    parser.add_argument("--workflow-jobs-limit", default="0", metavar="JOB_LIMIT",
                        help="at most this many jobs of each workflow submitted and not yet completed; 0 "
                             "means no limit [default: 0]")
    parser.add_argument("--ignore-beyond-last-workflow", action="store_true",
                        help="ignore every job submitted once the workflows are done (with Batsim 4.2.1's "
                             "test: once exactly one workflow is done)")
    # Other options
    parser.add_argument("--enable-compute-sharing", action="store_true",
                        help="let several jobs use one compute machine at the same time")
    parser.add_argument("--disable-storage-sharing", action="store_true",
                        help="forbid several jobs on one storage machine at the same time")
    parser.add_argument("--no-sched", action="store_true", help="scheduler-less mode (refused)")
    cfg = parser.add_mutually_exclusive_group()
    cfg.add_argument("--sched-cfg", default=None, metavar="CFG_STR",
                     help="string forwarded to the scheduler in SIMULATION_BEGINS (config.sched-config)")
    cfg.add_argument("--sched-cfg-file", default=None, metavar="CFG_FILE",
                     help="same as --sched-cfg, the value read from a file")
    parser.add_argument("--sg-cfg", action="append", default=[], metavar="OPT_NAME:OPT_VALUE",
                        help="SimGrid configuration option (repeatable)")
    parser.add_argument("--sg-log", action="append", default=[], metavar="LOG_OPTION",
                        help="SimGrid logging option (repeatable)")
    parser.add_argument("--forward-unknown-events", action="store_true",
                        help="forward events of unknown types of the --events files to the scheduler "
                             "(refused otherwise); no effect without --events, as in Batsim")
    # coburst's own
    parser.add_argument("--timeout", type=TIMEOUT, default=30.0, metavar="SECONDS",
                        help="abort when the scheduler stays silent this long (wall clock) [default: 30]")
    parser.add_argument("--heatmap", default=None, metavar="FILE|NAME",
                        help="co-execution heatmap (CSV/JSON, see coburst/models/heatmap.py, or a bundled one: "
                             "aris-nas, aris-spec, grvingt-nas, marconi-npb256-fig2): jobs naming their "
                             "application ('app') run at ELiSE's speedups on a node-sharing platform "
                             "(combine with --enable-compute-sharing where jobs share units)")
    parser.add_argument("--heatmap-alone", default="best", metavar="best|FACTOR",
                        help="speed of a co-scheduled job with no neighbour [default: best of its heatmap row]")


def _int_option(args: argparse.Namespace, dest: str, spelling: str) -> int:
    text = getattr(args, dest)
    try:
        return int(text)
    except (TypeError, ValueError):
        raise InputError(spelling, repr(text), "expected an integer") from None


def refuse_unsupported(args: argparse.Namespace) -> None:
    """InputError for the first Batsim option coburst does not simulate."""
    for dest, (spelling, why) in UNSUPPORTED.items():
        if getattr(args, dest, None):
            raise InputError(spelling, None, f"not supported by coburst sim: {why}")


def read_sched_config(args: argparse.Namespace) -> str:
    """``config.sched-config``: ``--sched-cfg`` if non-empty, else the content of ``--sched-cfg-file``
    (read verbatim, like Batsim's ``read_whole_file_as_string``), else ``""``."""
    if args.sched_cfg:
        return args.sched_cfg
    if args.sched_cfg_file:
        try:
            return Path(args.sched_cfg_file).read_bytes().decode("utf-8")
        except OSError as exc:
            raise InputError("--sched-cfg-file", args.sched_cfg_file,
                             f"cannot read the scheduler configuration file: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise InputError("--sched-cfg-file", args.sched_cfg_file, f"not UTF-8 text: {exc.reason}") from None
    return ""


def batsim_options(args: argparse.Namespace) -> dict:
    """The Batsim options the engine must honour (attached as ``config.batsim_options``).

    Validates them like Batsim does (errors are InputError naming the option).
    """
    refuse_unsupported(args)
    mmax = _int_option(args, "mmax", "--mmax")
    redis_port = _int_option(args, "redis_port", "--redis-port")
    jobs_limit = _int_option(args, "workflow_jobs_limit", "--workflow-jobs-limit")
    if jobs_limit < 0:
        raise InputError("--workflow-jobs-limit", str(jobs_limit), "must be >= 0")
    for value in args.sg_cfg:
        name, sep, _ = value.partition(":")
        if not sep or not name:
            raise InputError("--sg-cfg", repr(value), "expected OPTION_NAME:OPTION_VALUE")
    for value in args.sg_log:
        if not value:
            raise InputError("--sg-log", repr(value), "empty logging option")
    return {
        "mmax": max(mmax, 0),  # Batsim: only a value > 0 limits
        "mmax_workload": bool(args.mmax_workload),
        "forward_profiles_on_submission": bool(args.forward_profiles_on_submission),
        "enable_compute_sharing": bool(args.enable_compute_sharing),
        "disable_storage_sharing": bool(args.disable_storage_sharing),
        "sched_config": read_sched_config(args),
        "sg_cfg": list(args.sg_cfg),
        "sg_log": list(args.sg_log),
        "energy": bool(args.energy),
        "schedule_tracing": not args.disable_schedule_tracing,
        "machine_state_tracing": not args.disable_machine_state_tracing,
        "redis_hostname": args.redis_hostname,
        "redis_port": redis_port,
        "redis_prefix": args.redis_prefix,
        # Batsim: forward_unknown_events is only read when --events files are given
        "forward_unknown_events": bool(args.forward_unknown_events and args.events),
        "verbosity": "quiet" if args.quiet else args.verbosity,
        "workflow_jobs_limit": jobs_limit,
        "ignore_beyond_last_workflow": bool(args.ignore_beyond_last_workflow),
    }


def simulator_config_from_args(args: argparse.Namespace):
    from coburst.simulator.engine import SimulatorConfig

    options = batsim_options(args)
    if not (args.workload or args.workflow or args.workflow_start or args.events or args.enable_dynamic_jobs):
        raise InputError("-w/--workload", None,
                         "give at least one workload, workflow or events file (or --enable-dynamic-jobs for a "
                         "scheduler that registers jobs)")
    if args.timeout <= 0:
        raise InputError("--timeout", str(args.timeout), "must be > 0 seconds")
    check_heatmap_alone(args.heatmap_alone)
    check_export(args.export, options)
    config = SimulatorConfig(
        platform=args.platform,
        workloads=list(args.workload),
        export_prefix=args.export,
        socket_endpoint=args.socket_endpoint,
        roles=parse_roles(args.add_role_to_hosts),
        master_host=args.master_host,
        dynamic_jobs=args.enable_dynamic_jobs,
        ack_dynamic_jobs=args.acknowledge_dynamic_jobs,
        profile_reuse=args.enable_profile_reuse,
        forward_unknown_events=options["forward_unknown_events"],
        events=list(args.events),
        workflows=list(args.workflow),
        cut_workflows=cut_workflows(args.workflow_start),
        timeout=args.timeout,
    )
    config.batsim_options = options
    config.heatmap = None if args.heatmap is None else heatmap_file(args.heatmap)
    config.heatmap_alone = args.heatmap_alone
    return config


def cut_workflows(pairs) -> list:
    """``--WS`` (file, start time) pairs, their start times read (the workflow module is only
    imported when there are some: start-up time)."""
    if not pairs:
        return []
    from coburst.simulator.workflow import parse_start_time

    return [(path, parse_start_time(start)) for path, start in pairs]


def check_heatmap_alone(value: str) -> None:
    """``--heatmap-alone``: ``best`` or a finite speed factor > 0 (checked before any work)."""
    if value == "best":
        return
    try:
        factor = float(value)
    except ValueError:
        factor = float("nan")
    if not (factor > 0 and factor != float("inf")):
        raise InputError("--heatmap-alone", value, "expected 'best' or a positive, finite speed factor")


def check_export(prefix: str, options: dict) -> None:
    """Every output of ``-e PREFIX`` can be written (checked before any work, as Batsim does)."""
    names = ["_jobs.csv", "_schedule.csv"]
    if options["schedule_tracing"]:
        names.append("_schedule.trace")
    if options["machine_state_tracing"]:
        names.append("_machine_states.csv")
    if options.get("energy"):
        names += ["_consumed_energy.csv", "_pstate_changes.csv"]
    for name in names:
        check_output(f"{prefix}{name}", f"-e/--export {prefix}")


def heatmap_file(value: str) -> str:
    """``--heatmap``: a heatmap file, or the name of a bundled one (``aris-nas``...), checked
    (read and parsed) before any simulation starts."""
    from coburst.models.heatmap import bundled_names, bundled_path, load_heatmap

    path = Path(value)
    if not path.exists():
        if value not in bundled_names():
            raise InputError("--heatmap", value, f"no such file, and not a bundled heatmap "
                             f"({', '.join(bundled_names())})")
        path = bundled_path(value)
    load_heatmap(path)
    return str(path)
