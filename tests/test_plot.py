"""``coburst plot`` and :mod:`coburst.analysis.plots` on real simulator outputs."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from analyze_support import campaign, outputs
from simharness import COBURST

from coburst.analysis import plots
from coburst.analysis.tables import analyze

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    root = tmp_path_factory.mktemp("plot")
    outs = [outputs(root / f"p{k}", n=30, squeeze=s) for k, s in enumerate((20, 40, 80))]
    camp = campaign(root / "camp", outs)
    return camp, analyze([camp])


@pytest.mark.parametrize("kind", plots.KINDS)
def test_every_kind_draws_and_is_deterministic(tables, kind):
    _, (runs, jobs) = tables
    figs = plots.make(kind, runs, jobs, baseline="fcfs")
    assert figs, kind
    first = [plots.render(f.figure, "png") for f in figs] + [plots.render(f.figure, "svg") for f in figs]
    again = plots.make(kind, runs, jobs, baseline="fcfs")
    second = [plots.render(f.figure, "png") for f in again] + [plots.render(f.figure, "svg") for f in again]
    assert first == second
    assert all(b.startswith(b"\x89PNG") for b in first[:len(figs)])
    assert b"<dc:date>" not in b"".join(first[len(figs):])


def test_normalised_table_divides_by_baseline_of_same_part(tables):
    _, (runs, _) = tables
    t = plots.normalised_table(runs, "fcfs", ["mean_waiting"])
    assert np.allclose(t.loc[t["policy"] == "fcfs", "mean_waiting"], 1.0)
    assert t["setting"].nunique() == 3  # part=1..3
    bf = runs[runs["policy"] == "backfill-1"]["mean_waiting"].to_numpy()
    fc = runs[runs["policy"] == "fcfs"]["mean_waiting"].to_numpy()
    assert np.allclose(np.sort(t.loc[t["policy"] == "backfill-1", "mean_waiting"]), np.sort(bf / fc))


def test_bootstrap_ci_seeded_and_sensible():
    v = np.random.default_rng(3).exponential(100.0, 5000)
    lo, hi = plots.bootstrap_ci(v, seed=1)
    assert (lo, hi) == plots.bootstrap_ci(v, seed=1)
    assert lo < v.mean() < hi and hi - lo < 20
    lo2, hi2 = plots.bootstrap_ci(np.c_[v, 2 * v], seed=1)
    assert lo2[1] == pytest.approx(2 * lo2[0]) and hi2[1] == pytest.approx(2 * hi2[0])


def test_pareto_front():
    x = np.array([1.0, 2.0, 3.0, 2.5])
    y = np.array([0.5, 0.8, 0.9, 0.7])  # (2.5, 0.7) is dominated by (2.0, 0.8)
    assert list(plots.pareto_front(x, y)) == [0, 1, 2]


def test_cli_plot_writes_png_and_svg(tables, tmp_path):
    camp, _ = tables
    proc = subprocess.run([str(COBURST), "plot", str(camp), "--kind", "pareto,tail", "-o", str(tmp_path / "f"),
                           "--format", "png,svg", "--baseline", "fcfs"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "f").iterdir()) == ["pareto.png", "pareto.svg", "tail.png", "tail.svg"]


@pytest.mark.parametrize("args, problem", [
    (["--kind", "pie"], "--kind: pie: unknown value"),
    (["--kind", "ci", "--format", "gif"], "--format: gif"),
    (["--kind", "ci", "--baseline", "nope"], "--baseline: nope: no such policy"),
    (["--kind", "pareto", "--pareto", "mean_waiting,colour"], "--pareto: colour: no such metric"),
])
def test_cli_plot_bad_options(tables, tmp_path, args, problem):
    camp, _ = tables
    proc = subprocess.run([str(COBURST), "plot", str(camp), "-o", str(tmp_path / "f"), *args], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and problem in proc.stderr and "Traceback" not in proc.stderr
    assert not list((tmp_path / "f").glob("*.png")) if (tmp_path / "f").exists() else True
