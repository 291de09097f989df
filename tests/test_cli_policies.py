"""``coburst policies``: the listing, one policy's parameters (from its Param declarations),
JSON for tools, and the errors (unknown name: exit 2, close matches)."""

from __future__ import annotations

import json

import pytest

from coburst import registry
from coburst.cli.main import main
from coburst.cli.policies import check_text, describe_param, type_text
from coburst.policies.base import Param


@pytest.fixture(autouse=True)
def fresh_registry():
    registry.reset_plugins()
    yield
    registry.reset_plugins()


def run(capsys, *argv):
    code = main(["policies", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_listing_names_every_policy(capsys):
    code, out, err = run(capsys)
    assert code == 0 and not err
    lines = out.splitlines()
    assert lines[0].split() == ["POLICY", "FAMILY", "ORIGIN", "SOURCE", "NEEDS"]
    first = {line.split()[0]: line for line in lines[1:]}
    assert len(first) == len(registry.entries(plugins=False)) == len(lines) - 1
    # what to type: the bare name unless another family takes it first
    assert "fcfs" in first and "cosched:fcfs" in first and "cosched:filler" in first and "easy-co" in first
    assert "Kopański 2020, Alg. 4" in first["backfill"] and "burst buffers (optional)" in first["backfill"]
    assert "node sharing, heatmap" in first["popularity"] and "Kuchumov & Korkhov 2021" in first["fcs"]
    assert "heterogeneous hosts" in first["min-min"] and first["min-min"].split()[1] == "hetero"


def test_the_family_filter(capsys):
    code, out, _ = run(capsys, "--family", "hetero")
    assert code == 0 and [line.split()[0] for line in out.splitlines()[1:]] == ["min-min", "max-min", "duplex",
                                                                                 "astar", "heuristic"]
    code, _, err = run(capsys, "--family", "nope")
    assert code == 2 and "--family: nope: unknown family" in err


def test_one_policy_shows_its_parameters(capsys):
    code, out, err = run(capsys, "backfill-sjf-1")
    assert code == 0 and not err
    assert out.startswith("backfill-sjf\n") and "  Kopański 2020, Alg. 5: as :class:`Backfill`" in out
    assert "coburst.policies.backfill:BackfillSJF" in out and "label sets  depth=1" in out
    assert "names       backfill-sjf, bb:backfill-sjf, backfill-sjf-D, easy-sjf" in out
    rows = [line.split(None, 3) for line in out.splitlines() if line.startswith("  depth")]
    assert rows == [["depth", "int", "1", "lambda d: d >= 0"]]
    assert "      reservation depth, an integer >= 0" in out


def test_parameters_of_other_families(capsys):
    code, out, _ = run(capsys, "cosched:Pop-Filler")
    assert code == 0 and out.startswith("pop-filler\n")
    for name in ("backfill_depth", "backfill_rule", "heatmap", "threshold", "sort_depth"):
        assert f"  {name} " in out, name
    assert "int | None" in out  # sort_depth
    assert "_heatmap_ok(value)" in out
    code, out, _ = run(capsys, "shortest_fastest")
    assert code == 0 and "label sets  job_selection='shortest', node_selection='high_gflops'" in out
    code, out, _ = run(capsys, "fcfs")
    assert "parameters: none" in out and "bb (burst-buffer-aware" in out


def test_json_for_tools(capsys):
    code, out, _ = run(capsys, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["problems"] == []
    by = {d["qualified"]: d for d in doc["policies"]}
    assert set(by) == {e.qualified for e in registry.entries(plugins=False)}
    window = by["bb:window"]
    assert window["origin"] == "coburst" and window["class"] == "coburst.policies.window:Window"
    assert {p["name"]: p["default"] for p in window["params"]}["window"] == 10
    code, out, _ = run(capsys, "maxutil-1.0-1", "--json")
    d = json.loads(out)
    assert d["implied"] == {"beta": 1.0, "depth": 1} and d["names"][:2] == ["maxutil", "bb:maxutil"]
    assert {p["name"]: p["type"] for p in d["params"]}["beta"] == "int | float"


@pytest.mark.parametrize("name, close", [("backfil", "backfill"), ("EASY-co", "easy-co"), ("duplx", "duplex")])
def test_unknown_name_exits_2_with_close_matches(capsys, name, close):
    code, out, err = run(capsys, name)
    assert code == 2 and not out
    assert err.startswith(f"coburst policies: error: policy: {name}: unknown policy; did you mean ")
    assert close in err and "Traceback" not in err


def test_describing_params():
    assert type_text(int) == "int" and type_text((int, type(None))) == "int | None"
    p = Param("x", (int, float), 0.5, lambda v: 0 < v < 1, "a fraction"); q = Param("y", str, "a", lambda s: s in "ab")
    assert describe_param(p) == {"name": "x", "type": "int | float", "default": 0.5, "check": "lambda v: 0 < v < 1",
                                 "doc": "a fraction"}
    assert check_text(q.check) == "lambda s: s in 'ab'" and check_text(None) == ""


def test_broken_plugins_warn_and_the_others_are_listed(capsys, tmp_path, monkeypatch):
    from plugin_support import make_dist

    make_dist(tmp_path / "a", "good-dist", {"mine": "goodmod:Mine"}, {"goodmod.py": (
        "from coburst.policies.backfill import Backfill\n\n\nclass Mine(Backfill):\n"
        '    """Backfilling again (Kopański 2020, Alg. 4)."""\n\n    family = "mine"\n')})
    make_dist(tmp_path / "b", "broken-dist", {"oops": "nomod:X"})
    monkeypatch.syspath_prepend(str(tmp_path / "a"))
    monkeypatch.syspath_prepend(str(tmp_path / "b"))
    registry.reset_plugins()
    code, out, err = run(capsys)
    assert code == 0
    assert err.startswith("coburst: warning: plugin policy skipped (distribution 'broken-dist 0.1', entry point "
                          "'oops' = 'nomod:X'): cannot be loaded: ModuleNotFoundError: No module named 'nomod'")
    names = [line.split()[0] for line in out.splitlines()[1:]]
    assert "mine" in names and "backfill" in names and "easy-co" in names
    mine = next(line for line in out.splitlines() if line.startswith("mine "))
    assert mine.split()[1:4] == ["bb", "plugin", "good-dist"] and "Kopański 2020, Alg. 4" in mine
    code, out, _ = run(capsys, "mine")
    assert code == 0 and "entry point mine = goodmod:Mine" in out
    assert [line.split(None, 3) for line in out.splitlines() if line.startswith("  depth")] == [
        ["depth", "int", "1", "lambda d: d >= 0"]]
    code, out, _ = run(capsys, "--json")
    doc = json.loads(out)
    assert len(doc["problems"]) == 1 and "broken-dist" in doc["problems"][0]
