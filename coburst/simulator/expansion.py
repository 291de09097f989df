"""The bound on what one job's profile expands into.

A ``composed`` profile runs its sequence ``repeat`` times (Batsim 4.2.1 takes any 32-bit
``repeat``), and sequences nest: ten lines of workload can ask for 2**31 x 2**31 tasks, a
run that never ends.  Each job's profile is measured when the workload is loaded (and when
the scheduler starts a job of a profile it registered); past :data:`MAX_TASKS` tasks the job
is refused, naming the job and the profile.  ``COBURST_MAX_PROFILE_TASKS=N`` raises the
bound, ``COBURST_MAX_PROFILE_TASKS=off`` removes it.
"""

from __future__ import annotations

from typing import Any, Mapping

from coburst.errors import InputError
from coburst.validate import quote

#: a workload's profiles by name (``coburst.simulator.workload.Profile`` objects: their
#: ``type`` and ``data`` are read)
Profiles = Mapping[str, Any]

#: the most tasks (leaf profiles run one after the other) one job's profile may expand into
#: (composed profiles' ``repeat`` times their sequences, nested); lifted by
#: :data:`MAX_TASKS_ENV` (a number, or ``off``)
MAX_TASKS = 1_000_000
MAX_TASKS_ENV = "COBURST_MAX_PROFILE_TASKS"


def max_profile_tasks() -> int | None:
    """The bound on a job's expanded profile (:data:`MAX_TASKS`, or ``$COBURST_MAX_PROFILE_TASKS``:
    a positive integer, or ``off``/``0`` for none)."""
    import os

    text = os.environ.get(MAX_TASKS_ENV, "").strip()
    if not text:
        return MAX_TASKS
    if text.lower() in ("off", "0", "none"):
        return None
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise InputError(MAX_TASKS_ENV, None, f"expected a positive integer or 'off', got {quote(text)}")
    return value


def expanded_sizes(profiles: Profiles, cap: int) -> dict[str, int]:
    """The number of tasks each composed profile expands into (``repeat`` x the sum over its
    sequence, nested), saturated at ``cap + 1``; profiles already checked for cycles and
    unknown names (:func:`check_composed_references`); iterative (no recursion limit)."""
    sizes: dict[str, int] = {}
    for root, prof in profiles.items():
        if prof.type != "composed" or root in sizes:
            continue
        todo = [root]
        while todo:
            name = todo[-1]
            seq = profiles[name].data["seq"]
            missing = [s for s in seq if profiles[s].type == "composed" and s not in sizes]
            if missing:
                todo.extend(missing)
                continue
            todo.pop()
            total = 0
            for s in seq:
                total += sizes.get(s, 1)
                if total > cap:
                    break
            sizes[name] = min(cap + 1, total * int(profiles[name].data.get("repeat", 1)))
    return sizes


def oversized_profiles(profiles: Profiles) -> tuple[dict[str, int], int | None]:
    """The composed profiles that expand into more than :func:`max_profile_tasks` tasks (name
    -> size, saturated), and that bound (None: no bound, nothing oversized)."""
    cap = max_profile_tasks()
    if cap is None or not any(p.type == "composed" for p in profiles.values()):
        return {}, cap
    return {n: s for n, s in expanded_sizes(profiles, cap).items() if s > cap}, cap


def oversized_error(source: str, where: str, job_id: Any, profile: str, cap: int) -> InputError:
    """The error of a job whose profile expands past the bound."""
    return InputError(source, where, f"job {quote(job_id)}: its profile {quote(profile)} expands into more than "
                      f"{cap} tasks (composed profiles' 'repeat' times their sequences): refused to bound the "
                      f"simulation's time; set {MAX_TASKS_ENV}=N (a larger bound) or {MAX_TASKS_ENV}=off to run it")
