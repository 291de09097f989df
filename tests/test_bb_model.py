"""Burst-buffer request model (Kopański 2020, §2.5): draws, caps, and the 5-distribution fit."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from coburst.errors import InputError
from coburst.models.bb_request import BBRequestModel
from coburst.models.fit import best, cross_validate
from shared_data import need_swf

ROOT = Path(__file__).resolve().parents[1]
GB = 10**9


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "coburst", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


def test_parameters_are_table_2_3_and_statistics_table_2_4():
    model = BBRequestModel.load()
    assert (model.s, model.loc, model.scale) == (1.09725, -150361, 2714115)
    st = model.statistics_kib()
    # Table 2.4 (KiB): mean 4804884, sd 7569200, median 2563753 (parameters are rounded in Table 2.3)
    assert st["mean"] == pytest.approx(4804884, rel=1e-5)
    assert st["sd"] == pytest.approx(7569200, rel=1e-5)
    assert st["median"] == pytest.approx(2563753, rel=1e-6)
    ref = stats.lognorm(s=1.09725, loc=-150361, scale=2714115)
    assert st["mean"] == pytest.approx(ref.mean()) and st["median"] == pytest.approx(ref.median())
    # §2.2: 8 compute nodes per BB node x mean request = 36.64 GiB = 39.34 GB -> 40 GB nodes
    assert 8 * st["mean"] * 1024 / 2**30 == pytest.approx(36.66, abs=0.03)


def test_draws_follow_the_lognormal():
    model = BBRequestModel.load()
    raw_kib = model.draw_raw_bytes(np.random.default_rng(7), 40_000) / 1024
    ks = stats.kstest(raw_kib, model.distribution().cdf)
    assert ks.pvalue > 0.001
    assert np.median(raw_kib) == pytest.approx(model.statistics_kib()["median"], rel=0.03)


def test_generated_requests_match_the_model_mean_median_and_caps():
    model = BBRequestModel.load()
    rng = np.random.default_rng(11)
    cap, nb_bb = 40 * GB, 12
    values = np.array([model.request(rng, 1, 3600, cap, nb_bb) for _ in range(30_000)])
    # reference: the same rules applied to scipy's own lognormal draws
    ref = model.distribution().rvs(size=200_000, random_state=np.random.default_rng(12)) * 1024
    ref = np.minimum(np.maximum(ref, model.floor_bytes), cap)
    assert values.mean() == pytest.approx(ref.mean(), rel=0.03)
    assert np.median(values) == pytest.approx(np.median(ref), rel=0.03)
    assert np.median(values) == pytest.approx(2563753 * 1024, rel=0.03)  # floor and cap leave the median alone
    assert values.min() >= model.floor_bytes and values.max() <= cap
    floor_share = np.mean(values == model.floor_bytes)
    assert floor_share == pytest.approx(model.distribution().cdf(model.floor_bytes / 1024), abs=0.005)
    assert 0.005 < floor_share < 0.03  # "about 1.5% of jobs"
    assert np.mean(values == cap) == pytest.approx(model.distribution().sf(cap / 1024), abs=0.003)


@pytest.mark.parametrize("res", [1, 7, 12, 13, 50, 96])
def test_fit_to_platform_rule_keeps_every_request_placeable(res):
    model = BBRequestModel.load()
    cap, nb_bb = 40 * GB, 12
    limit = model.cap_bytes(res, cap, nb_bb)
    assert limit == cap // math.ceil(res / nb_bb)
    rng = np.random.default_rng(res)
    for _ in range(200):
        bb = model.request(rng, res, 7200, cap, nb_bb)
        assert model.floor_bytes <= bb <= limit or bb == limit
        # unsplittable placement: each BB node holds floor(cap / bb) node requests
        assert nb_bb * (cap // bb) >= res


def test_short_jobs_get_the_minimal_request():
    model = BBRequestModel.load()
    rng = np.random.default_rng(0)
    assert {model.request(rng, 4, rt, 40 * GB, 12) for rt in (1, 60, 120)} == {10_000_000}
    assert model.request(rng, 4, 121, 40 * GB, 12) != 10_000_000
    assert model.request(rng, 4, 10, 5_000_000, 1) == 1_250_000  # capped by a tiny platform
    assert model.request(rng, 4, 1000, 40 * GB, 0) == 0  # no burst buffer at all


def test_model_file_errors(tmp_path):
    bad = tmp_path / "m.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match="invalid JSON"):
        BBRequestModel.load(bad)
    bad.write_text(json.dumps({"distribution": "gamma", "params": {}}))
    with pytest.raises(InputError, match="only 'lognorm'"):
        BBRequestModel.load(bad)
    bad.write_text(json.dumps({"distribution": "lognorm", "params": {"s": 1}}))
    with pytest.raises(InputError, match="needs numeric s, loc and scale"):
        BBRequestModel.load(bad)
    with pytest.raises(InputError, match="not found"):
        BBRequestModel.load(tmp_path / "none.json")


# ---------------------------------------------------------------------- fitting
def test_fit_recovers_a_known_lognormal():
    true = dict(s=1.09725, loc=-150361, scale=2714115)
    sample = stats.lognorm(**true).rvs(size=6000, random_state=np.random.default_rng(5))
    results = cross_validate(sample, folds=5, seed=1)
    assert [r.name for r in results] == ["Exponential", "Log-normal", "Logistic", "Half-logistic", "Beta"]
    winner = best(results)
    assert winner.scipy_name == "lognorm"
    p = winner.mean_params
    assert p["s"] == pytest.approx(true["s"], rel=0.08)
    assert p["scale"] == pytest.approx(true["scale"], rel=0.08)
    assert abs(p["loc"] - true["loc"]) < 0.05 * true["scale"]
    assert winner.ks_mean < 0.04
    assert all(len(r.ks) == 5 for r in results)


def test_fit_recovers_a_known_exponential():
    sample = stats.expon(loc=0, scale=3e6).rvs(size=4000, random_state=np.random.default_rng(9))
    winner = best(cross_validate(sample, folds=5, seed=2))
    assert winner.scipy_name == "expon"
    assert winner.mean_params["scale"] == pytest.approx(3e6, rel=0.06)


def test_fit_needs_enough_values():
    with pytest.raises(InputError, match="too few values"):
        cross_validate([1.0, 2.0, 3.0])
    with pytest.raises(InputError, match="at least 2 folds"):
        cross_validate(np.arange(100.0), folds=1)


def test_cli_fit_bb_on_synthetic_swf(tmp_path):
    mem = stats.lognorm(s=1.09725, loc=-150361, scale=2714115).rvs(size=3000,
                                                                    random_state=np.random.default_rng(3))
    lines = ["; Version: 2.2"]
    for i, m in enumerate(mem, start=1):
        value = int(round(m)) if m > 1 else -1  # non-positive requests are recorded as unknown
        lines.append(f"{i} {i * 10} 0 100 1 -1 -1 1 200 {value} 1 1 1 -1 -1 -1 -1 -1")
    swf = tmp_path / "synthetic.swf"
    swf.write_text("\n".join(lines) + "\n")
    out = tmp_path / "fit.json"
    proc = run_cli("model", "fit-bb", str(swf), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "Log-normal (best)" in proc.stdout
    assert "Kolmogorov-Smirnov" in proc.stdout and "Half-logistic" in proc.stdout
    doc = json.loads(out.read_text())
    assert doc["best"] == "lognorm" and doc["folds"] == 5
    assert doc["results"][1]["params"]["s"] == pytest.approx(1.09725, rel=0.1)


def test_cli_fit_bb_on_kth_explains_missing_memory():
    proc = run_cli("model", "fit-bb", str(need_swf()))
    assert proc.returncode == 2
    assert "field 10 (requested memory): no job has a positive value" in proc.stderr
    assert "Table 2.3" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_shows_the_model():
    proc = run_cli("model", "bb")
    assert proc.returncode == 0, proc.stderr
    assert "1.09725" in proc.stdout and "-150361" in proc.stdout
