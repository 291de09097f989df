"""Co-scheduling heatmaps, application seeds, loaders, writer and the synthetic generator."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coburst.errors import InputError
from coburst.models.heatmap import (
    BUNDLED_DIR,
    AppSeed,
    Heatmap,
    bundled,
    bundled_names,
    bundled_seed,
    detect_layout,
    load_heatmap,
    load_pairs,
    load_seed,
    rescale_remaining,
    synthetic,
    write_heatmap,
)

HYP = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def raw_csv(name: str) -> list[list[str]]:
    with open(BUNDLED_DIR / name, newline="") as fh:
        return list(csv.reader(fh))


# ====================================================================== bundled data
def test_bundled_names():
    assert bundled_names() == ["aris-nas", "aris-spec", "grvingt-nas", "marconi-npb256-fig2"]


@pytest.mark.parametrize(
    "name, n_apps, n_measured, mean",
    [
        ("aris-nas", 33, 809, 1.135),
        ("aris-spec", 8, 63, 1.137),
        ("grvingt-nas", 13, 169, 1.034),
        ("marconi-npb256-fig2", 8, 64, 1.12),
    ],
)
def test_bundled_heatmaps_match_readme(name, n_apps, n_measured, mean):
    h = bundled(name)
    assert len(h) == n_apps
    assert h.n_measured == n_measured
    assert h.mean() == pytest.approx(mean, abs=0.0025)


@pytest.mark.parametrize("name", ["aris-nas", "aris-spec", "grvingt-nas", "marconi-npb256-fig2"])
def test_bundled_csv_every_cell_matches_raw(name):
    rows = raw_csv(f"{name}.heatmap.csv")
    h = bundled(name)
    assert list(h.apps) == rows[0][1:]
    for row in rows[1:]:
        for b, cell in zip(rows[0][1:], row[1:]):
            assert h.speedup(row[0], b) == (float(cell) if cell else None)


def test_known_values():
    assert bundled("aris-nas").speedup("bt.D.256", "bt.D.64") == 0.8921
    assert bundled("aris-nas").speedup("bt.D.256", "bt.E.2025") is None
    assert bundled("aris-spec").speedup("613.soma_s.1024", "613.soma_s.1024") is None
    assert bundled("aris-spec").speedup("628.pot3d_s.1024", "605.lbm_s.1024") == 1.808
    assert bundled("grvingt-nas").speedup("cg.D.32", "cg.D.64") == 1.0
    assert bundled("marconi-npb256-fig2").speedup("ft.E.256", "cg.D.256") == 1.47
    grv = load_heatmap(BUNDLED_DIR / "grvingt-nas.heatmap.json")
    assert grv.speedup("bt.D.121", "bt.D.121") == 0.9862258953168044
    assert grv.speedup("cg.D.64", "ft.D.32") == 0.965


@pytest.mark.parametrize("name", ["aris-nas", "grvingt-nas"])
def test_bundled_json_agrees_with_csv(name):
    hj = load_heatmap(BUNDLED_DIR / f"{name}.heatmap.json")
    hc = bundled(name)
    assert hj.apps == hc.apps
    raw = json.loads((BUNDLED_DIR / f"{name}.heatmap.json").read_text())
    for a in hc.apps:
        for b in hc.apps:
            assert hj.speedup(a, b) == raw[a][b]
            if hc.speedup(a, b) is None:
                assert hj.speedup(a, b) is None
            else:
                assert hj.speedup(a, b) == pytest.approx(hc.speedup(a, b), abs=5.1e-5)


@pytest.mark.parametrize("name", ["aris-nas", "aris-spec", "grvingt-nas"])
def test_bundled_seeds(name):
    seeds = bundled_seed(name)
    assert [s.name for s in seeds] == list(bundled(name).apps)
    rows = raw_csv(f"{name}.seed.csv")
    for s, row in zip(seeds, rows[1:]):
        assert s.compact_time == float(row[2])
        assert s.processes == int(row[1])
        assert dict(s.extra) == {"n_compact_runs": row[3], "n_measured_coloads": row[4]}
        assert s.walltime == pytest.approx(1.4 * s.compact_time)
    assert seeds[0] == AppSeed(seeds[0].name, seeds[0].compact_time, seeds[0].processes, None, None, seeds[0].extra)


def test_bundled_unknown_name():
    with pytest.raises(KeyError, match="aris-nas"):
        bundled("nope")
    with pytest.raises(KeyError):
        bundled_seed("marconi-npb256-fig2")


@pytest.mark.parametrize("name, decimals", [("aris-nas", 4), ("aris-spec", 4), ("grvingt-nas", 4), ("marconi-npb256-fig2", 2)])
def test_writer_reproduces_elise_export(tmp_path, name, decimals):
    out = tmp_path / "x.heatmap.csv"
    write_heatmap(bundled(name), out, decimals=decimals)
    original = (BUNDLED_DIR / f"{name}.heatmap.csv").read_bytes()
    # ELiSE's export ends lines with CRLF; the hand-typed Marconi file with LF
    assert out.read_bytes().replace(b"\r\n", b"\n") == original.replace(b"\r\n", b"\n")


# ====================================================================== Table 4.1
def test_table41_extract():
    h, seeds = load_pairs(BUNDLED_DIR / "aris-npb-extract.csv")
    assert len(h) == 31 and len(seeds) == 31
    assert seeds[0] == AppSeed("bt.D.256", 123.97, 256)
    assert seeds[1] == AppSeed("bt.D.512", 60.04, 484)
    assert h.speedup("bt.D.256", "bt.D.512") == 123.97 / 121.29
    assert h.speedup("bt.D.512", "bt.D.256") == 60.04 / 57.94
    assert h.speedup("bt.D.256", "bt.E.2048") is None
    assert h.speedup("bt.E.2048", "bt.D.256") is None
    # the self pair: compact / mean of the two co-execution times
    assert h.speedup("bt.D.256", "bt.D.256") == pytest.approx(123.97 / ((119.62 + 119.40) / 2))
    # pairs not in the table are missing
    assert h.speedup("cg.D.64", "ft.D.64") is None
    # agrees with the measured heatmap (names differ: bt.D.512 there is bt.D.484)
    aris = bundled("aris-nas")
    assert h.speedup("bt.D.256", "bt.D.256") == pytest.approx(aris.speedup("bt.D.256", "bt.D.256"), abs=1e-4)
    assert h.speedup("bt.D.512", "bt.D.256") == pytest.approx(aris.speedup("bt.D.484", "bt.D.256"), abs=1e-4)
    assert h.speedup("bt.D.256", "mg.E.128") == pytest.approx(aris.speedup("bt.D.256", "mg.E.128"), abs=1e-4)
    assert detect_layout(BUNDLED_DIR / "aris-npb-extract.csv") == "pairs"
    assert load_heatmap(BUNDLED_DIR / "aris-npb-extract.csv") == h


def test_table41_as_thesis_text(tmp_path):
    """The table as printed in the thesis: tab-separated, trailing empty cells dropped."""
    text = (
        "name_A\tprocs_A\tcompact_A\tname_B\tprocs_B\tcompact_B\tco_A_B\tco_B_A\n"
        "bt.D.256\t256\t123.97\tbt.D.256\t256\t123.97\t119.62\t119.40\n"
        "bt.D.256\t256\t123.97\tbt.E.2048\t2025\t224.97\n"
        "bt.D.256\t256\t123.97\tcg.D.128\t128\t93.29\t122.38\t92.36\n"
    )
    p = tmp_path / "t41.txt"
    p.write_text(text)
    h, seeds = load_pairs(p)
    assert h.apps == ("bt.D.256", "bt.E.2048", "cg.D.128")
    assert h.speedup("cg.D.128", "bt.D.256") == 93.29 / 92.36
    assert h.speedup("bt.E.2048", "bt.D.256") is None
    p2 = tmp_path / "t41s.txt"
    p2.write_text(text.replace("\t", "   "))
    assert load_heatmap(p2, "pairs") == h


def test_table41_without_procs(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("name_A,compact_A,name_B,compact_B,co_A_B,co_B_A\na,10,b,20,8,25\n")
    h, seeds = load_pairs(p)
    assert h.speedup("a", "b") == 10 / 8 and h.speedup("b", "a") == 20 / 25
    assert seeds == [AppSeed("a", 10.0), AppSeed("b", 20.0)]


# ====================================================================== ELiSE rules
def test_elise_rules():
    h = Heatmap(["a", "b", "c"], {("a", "a"): 1.2, ("a", "b"): 0.8, ("b", "a"): 1.1, ("b", "b"): 1.3})
    assert h.row_best("a") == 1.2 and h.row_mean("a") == pytest.approx(1.0)
    assert h.row_best("c") is None and h.row_mean("c") is None
    assert h.job_speedup("a", []) == 1.2  # co-scheduled alone: best of the row
    assert h.job_speedup("a", ["b"]) == 0.8
    assert h.job_speedup("a", ["a", "b"]) == 0.8  # minimum over neighbours
    assert h.effective("a", "c") == pytest.approx(1.0)  # missing -> the row's mean
    assert h.job_speedup("b", ["c"]) == pytest.approx(1.2)
    assert h.job_speedup("b", ["a", "c"]) == 1.1
    assert h.job_speedup("c", ["a"]) == 1.0  # empty row: neutral
    assert h.job_speedup("a", ["b"], co_scheduled=False) == 1.0  # compact
    assert rescale_remaining(100.0, 1.0, 0.8) == pytest.approx(125.0)
    with pytest.raises(KeyError):
        h.speedup("a", "zz")


def test_heatmap_rejects_bad_values():
    with pytest.raises(ValueError):
        Heatmap(["a"], {("a", "a"): 0.0})
    with pytest.raises(ValueError):
        Heatmap(["a"], {("a", "b"): 1.0})
    with pytest.raises(ValueError):
        Heatmap(["a", "a"], {})


# ====================================================================== round trips
def test_roundtrip_csv_json(tmp_path):
    h = bundled("aris-nas")
    for name in ("h.csv", "h.json"):
        p = tmp_path / name
        write_heatmap(h, p)
        assert load_heatmap(p) == h
        first = p.read_bytes()
        write_heatmap(load_heatmap(p), p)
        assert p.read_bytes() == first
    assert (tmp_path / "h.json").read_text().endswith("}\n")
    jh = load_heatmap(BUNDLED_DIR / "aris-nas.heatmap.json")
    write_heatmap(jh, tmp_path / "j.csv")
    assert load_heatmap(tmp_path / "j.csv") == jh  # full precision survives the CSV


def test_write_is_atomic_on_bad_name(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("keep")
    with pytest.raises(ValueError):
        write_heatmap(Heatmap(["a,b"], {}), p)
    assert p.read_text() == "keep"


names_st = st.lists(
    st.text(alphabet="abcxyz.019_-", min_size=1, max_size=6), min_size=1, max_size=6, unique=True
)
value_st = st.one_of(
    st.none(),
    st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False),
)


@HYP
@given(data=st.data(), suffix=st.sampled_from([".csv", ".json"]))
def test_property_write_read_identical(tmp_path, data, suffix):
    apps = data.draw(names_st)
    vals = {(a, b): data.draw(value_st) for a in apps for b in apps}
    h = Heatmap(apps, vals)
    p = tmp_path / f"h{suffix}"
    write_heatmap(h, p)
    back = load_heatmap(p)
    assert back == h
    first = p.read_bytes()
    write_heatmap(back, p)
    assert p.read_bytes() == first


# ====================================================================== errors
def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def expect(path: Path, where: str | None, problem: str, loader=load_heatmap, **kw):
    with pytest.raises(InputError) as ei:
        loader(path, **kw)
    err = ei.value
    assert err.source == str(path)
    if where is not None:
        assert err.where == where, str(err)
    assert problem in err.problem, str(err)
    assert str(path) in str(err)
    return err


HDR = "job\\co_job,a,b\n"


@pytest.mark.parametrize(
    "body, where, problem",
    [
        ("a,1.0,x\nb,1,1\n", "line 2, column 3 (a next to b)", "is not a number"),
        ("a,1.0,nan\nb,1,1\n", "line 2, column 3 (a next to b)", "not finite"),
        ("a,1.0,inf\nb,1,1\n", "line 2, column 3 (a next to b)", "not finite"),
        ("a,1.0,1\nb,0,1\n", "line 3, column 2 (b next to a)", "must be > 0"),
        ("a,1.0,1\nb,-2,1\n", "line 3, column 2 (b next to a)", "must be > 0"),
        ("a,1.0,1\nc,1,1\n", "line 3, column 1", "unknown application 'c'"),
        ("a,1.0,1\na,1,1\n", "line 3, column 1", "duplicate row 'a'"),
        ("a,1.0,1\nb,1\n", "line 3", "ragged row"),
        ("a,1.0,1,1\nb,1,1\n", "line 2", "ragged row"),
        ("a,1.0,1\n", "line 1, column 3", "application 'b' has no row"),
    ],
)
def test_matrix_csv_errors(tmp_path, body, where, problem):
    expect(write(tmp_path, "h.csv", HDR + body), where, problem)


def test_matrix_csv_header_errors(tmp_path):
    expect(write(tmp_path, "h.csv", "job\\co_job,a,a\na,1,1\n"), "line 1, column 3", "duplicate column 'a'")
    expect(write(tmp_path, "h.csv", ""), "line 1", "empty file")
    expect(write(tmp_path, "h.csv", HDR + "a,1,1\nb,1,1\n"), "line 1, column 3", "unknown application 'b'", apps=["a"])


@pytest.mark.parametrize(
    "doc, where, problem",
    [
        ('{"a": {"a": "1.2"}}', '$["a"]["a"]', "is not a number"),
        ('{"a": {"a": true}}', '$["a"]["a"]', "is not a number"),
        ('{"a": {"a": NaN}}', '$["a"]["a"]', "not finite"),
        ('{"a": {"a": Infinity}}', '$["a"]["a"]', "not finite"),
        ('{"a": {"a": 0}}', '$["a"]["a"]', "must be > 0"),
        ('{"a": {"zz": 1.0}}', '$["a"]["zz"]', "unknown application 'zz'"),
        ('{"a": {"a": 1.0}, "a": {"a": 1.0}}', '$["a"]', "duplicate key 'a'"),
        ('{"a": {"a": 1.0, "a": 2.0}}', '$["a"]["a"]', "duplicate key 'a'"),
        ('{"a": [1.0]}', '$["a"]', "expected an object"),
        ("[1, 2]", "$", "expected an object"),
        ('{"a": {"a": 1.0}', "line 1, column 17", "invalid JSON"),
    ],
)
def test_json_errors(tmp_path, doc, where, problem):
    expect(write(tmp_path, "h.json", doc), where, problem)


P_HDR = "name_A,procs_A,compact_A,name_B,procs_B,compact_B,co_A_B,co_B_A\n"


@pytest.mark.parametrize(
    "body, where, problem",
    [
        ("a,4,10,b,4,20,x,1\n", "line 2, column 7", "co-execution time 'x' is not a number"),
        ("a,4,10,b,4,20,0,1\n", "line 2, column 7", "must be > 0"),
        ("a,4,nan,b,4,20,1,1\n", "line 2, column 3", "not finite"),
        ("a,4,10,b,4,20,1,1\nb,4,20,a,4,10,1,1\n", "line 3", "duplicate pair (b, a)"),
        ("a,4,10,b,4,20,1,1\na,4,11,c,4,20,1,1\n", "line 3, column 3", "differs from 10.0 on line 2"),
        ("a,4,10,b,4,20,1\n", "line 2", "ragged row"),
        ("a,4.5,10,b,4,20,1,1\n", "line 2, column 2", "not a positive integer"),
        ("a,4,10,,4,20,1,1\n", "line 2, column 4", "empty name_B"),
    ],
)
def test_pairs_errors(tmp_path, body, where, problem):
    expect(write(tmp_path, "t.csv", P_HDR + body), where, problem)


def test_pairs_unknown_application_and_missing_column(tmp_path):
    p = write(tmp_path, "t.csv", P_HDR + "a,4,10,b,4,20,1,1\n")
    expect(p, "line 2, column 4", "unknown application 'b'", loader=load_pairs, apps=["a"])
    p = write(tmp_path, "t2.csv", "name_A,compact_A,name_B,compact_B,co_A_B\n")
    expect(p, "line 1", "missing column 'co_b_a'", layout="pairs")


S_HDR = "name,num_of_processes,median_compact_time_s,frequency\n"


@pytest.mark.parametrize(
    "body, where, problem",
    [
        ("a,4,ten,1\n", "line 2, column 3", "compact time 'ten' is not a number"),
        ("a,4,0,1\n", "line 2, column 3", "must be > 0"),
        ("a,4,inf,1\n", "line 2, column 3", "not finite"),
        ("a,4,1,1\na,4,2,1\n", "line 3, column 1", "duplicate row 'a' (first on line 2)"),
        ("a,4,1\n", "line 2", "ragged row"),
        ("a,0,1,1\n", "line 2, column 2", "not a positive integer"),
        ("a,4,1,-1\n", "line 2, column 4", "must be finite and >= 0"),
        ("a,4,1,often\n", "line 2, column 4", "frequency 'often' is not a number"),
    ],
)
def test_seed_errors(tmp_path, body, where, problem):
    expect(write(tmp_path, "s.seed.csv", S_HDR + body), where, problem, loader=load_seed)


def test_seed_ok_and_unknown(tmp_path):
    p = write(tmp_path, "s.seed.csv", "app,compact_time,nodes,freq\nx,12.5,2,0.25\ny,3,,\n")
    assert load_seed(p) == [AppSeed("x", 12.5, None, 2, 0.25), AppSeed("y", 3.0)]
    expect(p, "line 3, column 1", "unknown application 'y'", loader=load_seed, apps=["x"])
    expect(write(tmp_path, "n.csv", "name,procs\nx,1\n"), "line 1", "no compact time column", loader=load_seed)
    expect(p, None, "application seed, not a heatmap")


@pytest.mark.parametrize("loader", [load_heatmap, load_seed, load_pairs])
def test_file_errors(tmp_path, loader):
    expect(tmp_path / "absent.csv", None, "file not found", loader=loader)
    expect(tmp_path, None, "is a directory", loader=loader)
    u16 = tmp_path / "u16.csv"
    u16.write_text(HDR + "a,1,1\nb,1,1\n", encoding="utf-16")
    expect(u16, "byte 0", "UTF-16 text detected", loader=loader)
    u16le = tmp_path / "u16le.csv"
    u16le.write_bytes((HDR + "a,1,1\nb,1,1\n").encode("utf-16-le"))  # no BOM
    expect(u16le, "byte 0", "UTF-16 text detected", loader=loader)
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"job\\co_job,a,b\na,1,1\nb,1,\xe91\n")
    expect(latin, "line 3 column 5 (byte 25)", "not valid UTF-8", loader=loader)


def test_utf8_bom_accepted(tmp_path):
    p = tmp_path / "bom.csv"
    p.write_bytes(b"\xef\xbb\xbf" + (HDR + "a,1,2\nb,,1\n").encode())
    h = load_heatmap(p)
    assert h.apps == ("a", "b") and h.speedup("b", "a") is None and h.speedup("a", "b") == 2.0


# ====================================================================== synthetic
def test_synthetic_deterministic_and_mean():
    h1 = synthetic(10, mean_pair_speedup=1.1, seed=7)
    h2 = synthetic(10, mean_pair_speedup=1.1, seed=7)
    h3 = synthetic(10, mean_pair_speedup=1.1, seed=8)
    assert h1 == h2 and h1 != h3
    assert h1.apps[0] == "app0" and h1.n_measured == 100
    assert h1.mean() == pytest.approx(1.1, rel=1e-12)
    assert synthetic(["x", "y"], seed=0).apps == ("x", "y")


def test_synthetic_model_direction():
    m = [0.0, 1.0]
    h = synthetic(["cpu", "mem"], memory_intensity=m, spread=0.0, gain=0.3, contention=0.2)
    # memory-bound job gains from spreading; a memory-bound neighbour hurts
    assert h.speedup("mem", "cpu") > h.speedup("cpu", "cpu") > h.speedup("cpu", "mem")
    assert h.speedup("mem", "cpu") / h.speedup("cpu", "cpu") == pytest.approx(math.exp(0.3))
    assert h.speedup("cpu", "cpu") / h.speedup("cpu", "mem") == pytest.approx(math.exp(0.2))
    # intensities given -> only the noise is drawn; the row/column structure shows in data
    big = synthetic(30, seed=3, spread=0.0)
    mat = np.log(big.to_matrix())
    assert np.corrcoef(mat.mean(axis=1), mat.mean(axis=0))[0, 1] < -0.99


def test_synthetic_bad_arguments():
    with pytest.raises(ValueError):
        synthetic(0)
    with pytest.raises(ValueError):
        synthetic(2, memory_intensity=[0.1])
    with pytest.raises(ValueError):
        synthetic(2, memory_intensity=[0.1, 1.5])
    with pytest.raises(ValueError):
        synthetic(2, mean_pair_speedup=0.0)


@HYP
@given(
    n=st.integers(1, 25),
    mean=st.floats(0.05, 20.0),
    seed=st.integers(0, 2**32 - 1),
    spread=st.floats(0.0, 1.0),
    gain=st.floats(0.0, 2.0),
    contention=st.floats(0.0, 2.0),
)
def test_property_synthetic_mean(n, mean, seed, spread, gain, contention):
    h = synthetic(n, mean_pair_speedup=mean, seed=seed, spread=spread, gain=gain, contention=contention)
    assert h.n_measured == n * n
    assert h.mean() == pytest.approx(mean, rel=1e-12)
    assert all(v > 0 and math.isfinite(v) for v in h.values().values())
    assert synthetic(n, mean_pair_speedup=mean, seed=seed, spread=spread, gain=gain, contention=contention) == h
