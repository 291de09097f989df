"""``coburst report``: the HTML report, and its rendering in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from analyze_support import campaign, outputs
from simharness import COBURST

from coburst.analysis import plots
from coburst.analysis.report import build_report, report_outputs
from coburst.analysis.tables import analyze

pytestmark = pytest.mark.timeout(300)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    outs = [outputs(root / f"p{k}", n=30, squeeze=s) for k, s in enumerate((20, 40, 80))]
    camp = campaign(root / "camp", outs)
    runs, jobs = analyze([camp])
    html = root / "report.html"
    manifest = build_report(runs, jobs, html, baseline="fcfs")
    return camp, runs, jobs, html, manifest


def _manifest(text: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="manifest">(.*?)</script>', text, re.S).group(1))


def test_report_self_contained_and_deterministic(report, tmp_path):
    _, runs, jobs, html, manifest = report
    text = html.read_text()
    assert _manifest(text) == manifest and manifest["baseline"] == "fcfs" and manifest["runs"] == 6
    assert len(manifest["figures"]) >= 10
    assert text.count('src="data:image/png;base64,') == len(manifest["figures"])
    for name in manifest["figures"]:
        assert f'data-figure="{name}"' in text
    assert not re.search(r'(src|href)="(https?:)?//', text)  # no network
    assert text.count('class="sortable"') == 2
    again = tmp_path / "again.html"
    build_report(runs, jobs, again, baseline="fcfs")
    assert again.read_bytes() == html.read_bytes()


def test_streamed_report_is_the_same_page(report, tmp_path):
    """``report_outputs`` (what ``coburst report`` and ``coburst campaign report`` call) keeps
    only the distribution columns of every job and re-reads the runs drawn whole: the page is
    byte for byte the one built from the whole per-job table."""
    camp, runs, jobs, html, manifest = report
    chosen = plots.detail_runs(runs, plots.KINDS, max_gantt=3, max_timeseries=2)
    assert 0 < len(chosen) < len(runs)  # some runs are read only through their distribution columns
    out = tmp_path / "streamed.html"
    assert report_outputs([camp], out, baseline="fcfs") == manifest
    assert out.read_bytes() == html.read_bytes()
    only_boxes = tmp_path / "boxes.html"
    report_outputs([camp], only_boxes, baseline="fcfs", kinds=["boxen", "ci"])
    assert len(_manifest(only_boxes.read_text())["figures"]) == 2
    assert plots.detail_runs(runs, ["boxen", "ci"]) == set()


def test_cli_report_and_bad_baseline(report, tmp_path):
    camp = report[0]
    out = tmp_path / "r.html"
    proc = subprocess.run([str(COBURST), "report", str(camp), "-o", str(out), "--baseline", "nope"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--baseline: nope: no such policy" in proc.stderr
    assert not out.exists() and not list(tmp_path.glob(".r.html*"))
    proc = subprocess.run([str(COBURST), "report", str(camp), "-o", str(out), "--baseline", "backfill-1",
                           "--kinds", "ci,pareto"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert _manifest(out.read_text())["figures"] == ["ci", "pareto"]


CLICK = """<script>
window.addEventListener('load', function () {
  var table = document.getElementById('runs');
  var heads = Array.prototype.map.call(table.tHead.rows[0].cells, function (c) { return c.textContent; });
  var col = heads.indexOf('mean_waiting');
  var th = table.tHead.rows[0].cells[col];
  th.click();
  var asc = Array.prototype.map.call(table.tBodies[0].rows, function (r) { return r.cells[col].getAttribute('data-v'); });
  th.click();
  var desc = Array.prototype.map.call(table.tBodies[0].rows, function (r) { return r.cells[col].getAttribute('data-v'); });
  document.body.setAttribute('data-asc', asc.join(' '));
  document.body.setAttribute('data-desc', desc.join(' '));
});
</script></body>"""


def _dump(path: Path) -> str:
    proc = subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--virtual-time-budget=10000",
                           "--user-data-dir=" + str(path.parent / "chromium-profile"), "--dump-dom",
                           path.resolve().as_uri()], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.skipif(CHROMIUM is None, reason="headless-browser check: needs Debian's chromium (/usr/bin/chromium); "
                    "./go test installs it with apt when run as root")
def test_report_renders_in_headless_chromium(report, tmp_path):
    _, runs, _, html, manifest = report
    dom = _dump(html)
    body = re.search(r"<body([^>]*)>", dom).group(1)
    ok = int(re.search(r'data-images-ok="(\d+)"', body).group(1))
    broken = int(re.search(r'data-images-broken="(\d+)"', body).group(1))
    assert (ok, broken) == (len(manifest["figures"]), 0)
    assert len(re.findall(r"<img ", dom)) == len(manifest["figures"])
    assert "data-broken" not in dom.replace('setAttribute(\'data-broken\'', "").split("<script>")[0]
    for name in manifest["figures"]:
        assert f'id="fig-{name}"' in dom
    # a damaged image is detected (the check can fail)
    bad = tmp_path / "bad.html"
    bad.write_text(html.read_text().replace("data:image/png;base64,iVBOR", "data:image/png;base64,AAAA", 1))
    body = re.search(r"<body([^>]*)>", _dump(bad)).group(1)
    assert 'data-images-broken="1"' in body
    # the sort script: click the mean_waiting header twice
    clicked = tmp_path / "click.html"
    clicked.write_text(html.read_text().replace("</body>", CLICK, 1))
    body = re.search(r"<body([^>]*)>", _dump(clicked)).group(1)
    asc = [float(x) for x in re.search(r'data-asc="([^"]*)"', body).group(1).split()]
    desc = [float(x) for x in re.search(r'data-desc="([^"]*)"', body).group(1).split()]
    assert asc == sorted(runs["mean_waiting"]) and desc == sorted(runs["mean_waiting"], reverse=True)
