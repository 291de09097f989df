"""Request and I/O models: burst-buffer requests (Kopański 2020, §2.5), distribution fits."""

from coburst.models.bb_request import BBRequestModel

__all__ = ["BBRequestModel"]
