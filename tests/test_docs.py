"""The documentation site: it builds offline without a warning (nitpicky), every tutorial's code
runs (myst-nb executes the tutorials while the site is built: the build is their run), every
internal link of the built HTML resolves, and the site renders in headless Chromium, search
included.

The site is built once per test session into a temporary folder (under pytest-xdist, by the
first worker that needs it, the others wait for it and read the same build).
"""

from __future__ import annotations

import fcntl
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: the executed pages (``file_format: mystnb``): tutorials and the getting-started page
EXECUTED = sorted(p.relative_to(DOCS).with_suffix("") for p in DOCS.rglob("*.md")
                  if "_build" not in p.parts and "file_format: mystnb" in p.read_text(encoding="utf-8")[:300])

pytestmark = pytest.mark.timeout(900)


class Site:
    def __init__(self, folder: Path):
        self.folder = folder
        self.html = folder / "html"
        self.log = folder / "build.log"
        self.warnings = folder / "warnings.txt"
        self.status = json.loads((folder / "status.json").read_text())

    def page(self, name: str) -> str:
        return (self.html / name).read_text(encoding="utf-8")


def _build(folder: Path) -> None:
    """sphinx-build -W --keep-going -n -b html, the tutorials executed in ``folder/work``."""
    env = {**os.environ, "COBURST_DOCS_WORK": str(folder / "work"), "COBURST_DOCS_EXECUTE": "force",
           "PYTHONHASHSEED": "0"}
    start = time.monotonic()
    with open(folder / "build.log", "w") as log:
        proc = subprocess.run([sys.executable, "-m", "sphinx", "-j", "2", "-W", "--keep-going", "-n", "-q", "-b", "html",
                               "-d", str(folder / "doctrees"), "-w", str(folder / "warnings.txt"),
                               str(DOCS), str(folder / "html")],
                              cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=840)
    (folder / "status.json").write_text(json.dumps({"returncode": proc.returncode,
                                                    "seconds": round(time.monotonic() - start, 1)}))


@pytest.fixture(scope="module")
def site(tmp_path_factory, worker_id) -> Site:
    # one build per test session: xdist workers share the folder above their own base temp
    root = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        root = root.parent
    folder = root / "docs-site"
    folder.mkdir(exist_ok=True)
    with open(root / "docs-site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (folder / "status.json").exists():
                _build(folder)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return Site(folder)


def _sphinx_warnings(site: Site) -> list[str]:
    text = site.warnings.read_text(encoding="utf-8", errors="replace") if site.warnings.exists() else ""
    return [line for line in text.splitlines() if line.strip()]


def test_site_builds_without_warnings(site):
    log = site.log.read_text(encoding="utf-8", errors="replace")
    assert site.status["returncode"] == 0, f"sphinx-build failed:\n{log[-6000:]}"
    assert _sphinx_warnings(site) == [], "\n".join(_sphinx_warnings(site))
    assert (site.html / "index.html").exists() and (site.html / "search.html").exists()
    assert (site.html / "searchindex.js").exists()


@pytest.mark.parametrize("page", [str(p) for p in EXECUTED])
def test_every_tutorial_ran(site, page):
    """myst-nb executed the page while the site was built (a failing cell fails the build,
    ``nb_execution_raise_on_error``): its code cells have their outputs, none an error."""
    text = site.page(page + ".html")
    cells = text.count('class="cell docutils container"')
    outputs = text.count('class="cell_output docutils container"')
    assert cells >= 3, f"{page}: {cells} code cells"
    assert outputs >= cells // 2, f"{page}: {outputs} outputs for {cells} code cells"
    assert "output error" not in text and "Traceback (most recent call last)" not in text


def test_the_tutorials_are_all_executed():
    assert {str(p) for p in EXECUTED} >= {"getting-started", "tutorials/burst-buffers", "tutorials/co-scheduling",
                                          "tutorials/heterogeneous", "tutorials/theory", "tutorials/real-batsim",
                                          "tutorials/campaign", "tutorials/plugin"}


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        for key in ("href", "src"):
            if key in attrs and attrs[key] is not None and (tag, key) != ("link", "src"):
                self.links.append(attrs[key])


def _parse(path: Path, cache: dict) -> _Links:
    if path not in cache:
        parser = _Links()
        parser.feed(path.read_text(encoding="utf-8", errors="replace"))
        cache[path] = parser
    return cache[path]


def test_every_internal_link_resolves(site):
    """Every relative ``href``/``src`` of every built page points to a file of the site, and
    its ``#fragment`` (if any) to an element of that page."""
    cache: dict[Path, _Links] = {}
    broken = []
    pages = sorted(p for p in site.html.rglob("*.html") if "_static" not in p.relative_to(site.html).parts)
    assert len(pages) > 50
    for page in pages:
        for link in _parse(page, cache).links:
            parts = urlsplit(html.unescape(link))
            if parts.scheme or parts.netloc or link.startswith(("javascript:", "data:", "mailto:")):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site.html)}: {link} (no file)")
                continue
            if parts.fragment and target.suffix == ".html" and parts.fragment not in _parse(target, cache).ids:
                broken.append(f"{page.relative_to(site.html)}: {link} (no anchor)")
    assert broken == [], "\n".join(broken[:50])


def _dom(url: str, profile: Path, budget_ms: int = 15000) -> str:
    proc = subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", f"--virtual-time-budget={budget_ms}",
                           "--user-data-dir=" + str(profile), "--allow-file-access-from-files", "--dump-dom", url],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="headless-browser check: needs Debian's chromium "
                                    "(/usr/bin/chromium); ./go test installs it with apt when run as root")


@needs_chromium
def test_pages_render_in_headless_chromium(site, tmp_path):
    """The home page, a tutorial (with its figure) and an API page, rendered."""
    home = _dom((site.html / "index.html").as_uri(), tmp_path / "profile")
    assert "<h1>coburst" in home and "Getting started" in home and "Tutorials" in home
    tutorial = _dom((site.html / "tutorials" / "burst-buffers.html").as_uri(), tmp_path / "profile")
    assert "Burst buffers: from a workload to the plan-based optimiser" in tutorial
    assert "plan-square-0" in tutorial and re.search(r'<img[^>]+src="[^"]*_images/', tutorial)
    api = _dom((site.html / "api" / "coburst.policies.backfill.html").as_uri(), tmp_path / "profile")
    assert 'id="coburst.policies.backfill.Backfill"' in api and "EASY" in api


@needs_chromium
def test_search_finds_a_policy_by_name(site, tmp_path):
    """Sphinx's search page (offline: its index is a script of the site) lists the EASY
    backfilling policy's pages when searching "easy"."""
    dom = _dom((site.html / "search.html").as_uri() + "?q=easy", tmp_path / "profile")
    results = re.search(r'<ul[^>]*class="search"[^>]*>(.*?)</ul>', dom, re.S)
    assert results, "no search results list in the page"
    hrefs = re.findall(r'href="([^"]+)"', results.group(1))
    # the EASY policy classes among the first results, and the pages that document EASY
    assert any(h.endswith(".EASY") or "policies.backfill" in h for h in hrefs[:10]), hrefs[:10]
    assert any("api/coburst.policies.backfill.html" in h for h in hrefs), hrefs
    assert any("reference/policies.html" in h for h in hrefs), hrefs
