"""``coburst policies``: every scheduling policy coburst can run, built-in or plugin.

Without a name: one line per policy (the name to type, its family, where it comes from, its
source in the literature, what it needs).  With a name: the policy's class, source,
documentation, other spellings, and its parameters (type, default, check, meaning) as the
class declares them.  ``--json`` prints the same for tools.

Names are ``[FAMILY:]NAME`` (families ``bb``, ``cosched``, ``hetero``); the bare name is
enough when one family knows it, and ``fcfs``, ``filler``, ``conservative`` and ``easy`` (shared
by ``bb`` and ``cosched``) mean the ``bb`` policy unless ``coburst run`` sees a node-sharing
platform.  Plugins are policies that other installed distributions declare in the entry-point
group ``coburst.policies`` (in their ``pyproject.toml``: ``[project.entry-points."coburst.policies"]``
then ``NAME = "package.module:PolicyClass"``, or a module whose policy classes all register;
``examples/policy-plugin``); a broken one is skipped with a warning naming its distribution
and entry point.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import Any

from coburst.errors import InputError

__all__ = ["register", "describe_entry", "describe_param", "check_text", "type_text"]


def type_text(t) -> str:
    """``int`` -> ``"int"``; ``(int, type(None))`` -> ``"int | None"``."""
    types = t if isinstance(t, tuple) else (t,)
    return " | ".join("None" if x is type(None) else getattr(x, "__name__", repr(x)) for x in types)


@functools.lru_cache(maxsize=64)
def _module_tree(path: str):
    import ast

    with open(path, encoding="utf-8") as fh:
        return ast.parse(fh.read(), filename=path)


def check_text(check) -> str:
    """The check of a parameter as written in its declaration: a lambda's source
    (``lambda d: d >= 0``), a function's name and first docstring line; ``""`` without one."""
    import ast
    import inspect

    if check is None:
        return ""
    name = getattr(check, "__name__", "")
    if name and name != "<lambda>":
        doc = inspect.getdoc(check)
        return f"{name}(value)" + (f": {doc.splitlines()[0]}" if doc else "")
    code = getattr(check, "__code__", None)
    try:
        path = inspect.getsourcefile(check)
        tree = _module_tree(path) if path else None
    except (OSError, TypeError, SyntaxError, UnicodeDecodeError):
        tree = None
    if tree is None or code is None:
        return "<lambda>"
    args = list(code.co_varnames[:code.co_argcount])
    found = [node for node in ast.walk(tree) if isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno
             and [a.arg for a in node.args.args] == args]
    if len(found) > 1:  # several lambdas of the same shape on the line: the one compiling to this code
        same = [node for node in found if _same_code(node, code)]
        found = same or found
    return ast.unparse(found[0]) if found else "<lambda>"


def _same_code(node, code) -> bool:
    import ast
    import inspect

    try:
        compiled = compile(ast.Expression(body=node), "<check>", "eval")
    except (SyntaxError, ValueError, TypeError):
        return False
    inner = [c for c in compiled.co_consts if inspect.iscode(c)]
    return bool(inner) and inner[0].co_code == code.co_code and inner[0].co_names == code.co_names


