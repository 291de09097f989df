"""Names contained: a campaign ``name`` names the default output folder (``out/<name>``);
one holding ``../..``, an absolute path, ``..``, NUL bytes, control characters or 300
characters is refused (file, place, problem; status 2) before anything is written, and no
name ever leads a campaign to write outside ``out/``.  Run ids and labels, the other names
that become file names, keep to ``[A-Za-z0-9.+=_-]`` and 150 characters.

The property test drives random hostile names through the real ``coburst campaign`` and
looks at the whole file tree afterwards."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from cli_support import call

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = ('{"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}], '
            '"profiles": {"d": {"type": "delay", "delay": 1}}}')


def basic_string(text: str) -> str:
    """``text`` as a TOML basic string (every character escaped that TOML asks to be)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def spec(name: str) -> str:
    return (f"[campaign]\nname = {basic_string(name)}\n[[schedulers]]\nscheduler = \"fcfs\"\n"
            f"[[platforms]]\npath = \"{ROOT / 'platforms' / 'cluster16.xml'}\"\n[[workloads]]\npath = \"w.json\"\n")


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@contextlib.contextmanager
def inside(folder: Path):
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def campaign_with_name(root: Path, name: str) -> tuple[int, str, set[str]]:
    """``coburst campaign c.toml`` in ``root/work`` (the default output folder: out/<name>);
    (status, stderr, the entries created anywhere under ``root``)."""
    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    (work / "c.toml").write_text(spec(name), encoding="utf-8")
    (work / "w.json").write_text(WORKLOAD)
    before = tree(root)
    with inside(work):
        code, err = call("campaign", "c.toml", "-q")
    return code, err, tree(root) - before


def check_contained(root: Path, name: str, code: int, err: str, created: set[str]) -> None:
    assert "Traceback" not in err, err
    if code == 2:  # refused: the file, the place, nothing written
        assert "c.toml: campaign.name: " in err, err
        assert created == set(), created
        assert len(err) < 1200, len(err)  # the name quoted cut
        return
    assert code == 0, err
    assert created, "a campaign that ran wrote nothing"
    for entry in created:
        parts = Path(entry).parts
        assert parts[:2] == ("work", "out"), entry  # nothing outside out/
        if len(parts) > 2:
            assert parts[2] == name, entry  # out/<name>, the name itself


@pytest.mark.parametrize("name", ["../../escape", "../x", "/tmp/absolute", "..", ".", "a\x00b", "a\nb", "a\tb",
                                  "a\x7fb", "x" * 300, "é" * 200, "a/b", "a\\b", " lead"])
def test_hostile_names_are_refused(tmp_path, name):
    code, err, created = campaign_with_name(tmp_path, name)
    assert code == 2, err
    check_contained(tmp_path, name, code, err, created)


def test_a_plain_name_names_the_output_folder(tmp_path):
    code, err, created = campaign_with_name(tmp_path, "my campaign-1")
    assert code == 0, err
    check_contained(tmp_path, "my campaign-1", code, err, created)
    assert (tmp_path / "work" / "out" / "my campaign-1" / "campaign.toml").is_file()


def test_long_names_are_cut_in_the_message(tmp_path):
    code, err, _ = campaign_with_name(tmp_path, "y" * 100_000)
    assert code == 2 and "(100002 characters)" in err and len(err) < 800, err


HOSTILE = st.sampled_from(["..", ".", "/", "\\", "\x00", "\n", "\r", "\x1b", "\x7f", "~", "$HOME", "%s", "{out}",
                           "*", " ", "-", "'", '"', "\u202e", "\ud7ff", "x" * 130])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(HOSTILE, st.text(min_size=1, max_size=8)), min_size=1, max_size=5).map("".join))
def test_no_name_writes_outside_the_output_folder(tmp_path_factory, name):
    root = tmp_path_factory.mktemp("names")
    code, err, created = campaign_with_name(root, name)
    check_contained(root, name, code, err, created)


def test_run_ids_keep_to_safe_characters(tmp_path):
    """Hostile scheduler, workload and label values end in run ids of safe characters only."""
    import re

    from coburst.campaign.spec import load_campaign

    (tmp_path / "w.json").write_text(WORKLOAD)
    text = (f"[[schedulers]]\nname = \"../../{'s' * 300}\"\nscheduler = \"fcfs\"\n"
            f"[[platforms]]\npath = \"{ROOT / 'platforms' / 'cluster16.xml'}\"\n"
            "[[workloads]]\npath = \"w.json\"\nname = \"/etc/\\u0000x\"\nlabels = {lab = \"..\\n/..\"}\n"
            "[[workloads]]\npath = \"w.json\"\nname = \"..\"\nlabels = {lab = \"..\"}\n")
    (tmp_path / "c.toml").write_text(text)
    camp = load_campaign(tmp_path / "c.toml", out=tmp_path / "out")
    assert len(camp.runs) == 2
    for run in camp.runs:
        assert re.fullmatch(r"[A-Za-z0-9.+=_-]{1,150}", run.run_id), run.run_id
        assert run.run_id not in (".", "..")
