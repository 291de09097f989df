"""pybatsim adapter: runs coburst policies as Batsim schedulers (see scheduler.py)."""

from coburst.adapter.scheduler import ADAPTER_OPTIONS, CoburstScheduler, parse_options

__all__ = ["ADAPTER_OPTIONS", "CoburstScheduler", "parse_options"]
