"""The policy registry (coburst.registry): every built-in name of every family resolves through
it, every entry file of schedulers/ maps to its policy, shared names follow the naming rule,
plugins are read lazily and a broken plugin is skipped with a warning naming it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from coburst import registry
from coburst.errors import InputError
from coburst.policies import cosched, hetero
from coburst import policies as bb
from plugin_support import make_dist

ROOT = Path(__file__).resolve().parents[1]
TABLES = {"bb": bb, "cosched": cosched, "hetero": hetero}


@pytest.fixture
def no_plugins(monkeypatch):
    """The registry with no plugin read yet, and no plugin dist found beyond the test's."""
    registry.reset_plugins()
    yield
    registry.reset_plugins()


# ---------------------------------------------------------------------- built-in names
def test_every_table_name_resolves_with_its_family_prefix():
    for family, table in TABLES.items():
        for name in table.MODULES:
            found = registry.resolve(f"{family}:{name}")
            assert found.entry.family == family and found.cls is table.resolve(name)[0], (family, name)
            assert found.entry.name == name and found.implied == {}


def test_every_bare_name_resolves_to_the_first_family_knowing_it():
    shared = set()
    for family, table in TABLES.items():
        for name in table.MODULES:
            fams = registry.builtin_families(name)
            assert fams[0] in TABLES and family in fams
            if len(fams) > 1:
                shared.add(name)
            assert registry.resolve(name).entry.family == fams[0]
    assert shared == {"fcfs", "filler", "conservative", "easy"}
    assert registry.builtin_families("easy") == ["bb", "cosched"]  # bb's alias of backfill-1


@pytest.mark.parametrize("name, family, cls_name, implied", [
    ("fcfs", "bb", "FCFS", {}),
    ("easy", "bb", "Backfill", {"depth": 1}),
    ("backfill-sjf-1", "bb", "BackfillSJF", {"depth": 1}),
    ("bb:no-future-2", "bb", "NoFuture", {"depth": 2}),
    ("maxutil-1.0-1", "bb", "MaxUtil", {"beta": 1.0, "depth": 1}),
    ("plan-square-0", "bb", "PlanSquare", {"depth": 0}),
    ("cosched:fcfs", "cosched", "FCFS", {}),
    ("cosched:easy", "cosched", "EASY", {}),
    ("EASY-Co", "cosched", "EASYCo", {}),
    ("cosched:Pop-Filler", "cosched", "PopFiller", {}),
    ("fcs", "cosched", "FCS", {}),
    ("min_min", "hetero", "MinMin", {}),
    ("A*", "hetero", "AStar", {}),
    ("hetero:shortest_fastest", "hetero", "Heuristic", {"job_selection": "shortest", "node_selection": "high_gflops"}),
])
def test_spellings_of_every_family(name, family, cls_name, implied):
    found = registry.resolve(name)
    assert (found.entry.family, found.cls.__name__, found.implied) == (family, cls_name, implied)


def test_the_platform_decides_a_shared_bare_name():
    assert registry.resolve("fcfs", platform_family="cosched").entry.qualified == "cosched:fcfs"
    assert registry.resolve("fcfs", platform_family="hetero").entry.qualified == "bb:fcfs"
    assert registry.resolve("bb:fcfs", platform_family="cosched").entry.qualified == "bb:fcfs"
    assert registry.resolve("easy-co", platform_family="bb").entry.qualified == "cosched:easy-co"


def test_get_builds_the_policy_with_the_labels_parameters():
    assert repr(registry.get("backfill-sjf-1")) == "BackfillSJF(depth=1)"
    assert registry.get("cosched:easy-co", backfill_depth=5).backfill_depth == 5
    with pytest.raises(InputError, match="label says depth 1"):
        registry.get("backfill-1", depth=2)
    with pytest.raises(InputError, match="dpeth"):
        registry.get("backfill", dpeth=1)


@pytest.mark.parametrize("name, close", [("backfil-sjf", "backfill-sjf"), ("easy_co", "easy-co"),
                                         ("minmin", "min-min"), ("cosched:fcf", "cosched:fcfs")])
def test_unknown_names_suggest_close_ones(name, close, no_plugins):
    with pytest.raises(InputError) as err:
        registry.resolve(name)
    assert "unknown policy" in str(err.value) and close in str(err.value), str(err.value)


def test_bad_names():
    with pytest.raises(InputError, match="unknown family 'nope'"):
        registry.resolve("nope:fcfs")
    with pytest.raises(InputError, match="must be a string"):
        registry.resolve(3)
    assert not registry.known("nope:fcfs") and not registry.known(None) and registry.known("hetero:MIN-MIN")


def test_every_entry_has_its_class_source_and_needs():
    for e in registry.entries(plugins=False):
        assert e.source and e.source == e.cls.source, e  # the class's attribute, never written twice
        assert e.cls.family == e.name and e.builtin
        assert e.needs[:1] == registry.FAMILIES[e.family].needs[:1]
        assert ("heatmap" in e.needs) == any(p.name == "heatmap" for p in e.params)
    assert "heatmap" in registry.entry("cosched:popularity").needs
    assert registry.entry("hetero:duplex").needs == ("heterogeneous hosts",)


