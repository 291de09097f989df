"""Helpers shared by the test schedulers of ``tests/schedulers`` (not a scheduler).

pybatsim puts this folder on ``sys.path`` while it imports a scheduler file, so the
schedulers import this module as ``_simtest``.
"""

from __future__ import annotations

import json

import batsim.network
from procset import ProcSet


def install_recorder(path: str) -> None:
    """Append every raw message received from / sent to the simulator to ``path`` (JSON lines)."""
    handler = batsim.network.NetworkHandler
    orig_send, orig_recv = handler.send_string, handler.recv_string

    def record(direction: str, raw: str) -> None:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"dir": direction, "raw": raw}) + "\n")

    def send_string(self, msg):
        record("out", msg)
        return orig_send(self, msg)

    def recv_string(self, blocking=False):
        msg = orig_recv(self, blocking=blocking)
        if msg is not None:
            record("in", msg)
        return msg

    handler.send_string, handler.recv_string = send_string, recv_string


def set_allocation(job, options: dict) -> None:
    """Give ``job`` the allocation (and mappings) its test options name, default ``0..res-1``."""
    alloc = options.get("allocs", {}).get(job.id)
    job.allocation = ProcSet.from_str(alloc) if alloc else ProcSet((0, job.requested_resources - 1))
    if job.id in options.get("storage_mapping", {}):
        job.storage_mapping = options["storage_mapping"][job.id]
    if job.id in options.get("mapping", {}):
        job.mapping = options["mapping"][job.id]
