"""The study scripts take plugin policies of their family: ``cosched_study.py --policies``,
``hetero_study.py --policies`` and ``reservation_study.py --more-policies`` name them, and the
campaigns they write run them by name (checked here on the campaign files, without running
the studies; ``coburst campaign`` runs a plugin's name as test_policy_plugin.py shows)."""

from __future__ import annotations

import importlib.util
from argparse import Namespace
from pathlib import Path

import pytest

from coburst import registry
from coburst.campaign.spec import load_campaign
from plugin_support import make_dist

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = '''
from coburst.policies.cosched.easy_co import EASYCo
from coburst.policies.fcfs import FCFS
from coburst.policies.hetero.minmin import MinMin


class BBTiny(FCFS):
    """FCFS as a plugin (Kopański 2020, Alg. 1)."""
    family = "bb-tiny"


class CoTiny(EASYCo):
    """EASY-Co as a plugin (Kellari 2025, §5.2.1)."""
    family = "co-tiny"


class HeteroTiny(MinMin):
    """Min-min as a plugin (Sánchez Sousa 2023, §3.3)."""
    family = "hetero-tiny"
'''


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    make_dist(tmp_path / "site", "tiny-plugins", {"tiny": "tinyplugins"}, {"tinyplugins.py": PLUGINS})
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    registry.reset_plugins()
    yield
    registry.reset_plugins()


def script(name: str):
    spec = importlib.util.spec_from_file_location(f"_study_{name}", ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_module_entry_point_registers_every_class(plugins):
    assert {e.qualified for e in registry.entries() if not e.builtin} == {"bb:bb-tiny", "cosched:co-tiny",
                                                                         "hetero:hetero-tiny"}
    assert registry.plugin_problems() == []


def test_cosched_study_names(plugins):
    study = script("cosched_study")
    assert study.policy_name("EASY-Co") == "easy-co" and study.policy_name("FCFS") == "fcfs"
    assert study.policy_name("co-tiny") == "cosched:co-tiny" and study.policy_name("cosched:sjf-co") == "cosched:sjf-co"
    assert study.policy_name("bb-tiny") is None and study.policy_name("hetero-tiny") is None


def test_hetero_study_runs_a_plugin_as_one_more_scheduler(plugins, tmp_path):
    study = script("hetero_study")
    assert study.registry_policy("hetero-tiny") and not study.registry_policy("co-tiny")
    args = Namespace(seeds="0", synthetic_jobs=8, kth_jobs=8, policies="min_min,hetero-tiny", platforms="low16",
                     out=str(tmp_path / "out"))
    spec, out = study.campaign_spec(args)
    camp = load_campaign(spec, out=out)
    assert sorted({(r.params["scheduler"], r.params["scheduler_spec"]) for r in camp.runs}) == [
        ("hetero-tiny", "hetero-tiny"), ("min_min", str(ROOT / "schedulers" / "heteroMinMin.py"))]


def test_reservation_study_runs_plugins_beside_the_four(plugins, tmp_path):
    study = script("reservation_study")
    assert study.bb_policy("bb-tiny") and study.bb_policy("backfill-sjf-2") and not study.bb_policy("co-tiny")
    spec = study.with_policies(study.TOML, tmp_path / "out", ["bb-tiny"])
    camp = load_campaign(spec, out=tmp_path / "out")
    assert {r.params["scheduler"] for r in camp.runs} == {"fcfs", "no-future-1", "backfill-1", "filler", "bb-tiny"}
    assert all(str(ROOT / "platforms") in r.params["platform"] for r in camp.runs)


def test_a_plugin_name_resolves_to_the_generic_entry_file(plugins):
    from coburst.runner import resolve_scheduler

    for name in ("bb-tiny", "co-tiny", "hetero-tiny", "cosched:co-tiny"):
        spec, options = resolve_scheduler(name, {})
        assert Path(spec).name == "coburstPolicy.py" and options == {"policy": name}
