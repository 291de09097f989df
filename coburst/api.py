"""coburst as a library: a run, a campaign, an analysis and a report with typed arguments.

What ``coburst run``, ``coburst campaign``, ``coburst analyze`` and ``coburst report`` do, for a
notebook or a script (the commands build these objects from their options and call these
functions)::

    >>> from coburst import api
    >>> config = api.RunConfig(policy="easy", platform="platforms/kth_sp2.xml",
    ...                        workloads=["workloads/kth_sp2_head.json"], out="/tmp/run/easy")  # doctest: +SKIP
    >>> result = api.run(config)                                                     # doctest: +SKIP
    >>> result.jobs_csv, result.metrics().mean_waiting                               # doctest: +SKIP
    >>> runs, jobs = api.analyze([result.prefix])                                     # doctest: +SKIP
    >>> api.report([result.prefix], "/tmp/run/report.html")                          # doctest: +SKIP
    >>> api.campaign("scripts/reservation_study.toml", jobs=2).done                  # doctest: +SKIP

A :class:`RunConfig` is checked when it is made (an :class:`~coburst.errors.InputError` naming
the field); the files it names are checked by :func:`run` before any scheduler starts, with the
messages of ``coburst run`` (they name its options: ``-w/--workload``, ``-e/--export``...).
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Mapping, Sequence

from coburst.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from coburst.analysis.metrics import Metrics
    from coburst.simulator.engine import SimResult

TAU = 600.0
TRANSPORTS = ("inprocess", "zmq")
VERBOSITY_LEVELS = ("quiet", "network-only", "information", "debug")
ROLES = ("compute", "compute_node", "storage", "master")

def _fail(name: str, value: Any, problem: str) -> InputError:
    return InputError(f"RunConfig.{name}", repr(value), problem)


def _path(name: str, value: Any) -> str | Path:
    """A path as given (its text is kept: the messages of a run quote it as written)."""
    if isinstance(value, (str, Path)):
        return value
    raise _fail(name, value, "expected a file path (str or pathlib.Path)")


def _paths(name: str, value: Any) -> tuple[str | Path, ...]:
    if isinstance(value, (str, Path)) or not isinstance(value, Sequence):
        raise _fail(name, value, "expected a list of file paths")
    return tuple(_path(f"{name}[{i}]", v) for i, v in enumerate(value))


def _strings(name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise _fail(name, value, "expected a list of strings")
    return tuple(value)


def _integer(name: str, value: Any, minimum: int | None = None) -> int | str:
    """An int (checked here); text (``coburst run``'s option as typed) is read at run time as
    Batsim reads it."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(name, value, "expected an integer")
    if minimum is not None and value < minimum:
        raise _fail(name, value, f"must be >= {minimum}")
    return value


@dataclass(frozen=True)
class RunConfig:
    """One run: a scheduler (``policy``: a coburst policy name, a pybatsim scheduler file or a
    pybatsim bundled name) with its options (``params``) on ``platform`` and ``workloads``;
    outputs ``<out>_jobs.csv``, ``<out>_schedule.csv``... (``out`` is Batsim's export prefix).

    Every option of ``coburst run`` (Batsim 4.2.1's options and coburst's own) is a field with
    its command-line default; the flags that turn something off (``--disable-...``) are fields
    that turn it on (``schedule_tracing=True``...)."""

    policy: str
    platform: str | Path
    workloads: Sequence[str | Path] = ()
    out: str | Path = "out"
    params: Mapping[str, Any] = field(default_factory=dict)
    transport: Literal["inprocess", "zmq"] = "inprocess"
    energy: bool = False
    timeout: float = 30.0
    quiet: bool = True
    #: co-execution heatmap (file or bundled name) and the speed of a job without neighbour
    heatmap: str | Path | None = None
    heatmap_alone: str | float = "best"
    # inputs besides the workloads
    workflows: Sequence[str | Path] = ()
    #: (cut workflow file, start time) pairs (``--WS``)
    workflow_starts: Sequence[tuple[str | Path, str | float]] = ()
    events: Sequence[str | Path] = ()
    # platform
    master_host: str = "master_host"
    #: {host: role} or Batsim's ``HOST[,HOST...]:ROLE`` strings (``-r``)
    roles: Mapping[str, str] | Sequence[str] = ()
    mmax: int | str = 0
    mmax_workload: bool = False
    compute_sharing: bool = False
    storage_sharing: bool = True
    # outputs
    schedule_tracing: bool = True
    machine_state_tracing: bool = True
    # jobs
    forward_profiles_on_submission: bool = False
    dynamic_jobs: bool = False
    ack_dynamic_jobs: bool = False
    profile_reuse: bool = False
    workflow_jobs_limit: int | str = 0
    ignore_beyond_last_workflow: bool = False
    forward_unknown_events: bool = False
    # what SIMULATION_BEGINS forwards to the scheduler
    sched_cfg: str | None = None
    sched_cfg_file: str | Path | None = None
    redis_hostname: str = "127.0.0.1"
    redis_port: int | str = 6379
    redis_prefix: str = "default"
    # SimGrid
    sg_cfg: Sequence[str] = ()
    sg_log: Sequence[str] = ()
    verbosity: Literal["quiet", "network-only", "information", "debug"] = "information"
    #: Batsim options coburst refuses (kept so that a run asking them fails as Batsim's would)
    enable_redis: bool = False
    no_sched: bool = False

    def __post_init__(self):
        put = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 - frozen
        if not isinstance(self.policy, str):
            raise _fail("policy", self.policy, "expected a policy name or a scheduler file (str)")
        put("platform", _path("platform", self.platform))
        put("workloads", _paths("workloads", self.workloads))
        put("out", _path("out", self.out))
        if not isinstance(self.params, Mapping) or not all(isinstance(k, str) for k in self.params):
            raise _fail("params", self.params, "expected a dict of scheduler options (str keys)")
        try:
            json.dumps(dict(self.params))
        except (TypeError, ValueError) as exc:
            raise _fail("params", self.params, f"not JSON-serialisable: {exc}") from None
        put("params", dict(self.params))
        if self.transport not in TRANSPORTS:
            raise _fail("transport", self.transport, f"expected one of {', '.join(TRANSPORTS)}")
        flags = [f.name for f in fields(self) if f.type == "bool"]
        for name in flags:
            if not isinstance(getattr(self, name), bool):
                raise _fail(name, getattr(self, name), "expected True or False")
        t = self.timeout
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not (0 < t <= 1e6):
            raise _fail("timeout", t, "expected seconds, a number > 0 and <= 1e6")
        put("timeout", float(t))
        if self.heatmap is not None:
            put("heatmap", str(_path("heatmap", self.heatmap)))  # a file or a bundled name
        alone = self.heatmap_alone
        if not isinstance(alone, str):
            if isinstance(alone, bool) or not isinstance(alone, (int, float)) or not (0 < alone < math.inf):
                raise _fail("heatmap_alone", alone, "expected 'best' or a positive, finite speed factor")
        put("workflows", _paths("workflows", self.workflows))
        put("events", _paths("events", self.events))
        starts = []
        if isinstance(self.workflow_starts, (str, Path)) or not isinstance(self.workflow_starts, Sequence):
            raise _fail("workflow_starts", self.workflow_starts, "expected a list of (file, start time) pairs")
        for i, pair in enumerate(self.workflow_starts):
            if not (isinstance(pair, Sequence) and len(pair) == 2 and isinstance(pair[1], (str, int, float))):
                raise _fail(f"workflow_starts[{i}]", pair, "expected a (file, start time) pair")
            starts.append((_path(f"workflow_starts[{i}]", pair[0]), pair[1]))
        put("workflow_starts", tuple(starts))
        for name in ("master_host", "redis_hostname", "redis_prefix"):
            if not isinstance(getattr(self, name), str):
                raise _fail(name, getattr(self, name), "expected a string")
        if isinstance(self.roles, Mapping):
            for host, role in self.roles.items():
                if not (isinstance(host, str) and host) or role not in ROLES:
                    raise _fail("roles", {host: role}, f"expected {{host: role}} with a role among {', '.join(ROLES)}")
            put("roles", dict(self.roles))
        else:
            put("roles", _strings("roles", self.roles))
        put("mmax", _integer("mmax", self.mmax, 0))
        put("workflow_jobs_limit", _integer("workflow_jobs_limit", self.workflow_jobs_limit, 0))
        put("redis_port", _integer("redis_port", self.redis_port))
        if self.sched_cfg is not None and not isinstance(self.sched_cfg, str):
            raise _fail("sched_cfg", self.sched_cfg, "expected a string")
        if self.sched_cfg_file is not None:
            put("sched_cfg_file", _path("sched_cfg_file", self.sched_cfg_file))
        if self.sched_cfg is not None and self.sched_cfg_file is not None:
            raise _fail("sched_cfg_file", self.sched_cfg_file, "give sched_cfg or sched_cfg_file, not both")
        put("sg_cfg", _strings("sg_cfg", self.sg_cfg))
        put("sg_log", _strings("sg_log", self.sg_log))
        if self.verbosity not in VERBOSITY_LEVELS:
            raise _fail("verbosity", self.verbosity, f"expected one of {', '.join(VERBOSITY_LEVELS)}")

    @classmethod
    def from_args(cls, args: argparse.Namespace, params: Mapping[str, Any]) -> RunConfig:
        """The configuration of a parsed ``coburst run`` command line (``params``: its
        ``-o/--options``, read)."""
        return cls(
            policy=args.scheduler, platform=args.platform, workloads=args.workload, out=args.export,
            params=params, transport=args.transport, energy=args.energy, timeout=args.timeout, quiet=args.quiet,
            heatmap=args.heatmap, heatmap_alone=args.heatmap_alone, workflows=args.workflow,
            workflow_starts=[tuple(p) for p in args.workflow_start], events=args.events,
            master_host=args.master_host, roles=args.add_role_to_hosts, mmax=args.mmax,
            mmax_workload=args.mmax_workload, compute_sharing=args.enable_compute_sharing,
            storage_sharing=not args.disable_storage_sharing,
            schedule_tracing=not args.disable_schedule_tracing,
            machine_state_tracing=not args.disable_machine_state_tracing,
            forward_profiles_on_submission=args.forward_profiles_on_submission,
            dynamic_jobs=args.enable_dynamic_jobs, ack_dynamic_jobs=args.acknowledge_dynamic_jobs,
            profile_reuse=args.enable_profile_reuse, workflow_jobs_limit=args.workflow_jobs_limit,
            ignore_beyond_last_workflow=args.ignore_beyond_last_workflow,
            forward_unknown_events=args.forward_unknown_events, sched_cfg=args.sched_cfg,
            sched_cfg_file=args.sched_cfg_file, redis_hostname=args.redis_hostname, redis_port=args.redis_port,
            redis_prefix=args.redis_prefix, sg_cfg=args.sg_cfg, sg_log=args.sg_log, verbosity=args.verbosity,
            enable_redis=args.enable_redis, no_sched=args.no_sched)

    def namespace(self) -> argparse.Namespace:
        """The options under ``coburst run``'s argparse names, as :mod:`coburst.runner` and
        :mod:`coburst.simulator.arguments` read them (the scheduler options are passed apart)."""
        roles = self.roles
        if isinstance(roles, dict):
            roles = [f"{host}:{role}" for host, role in roles.items()]
        return argparse.Namespace(
            scheduler=self.policy, options=None, transport=self.transport, platform=str(self.platform),
            workload=[str(w) for w in self.workloads], workflow=[str(w) for w in self.workflows],
            workflow_start=[[str(f), str(t)] for f, t in self.workflow_starts],
            events=[str(e) for e in self.events], master_host=self.master_host, add_role_to_hosts=list(roles),
            energy=self.energy, enable_redis=self.enable_redis, redis_hostname=self.redis_hostname,
            redis_port=str(self.redis_port), redis_prefix=self.redis_prefix, export=str(self.out),
            disable_schedule_tracing=not self.schedule_tracing,
            disable_machine_state_tracing=not self.machine_state_tracing, mmax=str(self.mmax),
            mmax_workload=self.mmax_workload, forward_profiles_on_submission=self.forward_profiles_on_submission,
            enable_dynamic_jobs=self.dynamic_jobs, acknowledge_dynamic_jobs=self.ack_dynamic_jobs,
            enable_profile_reuse=self.profile_reuse, verbosity=self.verbosity, quiet=self.quiet,
            workflow_jobs_limit=str(self.workflow_jobs_limit),
            ignore_beyond_last_workflow=self.ignore_beyond_last_workflow,
            enable_compute_sharing=self.compute_sharing, disable_storage_sharing=not self.storage_sharing,
            no_sched=self.no_sched, sched_cfg=self.sched_cfg,
            sched_cfg_file=None if self.sched_cfg_file is None else str(self.sched_cfg_file),
            sg_cfg=list(self.sg_cfg), sg_log=list(self.sg_log), forward_unknown_events=self.forward_unknown_events,
            timeout=self.timeout, heatmap=self.heatmap,
            heatmap_alone=self.heatmap_alone if isinstance(self.heatmap_alone, str) else repr(
                float(self.heatmap_alone)))


@dataclass(frozen=True)
class RunResult:
    """The outputs of one run (paths None when the run did not write them)."""

    config: RunConfig
    prefix: Path
    jobs_csv: Path
    schedule_csv: Path
    schedule_trace: Path | None
    machine_states_csv: Path | None
    consumed_energy_csv: Path | None
    pstate_changes_csv: Path | None
    #: the scheduler options as used (a policy name resolved to its entry file adds ``policy``)
    scheduler_options: dict
    #: compute machines of the platform (the utilisation's denominator)
    nb_compute: int
    #: the simulator's own result (its ``schedule``: ``_schedule.csv``'s values; ``summary()``)
    sim: SimResult = field(repr=False)

    def jobs(self) -> pd.DataFrame:
        """The jobs that ran, one row each (IO-Aware sub-jobs folded back, rejected jobs left
        out: :func:`coburst.analysis.metrics.read_jobs`)."""
        from coburst.analysis.metrics import read_jobs

        return read_jobs(self.jobs_csv)

    def metrics(self, tau: float = TAU) -> Metrics:
        """The metrics ``coburst run`` prints (:func:`coburst.analysis.metrics.compute_metrics`:
        ``mean_waiting``, ``mean_bounded_slowdown``, ``utilisation``, ``makespan``...)."""
        from coburst.analysis.metrics import compute_metrics

        return compute_metrics(self.jobs(), self.nb_compute, tau)

    def energy(self) -> float:
        """Energy consumed by the run, in J (needs ``energy=True``)."""
        if self.consumed_energy_csv is None:
            raise InputError("RunConfig.energy", "False", "the run did not simulate energy")
        from coburst.analysis.metrics import read_energy

        return read_energy(self.prefix)["energy"]

    def table(self, tau: float = TAU) -> pd.DataFrame:
        """The run's row of :func:`analyze` (every metric of ``coburst analyze``)."""
        return analyze([self.prefix], tau, workload=self._single(self.config.workloads),
                       platform=self.config.platform)[0]

    @staticmethod
    def _single(paths):
        return paths[0] if len(paths) == 1 else None


def run(config: RunConfig) -> RunResult:
    """Run ``config``: the scheduler in this process (``transport="inprocess"``) or as a
    pybatsim process over ZeroMQ (``"zmq"``).  Bad input raises
    :class:`~coburst.errors.InputError` before any scheduler starts; a scheduler breaking the
    protocol :class:`~coburst.errors.ProtocolError`; a silent one
    :class:`~coburst.errors.SchedulerGone`.  Nothing is printed unless ``quiet=False`` (then a
    progress bar on a terminal)."""
    if not isinstance(config, RunConfig):
        raise InputError("config", type(config).__name__, "expected a coburst.api.RunConfig")
    from coburst.runner import run_options

    sim = run_options(config.namespace(), config.params)
    prefix = Path(sim.prefix)

    def output(suffix: str, written: bool) -> Path | None:
        return Path(f"{prefix}{suffix}") if written else None

    return RunResult(
        config=config, prefix=prefix, jobs_csv=Path(sim.jobs_csv), schedule_csv=Path(sim.schedule_csv),
        schedule_trace=output("_schedule.trace", config.schedule_tracing),
        machine_states_csv=output("_machine_states.csv", config.machine_state_tracing),
        consumed_energy_csv=output("_consumed_energy.csv", config.energy),
        pstate_changes_csv=output("_pstate_changes.csv", config.energy),
        scheduler_options=dict(sim.scheduler_options), nb_compute=sim.nb_compute, sim=sim)


def _input_paths(paths: Sequence[str | Path] | str | Path | RunResult) -> list[str]:
    if isinstance(paths, (str, Path, RunResult)):
        paths = [paths]
    if not isinstance(paths, Sequence) or not paths:
        raise InputError("paths", repr(paths), "expected output prefixes, folders or run results")
    return [str(p.prefix if isinstance(p, RunResult) else p) for p in paths]


def analyze(paths: Sequence[str | Path | RunResult] | str | Path | RunResult, tau: float = TAU, *,
            workload: str | Path | None = None, platform: str | Path | None = None,
            ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(runs, jobs)``: every metric of runs (output prefixes, folders of ``*_jobs.csv``,
    campaign folders or :class:`RunResult`), one row per run and one per job
    (:func:`coburst.analysis.tables.analyze`; columns documented there)."""
    from coburst.analysis.tables import analyze as analyze_tables

    return analyze_tables(_input_paths(paths), tau, workload=workload, platform=platform)


def write_analysis(paths: Sequence[str | Path | RunResult] | str | Path | RunResult, out: str | Path,
                   tau: float = TAU, *, workload: str | Path | None = None,
                   platform: str | Path | None = None) -> list[Path]:
    """What ``coburst analyze -o OUT`` writes: ``runs.csv``/``.parquet`` and
    ``jobs.csv``/``.parquet`` in the folder ``out``; returns the files written."""
    from coburst.analysis.tables import JobsWriter, analyze_stream, write_run_tables
    from coburst.validate import check_output

    out = Path(out)
    check_output(out / "runs.csv", "out")
    with JobsWriter(out) as jobs_writer:
        runs_df = analyze_stream(_input_paths(paths), tau, workload=workload, platform=platform,
                                 sink=jobs_writer.write)
        written = write_run_tables(runs_df, out)
    return written + list(jobs_writer.paths)


def report(paths: Sequence[str | Path | RunResult] | str | Path | RunResult, out: str | Path, *,
           tau: float = TAU, baseline: str | None = None, title: str = "coburst report",
           kinds: Sequence[str] | None = None, workload: str | Path | None = None,
           platform: str | Path | None = None) -> Path:
    """Write the self-contained HTML report of ``coburst report`` to ``out`` (inputs as
    :func:`analyze`'s, or ``coburst analyze`` folders); returns its path."""
    from coburst.analysis import plots
    from coburst.analysis.report import report_outputs
    from coburst.validate import check_output

    if kinds is None:
        kinds = list(plots.KINDS)
    elif isinstance(kinds, str) or not all(k in plots.KINDS for k in kinds):
        raise InputError("kinds", repr(kinds), f"expected a list of figure kinds among {', '.join(plots.KINDS)}")
    out = check_output(out, "out")
    report_outputs(_input_paths(paths), out, tau=tau, workload=workload, platform=platform, baseline=baseline,
                   title=title, kinds=list(kinds))
    return Path(out)


@dataclass
class CampaignResult:
    """How a campaign stands after :func:`campaign` (counts over the runs it selected)."""

    name: str
    out: Path
    #: run ids of the selected runs, done, failed (with the error recorded) and pending
    runs: list[str]
    done: list[str]
    failed: dict[str, str]
    pending: list[str]
    #: runs executed by this call, and its wall-clock time (s)
    ran: int
    wall_s: float

    @property
    def ok(self) -> bool:
        """Every selected run is done."""
        return len(self.done) == len(self.runs)

    def run_folder(self, run_id: str) -> Path:
        """``<out>/runs/<run_id>``: its ``out_jobs.csv`` and the other outputs, ``params.json``."""
        if run_id not in self.runs:
            raise InputError("run_id", repr(run_id), f"not a run of campaign {self.name}")
        return self.out / "runs" / run_id


def campaign(spec: str | Path, *, out: str | Path | None = None, engine: Literal["coburst", "batsim"] | None = None,
             jobs: int | None = None, only: Sequence[str] = (), retry_failed: bool = False,
             scheduler_address: str | None = None, batsim: str | Path | None = None,
             dry_run: bool = False) -> CampaignResult:
    """What ``coburst campaign`` does: run the campaign file ``spec`` (or resume the campaign
    of an output folder), ``jobs`` runs at a time on this machine or on the Dask cluster at
    ``scheduler_address``; finished runs are kept, so calling it again resumes.  ``only``:
    ``KEY=V1[,V2...]`` filters (``--only``); ``dry_run``: report the state, run nothing.
    Runs that fail are counted in the result (their errors in ``failed``), not raised."""
    from coburst.campaign.launch import launch, load, select

    def bad(name: str, value: Any, problem: str) -> InputError:
        return InputError(f"campaign({name}=...)", repr(value), problem)

    if engine not in (None, "coburst", "batsim"):
        raise bad("engine", engine, "expected 'coburst' or 'batsim'")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise bad("jobs", jobs, "expected a positive integer")
    if isinstance(only, str) or not all(isinstance(v, str) for v in only):
        raise bad("only", only, "expected a list of KEY=V1[,V2...] strings")
    for name, value in (("spec", spec), ("out", out), ("batsim", batsim)):
        if value is not None and not isinstance(value, (str, Path)):
            raise bad(name, value, "expected a path (str or pathlib.Path)")
    camp = load(spec, out, engine)
    selected = select(camp, list(only)) if only else camp.runs
    outcome = launch(camp, selected, out_option="out" if out is not None else f"{camp.source} ([campaign] out)",
                     jobs=jobs, scheduler_address=scheduler_address, batsim=None if batsim is None else str(batsim),
                     retry_failed=retry_failed, dry_run=dry_run)
    done = {r.run_id for r in outcome.done}
    failed = {r.run_id: str(status.get("error") or "") for r, status in outcome.failed}
    ids = [r.run_id for r in selected]
    return CampaignResult(name=camp.name, out=Path(camp.out), runs=ids, done=[i for i in ids if i in done],
                          failed=failed, pending=[i for i in ids if i not in done and i not in failed],
                          ran=outcome.ran, wall_s=outcome.wall_s)
