"""``coburst theory generate / evaluate / worst-case`` end to end, with bad inputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from coburst.cli.main import main
from coburst.theory.io import load_instances
from coburst.theory.opt import solve_opt

ROOT = Path(__file__).resolve().parents[1]


def test_generate_is_deterministic_and_evaluate_answers(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["theory", "generate", "--n", "5", "--alpha", "0.45", "0.55", "--count", "4", "--seed", "7",
                 "-o", str(a)]) == 0
    assert main(["theory", "generate", "--n", "5", "--alpha", "0.45", "0.55", "--count", "4", "--seed", "7",
                 "-o", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes() and a.read_bytes().endswith(b"\n")
    doc = json.loads(a.read_text())
    first = doc["instances"][0]
    assert first["n"] == 5 and len(first["b"]) == 5 and sorted(map(int, first["speeds"])) == list(range(1, 32))
    assert all(100 <= x <= 200 for x in first["b"])
    ans = tmp_path / "ans.json"
    assert main(["theory", "evaluate", str(a), "-o", str(ans)]) == 0
    answers = json.loads(ans.read_text())["answers"]
    assert [x["id"] for x in answers] == [x["id"] for x in doc["instances"]]
    for x, inst in zip(answers, load_instances(a)):
        assert set(x) == {"id", "valid", "error", "opt_makespan", "fcs_makespan"}
        assert x["valid"] is True and x["error"] is None
        assert x["opt_makespan"] == pytest.approx(solve_opt(inst).makespan)
        assert x["opt_makespan"] <= x["fcs_makespan"] * (1 + 1e-9)


def test_evaluate_reports_invalid_instances_and_answers_the_rest(tmp_path):
    src = tmp_path / "a.json"
    assert main(["theory", "generate", "--n", "3", "--alpha", "0.2", "0.3", "--count", "3", "-o", str(src)]) == 0
    doc = json.loads(src.read_text())
    bad = doc["instances"][1]
    bad["speeds"]["3"][0] = 0.1  # T0 rises from {T0,T1} (0.1) to {T0,T1,T2} (0.2)
    bad["speeds"]["7"][0] = 0.2
    doc["instances"][2]["speeds"].pop("5")
    src.write_text(json.dumps(doc))
    out = tmp_path / "ans.json"
    assert main(["theory", "evaluate", str(src), "-o", str(out)]) == 0
    answers = json.loads(out.read_text())["answers"]
    assert answers[0]["valid"] is True and answers[0]["opt_makespan"] > 0
    assert answers[1]["valid"] is False and answers[1]["opt_makespan"] is None
    assert "constraint (1)" in answers[1]["error"] and "task 0" in answers[1]["error"]
    assert "3 {T0,T1}" in answers[1]["error"] and "7 {T0,T1,T2}" in answers[1]["error"]
    assert answers[2]["valid"] is False and "combination 5 is missing" in answers[2]["error"]


@pytest.mark.parametrize("content, message", [
    ("not json", "invalid JSON"),
    ('{"runs": []}', 'expected {"instances"'),
    ('{"instances": [{"n": 1}]}', "string id"),
    ('{"instances": [{"id": "a", "n": 1, "b": [1], "speeds": {"1": [1]}}, {"id": "a"}]}', "repeats"),
])
def test_evaluate_bad_files_exit_2_without_output(tmp_path, capsys, content, message):
    src, out = tmp_path / "bad.json", tmp_path / "ans.json"
    src.write_text(content)
    assert main(["theory", "evaluate", str(src), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and str(src) in err
    assert not out.exists() and list(tmp_path.iterdir()) == [src]


def test_bad_options_exit_2_without_output(tmp_path, capsys):
    out = tmp_path / "x.json"
    assert main(["theory", "generate", "--n", "3", "--alpha", "0.6", "0.5", "-o", str(out)]) == 2
    assert "--alpha" in capsys.readouterr().err
    assert main(["theory", "worst-case", "--n", "4", "--strategy", "ucb", "--k", "1", "-o", str(out)]) == 2
    assert "0.5 < k < 1" in capsys.readouterr().err
    assert main(["theory", "worst-case", "--n", "1", "-o", str(out)]) == 2
    assert not out.exists()
    with pytest.raises(SystemExit) as exc:
        main(["theory", "generate", "--n", "0", "--alpha", "0.1", "0.2", "-o", str(out)])
    assert exc.value.code == 2
    assert not out.exists()
    # an output in a place that is a file
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["theory", "generate", "--n", "3", "--alpha", "0.1", "0.2", "-o", str(blocker / "x.json")]) == 2


def test_worst_case_fcs_writes_an_instance_above_two(tmp_path):
    out = tmp_path / "w.json"
    proc = subprocess.run([sys.executable, "-m", "coburst", "theory", "worst-case", "--n", "8", "--iterations", "20",
                           "-o", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "fcs / OPT = 2.09" in proc.stdout and "OPT exact" in proc.stdout
    doc = json.loads(out.read_text())
    rep = doc["worst_case"]
    num, den = map(int, rep["proven_ratio"].split("/"))
    assert num > 2 * den
    (inst,) = load_instances(out)  # the written instance satisfies (1)
    assert inst.n == 8
    # it is an ordinary instances file: evaluate answers it
    ans = tmp_path / "a.json"
    assert main(["theory", "evaluate", str(out), "-o", str(ans)]) == 0
    a = json.loads(ans.read_text())["answers"][0]
    assert a["fcs_makespan"] > 2 * a["opt_makespan"]
    assert main(["theory", "evaluate", str(out), "--schedules", "-o", str(ans)]) == 0
    a = json.loads(ans.read_text())["answers"][0]
    assert [m for m, _, _ in a["fcs_schedule"]] == [0b11111000, 0b110, 0b1]
    assert sum(a["opt_times"].values()) == pytest.approx(a["opt_makespan"])


def test_worst_case_search_strategy(tmp_path):
    pytest.importorskip("coburst.theory.search")
    out = tmp_path / "w.json"
    assert main(["theory", "worst-case", "--n", "4", "--strategy", "pi", "--iterations", "10", "-o", str(out)]) == 0
    rep = json.loads(out.read_text())["worst_case"]
    assert rep["strategy"] == "pi" and rep["ratio"] >= 1 and rep["k"] == 0.9
    (inst,) = load_instances(out)
    from coburst.theory.search import run

    assert run(inst, "pi", k=0.9, interval=10.0).makespan / solve_opt(inst).makespan == pytest.approx(rep["ratio"])
