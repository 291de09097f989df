"""Hypothesis instances of the co-scheduling model (Kuchumov & Korkhov 2021, §3) that satisfy
constraint (1) by construction: random speeds per combination, each task's speed alone set,
then made monotone (``worst_case.monotone_closure``), zero speeds included."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from coburst.theory.model import Instance
from coburst.theory.worst_case import monotone_closure


@st.composite
def valid_instances(draw, *, min_speed: float = 0.0, works: tuple[float, float] = (1.0, 2.0)):
    """n in 1..5; speeds drawn from {0, 0.5, 1} or [min_speed, 1] (``min_speed``: a lower
    bound for non-zero speeds), the speed alone in (0, 1]; work from ``works`` or [0.01, 1000]."""
    n = draw(st.integers(1, 5))
    size = (1 << n) * n
    vals = draw(st.lists(st.one_of(st.sampled_from([0.0, 0.5, 1.0]), st.floats(min_speed, 1.0)), min_size=size,
                         max_size=size))
    raw = np.array(vals).reshape(1 << n, n)
    alone = draw(st.lists(st.one_of(st.just(1.0), st.floats(0.01, 1.0)), min_size=n, max_size=n))
    for i in range(n):
        raw[1 << i, i] = alone[i]
    b = np.array(draw(st.lists(st.one_of(st.sampled_from(list(works)), st.floats(0.01, 1000.0)), min_size=n,
                               max_size=n)))
    return Instance("h", b, monotone_closure(raw))
