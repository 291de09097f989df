"""coburst's ptask_L07 emulation (coburst/simulator/l07.py in the kernel) against libsimgrid 3.32.

``tests/data/l07_reference.json`` holds the dates SimGrid 3.32 (Batsim 4.2.1's) prints for
parallel tasks and 1-byte messages (``scripts/l07_reference/l07_driver.cpp``; regenerate with
``scripts/l07_reference/regenerate.py``, which needs libsimgrid-dev): one parallel task over
routes of several links, tasks sharing links, FATPIPE and SPLITDUPLEX links, messages sharing
links with tasks, a timed-out task left running then cancelled, a running task cancelled,
loopback routes, multi-core hosts, a host listed twice, tasks with nothing to do, and 40
seeded random mixes on a small platform and on platforms/dragonfly_small.xml.  coburst's
kernel must give every date bit for bit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from coburst.simulator import l07

ROOT = Path(__file__).resolve().parents[1]
DATA = json.loads((ROOT / "tests" / "data" / "l07_reference.json").read_text())
RUNNER = ROOT / "scripts" / "l07_reference" / "scenario.py"


@pytest.fixture(scope="module")
def coburst_dates() -> dict[str, dict[str, float]]:
    """Every scenario run on coburst's kernel (one child process per platform: SimGrid allows
    one engine per process)."""
    results = {}
    for platform in sorted({case["platform"] for case in DATA.values()}):
        names = [name for name, case in DATA.items() if case["platform"] == platform]
        specs = ["\n".join(DATA[name]["spec"]) for name in names]
        proc = subprocess.run([sys.executable, str(RUNNER), str(ROOT / platform)], input=json.dumps(specs),
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        results.update(zip(names, json.loads(proc.stdout)))
    return results


@pytest.mark.parametrize("name", list(DATA))
def test_dates_are_simgrid_332s_bit_for_bit(name, coburst_dates):
    expected = DATA[name]["expected"]
    got = coburst_dates[name]
    diffs = [f"{key}: SimGrid 3.32 {expected.get(key)!r}, coburst {got.get(key)!r}"
             for key in sorted(set(expected) | set(got)) if expected.get(key) != got.get(key)]
    assert not diffs, "\n".join(diffs)


def test_fair_bottleneck_by_hand():
    """Two variables on a shared link of 10, one of them also alone on a link of 4.  First
    pass: fair shares 5 and 4, the lone link saturates (its variable is done at 4), 1 is left
    on the shared link; second pass: the other variable takes that 1 (6 in all)."""
    shared = l07.Constraint("shared", 10.0, False)
    alone = l07.Constraint("alone", 4.0, False)
    a = l07.Variable([(shared, 1.0), (alone, 1.0)], -1.0)
    b = l07.Variable([(shared, 1.0)], -1.0)
    system = l07.FairBottleneck()
    system.enable(a)
    system.enable(b)
    system.solve()
    assert (a.value, b.value) == (4.0, 6.0)


def test_fatpipe_link_is_not_shared():
    pipe = l07.Constraint("pipe", 10.0, True)
    a = l07.Variable([(pipe, 2.0)], -1.0)
    b = l07.Variable([(pipe, 1.0)], -1.0)
    system = l07.FairBottleneck()
    system.enable(a)
    system.enable(b)
    system.solve()
    assert (a.value, b.value) == (5.0, 10.0)


def test_bound_caps_a_variable():
    link = l07.Constraint("link", 10.0, False)
    a = l07.Variable([(link, 1.0)], 3.0)
    b = l07.Variable([(link, 1.0)], -1.0)
    system = l07.FairBottleneck()
    system.enable(a)
    system.enable(b)
    system.solve()
    assert (a.value, b.value) == (3.0, 7.0)  # 5 and 3 (bound) first, then the 2 left
