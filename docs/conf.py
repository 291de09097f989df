"""Sphinx configuration of coburst's documentation site.

Toolchain: Sphinx with MyST Markdown, the stack of the large scientific Python projects
(numpy, scipy, scikit-learn, xarray, pandas: Sphinx + the pydata-sphinx-theme; scipy's
and numpy's tutorials are MyST notebooks executed by myst-nb):

* pages are MyST Markdown (``myst_parser``, through ``myst_nb``); the tutorials and the
  getting-started page are text notebooks (``file_format: mystnb`` in their front matter)
  that myst-nb executes at every build: a tutorial whose code fails breaks the build
  (``nb_execution_raise_on_error``), and ``tests/test_docs.py`` builds the site;
* the Python API is generated from the docstrings (``autosummary`` + ``autodoc``,
  ``napoleon`` for NumPy/Google-style sections), the command line from the argparse parsers
  themselves (``sphinx-argparse`` over :func:`coburst.cli.main.build_parser`);
* search is Sphinx's own (an index built with the site, works from ``file://``, offline).

Build: ``./go docs`` (= ``sphinx-build -W --keep-going -n -b html docs docs/_build/html``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))

project = "coburst"
author = "the coburst authors"
copyright = "2026, the coburst authors"  # noqa: A001 - Sphinx's name
try:
    from importlib.metadata import version as _version

    release = _version("coburst")
except Exception:  # pragma: no cover - docs built from a tree that is not installed
    release = "0.1.0"
version = release

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinxarg.ext",
    "sphinx_copybutton",
    "sphinx_design",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = ["_build", "_templates", "_ext", "**.ipynb_checkpoints", "jupyter_execute", "figures/*.md"]
templates_path = ["_templates"]

# --- MyST -------------------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath", "attrs_inline", "substitution"]
myst_heading_anchors = 4  # `[text](page.md#a-heading)` links work, and are checked

# --- execution (myst-nb) ------------------------------------------------------------------
# Only pages marked `file_format: mystnb` are notebooks; they are executed at every build in
# the repository root (bundled platforms/, workloads/, models/), each in its own kernel.
nb_execution_mode = os.environ.get("COBURST_DOCS_EXECUTE", "force")
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_in_temp = False
nb_execution_allow_errors = False
nb_merge_streams = True
nb_output_stderr = "show"
nb_execution_excludepatterns: list[str] = []

# --- API (autodoc / autosummary / napoleon) -----------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "undoc-members": True, "show-inheritance": True,
                           "member-order": "bysource"}
# A module's page documents every public name it defines, whether or not its ``__all__`` lists
# it; a package's page documents its ``__all__`` (what ``coburst.testing`` re-exports is
# documented there).  See _templates/autosummary/module.rst.
autosummary_context = {"packages": sorted(".".join(p.parent.relative_to(ROOT).parts)
                                          for p in (ROOT / "coburst").rglob("__init__.py")
                                          if "__all__" in p.read_text(encoding="utf-8"))}
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autodoc_member_order = "bysource"
autodoc_mock_imports: list[str] = []
napoleon_google_docstring = True
napoleon_numpy_docstring = True
napoleon_use_rtype = False

# nitpicky mode (-n) checks every reference: links between pages, the ``{py:...}`` roles of
# the pages, and the qualified names (``coburst.x.Y``) of docstrings and annotations.  Not
# checked: names of other projects and of the standard library (the build is offline: no
# intersphinx), and the unqualified names docstrings use for objects of their own module.
nitpicky = True
_OTHER_PROJECTS = (r"(numpy|np|pandas|pd|scipy|matplotlib|plt|mpl|argparse|pathlib|typing|collections|"
                   r"dataclasses|enum|subprocess|io|os|json|re|datetime|decimal|fractions|threading|"
                   r"concurrent|multiprocessing|abc|procset|sortedcontainers|numba|batsim|pybatsim|zmq|"
                   r"simgrid|evalys|dask|distributed|rich|pyarrow|z3|seaborn|types|functools|itertools|"
                   r"contextlib|signal|socket|selectors|importlib|tomllib|hashlib|array|struct|heapq|math|"
                   r"random|logging|ctypes|weakref|typing_extensions|_io|_thread|builtins|hypothesis|"
                   r"pytest|_pytest|sys|shutil|tempfile|csv|gzip|zlib|ijson|jinja2|docutils|sphinx|gymnasium|gym)")
nitpick_ignore_regex = [
    (r"py:.*", _OTHER_PROJECTS + r"(\..*)?"),
    (r"py:.*", r"[^.]*"),  # unqualified: builtins, ``Path``, ``Self``, names of the module itself
    (r"py:.*", r".*[ ,'\[\]()|§<>=*].*"),  # not a name: prose or a type expression kept as text
    (r"py:.*", r".*\._\w*(\..*)?"),  # private names (``_Link``, ``_Cache``): not documented
    (r"py:class", r"coburst\..*\.[A-Z]"),  # type variables
    (r"py:.*", r"[A-Z]\w*\.\w+"),  # ``Class.member`` of another module, written unqualified
    (r"py:.*", r"(?s).*\s.*"),  # white space: a role split across two lines of a docstring
]
# sub-packages without ``__init__.py`` (namespace packages) have no page of their own
nitpick_ignore = [("py:mod", ".".join(d.relative_to(ROOT).parts)) for d in (ROOT / "coburst").rglob("*")
                  if d.is_dir() and d.name != "__pycache__" and not (d / "__init__.py").exists()]
# an unqualified name in a docstring that two modules define (``Profile``, ``Job``) resolves
# to the first: Sphinx's "more than one target" note is not an error here
suppress_warnings = ["myst.header", "ref.python"]

# The API page lists every public module of the package (found on disk, not imported:
# ``coburst/__main__.py`` runs the command line when imported), one autosummary table per
# sub-package; it is written at every build (``reference/api.md``, not tracked by git).
API_GROUPS = {
    "coburst": "Top-level modules: errors, atomic file writes, validation, signals, one run.",
    "coburst.simulator": "The embedded Batsim 4.2.1-compatible simulator.",
    "coburst.adapter": "pybatsim adapters: the scheduler's side of the protocol.",
    "coburst.core": "The scheduling core: cluster state, availability profiles, placements, decisions.",
    "coburst.policies": "Scheduling policies, one module per algorithm family.",
    "coburst.workloads": "Batsim JSON, SWF parsing and conversion, job models.",
    "coburst.platforms": "SimGrid XML platform generators.",
    "coburst.models": "Burst-buffer request model, co-execution heatmaps.",
    "coburst.theory": "Co-scheduling theory (Kuchumov & Korkhov 2021) and the makespan lower bound.",
    "coburst.analysis": "Metrics, tables, figures, reports.",
    "coburst.campaign": "Experiment campaigns.",
    "coburst.cli": "One module per `coburst` sub-command.",
    "coburst.testing": "What a policy's tests use: runs, invariant checks, random platforms and workloads.",
}


def public_modules(package: Path = ROOT / "coburst") -> list[str]:
    """Dotted names of the package's public modules, from the file tree."""
    names = []
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts[-1] == "__main__" or any(part.startswith("_") for part in parts):
            continue
        names.append(".".join(parts))
    return names