# ---------------------------------------------------------------------- entry files
def _entry_file_policies() -> list[tuple[str, str | None]]:
    """Every entry file but those that run no registered policy: the trained agent's, one per
    family (tests/test_gym_agent_scheduler.py, tests/test_gym_agent_families.py), and the
    kill-and-resubmit one (tests/test_elastic_resubmit.py)."""
    own = ("coburstAgent.py", "coschedAgent.py", "heteroAgent.py", "coburstResubmit.py")
    files = sorted(p.name for p in (ROOT / "schedulers").glob("*.py") if p.name not in own)
    assert len(files) == 29, files
    return files


@pytest.mark.parametrize("fname", _entry_file_policies())
def test_every_entry_file_maps_to_a_registered_policy(fname, monkeypatch):
    """Each entry file still loads, and the policy it runs is the registry's class for the
    name it fixes (or its default), through its family's adapter."""
    from batsim.tools.launcher import instanciate_scheduler

    from coburst.adapter.generic import ADAPTERS, adapter_class

    monkeypatch.chdir("/")
    sched = instanciate_scheduler(str(ROOT / "schedulers" / fname), {})
    cls = type(sched)
    name = cls.fixed_policy or cls.only_policy or cls.default_policy
    assert name is not None
    family = next(f for f in ADAPTERS if cls.registry is registry.scope(f))
    found = registry.scope(family).lookup(name)
    assert type(sched.policy) is found.cls and isinstance(sched, adapter_class(found.entry.family))
    assert registry.resolve(f"{family}:{name}").cls is found.cls


def test_runner_resolves_names_to_the_same_entry_files_as_before(tmp_path):
    from coburst.runner import resolve_scheduler

    cosched_platform = str(ROOT / "platforms" / "aris_cosched_small.xml")
    cases = [("fcfs", None, "coburstBackfill.py"), ("backfill-sjf-1", None, "coburstBackfill.py"),
             ("easy", None, "coburstBackfill.py"), ("easy-co", None, "coschedPolicy.py"),
             ("EASY-Co", None, "coschedPolicy.py"), ("fcfs", cosched_platform, "coschedPolicy.py"),
             ("cosched:fcfs", None, "coschedPolicy.py"), ("min-min", None, "heteroPolicy.py"),
             ("shortest_fastest", None, "heteroPolicy.py")]
    for name, platform, fname in cases:
        spec, options = resolve_scheduler(name, {"x": 1}, platform)
        assert Path(spec).name == fname and options == {"policy": name, "x": 1}, (name, spec)
    assert resolve_scheduler("easyBackfill", {}) == ("easyBackfill", {})


def test_the_family_adapters_refuse_another_familys_name():
    with pytest.raises(InputError, match="a policy of the bb family; this scheduler runs cosched"):
        registry.scope("cosched").resolve("bb:fcfs")
    assert registry.scope("cosched").resolve("cosched:fcfs")[0] is cosched.FCFS
    assert registry.scope("bb").resolve("fcfs")[0] is bb.FCFS


@pytest.mark.parametrize("policy, adapter, name", [
    (None, "CoburstScheduler", "backfill-1"), ("backfill-sjf-1", "CoburstScheduler", "backfill-sjf-1"),
    ("cosched:easy-co", "CoschedScheduler", "easy-co"), ("min-min", "HeteroScheduler", "min-min"),
])
def test_the_generic_entry_file_takes_the_familys_adapter(policy, adapter, name):
    from batsim.tools.launcher import instanciate_scheduler

    options = {} if policy is None else {"policy": policy}
    sched = instanciate_scheduler(str(ROOT / "schedulers" / "coburstPolicy.py"), options)
    assert type(sched).__name__ == "CoburstPolicy" and type(sched).__mro__[1].__name__ == adapter
    assert sched.policy.name == name


def test_the_generic_entry_file_refuses_bad_options(capsys):
    from batsim.tools.launcher import instanciate_scheduler

    for options, message in (({"policy": "nope"}, "policy: unknown policy"),
                             ({"policy": "cosched:easy-co", "depth": 1}, "depth: unknown option")):
        with pytest.raises(SystemExit) as exc:
            instanciate_scheduler(str(ROOT / "schedulers" / "coburstPolicy.py"), options)
        assert exc.value.code == 2
        assert message in capsys.readouterr().err


# ---------------------------------------------------------------------- plugins
GOOD = '''
from coburst.policies.fcfs import FCFS


class TinyFcfs(FCFS):
    """FCFS again, as a plugin (Kopański 2020, Alg. 1)."""

    family = "tiny-fcfs"
    source = "Kopański 2020, Alg. 1 (a plugin's copy)"
'''
BAD_CLASSES = '''
from coburst.policies.base import Policy
from coburst.policies.cosched.easy_co import EASYCo


class NotAPolicy:
    family = "not-a-policy"


class Abstract(Policy):
    family = "abstract-one"


class FcfsAgain(Policy):
    family = "fcfs"

    def make_decisions(self, state):
        raise AssertionError


class TinyAgain(FcfsAgain):
    family = "tiny-fcfs"


class CoTiny(EASYCo):
    """A co-scheduler of the plugin (Kellari 2025, §5.2.1)."""

    family = "co-tiny"
    source = "Kellari 2025, §5.2.1 (a plugin's copy)"


def not_a_class():
    return None
'''


