"""Running a campaign, shared by ``coburst campaign`` and :func:`coburst.api.campaign`:
choose the runs (``--only``), check everything before anything is created, claim the output
folder, run what is not done yet and say how it ended."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from coburst import validate
from coburst.campaign.spec import Campaign, Run, load_campaign
from coburst.errors import InputError


def load(target: str | Path, out: str | Path | None = None, engine: str | None = None) -> Campaign:
    """A campaign from a spec file, or from an output folder's stored spec."""
    from coburst.campaign.executors import _read_meta, spec_of_output

    path = Path(target)
    if path.is_dir():
        spec_file, text, base = spec_of_output(path)
        engines = _read_meta(path).get("engines")
        return load_campaign(spec_file, out=path, engines=engines, text=text, base_dir=base)
    return load_campaign(path, out=out, engines=[engine] if engine else None)


def select(camp: Campaign, only: Sequence[str]) -> list[Run]:
    """The runs whose parameters match every ``KEY=V1[,V2...]`` of ``only`` (all if empty)."""
    wanted: list[tuple[str, set[str]]] = []
    for item in only:
        key, sep, values = item.partition("=")
        if not sep or not key or not values:
            raise InputError("--only", repr(item), "expected KEY=VALUE[,VALUE...]")
        known = set().union(*(r.params for r in camp.runs)) | {"run_id"}
        if key not in known:
            raise InputError("--only", repr(item), f"unknown parameter {key!r} (known: {', '.join(sorted(known))})")
        wanted.append((key, set(values.split(","))))

    def keep(run: Run) -> bool:
        params = {"run_id": run.run_id, **run.params}
        return all(_norm(params.get(k)) in vs or str(params.get(k)) in vs for k, vs in wanted)

    return [r for r in camp.runs if keep(r)]


def _norm(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass
class Outcome:
    """How a campaign stands after :func:`launch` (counts over the selected runs)."""

    campaign: Campaign
    selected: list[Run]
    #: the runs to do when launched (empty for a dry run)
    todo: list[Run] = field(default_factory=list)
    done: list[Run] = field(default_factory=list)
    failed: list[tuple[Run, dict]] = field(default_factory=list)
    #: runs executed by this launch, and its wall-clock time (s)
    ran: int = 0
    wall_s: float = 0.0
    done_before: int = 0
    failed_before: int = 0

    @property
    def pending(self) -> int:
        return len(self.selected) - len(self.done) - len(self.failed)

    @property
    def out(self) -> Path:
        return Path(self.campaign.out)


def state_of(camp: Campaign, selected: list[Run]) -> tuple[list[Run], list[tuple[Run, dict]]]:
    from coburst.campaign import executors

    state = executors.run_state(camp)
    sel = {r.run_id for r in selected}
    return [r for r in state.done if r.run_id in sel], [(r, s) for r, s in state.failed if r.run_id in sel]


def launch(camp: Campaign, selected: list[Run], *, out_option: str, jobs: int | None = None,
           scheduler_address: str | None = None, batsim: str | None = None, retry_failed: bool = False,
           dry_run: bool = False, log: Callable[[str], None] = lambda line: None,
           execute: Callable[[list[Run], int, str | None, str | None], object] | None = None) -> Outcome:
    """Check, claim ``camp.out`` and run the selected runs not done yet (and the failed ones
    with ``retry_failed``), ``jobs`` at a time (default: the CPU count) or on the Dask cluster at
    ``scheduler_address``.  ``execute(todo, jobs, scheduler_address, batsim)`` runs them
    (default: :func:`coburst.campaign.executors.execute`); ``log`` gets the lines about
    preparing the inputs and the campaign's start."""
    from coburst.campaign import executors

    # every check before anything is created (validate.output_folder: the folder is claimed last)
    executors.check_output(camp)
    validate.check_output_folder(camp.out, out_option)
    if scheduler_address:
        scheduler_address = executors.check_scheduler_address(scheduler_address)
    if dry_run:
        done, failed = state_of(camp, selected)
        return Outcome(camp, selected, done=done, failed=failed)
    if "batsim" in camp.engines:
        from coburst.simulator.external import find_batsim

        batsim = find_batsim(batsim)
    jobs = jobs or executors.default_jobs()
    if execute is None:
        def execute(todo, jobs, address, binary):
            return executors.execute(camp, todo, jobs=jobs, scheduler_address=address, batsim=binary,
                                     retry_failed=retry_failed)
    with validate.output_folder(camp.out, out_option, lock=executors.OutputLock) as folder:
        executors.prepare(camp, log)
        missing = camp.missing_inputs()
        if missing:
            place, path = missing[0]
            more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
            raise InputError(camp.source, place, f"file not found: {path}{more}")
        executors.open_output(camp)
        folder.claim()
        done, failed = state_of(camp, selected)
        skip = {r.run_id for r in done}
        if not retry_failed:
            skip |= {r.run_id for r, _ in failed}
        outcome = Outcome(camp, selected, todo=[r for r in selected if r.run_id not in skip],
                          done_before=len(done))
        outcome.failed_before = len(selected) - len(outcome.todo) - outcome.done_before
        where = f"Dask at {scheduler_address}" if scheduler_address else f"{jobs} at a time"
        log(f"campaign {camp.name}: {len(selected)} runs, {outcome.done_before} done, {outcome.failed_before} "
            f"failed before; running {len(outcome.todo)} ({where}); output {camp.out}")
        t0 = time.monotonic()
        prog = execute(outcome.todo, jobs, scheduler_address, batsim)
        outcome.wall_s = time.monotonic() - t0
        outcome.ran = prog.done + prog.failed
    outcome.done, outcome.failed = state_of(camp, selected)
    return outcome
