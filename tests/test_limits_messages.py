"""Messages: an input value quoted in an error message is cut to 200 characters with its size
said; a 20 MB profile name, a 10-million-digit SWF field or JSON number never reach the
terminal whole (the message stays under a kilobyte)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_support import call
from coburst.errors import InputError, shorten

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = ROOT / "platforms" / "cluster16.xml"
HUGE = 20 * 1024 * 1024


def test_shorten_cuts_long_words_and_says_their_size():
    assert shorten("short message") == "short message"
    text = shorten("unknown profile " + "p" * 1000 + " in seq")
    assert text == "unknown profile " + "p" * 200 + "... (1000 characters) in seq"
    assert len(shorten("word " * 10_000)) < 4100
    error = InputError("f.json", "profiles." + "q" * 500, "bad " + "x" * 300)
    assert "(509 characters)" in str(error) and "(300 characters)" in str(error) and len(str(error)) < 600


def test_huge_profile_name_in_a_job(tmp_path):
    path = tmp_path / "w.json"
    path.write_text('{"nb_res": 1, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "' + "p" * HUGE + '"}], '
                    '"profiles": {"d": {"type": "delay", "delay": 1}}}')
    code, err = call("workload", "check", path)
    assert code == 2 and len(err) < 1000, len(err)
    assert f"{path}: jobs[0].profile: unknown profile" in err and f"({HUGE + 2} characters)" in err, err


def test_huge_profile_name_as_a_key(tmp_path):
    path = tmp_path / "w.json"
    path.write_text('{"nb_res": 1, "jobs": [], "profiles": {"' + "p" * HUGE + '": {"type": "banana"}}}')
    code, err = call("workload", "check", path)
    assert code == 2 and len(err) < 1500, len(err)
    assert "unknown or unsupported profile type" in err and "characters)" in err, err


def test_ten_million_digit_json_number(tmp_path):
    path = tmp_path / "w.json"
    path.write_text('{"nb_res": ' + "9" * 10_000_000 + ', "jobs": [], "profiles": {}}')
    code, err = call("workload", "check", path)
    assert code == 2 and len(err) < 500, err
    assert f"{path}: line 1 column 12: a number of 10000000 digits" in err, err


def test_ten_million_digit_swf_field(tmp_path):
    path = tmp_path / "log.swf"
    fields = ["1"] * 18
    fields[1] = "9" * 10_000_000
    path.write_text(" ".join(["1"] * 18) + "\n" + " ".join(fields) + "\n")
    code, err = call("workload", "swf", path, "-o", tmp_path / "o.json", "-p", PLATFORM)
    assert code == 2 and len(err) < 600, len(err)
    assert f"{path}: line 2: field 2" in err and "(10000002 characters)" in err, err
    assert not (tmp_path / "o.json").exists()


@pytest.mark.parametrize("text", ['"' + "x" * 100_000 + '"', "9" * 5000], ids=["string", "integer"])
def test_quoted_values_in_campaign_files_are_cut(tmp_path, text):
    path = tmp_path / "c.toml"
    path.write_text(f"[campaign]\ndescription = {text}\n")
    code, err = call("campaign", path, "--dry-run")
    assert code == 2 and len(err) < 800, err
