"""The job model of jobs that change size (coburst.models.elastic) and the performance models
(coburst.models.perf): safe expressions, Amdahl, Downey, and the errors naming file, place and problem."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coburst.errors import InputError
from coburst.models.perf import Expression, ExpressionError, amdahl, downey, downey_speedup
from coburst.models.elastic import parse_elastic

APP = {"on_init": "2", "on_reconfiguration": "1 + 0.5 * num_nodes", "on_expansion": [{"type": "delay", "seconds": 3}],
       "phases": [{"name": "a", "iterations": "steps", "evolving_request": "num_nodes + 1",
                   "tasks": [{"type": "compute", "flops": "size * (iteration + 1)"},
                             {"type": "compute", "seconds": 10, "model": "amdahl", "serial_fraction": 0.2},
                             {"type": "compute", "seconds": "t", "model": "downey", "A": 4, "sigma": 2},
                             {"type": "compute", "flops": "1e9", "per_node": True}, 1.5]}]}


def job(**elastic):
    return {"id": 1, "res": 4, "subtime": 0, "walltime": -1, "profile": "p",
            "elastic": {"type": "malleable", "num_nodes_min": 2, "num_nodes_max": 8,
                        "arguments": {"size": 8e9, "steps": 3, "t": 16}, **elastic}}


def test_expressions_evaluate_arithmetic_functions_and_conditions():
    env = {"num_nodes": 4, "iteration": 2}
    assert Expression("num_nodes ^ 2 + 2 ** 3").evaluate(env) == 24.0
    assert Expression("max(1, num_nodes / 8) if iteration > 1 else 0").evaluate(env) == 1.0
    assert Expression("sqrt(num_nodes) * log2(8) + ceil(0.2) - floor(1.7) + abs(-1)").evaluate(env) == 7.0
    assert Expression("iteration == 2 and num_nodes").evaluate(env) == 4
    assert Expression(3).evaluate({}) == 3.0


@pytest.mark.parametrize("text", ["__import__('os')", "num_nodes.real", "[1, 2]", "(lambda: 1)()", "'a'",
                                  "open('x')", "x[0]", "num_nodes if", "2 ** 100000", "1 / 0"])
def test_expressions_refuse_anything_but_arithmetic(text):
    with pytest.raises(ExpressionError):
        Expression(text).evaluate({"num_nodes": 1.0, "x": 1.0})


def test_unknown_variable_is_named():
    with pytest.raises(ExpressionError, match="unknown variable 'nodes'"):
        Expression("nodes * 2").evaluate({"num_nodes": 2})


def test_amdahl_and_downey():
    assert amdahl(100, 1, 0.3) == 100
    assert amdahl(100, 10, 0.0) == 10
    assert downey_speedup(1, 10, 1.5) == 1.0
    assert downey_speedup(1000, 10, 0.5) == 10.0 and downey_speedup(1000, 10, 2.0) == 10.0
    assert downey(64, 4, 1000, 0) == 16.0  # sigma 0: linear speedup up to A


@settings(max_examples=200, deadline=None)
@given(st.floats(1, 500), st.floats(0, 3), st.integers(1, 2000))
def test_downey_speedup_is_monotone_and_bounded_by_a_and_n(A, sigma, n):
    s = downey_speedup(n, A, sigma)
    assert 1.0 - 1e-9 <= s <= min(A, n) + 1e-9
    assert downey_speedup(n + 1, A, sigma) >= s - 1e-9


def test_model_times():
    spec = parse_elastic(job(), {"elastic": APP}, "w.json", "jobs[0]")
    assert spec.kind == "malleable" and spec.iterations == (3,) and spec.start_sizes() == (2, 8)
    n, speed = 4, 1e9
    expected = 8e9 * 2 / (n * speed) + amdahl(10, n, 0.2) + downey(16, n, 4, 2) + 1.0 + 1.5
    assert math.isclose(spec.iteration_time(0, 1, n, speed), expected)
    assert spec.cost(spec.app.on_reconfiguration, 6, 4, speed) == 4.0
    assert spec.requested(0, 0, 4) is None  # a malleable job asks nothing
    evolving = parse_elastic(job(type="evolving"), {"elastic": APP}, "w.json", "jobs[0]")
    assert evolving.requested(0, 0, 4) == 5 and evolving.start_sizes() == (4, 4)


def test_plain_jobs_have_no_model_and_application_may_sit_on_the_job():
    assert parse_elastic({"id": 1, "res": 2}, None, "w.json", "jobs[0]") is None
    spec = parse_elastic(job(application=APP), {}, "w.json", "jobs[0]")
    assert len(spec.app.phases[0].tasks) == 5


@pytest.mark.parametrize("change, place, problem", [
    ({"type": "elastic"}, "jobs[0].elastic.type", "unknown job type"),
    ({"num_nodes_min": 5}, "jobs[0].res", "outside [num_nodes_min, num_nodes_max]"),
    ({"num_nodes_max": 1}, "jobs[0].elastic", "above num_nodes_max"),
    ({"num_nodes_min": 0}, "jobs[0].elastic.num_nodes_min", "positive integer"),
    ({"type": "rigid"}, "jobs[0].elastic", "rigid job has"),
    ({"arguments": {"num_nodes": 1}}, "jobs[0].elastic.arguments.num_nodes", "identifier"),
    ({"arguments": {"size": "big"}}, "jobs[0].elastic.arguments.size", "expected a number"),
    ({"colour": 1}, "jobs[0].elastic", "unexpected field"),
])
def test_job_errors_name_file_place_and_problem(change, place, problem):
    with pytest.raises(InputError) as info:
        parse_elastic(job(**change), {"elastic": APP}, "w.json", "jobs[0]")
    assert info.value.source == "w.json" and info.value.where == place and problem in info.value.problem


@pytest.mark.parametrize("app, place, problem", [
    ({"phases": []}, "profiles.p.elastic.phases", "non-empty list"),
    ({"phases": [{"tasks": [{"type": "communication", "bytes": 1}]}]}, "profiles.p.elastic.phases[0].tasks[0]",
     "a communication task has 'bytes' and 'pattern'"),
    ({"phases": [{"tasks": [{"type": "tpu", "flops": 1}]}]}, "profiles.p.elastic.phases[0].tasks[0].type",
     "unknown task type \"tpu\""),
    ({"phases": [{"tasks": [{"type": "gpu", "flops": 1}]}]}, "profiles.p.elastic.phases[0].tasks[0]",
     "the job has none: give its elastic.num_gpus_per_node"),
    ({"phases": [{"tasks": ["nodes * 2"]}]}, "profiles.p.elastic.phases[0].tasks[0]", "unknown variable(s) nodes"),
    ({"phases": [{"tasks": [1], "iterations": "num_nodes"}]}, "profiles.p.elastic.phases[0].iterations",
     "unknown variable(s) num_nodes"),
    ({"phases": [{"tasks": [1], "iterations": 2.5}]}, "profiles.p.elastic.phases[0].iterations", "integer"),
    ({"phases": [{"tasks": [{"type": "compute", "seconds": 1, "model": "gustafson"}]}]},
     "profiles.p.elastic.phases[0].tasks[0].model", "unknown model"),
    ({"phases": [{"tasks": [{"type": "compute", "seconds": 1, "model": "amdahl"}]}]},
     "profiles.p.elastic.phases[0].tasks[0]", "needs 'serial_fraction'"),
    ({"phases": [{"tasks": [{"type": "compute", "seconds": 1, "flops": 2}]}]},
     "profiles.p.elastic.phases[0].tasks[0]", "either 'flops' or 'seconds'"),
    ({"phases": [{"tasks": [1]}], "on_reconfiguration": "iteration"}, "profiles.p.elastic.on_reconfiguration",
     "unknown variable(s) iteration"),
    ({"phases": [{"tasks": ["__import__('os').system('true')"]}]}, "profiles.p.elastic.phases[0].tasks[0]",
     "unknown function"),
    ({"phases": [{"tasks": ["num_nodes.bit_length()"]}]}, "profiles.p.elastic.phases[0].tasks[0]", "unknown function"),
    ({"phases": [{"tasks": ["(1).real"]}]}, "profiles.p.elastic.phases[0].tasks[0]", "not allowed"),
])
def test_model_errors_name_file_place_and_problem(app, place, problem):
    with pytest.raises(InputError) as info:
        parse_elastic(job(), {"elastic": app}, "w.json", "jobs[0]", "profiles.p")
    assert info.value.where == place and problem in info.value.problem, str(info.value)


def test_missing_application_is_explained():
    with pytest.raises(InputError, match="no application model"):
        parse_elastic(job(), {"type": "delay", "delay": 1}, "w.json", "jobs[0]")
