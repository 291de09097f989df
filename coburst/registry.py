"""The policy registry: every scheduling policy of every family, built-in or from a plugin.

>>> from coburst import registry
>>> registry.resolve("backfill-sjf-1")                   # doctest: +SKIP
Resolved(entry=<policy bb:backfill-sjf>, implied={'depth': 1})
>>> registry.get("cosched:easy-co")                      # doctest: +SKIP
EASYCo(backfill_depth=100, backfill_rule='easy', placement_order='serial')

**Families.**  ``bb``: burst-buffer-aware batch scheduling (Kopański 2020, :mod:`coburst.policies`);
``cosched``: co-scheduling on node-sharing machines (Kellari 2025, ELiSE; FCS of Kuchumov &
Korkhov 2021; :mod:`coburst.policies.cosched`); ``hetero``: mapping on heterogeneous clusters
(Sánchez Sousa 2023, IRMaSim; :mod:`coburst.policies.hetero`); ``elastic``: jobs that change size
(equipartition, :mod:`coburst.policies.elastic`, run by :mod:`coburst.adapter.elastic`).  Each family keeps its own
table of classes and its spellings (thesis labels such as ``backfill-sjf-1`` or
``maxutil-1.0-1``, Kellari's ``EASY-Co``, IRMaSim's ``shortest_fastest``); this module puts
them under one rule and adds the plugins.

**Naming rule.**  A policy is named ``[FAMILY:]NAME``, where ``NAME`` is any spelling its
family accepts (for a plugin, the class's ``family`` attribute).  The bare ``NAME`` is enough
when one family knows it.  The names several families share (``fcfs``, ``filler``,
``conservative``, ``easy``) mean, bare, the policy of the platform's family when the caller
knows the platform (``coburst run`` on a node-sharing platform: ``cosched``), otherwise the
first family in the order ``bb``, ``cosched``, ``hetero`` (``fcfs`` is ``bb:fcfs``); the
prefix always picks one (``cosched:fcfs``).  A plugin may not take a name a built-in family
knows, nor one another plugin took.

**Plugins.**  A distribution declares entry points in the group ``coburst.policies``, each
naming a policy class (``name = "package.module:Class"``) or a module whose policy classes
(its ``__all__``, else the classes defined in it) are all registered::

    [project.entry-points."coburst.policies"]
    smallest-area-first = "coburst_saf:SmallestAreaFirst"

A plugin class derives from :class:`coburst.policies.base.Policy` (family ``bb``, run by the
burst-buffer adapter), :class:`coburst.policies.cosched.base.CoPolicy` (``cosched``) or
:class:`coburst.policies.hetero.base.HeteroPolicy` (``hetero``), sets ``family`` (its policy
name), ``source`` and its ``params``.  Plugins are read lazily: only when a name is not a
built-in one, or when every policy is listed (``coburst --help`` and ``coburst sim`` never
read them).  A plugin that cannot be imported, that is not a valid policy class, or whose
name clashes is skipped with a warning naming its distribution and entry point
(:func:`plugin_problems`); the other policies keep working.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from coburst.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from coburst.policies.base import Param, Policy

__all__ = ["FAMILIES", "Family", "PolicyEntry", "Resolved", "resolve", "lookup", "get", "known", "entries",
           "entry", "builtin_families", "register", "scope", "FamilyScope", "plugin_problems", "reset_plugins", "suggestions", "spellings",
           "split_name"]


@dataclass(frozen=True)
class Family:
    """One family of policies: its key (the ``FAMILY:`` prefix), a title, the package holding
    its table of classes and spellings, the base class a plugin of the family derives from,
    and what its policies need of a platform."""

    key: str
    title: str
    package: str
    base: str  # "module:Class"
    needs: tuple[str, ...]

    def table(self):
        """The family's own registry module (``MODULES``, ``known``, ``resolve``, ``get``)."""
        return importlib.import_module(self.package)

    def base_class(self) -> type:
        module, name = self.base.split(":")
        return getattr(importlib.import_module(module), name)


#: the families, in the order a shared bare name is given to (module doc)
FAMILIES: dict[str, Family] = {
    "bb": Family("bb", "burst-buffer-aware batch scheduling (Kopański 2020)", "coburst.policies",
                 "coburst.policies.base:Policy", ("burst buffers (optional)",)),
    "cosched": Family("cosched", "co-scheduling on node-sharing machines (Kellari 2025, ELiSE)",
                      "coburst.policies.cosched", "coburst.policies.cosched.base:CoPolicy", ("node sharing",)),
    "hetero": Family("hetero", "mapping on heterogeneous clusters (Sánchez Sousa 2023, IRMaSim)",
                     "coburst.policies.hetero", "coburst.policies.hetero.base:HeteroPolicy", ("heterogeneous hosts",)),
    "elastic": Family("elastic", "jobs that change size: moldable, malleable, evolving (ElastiSim's job model)",
                      "coburst.policies.elastic", "coburst.policies.elastic.base:ElasticPolicy",
                      ("elastic mode (coburst.adapter.elastic)",)),
}