def _group(name: str) -> str:
    parts = name.split(".")
    if len(parts) == 1 or (len(parts) == 2 and not (ROOT / "coburst" / parts[1]).is_dir()):
        return "coburst"
    return ".".join(parts[:2])


def write_api_page() -> None:
    groups: dict[str, list[str]] = {}
    for name in public_modules():
        groups.setdefault(_group(name), []).append(name)
    lines = ["# Python API", "",
             "Generated from the docstrings of every public module (autosummary + autodoc, NumPy- and",
             "Google-style sections read by napoleon). The command line is documented in",
             "[Command line](cli.rst); the architecture that ties the modules together in",
             "[Architecture](../explanation/architecture.md).", ""]
    order = list(API_GROUPS) + sorted(set(groups) - set(API_GROUPS))
    for group in order:
        if group not in groups:
            continue
        lines += [f"## `{group}`", "", API_GROUPS.get(group, ""), "", "```{eval-rst}", ".. autosummary::",
                  "   :toctree: ../api", ""]
        lines += [f"   {name}" for name in groups[group]]
        lines += ["```", ""]
    text = "\n".join(lines)
    page = DOCS / "reference" / "api.md"
    if not page.exists() or page.read_text() != text:
        page.write_text(text)


write_api_page()

# --- HTML -------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "coburst"
html_static_path: list[str] = []
html_show_sourcelink = True
html_copy_source = True
html_last_updated_fmt = None
html_theme_options = {
    "navigation_depth": 2,
    "collapse_navigation": True,  # the sidebar of ~150 API pages, rendered on every page, made builds slow
    "show_toc_level": 2,
    "navbar_align": "left",
    "header_links_before_dropdown": 8,
    "secondary_sidebar_items": ["page-toc", "sourcelink"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    # offline: no external icon links, no version switcher, no analytics
    "icon_links": [],
    "search_bar_text": "Search the docs…",
}
# the section navigation on every page but the ~150 API pages (rendering it there took most
# of the build's writing time); the API pages are reached from reference/api
html_sidebars = {"api/*": []}

# the CLI reference runs the parsers: sub-commands import their modules only
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# the executed pages' kernels inherit this: their hidden first cell imports coburst_docs
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(DOCS / "_ext"), os.environ.get("PYTHONPATH")]))


