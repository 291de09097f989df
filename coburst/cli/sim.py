"""``coburst sim``: a drop-in for the ``batsim`` command (Batsim 4.2 options)."""

from __future__ import annotations

import argparse

from coburst.errors import InputError


def parse_roles(values: list[str]) -> dict[str, str]:
    """``-r host1,host2:storage`` (repeatable) -> {host: role}."""
    roles: dict[str, str] = {}
    for value in values:
        hosts, sep, role = value.rpartition(":")
        if not sep or not hosts or not role:
            raise InputError("-r/--add-role-to-hosts", repr(value), "expected HOST[,HOST...]:ROLE")
        if role not in ("compute", "storage", "master"):
            raise InputError("-r/--add-role-to-hosts", repr(value),
                             f"unknown role {role!r} (expected compute, storage or master)")
        for host in hosts.split(","):
            if not host:
                raise InputError("-r/--add-role-to-hosts", repr(value), "empty host name")
            roles[host] = role
    return roles


def add_sim_options(parser: argparse.ArgumentParser) -> None:
    """The Batsim 4.2 options coburst understands (shared by ``sim`` and ``run``)."""
    parser.add_argument("-p", "--platform", required=True, metavar="PLATFORM_FILE",
                        help="SimGrid XML platform")
    parser.add_argument("-w", "--workload", action="append", default=[], metavar="WORKLOAD_FILE",
                        help="Batsim JSON workload (repeatable; named w0, w1, ...)")
    parser.add_argument("-e", "--export", default="out", metavar="PREFIX",
                        help="output prefix: PREFIX_jobs.csv, PREFIX_schedule.csv [default: out]")
    parser.add_argument("-r", "--add-role-to-hosts", action="append", default=[], metavar="HOSTS:ROLE",
                        help="give ROLE (compute|storage|master) to comma-separated hosts (repeatable)")
    parser.add_argument("-m", "--master-host", default="master_host", metavar="NAME",
                        help="name of the master host [default: master_host, as Batsim 4.2]")
    parser.add_argument("--enable-dynamic-jobs", action="store_true",
                        help="let the scheduler register jobs and profiles")
    parser.add_argument("--acknowledge-dynamic-jobs", action="store_true",
                        help="send JOB_SUBMITTED back for dynamically registered jobs")
    parser.add_argument("--enable-profile-reuse", action="store_true",
                        help="keep profiles of finished jobs usable by later dynamic jobs")
    parser.add_argument("--forward-unknown-events", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                        help="abort when the scheduler stays silent this long (wall clock) [default: 30]")
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    parser.add_argument("-v", "--verbosity", default="information",
                        choices=("quiet", "network-only", "information", "debug"),
                        help="accepted for Batsim compatibility")


def simulator_config_from_args(args: argparse.Namespace):
    from coburst.simulator.engine import SimulatorConfig

    if not args.workload and not args.enable_dynamic_jobs:
        raise InputError("-w/--workload", None,
                         "give at least one workload (or --enable-dynamic-jobs for a scheduler that registers jobs)")
    if args.timeout <= 0:
        raise InputError("--timeout", str(args.timeout), "must be > 0 seconds")
    return SimulatorConfig(
        platform=args.platform,
        workloads=list(args.workload),
        export_prefix=args.export,
        socket_endpoint=args.socket_endpoint,
        roles=parse_roles(args.add_role_to_hosts),
        master_host=args.master_host,
        dynamic_jobs=args.enable_dynamic_jobs,
        ack_dynamic_jobs=args.acknowledge_dynamic_jobs,
        profile_reuse=args.enable_profile_reuse,
        forward_unknown_events=args.forward_unknown_events,
        timeout=args.timeout,
    )


def run_sim(args: argparse.Namespace) -> int:
    from coburst.simulator.engine import Simulator

    config = simulator_config_from_args(args)
    config.speed_hook = args.speed_hook
    result = Simulator(config).run()
    if not args.quiet:
        print(result.summary())
    return 0


def register(sub) -> None:
    parser = sub.add_parser("sim", allow_abbrev=False,
                            help="Batsim-compatible simulator (drop-in for the batsim command)",
                            description="Simulate a platform and workloads on SimGrid, talking the Batsim 4 "
                                        "protocol to an external scheduler (e.g. pybatsim).")
    add_sim_options(parser)
    parser.add_argument("-s", "--socket-endpoint", default="tcp://localhost:28000", metavar="ENDPOINT",
                        help="scheduler's ZeroMQ REP endpoint [default: tcp://localhost:28000]")
    # hidden: attach a speed hook object (MODULE:CLASS, see SimulatorConfig.speed_hook), for
    # tests and experiments with JobRun.set_rate
    parser.add_argument("--speed-hook", default=None, metavar="MODULE:CLASS", help=argparse.SUPPRESS)
    parser.set_defaults(func=run_sim)
