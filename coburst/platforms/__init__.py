"""SimGrid platform generators and readers (Kopański 2020, §2.2)."""

from coburst.platforms.dragonfly import (
    DragonflySpec,
    bb_ranks,
    render_cluster_xml,
    render_xml,
    small_spec,
    thesis_spec,
)
from coburst.platforms.info import PlatformInfo, read_platform

__all__ = ["DragonflySpec", "PlatformInfo", "bb_ranks", "read_platform", "render_cluster_xml", "render_xml",
           "small_spec", "thesis_spec"]
