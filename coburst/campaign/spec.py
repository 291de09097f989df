"""The campaign file (TOML) and its expansion into runs.

Format (every key but ``schedulers``, ``platforms`` and ``workloads`` is optional)::

    [campaign]
    name = "kopanski_kth"              # default: the file's stem
    description = "..."
    out = "../out/kopanski_kth"        # default output folder (relative to this file);
                                       # without it: out/<name> under the current directory
    engines = ["coburst"]              # coburst and/or batsim; --engine overrides
    seeds = [0]                        # the {seed} of templates (default [0])
    timeout = 30                       # coburst run --timeout (scheduler silence, s)
    run_timeout = 0                    # wall-clock limit of one run (s); 0: none
    sim_args = ["--enable-dynamic-jobs"]   # simulator options of every run

    [prepare]                          # commands run once before the runs (cwd: this file's folder)
    run = [["bash", "make_kth_workloads.sh", "{out}/workloads"]]
    creates = ["{out}/workloads/kth_io_aware.part16.json"]  # skipped when all exist

    [[schedulers]]
    name = "window"                    # the label in run ids and tables (default: scheduler)
    scheduler = "window-1"             # coburst policy, pybatsim scheduler file or bundled name
    options = { decision_log = "{prefix}_decisions.csv" }   # fixed options
    grid = { depth = [1, 2] }          # option grid: one run per combination
    timeout = 3600                     # overrides [campaign] timeout
    sim_args = []                      # added to the run's simulator options

    [[platforms]]                      # or: platforms = ["../platforms/dragonfly96.xml"]
    path = "../platforms/dragonfly96.xml"
    name = "dragonfly96"               # default: the file's stem

    [[workloads]]                      # or: workloads = ["a.json", "b.json"]
    path = "{out}/workloads/kth_{model}.part{part:02d}.json"
    vary = { model = ["alloc_only", "io_aware"], part = [1, 2, 3] }   # one workload per combination
    labels = { log = "kth" }           # constant labels
    name = "kth_{model}_{part:02d}"    # default: the file's stem
    sim_args = ["--enable-dynamic-jobs"]
    platforms = ["dragonfly96"]        # only on these platforms (names; default: every platform)

Templates (Python ``str.format``; ``{{`` for a brace) in paths, names, commands and string
option values: ``{out}`` the output folder, ``{spec_dir}`` this file's folder, ``{python}``
the Python running coburst, ``{swf_dir}`` the folder of SWF logs (``$COBURST_SWF_DIR``, else
``../shared/data/swf`` beside the checkout holding coburst: other projects' logs, not in the
repository), ``{seed}``, the workload's ``vary`` keys; in scheduler options ``{prefix}`` is
the run's output prefix (replaced when the run executes).  Relative paths are relative to
the campaign file's folder.  A ``[prepare]`` argument that begins with ``{swf_dir}`` names an
input: when the prepare commands run, a missing one is an error naming it.

The runs are platforms x workloads x seeds x schedulers (x option grid) x engines, in this
order (a workload's runs finish together).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coburst.campaign.naming import assign_run_ids
from coburst.errors import InputError
from coburst.validate import quote

ENGINES = ("coburst", "batsim")
TOP_KEYS = ("campaign", "prepare", "schedulers", "platforms", "workloads")
CAMPAIGN_KEYS = ("name", "description", "out", "engines", "seeds", "timeout", "run_timeout", "sim_args")
PREPARE_KEYS = ("run", "creates")
SCHEDULER_KEYS = ("name", "scheduler", "options", "grid", "timeout", "sim_args")
PLATFORM_KEYS = ("path", "name")
WORKLOAD_KEYS = ("path", "name", "labels", "vary", "sim_args", "platforms")
#: parameter names the campaign sets itself: not usable as labels or option-grid keys in run ids
RESERVED = ("run_id", "scheduler", "scheduler_spec", "options", "platform", "platform_name", "workload",
            "workload_name", "seed", "engine", "sim_args", "timeout", "run_timeout", "sched", "wl", "plat")
_LABEL_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
SWF_VAR = "COBURST_SWF_DIR"
#: the deepest nesting of arrays and inline tables of a campaign file (tomllib recurses)
TOML_DEPTH = 64


def swf_dir() -> Path:
    """``{swf_dir}``: ``$COBURST_SWF_DIR`` (absolute), else ``../shared/data/swf`` beside the
    checkout that holds this package."""
    value = os.environ.get(SWF_VAR, "")
    if value:
        return Path(os.path.abspath(Path(value).expanduser()))
    return Path(__file__).resolve().parents[3] / "shared" / "data" / "swf"


@dataclass
class Run:
    """One simulation of the grid.  ``params`` is what ``params.json`` holds (flat, JSON
    values); ``task`` what the run executes (picklable, JSON)."""

    run_id: str
    params: dict[str, Any]
    task: dict[str, Any]


@dataclass
class Campaign:
    source: Path                       # the campaign file
    text: str                          # its content (copied to <out>/campaign.toml)
    data: dict[str, Any]               # parsed TOML
    name: str
    out: Path
    engines: list[str]
    runs: list[Run] = field(default_factory=list)
    prepare_run: list[list[str]] = field(default_factory=list)
    prepare_creates: list[Path] = field(default_factory=list)
    prepare_inputs: list[tuple[str, Path]] = field(default_factory=list)  # (place, path): {swf_dir}/... arguments
    labels: list[str] = field(default_factory=list)   # label names, in declaration order

    def missing_inputs(self) -> list[tuple[str, Path]]:
        """(place in the file, path) of every input file that does not exist."""
        seen: dict[Path, str] = {}
        for run in self.runs:
            t = run.task
            for key in ("platform", "workload"):
                seen.setdefault(Path(t[key]), t[f"{key}_place"])
            if t["scheduler"].endswith(".py"):
                seen.setdefault(Path(t["scheduler"]), t["scheduler_place"])
        return [(place, path) for path, place in seen.items() if not path.is_file()]


# ---------------------------------------------------------------------------- helpers
def _err(src: Path, where: str | None, problem: str) -> InputError:
    return InputError(src, where, problem)


def _check_keys(src: Path, where: str, table: Any, allowed: tuple[str, ...]) -> dict:
    if not isinstance(table, dict):
        raise _err(src, where, f"expected a table, got {_tname(table)}")
    for key in table:
        if key not in allowed:
            raise _err(src, f"{where}.{key}" if where else key,
                       f"unknown key (expected one of: {', '.join(allowed)})")
    return table


def _tname(value: Any) -> str:
    return {str: "a string", int: "an integer", float: "a float", bool: "a boolean", list: "an array",
            dict: "a table"}.get(type(value), type(value).__name__)


def _str(src: Path, where: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise _err(src, where, f"expected a non-empty string, got {_tname(value)} {quote(value)}")
    return value


#: the longest campaign name (it names the default output folder, ``out/<name>``)
NAME_MAX = 128


def _folder_name(src: Path, where: str, name: str) -> str:
    """``name`` as one plain folder name: it cannot lead out of the folder it is made in
    (no ``/``, not ``.`` or ``..``), holds no NUL or control character, and is at most
    :data:`NAME_MAX` characters (and 255 bytes, what file systems take)."""
    problem = None
    if "/" in name or "\\" in name:
        problem = "must be one folder name, without '/' or '\\' (it names the output folder out/<name>)"
    elif name in (".", ".."):
        problem = "is not a folder name of its own (it names the output folder out/<name>)"
    elif any(ord(c) < 32 or 127 <= ord(c) < 160 for c in name):
        bad = next(c for c in name if ord(c) < 32 or 127 <= ord(c) < 160)
        problem = f"holds the control character U+{ord(bad):04X} at position {name.index(bad)}: not in a folder name"
    elif len(name) > NAME_MAX or len(name.encode("utf-8", "surrogatepass")) > 255:
        problem = f"is {len(name)} characters long: at most {NAME_MAX} (it names the output folder out/<name>)"
    elif name != name.strip():
        problem = "starts or ends with white space"
    if problem:
        raise _err(src, where, f"{quote(name)} {problem}")
    return name


def _path_text(src: Path, where: str, value: str) -> str:
    """A path of the campaign file: no NUL byte (no file system takes one)."""
    if "\x00" in value:
        raise _err(src, where, f"{quote(value)} holds a NUL character at position {value.index(chr(0))}: not in a path")
    return value


def _str_list(src: Path, where: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _err(src, where, "expected an array of strings")
    return list(value)


def _number(src: Path, where: str, value: Any, minimum: float = 0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= minimum \
            or value != value or value == float("inf"):
        raise _err(src, where, f"expected a finite number >= {minimum}, got {value!r}")
    return float(value)


def _scalar(src: Path, where: str, value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)):
        return value
    raise _err(src, where, f"expected a string, number or boolean, got {_tname(value)}")


def _fmt(src: Path, where: str, template: str, ctx: dict[str, Any]) -> str:
    try:
        return template.format_map(ctx)
    except KeyError as exc:
        raise _err(src, where, f"unknown placeholder {{{exc.args[0]}}} in {template!r} "
                               f"(known here: {', '.join(sorted(ctx))})") from None
    except (ValueError, IndexError, AttributeError, TypeError) as exc:
        raise _err(src, where, f"bad template {template!r}: {exc}") from None


def _path(base: Path, text: str) -> Path:
    p = Path(text).expanduser()
    return Path(os.path.normpath(p if p.is_absolute() else base / p))


def _grid(src: Path, where: str, table: Any) -> list[dict[str, Any]]:
    """The cartesian product of a ``{key = [values]}`` table, keys in declaration order."""
    if table is None:
        return [{}]
    if not isinstance(table, dict):
        raise _err(src, where, f"expected a table of arrays, got {_tname(table)}")
    keys = list(table)
    values = []
    for key in keys:
        vals = table[key]
        if not isinstance(vals, list) or not vals:
            raise _err(src, f"{where}.{key}", "expected a non-empty array of values")
        values.append(vals)
    return [dict(zip(keys, combo)) for combo in itertools.product(*values)]


def _entries(src: Path, data: dict, key: str) -> list[tuple[str, dict]]:
    """``key = ["a", "b"]`` or ``[[key]]`` tables -> [(place, table)]."""
    if key not in data:
        raise _err(src, None, f"missing [[{key}]] (at least one is needed)")
    value = data[key]
    if not isinstance(value, list) or not value:
        raise _err(src, key, "expected a non-empty array of paths or of tables")
    out = []
    for i, item in enumerate(value):
        place = f"{key}[{i}]"
        out.append((place, {"path": item} if isinstance(item, str) else item))
    return out


# ---------------------------------------------------------------------------- parsing
def parse_toml(path: Path, text: str | None = None) -> tuple[str, dict]:
    """Read and parse ``path``; every problem is an InputError naming the file and place."""
    if text is None:
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise _err(path, None, "campaign file not found") from None
        except IsADirectoryError:
            raise _err(path, None, "is a directory, not a campaign file") from None
        except OSError as exc:
            raise _err(path, None, f"cannot read: {exc.strerror}") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw[:exc.start].count(b"\n") + 1
            raise _err(path, f"line {line}", "not UTF-8 text") from None
    from coburst.nesting import too_deep, where

    deep = too_deep(text, TOML_DEPTH)  # (tomllib recurses: ~300 levels end in a RecursionError)
    if deep is not None:
        raise _err(path, where(deep), f"nested too deeply: more than {TOML_DEPTH} levels (an array or inline table "
                                      f"opened at depth {deep[2]}): refused, a campaign file nests a few levels")
    try:
        return text, tomllib.loads(text)
    except RecursionError:  # (nesting the scan did not see: brackets in literal strings)
        raise _err(path, None, f"nested too deeply (more than about {TOML_DEPTH} levels): refused") from None
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        where = f"line {m.group(1)}, column {m.group(2)}" if m else None
        problem = msg[:m.start()].strip() if m else msg
        raise _err(path, where, f"invalid TOML: {problem}") from None
    except ValueError:  # an integer past Python's 4300 digits
        digits = re.search(r"\d{4301,}", text)
        where = f"line {text[:digits.start()].count(chr(10)) + 1}" if digits else None
        size = f" of {len(digits.group())} digits" if digits else ""
        raise _err(path, where, f"a number{size}: more than the 4300 digits a campaign file may hold") from None


def load_campaign(path: str | Path, *, out: str | Path | None = None, engines: list[str] | None = None,
                  text: str | None = None, base_dir: str | Path | None = None) -> Campaign:
    """Parse and expand a campaign file.  ``out``/``engines`` override the file's; ``text``
    and ``base_dir`` read a stored copy as if it were at its original place."""
    src = Path(path)
    text, data = parse_toml(src, text)
    base = Path(base_dir) if base_dir is not None else src.resolve().parent
    _check_keys(src, "", data, TOP_KEYS)
    camp = _check_keys(src, "campaign", data.get("campaign", {}), CAMPAIGN_KEYS)
    name = _folder_name(src, "campaign.name", _str(src, "campaign.name", camp.get("name", src.stem)))
    if "description" in camp:
        _str(src, "campaign.description", camp["description"])
    if out is not None:
        out_dir = Path(os.path.abspath(Path(out).expanduser()))
    elif "out" in camp:
        out_dir = _path(base, _path_text(src, "campaign.out", _str(src, "campaign.out", camp["out"])))
    else:
        out_dir = Path(os.path.abspath(Path("out") / name))

    if engines is None:
        engines = camp.get("engines", ["coburst"])
        if isinstance(engines, str):
            engines = [engines]
        engines = _str_list(src, "campaign.engines", engines)
        for e in engines:
            if e not in ENGINES:
                raise _err(src, "campaign.engines", f"unknown engine {e!r} (expected coburst or batsim)")
        if not engines or len(set(engines)) != len(engines):
            raise _err(src, "campaign.engines", "expected distinct engines, at least one")
    seeds = camp.get("seeds", [0])
    if not isinstance(seeds, list) or not seeds or not all(isinstance(s, int) and not isinstance(s, bool)
                                                            for s in seeds):
        raise _err(src, "campaign.seeds", "expected a non-empty array of integers")
    if len(set(seeds)) != len(seeds):
        raise _err(src, "campaign.seeds", "a seed is listed twice")
    timeout = _number(src, "campaign.timeout", camp.get("timeout", 30.0), minimum=0.001)
    run_timeout = _number(src, "campaign.run_timeout", camp.get("run_timeout", 0))
    sim_args = _str_list(src, "campaign.sim_args", camp.get("sim_args", []))

    ctx0 = {"out": str(out_dir), "spec_dir": str(base), "python": sys.executable, "swf_dir": str(swf_dir())}

    # prepare
    prep = _check_keys(src, "prepare", data.get("prepare", {}), PREPARE_KEYS)
    commands = prep.get("run", [])
    if commands and all(isinstance(c, str) for c in commands):
        commands = [commands]
    if not isinstance(commands, list) or not all(isinstance(c, list) and c and all(isinstance(a, str) for a in c)
                                                 for c in commands):
        raise _err(src, "prepare.run", "expected a command (array of strings) or an array of commands")
    creates = _str_list(src, "prepare.creates", prep.get("creates", []))
    prepare_run: list[list[str]] = []
    prepare_creates: list[Path] = []
    prepare_inputs: list[tuple[str, Path]] = []
    for seed in seeds:
        ctx = {**ctx0, "seed": seed}
        for i, cmd in enumerate(commands):
            c = [_fmt(src, f"prepare.run[{i}]", a, ctx) for a in cmd]
            if c not in prepare_run:
                prepare_run.append(c)
            for j, a in enumerate(cmd):
                entry = (f"prepare.run[{i}][{j}]", _path(base, c[j]))
                if a.startswith("{swf_dir}") and entry not in prepare_inputs:
                    prepare_inputs.append(entry)
        for i, p in enumerate(creates):
            q = _path(base, _fmt(src, f"prepare.creates[{i}]", p, ctx))
            if q not in prepare_creates:
                prepare_creates.append(q)

    # schedulers
    schedulers = []  # (place, name, spec, fixed options, grid combos, timeout, sim_args)
    if "schedulers" not in data:
        raise _err(src, None, "missing [[schedulers]] (at least one is needed)")
    if not isinstance(data["schedulers"], list) or not data["schedulers"]:
        raise _err(src, "schedulers", "expected a non-empty array of tables ([[schedulers]])")
    for i, entry in enumerate(data["schedulers"]):
        place = f"schedulers[{i}]"
        if isinstance(entry, str):
            entry = {"scheduler": entry}
        _check_keys(src, place, entry, SCHEDULER_KEYS)
        if "scheduler" not in entry:
            raise _err(src, place, "missing key 'scheduler' (a coburst policy, a pybatsim scheduler file or name)")
        spec = _str(src, f"{place}.scheduler", entry["scheduler"])
        sname = _str(src, f"{place}.name", entry.get("name", Path(spec).stem if spec.endswith(".py") else spec))
        if spec.endswith(".py"):
            spec = str(_path(base, spec))
        options = entry.get("options", {})
        if not isinstance(options, dict):
            raise _err(src, f"{place}.options", f"expected a table, got {_tname(options)}")
        combos = _grid(src, f"{place}.grid", entry.get("grid"))
        for key in combos[0]:
            if key in options:
                raise _err(src, f"{place}.grid.{key}", "also a fixed option in options")
            if key in RESERVED or not _LABEL_RE.match(key):
                raise _err(src, f"{place}.grid.{key}", "not usable as a grid key (a reserved parameter name or "
                                                       "not an identifier)")
        stimeout = _number(src, f"{place}.timeout", entry.get("timeout", timeout), minimum=0.001)
        ssim = _str_list(src, f"{place}.sim_args", entry.get("sim_args", []))
        schedulers.append((place, sname, spec, options, combos, stimeout, ssim))

    # platforms
    platforms = []  # (place, name, path)
    for place, entry in _entries(src, data, "platforms"):
        _check_keys(src, place, entry, PLATFORM_KEYS)
        if "path" not in entry:
            raise _err(src, place, "missing key 'path'")
        p = _path(base, _fmt(src, f"{place}.path", _str(src, f"{place}.path", entry["path"]), ctx0))
        pname = _fmt(src, f"{place}.name", _str(src, f"{place}.name", entry.get("name", p.stem)), ctx0)
        platforms.append((f"{place}.path", pname, p))

    # workloads, per seed
    label_names: list[str] = []
    wl_entries = _entries(src, data, "workloads")
    for place, entry in wl_entries:
        _check_keys(src, place, entry, WORKLOAD_KEYS)
        if "path" not in entry:
            raise _err(src, place, "missing key 'path'")
        labels = entry.get("labels", {})
        if not isinstance(labels, dict):
            raise _err(src, f"{place}.labels", f"expected a table, got {_tname(labels)}")
        combos = _grid(src, f"{place}.vary", entry.get("vary"))
        for key in [*combos[0], *labels]:
            where = f"{place}.vary.{key}" if key in combos[0] else f"{place}.labels.{key}"
            if key in RESERVED or key in ctx0 or key == "prefix" or not _LABEL_RE.match(key):
                raise _err(src, where, "not usable as a label (a reserved parameter name or not an identifier; "
                                       f"reserved: {', '.join(RESERVED)}, out, spec_dir, python, swf_dir, prefix)")
            if key in combos[0] and key in labels:
                raise _err(src, where, "both in vary and in labels")
            if key not in label_names:
                label_names.append(key)

    pnames = [pname for _, pname, _ in platforms]
    for place, entry in wl_entries:
        for i, pname in enumerate(_str_list(src, f"{place}.platforms", entry.get("platforms", []))):
            if pname not in pnames:
                raise _err(src, f"{place}.platforms[{i}]", f"no platform named {pname!r} (platforms: "
                                                          f"{', '.join(pnames)})")

    def workloads_for(seed: int, pname: str) -> list[tuple[str, str, Path, dict, list[str]]]:
        result = []
        for place, entry in wl_entries:
            if "platforms" in entry and pname not in entry["platforms"]:
                continue
            labels = {k: _scalar(src, f"{place}.labels.{k}", v) for k, v in entry.get("labels", {}).items()}
            for combo in _grid(src, f"{place}.vary", entry.get("vary")):
                combo = {k: _scalar(src, f"{place}.vary.{k}", v) for k, v in combo.items()}
                ctx = {**ctx0, "seed": seed, **labels, **combo}
                path_t = _str(src, f"{place}.path", entry["path"])
                p = _path(base, _fmt(src, f"{place}.path", path_t, ctx))
                wname = _fmt(src, f"{place}.name", _str(src, f"{place}.name", entry["name"]), ctx) \
                    if "name" in entry else p.stem
                wsim = _str_list(src, f"{place}.sim_args", entry.get("sim_args", []))
                result.append((f"{place}.path", wname, p, {**combo, **labels}, wsim))
        return result

    runs: list[Run] = []
    for (pplace, pname, ppath), seed in itertools.product(platforms, seeds):
        for wplace, wname, wpath, labels, wsim in workloads_for(seed, pname):
            for place, sname, spec, fixed, combos, stimeout, ssim in schedulers:
                for combo in combos:
                    ctx = {**ctx0, "seed": seed, "prefix": "{prefix}", **labels}
                    options = {k: _subst(src, f"{place}.options.{k}", v, ctx) for k, v in fixed.items()}
                    options.update({k: _subst(src, f"{place}.grid.{k}", v, ctx) for k, v in combo.items()})
                    for engine in engines:
                        params = {"scheduler": sname, "options": json.dumps(options, sort_keys=True,
                                                                            separators=(",", ":")),
                                  "platform": str(ppath), "workload": str(wpath), "seed": seed, "engine": engine}
                        params.update(labels)
                        params.update({"scheduler_spec": spec, "platform_name": pname, "workload_name": wname})
                        task = {"engine": engine, "scheduler": spec, "options": options, "platform": str(ppath),
                                "workload": str(wpath), "sim_args": [*sim_args, *wsim, *ssim], "timeout": stimeout,
                                "run_timeout": run_timeout, "platform_place": pplace, "workload_place": wplace,
                                "scheduler_place": f"{place}.scheduler"}
                        params["sim_args"] = json.dumps(task["sim_args"], separators=(",", ":"))
                        runs.append(Run("", params, task))

    assign_run_ids(src, runs, grid_keys=[k for s in schedulers for k in s[4][0]], label_names=label_names,
                   nb_platforms=len(platforms), nb_engines=len(engines))
    return Campaign(source=src, text=text, data=data, name=name, out=out_dir, engines=list(engines), runs=runs,
                    prepare_run=prepare_run, prepare_creates=prepare_creates, prepare_inputs=prepare_inputs,
                    labels=label_names)


def _subst(src: Path, where: str, value: Any, ctx: dict) -> Any:
    """Templates in string option values (recursively); other values unchanged."""
    if isinstance(value, str):
        return _fmt(src, where, value, ctx)
    if isinstance(value, list):
        return [_subst(src, f"{where}[{i}]", v, ctx) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: _subst(src, f"{where}.{k}", v, ctx) for k, v in value.items()}
    return value


# ---------------------------------------------------------------------------- writing specs
def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a TOML basic string is a JSON string
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def _toml_key(key: str) -> str:
    return key if re.match(r"^[A-Za-z0-9_-]+$", key) else json.dumps(key)


def dumps_toml(data: dict) -> str:
    """A campaign spec (the dict :func:`load_campaign` reads) as TOML text: top-level tables
    and arrays of tables, values inline.  For scripts that build a campaign."""
    lines: list[str] = []
    for key, value in data.items():
        if isinstance(value, dict):
            lines += [f"[{_toml_key(key)}]", *(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()), ""]
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for item in value:
                lines += [f"[[{_toml_key(key)}]]", *(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in item.items()),
                          ""]
        else:
            lines.insert(0, f"{_toml_key(key)} = {_toml_value(value)}")
    return "\n".join(lines)
