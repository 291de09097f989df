"""Policy plugins: the entry points of the group ``coburst.policies`` read and checked.

:mod:`coburst.registry` calls :func:`read_plugins` the first time it needs the plugins (a name
that is not a built-in one, or a listing).  Each entry point names a policy class
(``"package.module:Class"``) or a module (``"package.module"``: its ``__all__``, else the
policy classes defined in it).  A plugin is skipped, with a message naming its distribution
and entry point, when it cannot be loaded (any exception while importing it), when an object
it names is not a valid policy class (:func:`invalid_reason`), or when its name clashes with
a built-in policy or another plugin (the first, in distribution then entry-point order,
keeps the name).
"""

from __future__ import annotations

import inspect
import re
from typing import Callable, Iterator

__all__ = ["GROUP", "NAME_RE", "read_plugins", "invalid_reason", "family_of", "describe"]

#: the entry-point group a distribution adds policies through
GROUP = "coburst.policies"
#: a policy name (no ``:``, which separates a family from a name, nor white space)
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+*-]*$")


def describe(ep) -> str:
    """``distribution 'name version', entry point 'name' = 'value'`` of an entry point."""
    return f"distribution {_dist_label(ep)!r}, entry point {ep.name!r} = {ep.value!r}"


def _dist_label(ep) -> str:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "?"
    try:
        return f"{dist.metadata['Name'] or dist.name} {dist.version}"
    except Exception:  # noqa: BLE001
        return getattr(dist, "name", None) or "?"


def family_of(cls: type) -> str:
    """The registry family of a policy class, by its base: ``cosched`` (a
    :class:`~coburst.policies.cosched.base.CoPolicy`), ``hetero`` (a
    :class:`~coburst.policies.hetero.base.HeteroPolicy`), else ``bb``."""
    from coburst.policies.cosched.base import CoPolicy
    from coburst.policies.hetero.base import HeteroPolicy

    if issubclass(cls, CoPolicy):
        return "cosched"
    if issubclass(cls, HeteroPolicy):
        return "hetero"
    return "bb"


def invalid_reason(obj) -> str | None:
    """Why ``obj`` is not a policy class a plugin may register, or None when it is one: a
    concrete subclass of :class:`~coburst.policies.base.Policy` with a ``family`` name (no
    ``:`` nor white space) and a tuple of :class:`~coburst.policies.base.Param`."""
    from coburst.policies.base import Param, Policy

    if not isinstance(obj, type):
        return f"{obj!r} is not a class"
    if not issubclass(obj, Policy):
        return f"{obj.__module__}.{obj.__qualname__} is not a subclass of coburst.policies.base.Policy"
    if inspect.isabstract(obj):
        missing = ", ".join(sorted(getattr(obj, "__abstractmethods__", ()))) or "?"
        return f"{obj.__qualname__} is abstract (missing {missing})"
    name = getattr(obj, "family", "")
    if not isinstance(name, str) or not NAME_RE.match(name):
        return (f"{obj.__qualname__}.family = {name!r} is not a policy name (letters, digits, "
                "'_', '.', '+', '*', '-'; no ':')")
    params = getattr(obj, "params", None)
    if not isinstance(params, tuple) or not all(isinstance(p, Param) for p in params):
        return f"{obj.__qualname__}.params is not a tuple of coburst.policies.base.Param"
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        return f"{obj.__qualname__}.params names a parameter twice"
    return None


def _module_classes(module) -> list:
    names = getattr(module, "__all__", None)
    if names is not None:
        return [getattr(module, n, None) for n in names]
    from coburst.policies.base import Policy

    return [v for v in vars(module).values()
            if isinstance(v, type) and v.__module__ == module.__name__ and issubclass(v, Policy)
            and getattr(v, "family", "") and not inspect.isabstract(v)]


def _entry_points() -> list:
    from importlib.metadata import entry_points

    eps = list(entry_points(group=GROUP))
    return sorted(eps, key=lambda ep: (_dist_label(ep), ep.name, ep.value))


def _load(ep) -> Iterator[tuple[object, str | None]]:
    """The objects an entry point names, each with a problem (or None); an import failure is
    one problem."""
    try:
        obj = ep.load()
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a plugin's failure is reported, never raised
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        yield None, f"cannot be loaded: {type(exc).__name__}" + (f": {detail}" if detail else "")
        return
    if inspect.ismodule(obj):
        classes = _module_classes(obj)
        if not classes:
            yield None, f"module {obj.__name__} defines no policy class"
        for cls in classes:
            yield cls, invalid_reason(cls)
        return
    yield obj, invalid_reason(obj)


def read_plugins(into: dict, clash: Callable[[str], str | None], entry: Callable[..., object]) -> list[str]:
    """Register every valid plugin policy into ``into`` (name -> what ``entry(name, family, cls,
    distribution, entry_point)`` makes: the registry's entry); ``clash(name)`` names the built-in
    policy a name would shadow.  Returns the problems (one message per skipped object)."""
    problems = []
    try:
        eps = _entry_points()
    except Exception as exc:  # noqa: BLE001 - a broken installation must not stop coburst
        return [f"the entry points of group 'coburst.policies' cannot be read ({type(exc).__name__}: {exc}); "
                "no plugin policy"]
    for ep in eps:
        where = describe(ep)
        for cls, problem in _load(ep):
            if problem is not None:
                problems.append(f"plugin policy skipped ({where}): {problem}")
                continue
            name = cls.family
            shadowed = clash(name)
            if shadowed is not None:
                problems.append(f"plugin policy skipped ({where}): its name {name!r} is the built-in policy "
                                f"{shadowed}")
                continue
            other = into.get(name)
            if other is not None:
                if other.cls is cls:
                    continue  # the same class named twice (a module and a class entry point)
                problems.append(f"plugin policy skipped ({where}): its name {name!r} is already taken by "
                                f"{other.class_path} ({other.origin}, entry point {other.entry_point!r})")
                continue
            into[name] = entry(name, family_of(cls), cls, _dist_label(ep), f"{ep.name} = {ep.value}")
    return problems