@dataclass(eq=False)
class PolicyEntry:
    """One registered policy: its name, family, class (loaded on first use), origin, and
    what the class itself says (source, documentation, needs, parameters)."""

    name: str
    family: str
    load: Callable[[], type] = field(repr=False)
    #: ``None`` for coburst's own policies; else the plugin's distribution ("name version")
    distribution: str | None = None
    #: the plugin's entry point (``name = value``)
    entry_point: str | None = None
    _cls: type | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        return f"<policy {self.qualified}>"

    @property
    def cls(self) -> type[Policy]:
        if self._cls is None:
            self._cls = self.load()
        return self._cls

    @property
    def qualified(self) -> str:
        return f"{self.family}:{self.name}"

    @property
    def builtin(self) -> bool:
        return self.distribution is None

    @property
    def origin(self) -> str:
        return "coburst" if self.builtin else f"plugin {self.distribution}"

    @property
    def class_path(self) -> str:
        return f"{self.cls.__module__}:{self.cls.__qualname__}"

    @property
    def doc(self) -> str:
        return inspect.cleandoc(self.cls.__doc__ or "")

    @property
    def source(self) -> str:
        """The paper and algorithm: the class's ``source``, else its docstring's first line."""
        return getattr(self.cls, "source", "") or (self.doc.splitlines() or [""])[0]

    @property
    def params(self) -> tuple[Param, ...]:
        return tuple(self.cls.params)

    @property
    def needs(self) -> tuple[str, ...]:
        """What the policy needs: its family's platform, and a heatmap when it reads one."""
        extra = ("heatmap",) if any(p.name == "heatmap" for p in self.params) else ()
        return FAMILIES[self.family].needs + extra


@dataclass(frozen=True)
class Resolved:
    """A name resolved: the entry and the parameters its spelling implies (``backfill-sjf-1``:
    ``{"depth": 1}``)."""

    entry: PolicyEntry
    implied: dict[str, Any]

    @property
    def cls(self) -> type[Policy]:
        return self.entry.cls


# ---------------------------------------------------------------------- built-in entries
_BUILTIN: dict[str, dict[str, PolicyEntry]] = {}


def _builtin(family: str) -> dict[str, PolicyEntry]:
    """The built-in entries of a family, from its table (no policy module imported)."""
    got = _BUILTIN.get(family)
    if got is None:
        table = FAMILIES[family].table()
        got = _BUILTIN[family] = {name: PolicyEntry(name, family, _loader(table, name)) for name in table.MODULES}
    return got


def _loader(table, name: str) -> Callable[[], type]:
    return lambda: table.resolve(name)[0]


def split_name(name: str) -> tuple[str | None, str]:
    """``"cosched:fcfs"`` -> ``("cosched", "fcfs")``; ``"fcfs"`` -> ``(None, "fcfs")``."""
    family, sep, rest = name.partition(":")
    return (family, rest) if sep else (None, name)


def _builtin_families(name: str) -> list[str]:
    """The families whose tables know the spelling ``name``."""
    return [key for key, fam in FAMILIES.items() if fam.table().known(name)]


def builtin_families(name: Any) -> list[str]:
    """The families whose built-in policies ``name`` (``[FAMILY:]NAME``) may designate, in
    the family order (more than one: a shared bare name); no plugin is read."""
    if not isinstance(name, str):
        return []
    family, rest = split_name(name)
    return [key for key in _builtin_families(rest) if family in (None, key)]


def _builtin_resolved(family: str, name: str) -> Resolved:
    cls, implied = FAMILIES[family].table().resolve(name)
    return Resolved(_builtin(family)[cls.family], dict(implied))


def known(name: Any, *, plugins: bool = False) -> bool:
    """Whether ``name`` names a policy (built-in names only unless ``plugins``: no plugin is
    read then)."""
    if not isinstance(name, str):
        return False
    family, rest = split_name(name)
    if family is not None and family not in FAMILIES:
        return False
    if builtin_families(name):
        return True
    if not plugins:
        return False
    plugin = _plugins().get(rest)
    return plugin is not None and family in (None, plugin.family)


