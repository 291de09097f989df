"""The repository holds no file copied from another project: no file git tracks is, byte for
byte, one of the other projects' files kept beside the checkout (Batsim 4.2.1's corpus and
the SWF logs, see ``shared_data``).  Files compared by SHA-256; empty files left out."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from shared_data import BATSIM_VAR, REPO, SWF_VAR, batsim_data, swf_dir


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _files(folder: Path) -> list[Path]:
    return [p for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink() and p.stat().st_size > 0]


def copies(ours: list[Path], folders: list[Path]) -> list[tuple[Path, Path]]:
    """(our file, their file) for each of ``ours`` identical to a file under ``folders``
    (sizes compared first: only files of a size both sides have are hashed)."""
    theirs: dict[int, list[Path]] = {}
    for folder in folders:
        for path in _files(folder):
            theirs.setdefault(path.stat().st_size, []).append(path)
    digests: dict[Path, str] = {}

    def digest(path: Path) -> str:
        if path not in digests:
            digests[path] = _sha256(path)
        return digests[path]

    found = []
    for path in ours:
        if not path.is_file() or path.is_symlink():
            continue  # deleted in the work tree, or a link (git stores its target, not a copy)
        size = path.stat().st_size
        for other in theirs.get(size, []) if size else []:
            if digest(other) == digest(path):
                found.append((path, other))
                break
    return found


def tracked_files() -> list[Path]:
    try:
        proc = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, timeout=60)
    except OSError as exc:
        pytest.skip(f"git not at hand: {exc}")
    if proc.returncode != 0:
        pytest.skip(f"not a git checkout: {proc.stderr.decode(errors='replace').strip()}")
    return [REPO / name for name in proc.stdout.decode().split("\0") if name]


def test_no_tracked_file_is_another_projects_file():
    folders = [f for f in (batsim_data(), swf_dir()) if f.is_dir()]
    if not folders:
        pytest.skip(f"needs {batsim_data()} (Batsim 4.2.1's own test files; set {BATSIM_VAR}) or {swf_dir()} "
                    f"(the SWF logs; set {SWF_VAR})")
    found = copies(tracked_files(), folders)
    assert not found, ("files copied from another project (read them from beside the checkout instead, see "
                       "tests/shared_data.py):\n" + "\n".join(f"  {p.relative_to(REPO)} = {q}" for p, q in found))


def test_the_check_finds_a_copy(tmp_path):
    """A copy is found whatever its name; a file of the same size but other bytes and an empty
    file are not."""
    theirs, ours = tmp_path / "theirs" / "sub", tmp_path / "ours"
    theirs.mkdir(parents=True)
    ours.mkdir()
    (theirs / "log.swf").write_bytes(b"1 0 10 5 1\n")
    (theirs / "empty").write_bytes(b"")
    (ours / "renamed.txt").write_bytes(b"1 0 10 5 1\n")
    (ours / "same_size.txt").write_bytes(b"2 0 10 5 1\n")
    (ours / "empty").write_bytes(b"")
    found = copies(sorted(ours.iterdir()), [tmp_path / "theirs"])
    assert found == [(ours / "renamed.txt", theirs / "log.swf")]
