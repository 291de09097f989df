"""Bounded memory: every JSON (and TOML) reader refuses documents nested deeper than its
limit at once, naming the file, the line, the column and the depth, with no traceback and no
RecursionError: workloads (read whole, and streamed: a value 100,000 levels deep inside a
job used to cost the streaming parser gigabytes), heatmaps, theory instances, campaign files
and the JSON files of a campaign folder.  The scanner itself is checked against a reference
walk (brackets in strings, escaped quotes)."""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_support import call
from coburst.errors import InputError
from coburst.nesting import DEPTH_MAX, file_too_deep, too_deep

DEEP = 100_000
ROOT = Path(__file__).resolve().parents[1]


def nested(n: int = DEEP, opener: str = "[", closer: str = "]") -> str:
    return opener * n + closer * n


def workload(deep_value: str, jobs: int = 1) -> str:
    head = [json.dumps({"id": i, "subtime": i, "res": 1, "profile": "d"}) for i in range(jobs)]
    deep_job = '{"id": "x", "subtime": 1e9, "res": 1, "profile": "d", "v": ' + deep_value + "}"
    return ('{"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 1}},\n "jobs": ['
            + ", ".join(head + [deep_job]) + "]}")


def test_small_workload_refused_with_place_and_depth(tmp_path):
    path = tmp_path / "w.json"
    path.write_text(workload(nested()))
    code, err = call("workload", "check", path)
    assert code == 2, err
    assert f"{path}: line 2 column " in err and f"more than {DEPTH_MAX} levels" in err
    assert f"depth {DEPTH_MAX + 1}" in err and "Traceback" not in err and "Recursion" not in err


def test_just_under_the_limit_is_read(tmp_path):
    from coburst.simulator.workload import load_workload

    path = tmp_path / "w.json"
    path.write_text(workload(nested(DEPTH_MAX - 10)))
    load_workload(path, "w0")


def test_deep_profile_value_refused(tmp_path):
    path = tmp_path / "w.json"
    path.write_text('{"nb_res": 1, "jobs": [], "profiles": {"d": {"type": "delay", "delay": 1, "v": '
                    + nested(DEEP, '{"a": ', "}").replace("{\"a\": }", "{\"a\": 1}") + "}}}")
    code, err = call("workload", "check", path)
    assert code == 2 and f"more than {DEPTH_MAX} levels" in err, err


def test_streamed_workload_refused_quickly_in_little_memory(tmp_path):
    """A large file (streamed: 30,000 jobs, 2 MB) with one job holding a value 100,000 levels
    deep: refused in seconds and under 300 MB (the streaming parser alone took 1 GB and more)."""
    path = tmp_path / "w.json"
    path.write_text(workload(nested(), jobs=30_000))
    assert path.stat().st_size > 1 << 20
    # the peak of this process's own memory (VmHWM): getrusage's ru_maxrss keeps, across the
    # exec, the forking test worker's peak (a gigabyte late in a full run)
    probe = ("import re, sys\nfrom coburst.simulator.workload import load_workload\n"
             "from coburst.errors import InputError\n"
             "try:\n    load_workload(sys.argv[1], 'w0', stream=True)\nexcept InputError as e:\n    print(e)\n"
             "print(re.search(r'VmHWM:\\s*([0-9]+) kB', open('/proc/self/status').read()).group(1))")
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr
    message, peak_kb = proc.stdout.strip().splitlines()
    assert f"{path}: line 2 column" in message and f"more than {DEPTH_MAX} levels" in message, message
    assert int(peak_kb) < 300_000, peak_kb
    assert elapsed < 30, elapsed


def test_heatmap_json_refused(tmp_path):
    from coburst.models.heatmap import HEATMAP_DEPTH, load_heatmap

    path = tmp_path / "h.json"
    path.write_text('{"a": {"b": ' + nested() + "}}")
    with pytest.raises(InputError, match=rf"h.json: line 1 column \d+: JSON nested too deeply: more than {HEATMAP_DEPTH} levels"):
        load_heatmap(path, "json")
    code, err = call("analyze", tmp_path / "nothing", "--heatmap", path, "-o", tmp_path / "out")
    assert code == 2 and "Traceback" not in err and "Recursion" not in err, err


def test_theory_instances_refused(tmp_path):
    path = tmp_path / "i.json"
    path.write_text('{"instances": ' + nested() + "}")
    code, err = call("theory", "evaluate", path, "-o", tmp_path / "o.json")
    assert code == 2, err
    assert f"{path}: line 1 column {14 + DEPTH_MAX}: JSON nested too deeply: more than {DEPTH_MAX} levels" in err, err
    assert not (tmp_path / "o.json").exists()


def test_campaign_file_refused(tmp_path):
    from coburst.campaign.spec import TOML_DEPTH

    path = tmp_path / "c.toml"
    path.write_text('[campaign]\nname = "x"\nv = ' + nested() + "\n")
    code, err = call("campaign", path, "--out", tmp_path / "out")
    assert code == 2, err
    assert f"{path}: line 3 column {4 + TOML_DEPTH + 1}: nested too deeply: more than {TOML_DEPTH} levels" in err, err
    assert not (tmp_path / "out").exists()


def test_campaign_folder_json_files_refused(tmp_path):
    """A run's status.json nested deep: the runner counts the run as not published, readers name the file."""
    from coburst.campaign.runner import read_status, run_folder_state

    run = tmp_path / "r"
    run.mkdir()
    (run / "status.json").write_text('{"a": ' + nested() + "}")
    assert read_status(run) is None
    with pytest.raises(InputError, match=rf"status.json: line 1 column {6 + DEPTH_MAX}: JSON nested too deeply: more than {DEPTH_MAX}"):
        run_folder_state(run, strict=True)


# ------------------------------------------------------------------ the scanner
def _reference(text: str, limit: int):
    depth, inside, escaped, line, col = 0, False, False, 1, 0
    for ch in text:
        col += 1
        if ch == "\n":
            line, col = line + 1, 0
        if inside:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                inside = False
        elif ch == '"':
            inside = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return line, col, depth
        elif ch in "]}":
            depth -= 1
    return None


def _random_json(rng: random.Random, depth: int = 0):
    pick = rng.random()
    if depth < 8 and pick < 0.4:
        return [_random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if depth < 8 and pick < 0.7:
        return {"".join(rng.choice('ab[{"\\]}\n') for _ in range(rng.randint(0, 4))): _random_json(rng, depth + 1)
                for _ in range(rng.randint(0, 3))}
    return "".join(rng.choice('x[]{}"\\\n') for _ in range(rng.randint(0, 5)))


@pytest.mark.parametrize("chunk", [3, 64, 1 << 23])
def test_scanner_matches_a_reference_walk(tmp_path, monkeypatch, chunk):
    import coburst.nesting as nesting

    monkeypatch.setattr(nesting, "_CHUNK", chunk)
    rng = random.Random(7)
    for i in range(400):
        text = json.dumps(_random_json(rng), indent=rng.choice([None, 1]))
        limit = rng.randint(0, 6)
        expected = _reference(text, limit)
        assert too_deep(text, limit) == expected, text
        path = tmp_path / "d.json"
        path.write_text(text)
        assert file_too_deep(path, limit) == expected, text
