"""Batsim 4.2.1's options as the engine receives them: their defaults, the machine limit
(``--mmax``, ``--mmax-workload``) and the ``SIMULATION_BEGINS`` configuration.

The command line (:mod:`coburst.cli.sim`) parses and validates the options into the same
dict (``batsim_options``); the engine uses :data:`DEFAULTS` when it is given none (a test
checks the two agree), so the simulator needs nothing from the command line.
"""

from __future__ import annotations

__all__ = ["DEFAULTS", "default_batsim_options", "machine_limit", "simulation_begins_config"]

#: Batsim 4.2.1's defaults of every option the engine honours (``batsim --help``)
DEFAULTS = {
    "mmax": 0,
    "mmax_workload": False,
    "forward_profiles_on_submission": False,
    "enable_compute_sharing": False,
    "disable_storage_sharing": False,
    "sched_config": "",
    "sg_cfg": [],
    "sg_log": [],
    "energy": False,
    "schedule_tracing": True,
    "machine_state_tracing": True,
    "redis_hostname": "127.0.0.1",
    "redis_port": 6379,
    "redis_prefix": "default",
    "forward_unknown_events": False,
    "verbosity": "information",
    "workflow_jobs_limit": 0,
    "ignore_beyond_last_workflow": False,
}


def default_batsim_options() -> dict:
    """A fresh copy of :data:`DEFAULTS` (no command line)."""
    return {k: list(v) if isinstance(v, list) else v for k, v in DEFAULTS.items()}


def machine_limit(options: dict, workload_nb_res: list[int]) -> int | None:
    """How many compute machines Batsim keeps (``load_workloads_and_workflows``): None = all.

    ``workload_nb_res``: the ``nb_res`` field of every ``-w`` workload.  With both options the
    smaller of ``--mmax`` and the largest ``nb_res``; the engine must then keep the first N
    compute machines in id order (``Machines::create_machines``) and fail with "Impossible to
    compute on M=N machines: only K machines are described in the PLATFORM_FILE." if N > K.
    """
    largest = max(workload_nb_res, default=-1)
    mmax = options["mmax"]
    if options["mmax_workload"] and mmax > 0:
        limit = min(mmax, largest)
    elif options["mmax_workload"]:
        limit = largest
    elif mmax > 0:
        limit = mmax
    else:
        limit = -1
    return None if limit == -1 else limit


def simulation_begins_config(options: dict, *, dynamic_jobs: bool, ack_dynamic_jobs: bool,
                             profile_reuse: bool) -> dict:
    """SIMULATION_BEGINS ``data.config`` exactly as Batsim 4.2.1 builds it (``set_configuration``),
    keys in Batsim's order."""
    return {
        "redis-enabled": False,
        "redis-hostname": options["redis_hostname"],
        "redis-port": options["redis_port"],
        "redis-prefix": options["redis_prefix"],
        "profiles-forwarded-on-submission": options["forward_profiles_on_submission"],
        "dynamic-jobs-enabled": dynamic_jobs,
        "dynamic-jobs-acknowledged": ack_dynamic_jobs,
        "profile-reuse-enabled": dynamic_jobs and profile_reuse,
        "sched-config": options["sched_config"],
        "forward-unknown-events": options["forward_unknown_events"],
    }
