"""Numeric extremes of co-scheduling theory instances: a work of 1e308 (or any whose serial
schedule passes 1e15 time units, such as a speed alone of 1e-300) are named for the instance
(the LP solver, HiGHS, reads 1e20 as infinity: they were a ``RuntimeError`` traceback), and
the instances inside the range are still solved."""

from __future__ import annotations

import json

import pytest

from cli_support import call
from coburst.errors import InputError
from coburst.theory.io import load_instances
from coburst.theory.model import SERIAL_MAX


@pytest.fixture
def generated(tmp_path):
    path = tmp_path / "gen.json"
    code, err = call("theory", "generate", "--n", 3, "--alpha", 0.45, 0.55, "-o", path)
    assert code == 0, err
    return json.loads(path.read_text())


def variant(tmp_path, doc, name, change) -> tuple:
    doc = json.loads(json.dumps(doc))
    change(doc["instances"][0])
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    code, err = call("theory", "evaluate", path, "-o", tmp_path / f"{name}.out.json")
    assert code == 0 and "Traceback" not in err, err
    return path, json.loads((tmp_path / f"{name}.out.json").read_text())["answers"][0]


@pytest.mark.parametrize("work", [1e308, 1e300, 1e20, 2 * SERIAL_MAX])
def test_huge_work_is_named(tmp_path, generated, work):
    def change(inst):
        inst["b"][1] = work

    path, answer = variant(tmp_path, generated, "huge", change)
    assert answer["valid"] is False
    assert answer["error"].startswith(f"{path}: instance 's0-0': the tasks run alone one after the other take ")
    assert f"(task 1: work {work:g} at speed 1)" in answer["error"] and "rescale the works" in answer["error"]
    with pytest.raises(InputError, match="past the LP solver's numeric range"):
        load_instances(path)


def test_tiny_speed_alone_is_named(tmp_path, generated):
    def change(inst):
        inst["speeds"] = {k: [x * 1e-300 for x in v] for k, v in inst["speeds"].items()}

    _, answer = variant(tmp_path, generated, "tiny", change)
    assert answer["valid"] is False
    assert "past the LP solver's numeric range" in answer["error"] and "at speed 1e-300" in answer["error"], answer


def test_the_edges_of_the_range_are_solved(tmp_path, generated):
    def change(inst):
        inst["b"] = [SERIAL_MAX / 3 * 1e-3] * 3
        inst["speeds"] = {k: [x * 1e-3 for x in v] for k, v in inst["speeds"].items()}

    _, answer = variant(tmp_path, generated, "edge", change)
    assert answer["valid"] is True and answer["opt_makespan"] > 1e14, answer
    assert answer["fcs_makespan"] >= answer["opt_makespan"] * (1 - 1e-9)
