"""What coburst asks of SimGrid 4.1's Python bindings, added to SimGrid 3.32's.

Debian's ``python3-simgrid`` (SimGrid 3.32, the library the real Batsim 4.2.1 is built on)
binds a smaller API than SimGrid 4.1's wheel.  coburst uses three things 3.32 does not bind:

* ``Host.get_properties()``: a host's properties;
* ``Engine.netzone_root`` as a tree: a zone's ``name``, ``get_properties()``,
  ``get_children()`` and ``all_hosts``;
* ``Link.get_sharing_policy()``.

:func:`patch` adds them to the loaded module, reading the answers from ``libsimgrid.so.3.32``
itself with :mod:`ctypes` (its C API, and the exported C++ members ``Host::get_properties``,
``NetZone::get_properties``, ``NetZone::get_children``, ``NetZone::get_all_hosts`` and
``Link::get_sharing_policy``), so the values, and their order, are the library's own:

* a property map is SimGrid's ``std::unordered_map<std::string, std::string>``, read in its
  iteration order (libstdc++'s node list, as a C++ range-for over it goes);
* a zone's children and hosts come in the order of SimGrid's vectors.

A module that already binds these (SimGrid 4.1's) is left as it is.
"""

from __future__ import annotations

import ctypes
import ctypes.util

#: exported C++ members of libsimgrid 3.32 (x86-64 Itanium ABI names)
_HOST_PROPERTIES = "_ZNK7simgrid3s4u4Host14get_propertiesB5cxx11Ev"
_ZONE_PROPERTIES = "_ZNK7simgrid3s4u7NetZone14get_propertiesB5cxx11Ev"
_ZONE_CHILDREN = "_ZNK7simgrid3s4u7NetZone12get_childrenEv"
_ZONE_HOSTS = "_ZNK7simgrid3s4u7NetZone13get_all_hostsEv"
_LINK_POLICY = "_ZNK7simgrid3s4u4Link18get_sharing_policyEv"

_PTR = ctypes.sizeof(ctypes.c_void_p)


def _library(module) -> ctypes.CDLL:
    """The libsimgrid the extension module was linked with (already loaded: found by its
    soname, which resolves to the same mapping)."""
    version = str(getattr(module, "simgrid_version", ""))
    major_minor = ".".join(version.split(".")[:2])
    for name in (f"libsimgrid.so.{major_minor}", ctypes.util.find_library("simgrid")):
        if name:
            try:
                return ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
            except OSError:
                continue
    raise ImportError(f"coburst: cannot open libsimgrid.so.{major_minor} (SimGrid {version}'s library)")


class _Lib:
    """The C functions and C++ members used, typed."""

    def __init__(self, lib: ctypes.CDLL):
        vp, cp = ctypes.c_void_p, ctypes.c_char_p

        def fn(name, restype, *argtypes):
            f = getattr(lib, name)
            f.restype, f.argtypes = restype, list(argtypes)
            return f

        self.host_by_name = fn("sg_host_by_name", vp, cp)
        self.host_name = fn("sg_host_get_name", cp, vp)
        self.link_by_name = fn("sg_link_by_name", vp, cp)
        self.zone_root = fn("sg_zone_get_root", vp)
        self.zone_name = fn("sg_zone_get_name", cp, vp)
        self.host_properties = fn(_HOST_PROPERTIES, vp, vp)
        self.zone_properties = fn(_ZONE_PROPERTIES, vp, vp)
        # std::vector<T*> returned by value: the caller's buffer is the hidden first argument
        self.zone_children = fn(_ZONE_CHILDREN, vp, vp, vp)
        self.zone_hosts = fn(_ZONE_HOSTS, vp, vp, vp)
        self.link_policy = fn(_LINK_POLICY, ctypes.c_int, vp)


def _string(address: int) -> str:
    """A ``std::string`` (libstdc++'s: data pointer, then length)."""
    data = ctypes.c_void_p.from_address(address).value
    size = ctypes.c_size_t.from_address(address + _PTR).value
    return ctypes.string_at(data, size).decode() if size else ""


def _string_map(address: int | None) -> dict[str, str]:
    """A ``std::unordered_map<std::string, std::string>`` in iteration order (libstdc++: the
    before-begin node at offset 16, each node its next pointer then key and value)."""
    out: dict[str, str] = {}
    if not address:
        return out
    node = ctypes.c_void_p.from_address(address + 2 * _PTR).value
    while node:
        out[_string(node + _PTR)] = _string(node + _PTR + 32)
        node = ctypes.c_void_p.from_address(node).value
    return out


def _pointers(member, this: int) -> list[int]:
    """The ``std::vector<T*>`` a C++ member returns by value (begin, end, capacity); its
    buffer is left to the process (a few pointers per zone, asked once)."""
    vec = (ctypes.c_void_p * 3)()
    member(ctypes.addressof(vec), this)
    begin, end = vec[0] or 0, vec[1] or 0
    count = (end - begin) // _PTR
    return [p or 0 for p in (ctypes.c_void_p * count).from_address(begin)] if count else []


class NetZone:
    """A SimGrid netzone as SimGrid 4.1's binding shows it: ``name``, ``get_properties()``,
    ``get_children()``, ``all_hosts``."""

    __slots__ = ("_lib", "_host_cls", "_ptr", "name")

    def __init__(self, lib: _Lib, host_cls, ptr: int):
        self._lib, self._host_cls, self._ptr = lib, host_cls, ptr
        self.name = lib.zone_name(ptr).decode()

    def get_properties(self) -> dict[str, str]:
        return _string_map(self._lib.zone_properties(self._ptr))

    def get_children(self) -> list["NetZone"]:
        return [NetZone(self._lib, self._host_cls, p) for p in _pointers(self._lib.zone_children, self._ptr)]

    @property
    def all_hosts(self) -> list:
        by_name = self._host_cls.by_name
        return [by_name(self._lib.host_name(p).decode()) for p in _pointers(self._lib.zone_hosts, self._ptr)]

    def __repr__(self) -> str:
        return f"<NetZone {self.name}>"


def patch(module) -> None:
    """Add what SimGrid 3.32's binding lacks (see the module's docstring) to ``module``."""
    if hasattr(module.Host, "get_properties") and hasattr(module.Link, "get_sharing_policy"):
        return
    version = str(getattr(module, "simgrid_version", "?"))
    if not version.startswith("3.32."):
        raise ImportError(f"coburst runs on SimGrid 3.32's Python binding (Debian's python3-simgrid) or on "
                          f"SimGrid 4.1's (the simgrid extra: uv sync --extra simgrid); {module.__file__} is "
                          f"SimGrid {version}'s")
    lib = _Lib(_library(module))
    policy = module.Link.SharingPolicy
    host_cls = module.Host

    def host_properties(host) -> dict[str, str]:
        ptr = lib.host_by_name(host.name.encode())
        if not ptr:
            raise ValueError(f"no host named {host.name!r}")
        return _string_map(lib.host_properties(ptr))

    def link_policy(link):
        ptr = lib.link_by_name(link.name.encode())
        if not ptr:
            raise ValueError(f"no link named {link.name!r}")
        return policy(lib.link_policy(ptr))

    def netzone_root(engine) -> NetZone:
        ptr = lib.zone_root()
        if not ptr:
            raise RuntimeError("no platform loaded yet")
        return NetZone(lib, host_cls, ptr)

    module.Host.get_properties = host_properties
    module.Link.get_sharing_policy = link_policy
    module.Engine.netzone_root = property(netzone_root)
