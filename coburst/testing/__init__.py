"""What coburst's own policy tests use, for anyone writing a policy (a plugin's tests too).

>>> from coburst.testing import run_policy, assert_invariants, assert_deterministic
>>> run = run_policy("backfill-sjf-1", "workloads/kth_sp2_head.json", "platforms/kth_sp2.xml")  # doctest: +SKIP
>>> assert_invariants(run)                                                                     # doctest: +SKIP

* :func:`run_policy` -- one run through the embedded simulator (:mod:`coburst.testing.run`);
  ``policy`` is a registered name or a policy class;
* invariant assertions (:mod:`coburst.testing.invariants`): :func:`assert_capacities` (nodes,
  cores, burst buffers never over-committed), :func:`assert_every_job_ends`,
  :func:`assert_reservations_kept` (where the policy's ``keeps_reservations`` promises it),
  :func:`assert_same_bytes` / :func:`assert_deterministic` (same inputs and seed, same
  bytes), :func:`assert_invariants` (the first three); on the scheduling core's records:
  :func:`check_invariants`, :func:`check_reservations_kept`;
* outputs read back as records (:mod:`coburst.testing.records`);
* hypothesis strategies for random platforms and workloads
  (:mod:`coburst.testing.strategies`, needs ``hypothesis``; served from here on first use):
  ``clusters`` and ``workloads`` (the scheduling core's), ``dragonfly_cases``,
  ``cosched_cases`` and ``hetero_cases`` (a platform and a workload for each family).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coburst.lazy import module_getattr

if TYPE_CHECKING:  # pragma: no cover
    from coburst.testing.strategies import (DragonflyCase, PlatformCase, clusters, cosched_cases, dragonfly_cases,
                                            hetero_cases, workloads)

from coburst.testing.invariants import (assert_capacities, assert_deterministic, assert_every_job_ends, assert_invariants,
                                        assert_reservations_kept, assert_same_bytes, check_invariants,
                                        check_reservations_kept)
from coburst.testing.run import PolicyRun, RunFailed, run_policy

__all__ = ["run_policy", "PolicyRun", "RunFailed", "assert_deterministic", "assert_capacities",
           "assert_every_job_ends", "assert_invariants", "assert_reservations_kept", "assert_same_bytes",
           "check_invariants", "check_reservations_kept", "clusters", "workloads", "dragonfly_cases",
           "DragonflyCase", "cosched_cases", "hetero_cases", "PlatformCase"]

#: the strategies, served on first use (importing this package does not import hypothesis)
__getattr__ = module_getattr(__name__, {name: "strategies" for name in (
    "clusters", "workloads", "dragonfly_cases", "DragonflyCase", "cosched_cases", "hetero_cases", "PlatformCase")})
