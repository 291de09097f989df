"""The process one campaign run executes in: ``python -m coburst.campaign.child TASK_JSON``.

* engine ``coburst``: what ``coburst run SCHEDULER -o OPTIONS -p PLATFORM -w WORKLOAD
  -e PREFIX -q --timeout T SIM_ARGS...`` does, through :func:`coburst.runner.run`;
* engine ``batsim``: the real Batsim with the same scheduler (a coburst policy name resolved
  as ``coburst run`` does, :func:`coburst.runner.resolve_scheduler`) through
  :func:`coburst.simulator.external.run_with_batsim`, the simulator options passed on.

The process asks Linux for SIGTERM when the thread that started it dies
(``PR_SET_PDEATHSIG``): a campaign killed with SIGKILL stops its simulations cleanly
(their scheduler processes too) instead of leaving them running.
"""

from __future__ import annotations

import json
import os
import signal
import sys


def _die_with_parent() -> None:
    """SIGTERM when the campaign dies (not Linux: the campaign's own stop still applies)."""
    from coburst.signals import die_with_parent

    parent = os.environ.get("COBURST_CAMPAIGN_PARENT")
    die_with_parent(signal.SIGTERM, int(parent) if parent else None)


def _reported(engine: str, body) -> int:
    """Run ``body()``; a failure ends with one message on stderr (as the command line prints
    it) and its exit status."""
    from coburst import signals
    from coburst.errors import CoburstError, Interrupted

    signals.install()
    try:
        body()
        return 0
    except CoburstError as exc:
        print(f"{engine}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except Interrupted as exc:
        print(f"{engine}: interrupted by {exc.name}: stopped, no partial output left", file=sys.stderr)
        return exc.exit_code
    finally:
        signals.finish()


def run_coburst(task: dict) -> int:
    from coburst.runner import run

    return _reported("coburst run", lambda: run(
        task["scheduler"], platform=task["platform"], workloads=[task["workload"]], export=task["prefix"],
        options=task["options"], sim_args=task["sim_args"], timeout=float(task["timeout"])))


def run_batsim(task: dict) -> int:
    from coburst.runner import resolve_scheduler
    from coburst.simulator.external import find_batsim, run_with_batsim

    def body():
        batsim = find_batsim(task.get("batsim"))
        spec, options = resolve_scheduler(task["scheduler"], dict(task["options"]), task["platform"])
        run_with_batsim(batsim, spec, options, task["platform"], [task["workload"]], task["prefix"],
                        extra_args=list(task["sim_args"]), timeout=float(task.get("run_timeout") or 10 ** 7))

    return _reported("coburst campaign (batsim engine)", body)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    task = json.loads(argv[0])
    _die_with_parent()
    if task["engine"] == "batsim":
        return run_batsim(task)
    return run_coburst(task)


if __name__ == "__main__":
    sys.exit(main())