def _argparse_help_with_roles(app) -> None:
    """sphinx-argparse parses each help text in a document of its own, without Sphinx's
    environment, so a role in a help text (``:mod:`...``` in a sub-command's docstring) would
    crash the build: give those documents the environment."""
    import sphinxarg.ext as argparse_ext

    default_settings = argparse_ext.get_default_settings

    def settings_with_env(parser_class):
        settings = default_settings(parser_class)
        settings.env = app.env
        return settings

    argparse_ext.get_default_settings = settings_with_env

    # help texts are plain text (what ``--help`` prints): outside ``literals``, a ``*`` or a
    # trailing ``_`` is text, not reStructuredText markup
    import re

    render_list = argparse_ext.render_list

    def plain(text):
        if not isinstance(text, str):
            return text
        parts = re.split(r"(``.*?``)", text)
        for i in range(0, len(parts), 2):
            parts[i] = re.sub(r"(\w)_(?=[\s,.;:)]|$)", r"\1\\_", parts[i].replace("*", "\\*"))
        return "".join(parts)

    def render_plain_list(items, markdown_help, settings=None):
        return render_list([plain(item) for item in items], markdown_help, settings)

    argparse_ext.render_list = render_plain_list


def _napoleon_plain_attributes() -> None:
    """Napoleon reads an attribute's docstring (``#:`` comments) as ``type: description``,
    splitting at its first colon; coburst's ``#:`` comments are prose ("where policy names are
    looked up (...): the family's view ..."): keep them as written."""
    from sphinx.ext.napoleon.docstring import GoogleDocstring

    def parse_attribute_docstring(self):
        return self.__class__(self._consume_to_end(), self._config).lines()

    GoogleDocstring._parse_attribute_docstring = parse_attribute_docstring


def _inherited_from_another_project(name: str, obj) -> bool:
    """A member without a docstring of its own whose documentation autodoc would take from a
    base class of another project (an overridden ``gymnasium.Env.step``)."""
    if getattr(obj, "__doc__", None) or "." not in name:
        return False
    parts = name.split(".")
    for i in range(len(parts) - 1, 0, -1):
        module = sys.modules.get(".".join(parts[:i]))
        if module is not None:
            break
    else:
        return False
    owner = module
    for part in parts[i:-1]:
        owner = getattr(owner, part, None)
    if not isinstance(owner, type):
        return False
    for base in owner.__mro__[1:]:
        member = vars(base).get(parts[-1])
        if member is not None and getattr(member, "__doc__", None):
            return not base.__module__.startswith("coburst")
    return False


