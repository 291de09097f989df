"""``scripts/kopanski_kth_variants.toml`` (the bounded-slowdown question): the
campaign of the two readings of Kopański 2020, Alg. 8 line 32 -- its runs, their policy
options (each a valid policy) and ``kth_comparison.py --variants``' choice of policies."""

from __future__ import annotations

import subprocess
import sys

from coburst import policies
from coburst.campaign.spec import load_campaign
from simharness import REPO

SPEC = REPO / "scripts" / "kopanski_kth_variants.toml"


def test_variant_runs_and_options(tmp_path):
    camp = load_campaign(SPEC, out=tmp_path / "kth")
    names = sorted({r.params["scheduler"] for r in camp.runs})
    assert names == ["backfill-sjf-1", "plan-cube-0", "plan-cube-0-plan", "plan-square-0", "plan-square-0-plan"]
    assert len(camp.runs) == 16 * 2 * 5
    for run in camp.runs:
        task = run.task
        opts = {k: v for k, v in task["options"].items() if k != "decision_log"}
        pol = policies.get(task["scheduler"], **opts)   # every run's policy is valid
        name = run.params["scheduler"]
        if name.startswith("plan"):
            assert pol.execute == ("plan" if name.endswith("-plan") else "fill")
            assert pol.name == name.removesuffix("-plan")


def test_variants_policy_choice_is_checked():
    bad = subprocess.run([sys.executable, str(REPO / "scripts" / "kth_comparison.py"), "--variants",
                          "--report-only", "--policies", "window-1"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "window-1 not in this campaign" in bad.stderr