def _json_value(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    return repr(value)


def describe_param(p) -> dict[str, Any]:
    """A :class:`~coburst.policies.base.Param` as a JSON-able dict."""
    return {"name": p.name, "type": type_text(p.type), "default": _json_value(p.default),
            "check": check_text(p.check), "doc": p.doc}


def describe_entry(e, *, implied: dict[str, Any] | None = None, params: bool = True) -> dict[str, Any]:
    """A registry entry as a JSON-able dict (what ``coburst policies --json`` prints)."""
    from coburst import registry

    out = {"name": e.name, "qualified": e.qualified, "family": e.family,
           "family_title": registry.FAMILIES[e.family].title,
           "origin": "coburst" if e.builtin else "plugin", "distribution": e.distribution,
           "entry_point": e.entry_point, "class": e.class_path, "source": e.source,
           "summary": (e.doc.splitlines() or [""])[0], "needs": list(e.needs),
           "names": [typed_name(e), *[n for n in (e.name, e.qualified) if n != typed_name(e)],
                     *registry.spellings(e)]}
    if params:
        out["doc"] = e.doc
        out["params"] = [describe_param(p) for p in e.params]
    if implied:
        out["implied"] = {k: _json_value(v) for k, v in implied.items()}
    return out


def typed_name(e) -> str:
    """The shortest name that designates ``e`` anywhere: the bare name when it resolves to
    ``e`` without knowing the platform, else ``FAMILY:NAME``."""
    from coburst import registry

    if e.builtin:
        fams = registry.builtin_families(e.name)
        return e.name if fams and fams[0] == e.family else e.qualified
    return e.name


# ---------------------------------------------------------------------- text output
def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def list_text(items: list[dict[str, Any]]) -> str:
    rows = [["POLICY", "FAMILY", "ORIGIN", "SOURCE", "NEEDS"]]
    for d in items:
        origin = "coburst" if d["origin"] == "coburst" else f"plugin {d['distribution']}"
        rows.append([d["names"][0], d["family"], origin, d["source"], ", ".join(d["needs"])])
    return _table(rows)


def detail_text(d: dict[str, Any]) -> str:
    lines = [d["names"][0], ""]
    fields = [("family", f"{d['family']} ({d['family_title']})"), ("class", d["class"]),
              ("origin", "coburst" if d["origin"] == "coburst" else
               f"plugin: distribution {d['distribution']}, entry point {d['entry_point']}"),
              ("source", d["source"]), ("needs", ", ".join(d["needs"])), ("names", ", ".join(d["names"]))]
    if d.get("implied"):
        fields.append(("label sets", ", ".join(f"{k}={v!r}" for k, v in d["implied"].items())))
    fields.append(("run", f"coburst run {d['names'][0]} -p PLATFORM -w WORKLOAD; pybatsim "
                          f"schedulers/coburstPolicy.py -o '{json.dumps({'policy': d['qualified']})}'"))
    width = max(len(k) for k, _ in fields)
    lines += [f"  {k.ljust(width)}  {v}" for k, v in fields]
    if d["doc"]:
        lines += ["", *("  " + line if line else "" for line in d["doc"].splitlines())]
    lines.append("")
    if not d["params"]:
        lines.append("parameters: none")
        return "\n".join(lines)
    lines.append("parameters (JSON options: -o '{\"name\": value}'):")
    rows = [["  NAME", "TYPE", "DEFAULT", "CHECK"]]
    for p in d["params"]:
        rows.append([f"  {p['name']}", p["type"], json.dumps(p["default"], ensure_ascii=False), p["check"]])
    table = _table(rows).splitlines()
    lines.append(table[0])
    for row, p in zip(table[1:], d["params"]):
        lines.append(row)
        if p["doc"]:
            lines.append(f"      {p['doc']}")
    return "\n".join(lines)


# ---------------------------------------------------------------------- the command
def policies_command(args: argparse.Namespace) -> int:
    from coburst import registry

    if args.family is not None and args.family not in registry.FAMILIES:
        raise InputError("--family", args.family, f"unknown family (families: {', '.join(registry.FAMILIES)})")
    if args.name is None:
        items = [describe_entry(e, params=args.json) for e in registry.entries()
                 if args.family in (None, e.family)]
        if args.json:
            doc = {"policies": items, "problems": registry.plugin_problems()}
            sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=None, separators=(",", ":")) + "\n")
        else:
            print(list_text(items))
        return 0
    name = args.name if args.family is None or ":" in args.name else f"{args.family}:{args.name}"
    found = registry.lookup(name)
    if found is None:
        raise InputError("policy", args.name, registry.unknown_message(args.name, args.family))
    d = describe_entry(found.entry, implied=found.implied)
    if args.json:
        sys.stdout.write(json.dumps(d, ensure_ascii=False, indent=None, separators=(",", ":")) + "\n")
    else:
        print(detail_text(d))
    return 0


def register(sub) -> None:
    parser = sub.add_parser("policies", allow_abbrev=False, help="list the scheduling policies (built-in and "
                            "plugins), or show one policy's parameters", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", nargs="?", default=None, metavar="NAME",
                        help="a policy name ([FAMILY:]NAME, any spelling: backfill-sjf-1, cosched:fcfs, EASY-Co, "
                             "min_min, a plugin's name): show its parameters")
    parser.add_argument("--family", default=None, metavar="FAMILY",
                        help="only the policies of this family (bb, cosched, hetero)")
    parser.add_argument("--json", action="store_true", help="print JSON (one object) instead of text")
    parser.set_defaults(func=policies_command)
