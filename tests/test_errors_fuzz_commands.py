"""Failing commands, fuzzed: the commands added since the validation layer -- campaign files, the
analysis tables (CSV and Parquet) that ``plot`` and ``report`` read, heatmap files, and the
options of every generator (platforms, workloads, theory instances).

Each malformed input ends with status 2, one message naming the file or the option, no
traceback, and no output left; a valid one is accepted (status 0).  ``coburst.cli.main.main``
runs in this process (no simulation is started: campaigns are ``--dry-run``).
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from campaign_support import PLATFORM, ROOT, delay_workloads, write_spec
from cli_support import call
from shared_data import swf_log

pytestmark = pytest.mark.timeout(300)

FUZZ = settings(max_examples=30, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def clean_failure(code: int, err: str, *names) -> None:
    assert code == 2, (code, err)
    assert "Traceback" not in err, err
    lines = [ln for ln in err.strip().splitlines() if ln.strip() and not ln.startswith(("usage:", " "))]
    assert len(lines) == 1, err
    assert any(str(n) in err for n in names), (names, err)


# ====================================================================== campaign files
VALUES = st.sampled_from([0, -1, 1.5, "", "x", [], {}, [1, "a"], {"a": 1}, True, "nan", 10**30, "../../nope"])


@st.composite
def mutated_spec(draw):
    """A valid campaign document with one key deleted, retyped or added, somewhere."""
    doc = {"platforms": [str(PLATFORM)], "campaign": {"name": "f", "seeds": [0, 1]},
           "schedulers": [{"name": "s", "scheduler": "fcfs", "options": {}, "grid": {"policy": ["fcfs"]}}],
           "workloads": [{"path": "wl/d{n}.json", "vary": {"n": [20]}, "labels": {"m": "d"}}]}
    paths = []

    def walk(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                paths.append(path + (k,))
                walk(v, path + (k,))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                paths.append(path + (i,))
                walk(v, path + (i,))

    walk(doc, ())
    path = draw(st.sampled_from(paths))
    op = draw(st.sampled_from(["delete", "set", "add"]))
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    key = path[-1]
    if op == "delete":
        del parent[key]
    elif op == "set":
        parent[key] = draw(VALUES)
    elif isinstance(parent, dict):
        parent[draw(st.sampled_from(["zz", "optons", "seed", "out"]))] = draw(VALUES)
    else:
        parent.append(draw(VALUES))
    return doc


@pytest.fixture(scope="module")
def campaign_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("campaign")
    delay_workloads(folder / "wl", [20])
    return folder


@FUZZ
@given(doc=mutated_spec())
def test_fuzz_campaign_files(campaign_dir, doc):
    from coburst.campaign.spec import dumps_toml

    spec = campaign_dir / "c.toml"
    out = campaign_dir / "o"
    shutil.rmtree(out, ignore_errors=True)
    try:
        text = dumps_toml(doc)
    except (TypeError, ValueError):
        return  # not representable in TOML: not a file a user can write
    spec.write_text(text)
    code, err = call("campaign", spec, "--out", out, "--dry-run", "-q")
    assert "Traceback" not in err
    if code != 0:
        clean_failure(code, err, spec)
    assert not out.exists()  # a dry run creates nothing


@FUZZ
@given(cut=st.integers(0, 10_000))
def test_campaign_file_truncated_anywhere(campaign_dir, cut):
    spec = write_spec(campaign_dir / "t.toml", {"name": "t"}, {"scheduler": "fcfs", "grid": {"policy": ["fcfs"]}},
                      {"path": "wl/d{n}.json", "vary": {"n": [20]}})
    data = spec.read_bytes()
    spec.write_bytes(data[: cut % (len(data) + 1)])
    code, err = call("campaign", spec, "--out", campaign_dir / "o2", "--dry-run", "-q")
    assert "Traceback" not in err
    if code != 0:
        clean_failure(code, err, spec)


# ====================================================================== analysis tables
@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tables")
    delay_workloads(folder / "wl", [20, 30])
    spec = write_spec(folder / "c.toml", {"name": "c"}, {"scheduler": "fcfs", "grid": {"policy": ["fcfs", "easy"]}},
                      {"path": "wl/d{n}.json", "vary": {"n": [20, 30]}})
    code, err = call("campaign", spec, "--out", folder / "o", "-q")
    assert code == 0, err
    code, err = call("analyze", folder / "o", "-o", folder / "t")
    assert code == 0, err
    return folder / "t"


BAD_CELLS = st.sampled_from(["abc", "1.2.3", "--", "x1", "1e", "0x1f", "'", '"', "\u00e9", "[1]", "True"])


@settings(FUZZ, max_examples=20)
@given(table=st.sampled_from(["runs", "jobs"]), fmt=st.sampled_from(["csv", "parquet"]), row=st.integers(0, 60),
       col=st.integers(0, 80), value=BAD_CELLS, kind=st.sampled_from(["plot", "report"]))
def test_fuzz_analysis_tables(tables, tmp_path_factory, table, fmt, row, col, value, kind):
    import pandas as pd

    from coburst.analysis.tables import JOB_NUMBERS, METRIC_COLUMNS

    work = tmp_path_factory.mktemp("fz")
    t = work / "t"
    t.mkdir()
    for name in ("runs", "jobs"):
        shutil.copy(tables / f"{name}.{fmt}", t / f"{name}.{fmt}")
    path = t / f"{table}.{fmt}"
    df = pd.read_csv(path, dtype=str, keep_default_na=False) if fmt == "csv" else pd.read_parquet(path)
    numeric = [c for c in df.columns if c in (METRIC_COLUMNS if table == "runs" else JOB_NUMBERS)]
    c = numeric[col % len(numeric)]
    r = row % len(df)
    df[c] = df[c].astype(object)
    df.loc[r, c] = value
    if fmt == "csv":
        df.to_csv(path, index=False)
    else:
        df.astype({c: str}).to_parquet(path, index=False)
    out = work / ("figs" if kind == "plot" else "r.html")
    args = ["plot", t, "--kind", "all", "-o", out] if kind == "plot" else ["report", t, "-o", out]
    code, err = call(*args)
    clean_failure(code, err, path)
    assert c in err
    assert not out.exists() or not any(out.iterdir())


@settings(FUZZ, max_examples=15)
@given(table=st.sampled_from(["runs", "jobs"]), cut=st.integers(0, 10**6))
def test_analysis_tables_truncated_anywhere(tables, tmp_path_factory, table, cut):
    work = tmp_path_factory.mktemp("tr")
    t = work / "t"
    t.mkdir()
    for name in ("runs", "jobs"):
        shutil.copy(tables / f"{name}.csv", t / f"{name}.csv")
    data = (t / f"{table}.csv").read_bytes()
    (t / f"{table}.csv").write_bytes(data[: cut % (len(data) + 1)])
    out = work / "r.html"
    code, err = call("report", t, "-o", out)
    assert "Traceback" not in err
    if code != 0:
        clean_failure(code, err, t)
        assert not out.exists()


# ====================================================================== heatmap files
HEATMAP = (ROOT / "models" / "heatmaps")


def _heatmap_texts() -> list[tuple[str, str]]:
    files = sorted(p for p in HEATMAP.iterdir() if p.suffix in (".csv", ".json", ".txt") and p.is_file())
    return [(p.name, p.read_text()) for p in files][:4]


@FUZZ
@given(which=st.integers(0, 3), op=st.sampled_from(["truncate", "token", "dropline", "dupline", "swapcells"]),
       pos=st.integers(0, 10**6), token=st.sampled_from(["nan", "inf", "-1", "0", "abc", "", "1e400", ",", ";",
                                                          '"', "{", "]"]))
def test_fuzz_heatmap_files(tmp_path_factory, which, op, pos, token):
    from coburst.errors import InputError
    from coburst.models.heatmap import load_heatmap

    texts = _heatmap_texts()
    assert texts, "no bundled heatmap"
    name, text = texts[which % len(texts)]
    rng = random.Random(pos)
    lines = text.splitlines(keepends=True)
    if op == "truncate":
        text = text[: pos % (len(text) + 1)]
    elif op == "token":
        i = pos % max(1, len(text))
        text = text[:i] + token + text[i + rng.randint(0, 4):]
    elif op == "dropline" and lines:
        del lines[pos % len(lines)]
        text = "".join(lines)
    elif op == "dupline" and lines:
        lines.insert(pos % len(lines), lines[rng.randrange(len(lines))])
        text = "".join(lines)
    elif lines:
        i = pos % len(lines)
        cells = lines[i].rstrip("\n").split(",")
        rng.shuffle(cells)
        lines[i] = ",".join(cells) + "\n"
        text = "".join(lines)
    path = tmp_path_factory.mktemp("hm") / name
    path.write_text(text)
    try:
        load_heatmap(path)
    except InputError as err:
        assert str(path) in str(err)
        assert "\n" not in str(err).strip() or "line" in str(err)


# ====================================================================== generator options
NUMBERISH = st.sampled_from(["nan", "inf", "-inf", "1e999", "-1", "", "x", "0x1", "1.5.2", "--3", "1e", "1,5",
                             "\u00bd", "-5"])
GENERATORS = [
    (["platform", "hetero", "--preset", "low16", "-o", "{out}.xml"], ["--seed", "--link-bw", "--link-lat",
                                                                      "--master-bw", "--master-lat"]),
    (["workload", "hetero", "-o", "{out}.json"], ["--seed", "--ref-speed", "--jobs", "--req-min", "--req-max"]),
    (["workload", "hetero", "--swf", "{swf}", "-o", "{out}.json"], ["--start", "--length", "--batch", "--max-res"]),
    (["theory", "generate", "--n", "3", "--alpha", "0.1", "0.2", "-o", "{out}.json"], ["--count", "--seed"]),
    (["workload", "elise", "-o", "{out}.json", "-n", "3"], ["--interarrival", "--weibull-shape"]),
    (["platform", "cosched", "--preset", "aris", "-o", "{out}.xml"], ["--nodes", "--cores", "--core-speed"]),
    (["platform", "dragonfly", "-o", "{out}.xml"], ["--bb-capacity", "--bw", "--speed"]),
]


#: the commands reading an SWF log are left out without the KTH-SP2 log
GENERATOR_CASES = [(c, o) for c, opts in GENERATORS for o in opts if "{swf}" not in c or swf_log().is_file()]


@settings(FUZZ, max_examples=60)
@given(case=st.sampled_from(GENERATOR_CASES), value=NUMBERISH)
def test_fuzz_generator_options(tmp_path_factory, case, value):
    base, option = case
    tmp = tmp_path_factory.mktemp("gen")
    args = [a.format(out=tmp / "out", swf=swf_log()) for a in base]
    code, err = call(*args, f"{option}={value}")
    assert "Traceback" not in err
    assert code == 2, (code, err)  # none of these values is meaningful for these options
    assert option.lstrip("-") in err, (option, value, err)
    assert not list(tmp.glob("out*")), list(tmp.iterdir())
