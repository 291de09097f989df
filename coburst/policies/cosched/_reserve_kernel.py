"""The numba kernel of the co-scheduling Conservative's reservations: the twin of
:func:`coburst.policies.cosched.traditional._reserve` (same results; a test compares them).
Its own module so that numba caches it (``cache=True`` needs a module-level function) and only
Conservative runs with long queues import numba."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def reserve(t, f, m, w):
    """Earliest segment start of the profile (``t`` dates, ``f`` idle-node counts) with
    ``>= m`` idle nodes for ``w`` seconds; the counts with that reservation taken off (new
    arrays, a date inserted at the reservation's end when it is not one already)."""
    n = t.shape[0]
    nxt = np.empty(n, np.int64)  # first index >= k whose count is < m
    nb = n
    for k in range(n - 1, -1, -1):
        if f[k] < m:
            nb = k
        nxt[k] = nb
    i = -1
    j = n
    for k in range(n):
        if f[k] >= m:
            jk = np.searchsorted(t, t[k] + w)
            if nxt[k] >= jk:
                i = k
                j = jk
                break
    if i < 0:  # cannot happen: the last segment has every node idle
        raise AssertionError("no reservation found")
    start = t[i]
    end = start + w
    insert = np.isfinite(end) and (j >= n or t[j] != end)
    size = n + 1 if insert else n
    t2 = np.empty(size, np.float64)
    f2 = np.empty(size, np.int64)
    if insert:
        t2[:j] = t[:j]
        f2[:j] = f[:j]
        t2[j] = end
        f2[j] = f[j - 1]
        t2[j + 1:] = t[j:]
        f2[j + 1:] = f[j:]
    else:
        t2[:] = t
        f2[:] = f
    for k in range(i, j):
        f2[k] -= m
    return start, t2, f2
