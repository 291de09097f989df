"""Burst-buffer request model (Kopański 2020, §2.5 and §2.4).

A job's burst-buffer request is given **per compute node** (one processor of the thesis'
platform is one node) in bytes.  It is drawn from the lognormal of Table 2.3, in KiB per
processor::

    scipy.stats.lognorm(s=1.09725, loc=-150361, scale=2714115)     # KiB

then, in this order (the parameters live in ``models/bb_request.json``):

1. **short jobs** — a job whose runtime is at most ``short_job_runtime`` (120 s) gets the
   constant ``short_job_bytes`` (10 MB) instead of a draw (§2.4, last paragraph);
2. **floor** — a draw below ``floor_bytes`` (100 MB; the lognormal's location is negative)
   is raised to it;
3. **cap** — at most one burst-buffer node's capacity, because the space of one compute
   node may not be split across burst-buffer nodes (§2.2);
4. **fit to the platform** — a job of ``n`` nodes on a platform with ``B`` burst-buffer
   nodes of capacity ``C`` gets at most ``floor(C / ceil(n / B))`` bytes per node: then
   ``ceil(n / B)`` node requests fit in every burst-buffer node and the whole request can
   always be placed on an empty platform (the thesis' own generator capped the total at
   ``B * C``, which is not always placeable under rule 3).

Draws use ``numpy``: ``loc + scale * exp(s * Z)`` with ``Z`` standard normal, which is the
same distribution as scipy's ``lognorm(s, loc, scale)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from coburst.validate import TIME_MAX, Field, check_object, read_json

#: the repository's parameter file
DEFAULT_PATH = Path(__file__).resolve().parents[2] / "models" / "bb_request.json"

#: Table 2.3 and §2.4 values, used when the parameter file is not available (installed package)
TABLE_2_3 = {"s": 1.09725, "loc": -150361.0, "scale": 2714115.0}

#: the parameter file's schema (coburst.validate.Field): the lognormal in KiB per processor;
#: bounds keep every draw finite (scale * exp(s * z) with |z| < 40 stays below 1e30 bytes)
MODEL_FILE = (
    Field("distribution", "string", required=True, choices=("lognorm",), doc="only 'lognorm' is supported"),
    Field("params", "object", required=True, doc="s, loc, scale of scipy.stats.lognorm"),
    Field("unit_bytes", "integer", minimum=1, maximum=2**20, doc="bytes per unit of the parameters (1024: KiB)"),
    Field("floor_bytes", "integer", minimum=0, maximum=2**60, doc="smallest request, bytes per node"),
    Field("short_job_runtime", "number", minimum=0, maximum=TIME_MAX, doc="seconds; shorter jobs get short_job_bytes"),
    Field("short_job_bytes", "integer", minimum=0, maximum=2**60, doc="request of short jobs, bytes per node"),
)
MODEL_PARAMS = (
    Field("s", "number", required=True, minimum=0, exclusive_minimum=True, maximum=10, doc="lognormal shape"),
    Field("loc", "number", required=True, minimum=-1e15, maximum=1e15, doc="location (units)"),
    Field("scale", "number", required=True, minimum=0, exclusive_minimum=True, maximum=1e15, doc="scale (units)"),
)


@dataclass(frozen=True)
class BBRequestModel:
    """Lognormal burst-buffer request model with its caps (see the module docstring)."""

    s: float = TABLE_2_3["s"]
    loc: float = TABLE_2_3["loc"]  # KiB
    scale: float = TABLE_2_3["scale"]  # KiB
    unit_bytes: int = 1024
    floor_bytes: int = 100_000_000
    short_job_runtime: float = 120.0
    short_job_bytes: int = 10_000_000

    # ------------------------------------------------------------------ loading
    @classmethod
    def load(cls, path: str | Path | None = None) -> "BBRequestModel":
        """Read the parameters from ``path`` (default ``models/bb_request.json``)."""
        if path is None:
            if not DEFAULT_PATH.exists():
                return cls()
            path = DEFAULT_PATH
        source = str(path)
        doc = check_object(read_json(path, "burst-buffer model file"), MODEL_FILE, source)
        params = check_object(doc["params"], MODEL_PARAMS, source, "params", hint="needs numeric s, loc and scale")
        return cls(s=float(params["s"]), loc=float(params["loc"]), scale=float(params["scale"]),
                   unit_bytes=int(doc.get("unit_bytes", 1024)),
                   floor_bytes=int(doc.get("floor_bytes", 100_000_000)),
                   short_job_runtime=float(doc.get("short_job_runtime", 120)),
                   short_job_bytes=int(doc.get("short_job_bytes", 10_000_000)))

    # ------------------------------------------------------------------ distribution
    def distribution(self):
        """The frozen ``scipy.stats.lognorm`` (KiB per processor)."""
        from scipy import stats

        return stats.lognorm(s=self.s, loc=self.loc, scale=self.scale)

    def statistics_kib(self) -> dict[str, float]:
        """Mean, standard deviation, median and mode in KiB (Table 2.4)."""
        w = math.exp(self.s**2)
        return {
            "mean": self.loc + self.scale * math.sqrt(w),
            "sd": self.scale * math.sqrt((w - 1.0) * w),
            "median": self.loc + self.scale,
            "mode": self.loc + self.scale / w,
        }

    def draw_raw_bytes(self, rng: np.random.Generator, size: int | None = None):
        """Uncapped draws in bytes (may be negative: the location is negative)."""
        z = rng.standard_normal(size)
        return (self.loc + self.scale * np.exp(self.s * z)) * self.unit_bytes

    # ------------------------------------------------------------------ caps
    @staticmethod
    def cap_bytes(res: int, bb_capacity: int, nb_bb: int) -> int:
        """Largest per-node request a job of ``res`` nodes can always place (rules 3 and 4)."""
        if nb_bb <= 0 or bb_capacity <= 0:
            return 0
        per_bb_node = -(-res // nb_bb)  # ceil(res / nb_bb) node requests on each BB node
        return bb_capacity // per_bb_node

    def finish(self, raw_bytes: float, res: int, runtime: float, bb_capacity: int, nb_bb: int) -> int:
        """Apply rules 1-4 to one raw value (bytes per node) and return the request."""
        cap = self.cap_bytes(res, bb_capacity, nb_bb)
        if runtime <= self.short_job_runtime:
            return min(self.short_job_bytes, cap)
        value = max(float(raw_bytes), float(self.floor_bytes))
        return int(min(math.floor(value + 0.5), cap))

    def request(self, rng: np.random.Generator, res: int, runtime: float, bb_capacity: int, nb_bb: int) -> int:
        """Draw one job's request in bytes per compute node (always consumes one draw)."""
        raw = float(self.draw_raw_bytes(rng))
        return self.finish(raw, res, runtime, bb_capacity, nb_bb)
