"""A pybatsim scheduler that runs any registered policy, built-in or plugin, by its name.

:class:`PolicyScheduler` looks the ``policy`` option up in :mod:`coburst.registry` (naming rule
there: ``[FAMILY:]NAME``) and becomes the adapter of the policy's family: the burst-buffer
adapter (:class:`~coburst.adapter.scheduler.CoburstScheduler`), the node-sharing one
(:class:`~coburst.adapter.cosched.CoschedScheduler`) or the heterogeneous-cluster one
(:class:`~coburst.adapter.hetero.HeteroScheduler`).  The other options are the adapter's and
the policy's, as with that family's entry files.  A shared bare name (``fcfs``) is the
burst-buffer policy here (the scheduler does not know the platform yet); ``cosched:fcfs``
names the other.  Entry file: ``schedulers/coburstPolicy.py``.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, ClassVar, Mapping

from coburst import registry
from coburst.adapter.scheduler import _SOURCE, CoburstScheduler
from coburst.errors import InputError

__all__ = ["ADAPTERS", "PolicyScheduler", "adapter_class"]

#: registry family -> its pybatsim adapter ("module:Class")
ADAPTERS = {"bb": "coburst.adapter.scheduler:CoburstScheduler",
            "cosched": "coburst.adapter.cosched:CoschedScheduler",
            "hetero": "coburst.adapter.hetero:HeteroScheduler"}


def adapter_class(family: str) -> type[CoburstScheduler]:
    """The adapter class of a registry family."""
    module, name = ADAPTERS[family].split(":")
    return getattr(importlib.import_module(module), name)


class PolicyScheduler(CoburstScheduler):
    """Any registered policy by its name (module doc).  Instantiating it gives an instance of
    the family's adapter (a subclass named as the entry file's class)."""

    default_policy: ClassVar[str | None] = "backfill-1"
    _made: ClassVar[dict] = {}

    def __new__(cls, options: Mapping[str, Any] | None = None, *args, **kwargs):
        try:
            adapter = cls.adapter_for(options)
        except InputError as err:
            # bad input: a message, no traceback (pybatsim instantiates us from its CLI)
            print(f"coburst: {err}", file=sys.stderr)
            raise SystemExit(2) from None
        return adapter(options)

    @classmethod
    def adapter_for(cls, options: Mapping[str, Any] | None) -> type[CoburstScheduler]:
        """The adapter class (a subclass carrying this class's name and default policy) of the
        policy the options name."""
        options = dict(options or {})
        name = options.get("policy", cls.default_policy)
        if name is None:
            raise InputError(_SOURCE, "policy", 'missing (e.g. "backfill-sjf-1")')
        try:
            family = registry.resolve(name).entry.family
        except InputError as err:
            raise InputError(_SOURCE, "policy", err.problem) from None
        base = adapter_class(family)
        key = (cls, base)
        made = cls._made.get(key)
        if made is None:
            made = cls._made[key] = type(cls.__name__, (base,), {
                "__module__": cls.__module__, "__qualname__": cls.__qualname__, "__doc__": cls.__doc__,
                "default_policy": cls.default_policy})
        return made

    @classmethod
    def check_options(cls, options: Mapping[str, Any] | None):
        return cls.adapter_for(options).check_options(options)
