"""Small file helpers: atomic writes so that no half-written result is ever left behind."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", newline: str | None = None) -> Iterator[IO]:
    """Write ``path`` through a temporary file in the same folder, renamed on success.

    On any exception the temporary file is removed and ``path`` is left untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        kwargs = {} if "b" in mode else {"encoding": "utf-8", "newline": newline}
        with os.fdopen(fd, mode, **kwargs) as handle:
            yield handle
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def cache_dir() -> Path | None:
    """coburst's cache folder: ``$COBURST_CACHE`` (default ``$XDG_CACHE_HOME/coburst`` or
    ``~/.cache/coburst``); None when caching is off (``COBURST_CACHE=off``)."""
    base = os.environ.get("COBURST_CACHE")
    if base == "off":
        return None
    if not base:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "coburst")
    return Path(base)
