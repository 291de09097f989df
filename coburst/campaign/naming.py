"""Readable run ids derived from a run's parameters.

``sched=backfill-sjf-1__model=alloc_only__part=01__seed=0``: the scheduler's name, its
option-grid values, the workload's labels (and ``wl=<name>`` when labels do not tell the
workloads apart or the workload has none), ``plat=<name>`` when there are several platforms, the seed, and
``engine=<e>`` when there are several engines.  Integers are zero-padded to the widest
value of their key (ids sort like the numbers); values keep ``[A-Za-z0-9.+-]`` (others
become ``_``).  An id longer than :data:`MAX_LEN`, or one that two different runs would
share, ends with ``__h=<8 hex digits of the parameters' hash>``.  Two runs with the same
parameters are an error.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from coburst.errors import InputError


def params_hash(params: dict) -> str:
    """8 hex digits of the SHA-1 of the parameters' canonical JSON (sorted keys)."""
    return hashlib.sha1(json.dumps(params, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:8]


MAX_LEN = 150
_BAD = re.compile(r"[^A-Za-z0-9.+-]+")


def _text(value: Any, width: int = 0) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value:0{width}d}" if value >= 0 else str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return _BAD.sub("_", value).strip("_") or "_"

    return "h" + params_hash({"v": value})  # lists, tables: a short hash


def assign_run_ids(src: Path, runs: list, *, grid_keys: list[str], label_names: list[str], nb_platforms: int,
                   nb_engines: int) -> None:

    if not runs:
        return
    # workloads told apart by their labels?
    by_labels: dict[tuple, set] = {}
    for run in runs:
        key = tuple(json.dumps(run.params.get(k)) for k in label_names)
        by_labels.setdefault(key, set()).add(run.params["workload_name"])
    ambiguous = any(len(names) > 1 for names in by_labels.values())
    nb_workloads = len({run.params["workload_name"] for run in runs})

    def need_wl(p: dict) -> bool:
        # labels do not tell the workloads apart, or this workload has none
        return ambiguous or (nb_workloads > 1 and not any(k in p for k in label_names))

    widths: dict[str, int] = {}
    grid_keys = list(dict.fromkeys(grid_keys))
    for run in runs:
        opts = run.task["options"]
        for k in grid_keys:
            v = opts.get(k)
            if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
                widths[k] = max(widths.get(k, 0), len(str(v)))
        for k in label_names:
            v = run.params.get(k)
            if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
                widths[k] = max(widths.get(k, 0), len(str(v)))
        s = run.params["seed"]
        if s >= 0:
            widths["seed"] = max(widths.get("seed", 0), len(str(s)))

    ids: dict[str, list] = {}
    for run in runs:
        p, opts = run.params, run.task["options"]
        parts = [f"sched={_text(p['scheduler'])}"]
        parts += [f"{k}={_text(opts[k], widths.get(k, 0))}" for k in grid_keys if k in opts]
        parts += [f"{k}={_text(p[k], widths.get(k, 0))}" for k in label_names if k in p]
        if need_wl(p):
            parts.append(f"wl={_text(p['workload_name'])}")
        if nb_platforms > 1:
            parts.append(f"plat={_text(p['platform_name'])}")
        parts.append(f"seed={_text(p['seed'], widths.get('seed', 0))}")
        if nb_engines > 1:
            parts.append(f"engine={p['engine']}")
        rid = "__".join(parts)
        if len(rid) > MAX_LEN:
            rid = rid[:MAX_LEN - 12].rstrip("_") + "__h=" + params_hash(p)
        run.run_id = rid
        ids.setdefault(rid, []).append(run)
    for rid, same in ids.items():
        if len(same) == 1:
            continue
        seen: dict[str, Any] = {}
        for run in same:
            h = params_hash(run.params)
            if h in seen:
                raise InputError(src, f"{run.task['workload_place']} / {run.task['scheduler_place']}",
                                 f"two runs with the same parameters ({rid}): a workload, scheduler or option "
                                 "combination is listed twice")
            seen[h] = run
            if not rid.endswith("__h=" + h):
                run.run_id = f"{rid}__h={h}"
