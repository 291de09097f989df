"""``coburst sim``: a drop-in for the ``batsim`` command (Batsim 4.2.1 options).

Every option of ``batsim --help`` (4.2.1, ``src/batsim.cpp parse_main_args``) is accepted
with the same spelling, short and long forms and defaults (:mod:`coburst.simulator.arguments`);
long options may be abbreviated to any unambiguous prefix, as docopt allows.  This module adds
what makes ``batsim`` exit early (``--version``, ``--dump-execution-context``) and the
``-s`` endpoint.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

from coburst.simulator.arguments import add_sim_options, simulator_config_from_args

#: what ``batsim --version`` prints for the real 4.2.1; coburst prints the string it writes
#: in ``_schedule.csv``'s ``batsim_version`` (coburst.simulator.output.BATSIM_VERSION)
BATSIM_VERSION_FALLBACK = "4.2.1"

# ---------------------------------------------------------------- options that exit early

def rapidjson_dumps(obj) -> str:
    """Compact JSON as RapidJSON's Writer prints it (UTF-8 kept, uppercase ``\\u00XX`` escapes)."""
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return re.sub(r"(?<!\\)((?:\\\\)*)\\u00([0-9a-f]{2})", lambda m: m.group(1) + "\\u00" + m.group(2).upper(), text)


def execution_context(args: argparse.Namespace) -> str:
    """What ``batsim --dump-execution-context`` prints (batsim.cpp ``main``): printed before any
    validation of the other options or input files; an unreadable ``--redis-port`` shows as 0."""
    try:
        redis_port = int(args.redis_port)
    except ValueError:
        redis_port = 0
    return rapidjson_dumps({
        "socket_endpoint": args.socket_endpoint,
        "redis_enabled": bool(args.enable_redis),
        "redis_hostname": args.redis_hostname,
        "redis_port": redis_port,
        "redis_prefix": args.redis_prefix,
        "export_prefix": args.export,
        "external_scheduler": not args.no_sched,
    })


class _VersionAction(argparse.Action):
    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(self.version())
        parser.exit(0)

    @staticmethod
    def version() -> str:
        try:
            from coburst.simulator.output import BATSIM_VERSION
        except ImportError:  # pragma: no cover
            return BATSIM_VERSION_FALLBACK
        return BATSIM_VERSION


class _SimgridVersionAction(_VersionAction):
    @staticmethod
    def version() -> str:
        from coburst.simulator._simgrid import simgrid

        return str(simgrid.simgrid_version)


def run_sim(args: argparse.Namespace) -> int:
    from coburst.simulator.engine import Simulator

    if args.dump_execution_context:
        print(execution_context(args))
        sys.stdout.flush()
        return 0
    config = simulator_config_from_args(args)
    config.speed_hook = args.speed_hook
    result = Simulator(config).run()
    if not args.quiet:
        print(result.summary())
    return 0


def register(sub) -> None:
    # allow_abbrev: docopt (Batsim) accepts any unambiguous prefix of a long option
    parser = sub.add_parser("sim", allow_abbrev=True,
                            help="Batsim-compatible simulator (drop-in for the batsim command)",
                            description="Simulate a platform and workloads on SimGrid, talking the Batsim 4 "
                                        "protocol to an external scheduler (e.g. pybatsim). Accepts every "
                                        "option of batsim 4.2.1.")
    add_sim_options(parser)
    parser.add_argument("-s", "--socket-endpoint", default="tcp://localhost:28000", metavar="ENDPOINT",
                        help="scheduler's ZeroMQ REP endpoint [default: tcp://localhost:28000]")
    parser.add_argument("--dump-execution-context", action="store_true",
                        help="print the execution context as JSON (as batsim does) and exit")
    parser.add_argument("--version", action=_VersionAction, help="print the Batsim version coburst emulates")
    parser.add_argument("--simgrid-version", action=_SimgridVersionAction,
                        help="print the version of the SimGrid library coburst uses")
    # hidden: attach a speed hook object (MODULE:CLASS, see SimulatorConfig.speed_hook), for
    # tests and experiments with JobRun.set_rate
    parser.add_argument("--speed-hook", default=None, metavar="MODULE:CLASS", help=argparse.SUPPRESS)
    parser.set_defaults(func=run_sim)