@pytest.fixture
def plugin_path(tmp_path, monkeypatch):
    make_dist(tmp_path / "a", "aa-good", {"tiny-fcfs": "goodplug:TinyFcfs"}, {"goodplug.py": GOOD})
    make_dist(tmp_path / "b", "bb-broken", {"broken": "brokenplug:Policy"},
              {"brokenplug.py": "import coburst_no_such_module\n"})
    make_dist(tmp_path / "c", "cc-bad", {"nap": "badplug:NotAPolicy", "abs": "badplug:Abstract",
                                         "dup": "badplug:FcfsAgain", "dup2": "badplug:TinyAgain",
                                         "func": "badplug:not_a_class", "co": "badplug:CoTiny"},
              {"badplug.py": BAD_CLASSES})
    paths = [str(tmp_path / d) for d in "abc"]
    for p in reversed(paths):
        monkeypatch.syspath_prepend(p)
    registry.reset_plugins()
    yield paths
    registry.reset_plugins()


def test_built_in_names_never_read_the_plugins(plugin_path):
    registry.resolve("backfill-sjf-1")
    registry.resolve("cosched:fcfs")
    assert registry._PLUGINS is None and "goodplug" not in sys.modules


def test_broken_plugins_are_skipped_with_a_warning_naming_them(plugin_path, capsys):
    names = [e.qualified for e in registry.entries()]
    assert "bb:tiny-fcfs" in names and "cosched:co-tiny" in names and "bb:backfill" in names
    problems = registry.plugin_problems()
    err = capsys.readouterr().err
    expect = [("bb-broken 0.1", "'broken'", "ModuleNotFoundError: No module named 'coburst_no_such_module'"),
              ("cc-bad 0.1", "'nap'", "is not a subclass of coburst.policies.base.Policy"),
              ("cc-bad 0.1", "'abs'", "Abstract is abstract (missing make_decisions)"),
              ("cc-bad 0.1", "'dup'", "its name 'fcfs' is the built-in policy bb:fcfs"),
              ("cc-bad 0.1", "'dup2'", "its name 'tiny-fcfs' is already taken by goodplug:TinyFcfs"),
              ("cc-bad 0.1", "'func'", "is not a class")]
    assert len(problems) == len(expect), problems
    for dist, ep, what in expect:
        assert any(f"distribution '{dist}', entry point {ep}" in p and what in p for p in problems), (dist, ep, problems)
        assert what in err
    assert "Traceback" not in err
    assert err.count("coburst: warning: plugin policy skipped") == len(expect)
    entry = registry.entry("tiny-fcfs")
    assert entry.distribution == "aa-good 0.1" and entry.entry_point == "tiny-fcfs = goodplug:TinyFcfs"
    assert entry.source == "Kopański 2020, Alg. 1 (a plugin's copy)"
    assert registry.entry("co-tiny").needs == ("node sharing",)


def test_plugins_resolve_through_the_families_views(plugin_path, capsys):
    assert registry.scope("bb").resolve("tiny-fcfs")[0].__name__ == "TinyFcfs"
    assert registry.scope("cosched").get("cosched:co-tiny", backfill_depth=3).backfill_depth == 3
    with pytest.raises(InputError, match="a plugin policy of the cosched family"):
        registry.scope("bb").resolve("co-tiny")
    assert registry.resolve("bb:tiny-fcfs").entry.name == "tiny-fcfs"
    assert registry.lookup("cosched:tiny-fcfs") is None


def test_registering_a_class_at_run_time(plugin_path, capsys):
    from coburst.policies.fcfs import FCFS

    class Mine(FCFS):
        family = "mine"

    assert registry.register(Mine).qualified == "bb:mine" and registry.register(Mine).cls is Mine
    assert registry.get("mine").__class__ is Mine

    class Clash(FCFS):
        family = "backfill-sjf-3"  # a bb label

    with pytest.raises(InputError, match="is the built-in policy bb:backfill-sjf"):
        registry.register(Clash)
    with pytest.raises(InputError, match="not a subclass"):
        registry.register(int)


def _modules_after(code: str, env=None) -> list[str]:
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout.splitlines()[-1])


def test_start_up_reads_no_plugin(plugin_path):
    """``coburst --help``, ``coburst sim`` and a built-in policy run's name resolution import
    neither the plugins nor importlib.metadata."""
    import os

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(plugin_path + [str(ROOT)])}
    help_ = ("from coburst.cli.main import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass")
    sim = ("from coburst.cli.main import build_parser\nbuild_parser('sim')")
    run = ("from coburst.runner import resolve_scheduler\nresolve_scheduler('backfill-1', {})\n"
           "resolve_scheduler('cosched:easy-co', {})")
    for code in (help_, sim, run):
        mods = _modules_after(code, env)
        assert not [m for m in mods if m in ("goodplug", "badplug", "coburst.plugins", "importlib.metadata")], code
