"""JSON layout of co-scheduling instances and answers.

Instances::

    {"instances": [{"id": "s1-0", "n": 3, "b": [b_0, b_1, b_2],
                    "speeds": {"1": [a_0, a_1, a_2], "2": [...], ..., "7": [...]}}]}

``speeds`` has one entry per non-empty combination mask 1..2**n-1 (decimal string keys,
task i = bit i), each the speeds of all n tasks (0 for tasks outside the mask).  Answers
of ``coburst theory evaluate``::

    {"answers": [{"id", "valid", "error", "opt_makespan", "fcs_makespan"}]}

File-level problems (not JSON, no ``instances`` list, an id missing, not a string or
repeated) raise :class:`~coburst.errors.InputError`; a problem inside one instance (a
shape, a number, constraint (1)) is reported for that instance only by
:func:`read_instances`, so that the other instances can still be answered.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from coburst.errors import InputError
from coburst.theory.model import Instance, check_instance
from coburst.validate import read_json

#: largest n read from a file (2**20 x 20 speeds are already 168 MB)
MAX_N = 20


@dataclass
class Entry:
    """One instance of a file: ``inst`` when valid, else ``exc`` (and its text ``error``)."""

    id: str
    inst: Instance | None
    exc: InputError | None = None

    @property
    def error(self) -> str | None:
        return None if self.exc is None else str(self.exc)


def _num(v, source, where) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise InputError(source, where, f"expected a finite number, got {json.dumps(v)[:40]}")
    return float(v)


def parse_instance(doc, source: str, where: str) -> Instance:
    """One instance object -> checked :class:`Instance` (InputError on any problem)."""
    if not isinstance(doc, dict):
        raise InputError(source, where, "expected a JSON object")
    for key in ("id", "n", "b", "speeds"):
        if key not in doc:
            raise InputError(source, where, f"the field {key!r} is missing")
    iid = doc["id"]
    n = doc["n"]
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_N:
        raise InputError(source, f"{where}.n", f"expected an integer from 1 to {MAX_N}, got {json.dumps(n)[:40]}")
    b = doc["b"]
    if not isinstance(b, list) or len(b) != n:
        raise InputError(source, f"{where}.b", f"expected a list of n = {n} numbers")
    b_arr = np.array([_num(v, source, f"{where}.b[{i}]") for i, v in enumerate(b)], dtype=np.float64)
    speeds = doc["speeds"]
    if not isinstance(speeds, dict):
        raise InputError(source, f"{where}.speeds", "expected an object {\"<mask>\": [a_0, ..., a_n-1]}")
    arr = np.zeros((1 << n, n), dtype=np.float64)
    seen = set()
    for key, row in speeds.items():
        if not (isinstance(key, str) and key.isdigit() and str(int(key)) == key and 1 <= int(key) < (1 << n)):
            raise InputError(source, f"{where}.speeds", f"key {key!r} is not a combination mask: expected a decimal "
                                                        f"integer from 1 to {(1 << n) - 1}")
        j = int(key)
        seen.add(j)
        if not isinstance(row, list) or len(row) != n:
            raise InputError(source, f"{where}.speeds[\"{key}\"]", f"expected a list of n = {n} speeds")
        arr[j] = [_num(v, source, f"{where}.speeds[\"{key}\"][{i}]") for i, v in enumerate(row)]
    if len(seen) != (1 << n) - 1:
        missing = next(j for j in range(1, 1 << n) if j not in seen)
        raise InputError(source, f"{where}.speeds", f"combination {missing} is missing (every mask from 1 to "
                                                    f"{(1 << n) - 1} is needed)")
    inst = Instance(iid, b_arr, arr)
    check_instance(inst, source)
    return inst


def read_instances(path: str | Path) -> list[Entry]:
    """Every instance of ``path``, each valid or with its error (see the module doc)."""
    source = str(path)
    doc = read_json(path, "instances file")
    if not isinstance(doc, dict) or not isinstance(doc.get("instances"), list):
        raise InputError(source, None, 'expected {"instances": [...]}')
    out, ids = [], set()
    for k, item in enumerate(doc["instances"]):
        where = f"instances[{k}]"
        iid = item.get("id") if isinstance(item, dict) else None
        if not isinstance(iid, str):
            raise InputError(source, f"{where}.id", "every instance needs a string id")
        if iid in ids:
            raise InputError(source, f"{where}.id", f"id {iid!r} repeats an earlier instance's")
        ids.add(iid)
        try:
            out.append(Entry(iid, parse_instance(item, source, where)))
        except InputError as exc:
            out.append(Entry(iid, None, exc))
    return out


def load_instances(path: str | Path) -> list[Instance]:
    """Every instance of ``path``; the first invalid one raises its InputError."""
    entries = read_instances(path)
    for e in entries:
        if e.exc is not None:
            raise e.exc
    return [e.inst for e in entries]


def instance_doc(inst: Instance) -> dict:
    """The JSON object of one instance (masks in increasing order)."""
    n = inst.n
    return {"id": inst.id, "n": n, "b": [float(v) for v in inst.b],
            "speeds": {str(j): [float(v) for v in inst.speeds[j]] for j in range(1, 1 << n)}}


def dumps(obj) -> str:
    """Deterministic compact JSON with a trailing newline (conventions.md)."""
    return json.dumps(obj, indent=None, separators=(",", ":"), sort_keys=False) + "\n"


def instances_json(insts: list[Instance]) -> str:
    return dumps({"instances": [instance_doc(i) for i in insts]})
