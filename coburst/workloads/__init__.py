"""Workloads: SWF reader, Alloc-Only and IO-Aware job models, splitting, Batsim JSON I/O."""

from coburst.workloads.batsim_json import dumps, read_workload, validate, write_workload
from coburst.workloads.jobmodels import ModelParams, PlatformParams, swf_to_workloads
from coburst.workloads.swf import SwfJob, SwfLog, read_swf

__all__ = ["ModelParams", "PlatformParams", "SwfJob", "SwfLog", "dumps", "read_swf", "read_workload",
           "swf_to_workloads", "validate", "write_workload"]