def lookup(name: Any, *, platform_family: str | None = None, plugins: bool = True) -> Resolved | None:
    """The policy ``name`` designates (naming rule: module doc), or None.  ``platform_family``:
    the family of the platform the policy will run on, when the caller knows it (it decides
    between the families sharing a bare name); ``plugins=False``: built-in names only."""
    if not isinstance(name, str):
        return None
    family, rest = split_name(name)
    if family is not None and family not in FAMILIES:
        return None
    fams = builtin_families(name)
    if fams:
        pick = platform_family if platform_family in fams else fams[0]
        return _builtin_resolved(pick, rest)
    if not plugins:
        return None
    plugin = _plugins().get(rest)
    if plugin is not None and family in (None, plugin.family):
        return Resolved(plugin, {})
    return None


def resolve(name: Any, *, platform_family: str | None = None) -> Resolved:
    """As :func:`lookup`; an unknown name is an :class:`InputError` with the close matches."""
    if not isinstance(name, str):
        raise InputError("policy", None, f"policy name must be a string, got {name!r}")
    found = lookup(name, platform_family=platform_family)
    if found is not None:
        return found
    family, rest = split_name(name)
    if family is not None and family not in FAMILIES:
        raise InputError("policy", name, f"unknown family {family!r} (families: {', '.join(FAMILIES)})")
    raise InputError("policy", name, unknown_message(name))


def unknown_message(name: str, family: str | None = None) -> str:
    close = suggestions(name, family)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return f"unknown policy{hint} (`coburst policies` lists them)"


def get(name: str, *, platform_family: str | None = None, **params: Any) -> Policy:
    """A policy instance from a name (module doc) and its parameters."""
    found = resolve(name, platform_family=platform_family)
    return _instance(name, found, params)


def _instance(name: str, found: Resolved, params: dict[str, Any]) -> Policy:
    for key, value in found.implied.items():
        if key in params and params[key] != value:
            raise InputError("policy", name, f"label says {key} {value!r} but {key}={params[key]!r} was given")
    return found.cls(**{**params, **found.implied})


def entry(name: str, *, platform_family: str | None = None) -> PolicyEntry:
    return resolve(name, platform_family=platform_family).entry


def entries(*, plugins: bool = True) -> list[PolicyEntry]:
    """Every policy: the built-in ones family by family in table order, then the plugins
    (by name)."""
    out = [e for key in FAMILIES for e in _builtin(key).values()]
    if plugins:
        out += sorted(_plugins().values(), key=lambda e: e.name)
    return out


def spellings(e: PolicyEntry) -> list[str]:
    """The other names of a built-in policy in its family (labels, aliases), as a pattern
    for the depth-labelled ones (``backfill-sjf-D``)."""
    if not e.builtin:
        return []
    table = FAMILIES[e.family].table()
    out = []
    if e.family == "bb":
        label = table._label(e.name, e.cls)
        if label != e.name:
            out.append(label)
        out += [a for a, (fam, _) in table.ALIASES.items() if fam == e.name]
    elif e.family == "cosched":
        out += [label for label, fam in table.LABELS.items() if fam == e.name and label != e.name]
    else:
        out += [a for a, (fam, _) in table.ALIASES.items() if fam == e.name]
    return out


def _all_names(family: str | None = None) -> list[str]:
    names = []
    for e in entries():
        if family in (None, e.family):
            names += [e.name, e.qualified, *spellings(e)]
    return names


def suggestions(name: str, family: str | None = None, n: int = 4) -> list[str]:
    """Close matches of an unknown name among every spelling (plugins included)."""
    import difflib

    _, rest = split_name(name)
    names = list(dict.fromkeys(_all_names(family)))
    lowered = {}
    for candidate in names:
        lowered.setdefault(candidate.lower(), candidate)
    close = difflib.get_close_matches(name.lower(), list(lowered), n=n, cutoff=0.6)
    if not close and rest != name:
        close = difflib.get_close_matches(rest.lower(), list(lowered), n=n, cutoff=0.6)
    return [lowered[c] for c in close]