def _docstring_text(app, what, name, obj, options, lines) -> None:
    """Docstrings are written to read well in ``help()`` and ``--help`` too: in their prose,
    ``|S_q|`` is a set's size and ``enabled_element_set_`` a name, not reStructuredText
    substitutions or references; the sub-commands' docstrings (their ``--help``) show usage
    lines indented, which become literal blocks here.  Literal blocks, doctests and
    ``literals`` are left alone."""
    import re

    def escape(text: str) -> str:
        parts = re.split(r"(``.*?``|`[^`]*`_?)", text)
        for i in range(0, len(parts), 2):
            part = re.sub(r"(?<![\w|\\])\|([A-Za-z]\w*)\|(?![\w|])", r"\\|\1\\|", parts[i])
            parts[i] = re.sub(r"\b([A-Za-z]\w*[A-Za-z0-9])_(?=\s|$|[,.;:)])", r"\1\\_", part)
        return "".join(parts)

    if _inherited_from_another_project(name, obj):
        lines[:] = []  # e.g. gymnasium's ``Env.step``: its project's documentation, not ours
        return
    cli = what == "module" and name.startswith("coburst.cli.")
    out: list[str] = []
    literal_indent = None  # indentation of the paragraph that opened a literal block
    previous = ""
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if literal_indent is not None and stripped and indent <= literal_indent:
            literal_indent = None
        if literal_indent is None and stripped:
            if cli and indent > 0 and not previous.strip() and out and not out[-1].strip():
                last = next((x for x in reversed(out) if x.strip()), "")
                if not last.startswith(" ") and not last.rstrip().endswith("::"):
                    out[-1:] = ["", "::", ""]
                    literal_indent = 0
            if literal_indent is None:
                if stripped.startswith(">>>") or re.match(r"[|+][-=+ ]", stripped):
                    pass  # a doctest, a line block or a grid table's line
                else:
                    line = escape(line)
                if stripped.endswith("::"):
                    literal_indent = indent
        out.append(line)
        previous = line
    lines[:] = out


def _merge_streams_exactly() -> None:
    """myst-nb merges a cell's stream outputs chunk by chunk, ending each chunk with a newline;
    a command's output arrives in chunks cut anywhere (``%%bash`` relays it as it comes), so
    its lines would be cut: join the chunks as they are, then let myst-nb finish the job."""
    import myst_nb.core.render as render
    from myst_nb.core.utils import coalesce_streams

    def merge(outputs):
        merged, streams = [], {}
        for output in outputs:
            if output["output_type"] == "stream":
                if output["name"] in streams:
                    streams[output["name"]]["text"] += output["text"]
                    continue
                streams[output["name"]] = output
            merged.append(output)
        return coalesce_streams(merged)

    render.coalesce_streams = merge


def _python_lookups_cached(app) -> None:
    """Once every page is read, the Python domain's objects no longer change, yet each
    reference to a name it does not know (``int`` in an annotation, a name of another project)
    scans every object of the API again (its "fuzzy" search): remember the answers from then
    on (the build took minutes longer)."""
    from sphinx.domains.python import PythonDomain
    from sphinx.util.build_phase import BuildPhase

    find_obj = PythonDomain.find_obj

    def cached_find_obj(self, env, modname, classname, name, type, searchmode=0):
        if app.phase < BuildPhase.RESOLVING:
            return find_obj(self, env, modname, classname, name, type, searchmode)
        cache = self.__dict__.setdefault("_coburst_find_obj", {})
        key = (modname, classname, name, type, searchmode)
        if key not in cache:
            cache[key] = find_obj(self, env, modname, classname, name, type, searchmode)
        return list(cache[key])

    PythonDomain.find_obj = cached_find_obj


def setup(app):
    _napoleon_plain_attributes()
    _python_lookups_cached(app)
    _merge_streams_exactly()
    app.connect("autodoc-process-docstring", _docstring_text)
    app.connect("builder-inited", _argparse_help_with_roles)
    return {"parallel_read_safe": True}
