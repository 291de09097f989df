"""pybatsim adapter: runs coburst policies as Batsim schedulers (see scheduler.py).

``CoburstScheduler``, ``ADAPTER_OPTIONS`` and ``parse_options`` are loaded on first use (PEP
562): importing a sibling module (``coburst.adapter.bb``) does not import pybatsim."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - names for type checkers
    from coburst.adapter.scheduler import ADAPTER_OPTIONS, CoburstScheduler, parse_options

__all__ = ["ADAPTER_OPTIONS", "CoburstScheduler", "parse_options"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from coburst.adapter import scheduler

    value = getattr(scheduler, name)
    globals()[name] = value
    return value