# ---------------------------------------------------------------------- a family's view
class FamilyScope:
    """The registry seen by one family's adapter (``resolve`` / ``get`` as the family tables
    offer them): the family's own spellings, its ``FAMILY:`` prefix, and the plugins of the
    family.  The adapters of ``coburst.adapter`` look names up here."""

    def __init__(self, family: str):
        self.family = family

    def __repr__(self) -> str:
        return f"<policies of the {self.family} family>"

    def _name(self, name: Any) -> Any:
        if not isinstance(name, str):
            return name
        family, rest = split_name(name)
        if family is None or family == self.family:
            return rest
        if family in FAMILIES:
            raise InputError("policy", name, f"a policy of the {family} family; this scheduler runs {self.family} "
                             "policies (schedulers/coburstPolicy.py runs any)")
        raise InputError("policy", name, f"unknown family {family!r} (families: {', '.join(FAMILIES)})")

    def lookup(self, name: Any) -> Resolved | None:
        rest = self._name(name)
        if not isinstance(rest, str):
            return None
        table = FAMILIES[self.family].table()
        if table.known(rest):
            return _builtin_resolved(self.family, rest)
        plugin = _plugins().get(rest)
        if plugin is not None:
            if plugin.family != self.family:
                raise InputError("policy", name, f"a plugin policy of the {plugin.family} family; this scheduler "
                                 f"runs {self.family} policies (schedulers/coburstPolicy.py runs any)")
            return Resolved(plugin, {})
        return None

    def resolve(self, name: Any) -> tuple[type[Policy], dict[str, Any]]:
        found = self.lookup(name)
        if found is None:  # the family's own message for its names
            return FAMILIES[self.family].table().resolve(self._name(name))
        return found.cls, dict(found.implied)

    def get(self, name: str, **params: Any) -> Policy:
        found = self.lookup(name)
        if found is None:
            FAMILIES[self.family].table().resolve(self._name(name))  # raises its message
            raise AssertionError("unreachable")  # pragma: no cover
        return _instance(name, found, params)


_SCOPES: dict[str, FamilyScope] = {}


def scope(family: str) -> FamilyScope:
    """The view of one family (:class:`FamilyScope`)."""
    if family not in _SCOPES:
        if family not in FAMILIES:
            raise KeyError(family)
        _SCOPES[family] = FamilyScope(family)
    return _SCOPES[family]


# ---------------------------------------------------------------------- plugins
_PLUGINS: dict[str, PolicyEntry] | None = None
_PROBLEMS: list[str] = []


def plugin_problems() -> list[str]:
    """The warnings about skipped plugins (after plugins were read)."""
    _plugins()
    return list(_PROBLEMS)


def reset_plugins() -> None:
    """Forget what was read of the plugins (the next use reads them again)."""
    global _PLUGINS
    _PLUGINS = None
    _PROBLEMS.clear()


def _plugins() -> dict[str, PolicyEntry]:
    global _PLUGINS
    if _PLUGINS is None:
        _PLUGINS = {}
        from coburst.plugins import read_plugins

        for problem in read_plugins(_PLUGINS, _clash, _plugin_entry):
            _PROBLEMS.append(problem)
            print(f"coburst: warning: {problem}", file=sys.stderr)
    return _PLUGINS


def _plugin_entry(name: str, family: str, cls: type, distribution: str, entry_point: str) -> PolicyEntry:
    return PolicyEntry(name, family, (lambda c=cls: c), distribution=distribution, entry_point=entry_point, _cls=cls)


def register(cls: type, *, origin: str = "registered at run time") -> PolicyEntry:
    """Register a policy class of this process under its ``family`` name, as a plugin would be
    (tests, notebooks: :func:`coburst.testing.run_policy` runs a class this way).  The same
    checks as for a plugin apply, as :class:`InputError`: a valid policy class
    (:func:`coburst.plugins.invalid_reason`) whose name no built-in policy and no other class
    has.  Registering the same class again returns its entry."""
    from coburst.plugins import family_of, invalid_reason

    reason = invalid_reason(cls)
    if reason is not None:
        raise InputError("policy class", getattr(cls, "__qualname__", None), reason)
    table = _plugins()
    name = cls.family
    other = table.get(name)
    if other is not None and other.cls is cls:
        return other
    shadowed = _clash(name)
    if shadowed is not None:
        raise InputError("policy class", cls.__qualname__, f"its name {name!r} is the built-in policy {shadowed}")
    if other is not None:
        raise InputError("policy class", cls.__qualname__, f"its name {name!r} is already taken by "
                         f"{other.class_path} ({other.origin})")
    e = table[name] = PolicyEntry(name, family_of(cls), lambda: cls, distribution=origin,
                                  entry_point=f"{cls.__module__}:{cls.__qualname__}", _cls=cls)
    return e


def _clash(name: str) -> str | None:
    """The built-in policy a plugin's name would shadow (``"bb:fcfs"``), else None."""
    fams = _builtin_families(name)
    if not fams:
        return None
    return f"{fams[0]}:{_builtin_resolved(fams[0], name).entry.name}"
