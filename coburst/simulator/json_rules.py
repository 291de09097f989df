"""How Batsim 4.2.1 reads two things of a workload's JSON that Python's ``json`` reads
otherwise: keys repeated in one object (RapidJSON's ``FindMember`` finds the first member,
``json`` keeps the last) and job ids (Batsim rewrites each job's JSON with the id unescaped and
aborts when that is no longer JSON).  :mod:`coburst.simulator.workload` reads workloads with
these rules."""

from __future__ import annotations

import json
import re
from typing import Any

from coburst.errors import InputError
from coburst.validate import cut, quote


#: characters of a job id that may break Batsim 4.2.1's rewrite of the job's JSON (:func:`check_id_rewrite`)
_RISKY_ID = re.compile(r'[(),|}"\\\x00-\x1f\x7f]')
#: Batsim 4.2.1's rewrite of a job's id in its JSON description (``jobs.cpp``)
_ID_REWRITE = re.compile(r'"id"\s*:\s*(?:"*[^(,|})]*"*)\s*')


def check_id_rewrite(obj: dict, full_id: str, source: str, where: str) -> None:
    """Batsim 4.2.1 (``jobs.cpp`` ``Job::from_json``) writes the job back to JSON, replaces
    ``"id"\\s*:\\s*(?:"*[^(,|})]*"*)\\s*`` by ``"id":"WLOAD!ID"`` (the id unescaped) and aborts
    when the result is not valid JSON: an id holding ``"``, a control character (a newline), or
    one of ``( ) , | }`` (where the pattern stops early).  Such a job is refused here as Batsim
    refuses it, so no id of a ``_jobs.csv`` (written unquoted, as Batsim writes it) ever needs
    quoting."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    rewritten = _ID_REWRITE.sub(lambda m: f'"id":"{full_id}"', text)
    try:
        ok = isinstance(json.loads(rewritten), dict)
    except ValueError:
        ok = False
    if not ok:
        raise InputError(source, where, f"job id {quote(obj.get('id'))}: Batsim 4.2.1 aborts on it (it rewrites the "
                         "job's JSON with the id unescaped, which an id holding '\"', a control character such as "
                         "a newline, or one of ( ) , | } turns into invalid JSON); rename the job")


class _JsonObject(dict):
    """A JSON object with duplicated keys, read as Batsim 4.2.1 reads it: RapidJSON's
    ``FindMember`` finds the *first* member of a name (``"res": 1, "res": 99`` is 1; Python's
    ``json`` keeps the last).  ``duplicates``: the repeated keys, in order, each with the value
    kept and the values dropped."""

    def __init__(self, pairs):
        super().__init__()
        dropped: dict[str, list] = {}
        for key, value in pairs:
            if key in self:
                dropped.setdefault(key, []).append(value)
            else:
                dict.__setitem__(self, key, value)
        self.duplicates = list(dropped)
        self.dropped = dropped


def warn_duplicates(obj: Any, source: str, where: str) -> None:
    """A warning for each key ``obj`` (a :class:`_JsonObject`) repeats: the first value read."""
    from coburst.simulator.platform import warn

    for key in obj.duplicates[:5]:
        others = ", ".join(cut(json.dumps(v), 40) for v in obj.dropped[key][:3])
        warn(source, f"{where}.{cut(key, 60)}" if where else cut(key, 60),
             f"duplicate key {quote(key)}: the first value, {cut(json.dumps(obj[key]), 40)}, is read (as Batsim "
             f"4.2.1 reads it), not {others}")
    if len(obj.duplicates) > 5:
        warn(source, where or None, f"{len(obj.duplicates) - 5} more duplicate keys: the first values read")


def _json_object(pairs: list) -> dict:
    """The reading of a JSON object: a plain dict, or a :class:`_JsonObject` when it has
    duplicated keys (the usual object costs one C-level ``dict`` call, not a subclass's)."""
    obj = dict(pairs)
    return obj if len(obj) == len(pairs) else _JsonObject(pairs)
