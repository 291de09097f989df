"""Burst-buffer fields of the Batsim protocol, shared by every adapter: the ``bb`` request a
job carries in its workload entry and the ``bb=<id>:<bytes>/...`` metadata a placement is
published with (``SET_JOB_METADATA``)."""

from __future__ import annotations

import math
from typing import Any, Mapping

__all__ = ["bb_metadata", "bb_request"]


def bb_metadata(bb_bytes: Mapping[int, int]) -> str:
    """``bb=<id>:<bytes>/<id>:<bytes>`` (ascending BB resource ids) from BB id -> bytes;
    ``""`` when nothing is taken."""
    if not bb_bytes:
        return ""
    return "bb=" + "/".join(f"{b}:{v}" for b, v in sorted(bb_bytes.items()))


def bb_request(job_json: Mapping[str, Any]) -> int | None:
    """The job's ``bb`` field (bytes per compute node); None if malformed."""
    value = job_json.get("bb", 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if value < 0 or not math.isfinite(value) or value != int(value):
        return None
    return int(value)
