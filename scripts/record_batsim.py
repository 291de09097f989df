"""Record what the real Batsim 4.2.1 prints for every cross-engine case of the test suite.

    BATSIM=/path/to/batsim .venv/bin/python scripts/record_batsim.py            # the whole suite
    BATSIM=/path/to/batsim .venv/bin/python scripts/record_batsim.py tests/test_crossengine.py -k easy

Runs the tests (``pytest -n 2``) with the real Batsim and ``COBURST_BATSIM_RECORD`` set: every
run of Batsim that a test makes through the harness (``tests/batsim_recorded.py``) is staged,
then packed into ``tests/data/batsim_recorded/<test module>.json.xz``.  With no test selection,
the packs are written anew (cases no test makes any more disappear); with a selection, the
staged cases are merged into the existing packs.  Tests with random inputs are not recorded.

The binary is ``--batsim``, else ``$BATSIM``, else ``batsim`` on ``PATH``; it must say 4.2.1.
Exit status: pytest's (the packs are written either way), 2 when no Batsim is at hand.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import batsim_recorded as rec  # noqa: E402


def find_batsim(given: str | None) -> str | None:
    return given or os.environ.get("BATSIM") or shutil.which("batsim")


def pack(staging: Path, fresh: bool) -> list[tuple[str, int]]:
    written = []
    modules = sorted(p.name for p in staging.iterdir() if p.is_dir()) if staging.is_dir() else []
    for module in modules:
        cases = {} if fresh else rec.all_cases(module)
        for path in sorted((staging / module).glob("*.json")):
            cases[path.stem] = rec.prune(rec.read_staged(path))
        rec.write_pack(module, cases)
        written.append((module, len(cases)))
    if fresh and rec.PACKS.is_dir():
        for old in rec.PACKS.glob("*.json.xz"):
            if old.name[: -len(".json.xz")] not in modules:
                old.unlink()
    return written


def repack() -> list[tuple[str, int]]:
    """Write every pack again (what a recording keeps may have changed; the cases stay)."""
    written = []
    for path in sorted(rec.PACKS.glob("*.json.xz")):
        module = path.name[: -len(".json.xz")]
        cases = {key: rec.prune(o) for key, o in rec.all_cases(module).items()}
        rec.write_pack(module, cases)
        written.append((module, len(cases)))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batsim", help="the real Batsim 4.2.1 binary (default $BATSIM, else batsim on PATH)")
    parser.add_argument("-j", "--jobs", default="2", help="pytest-xdist workers (default 2)")
    parser.add_argument("--repack", action="store_true",
                        help="write the existing packs again (no Batsim run), keeping what a recording keeps")
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER, help="test selection (default: the whole suite)")
    args = parser.parse_args(argv)
    if args.repack:
        for module, n in repack():
            print(f"record_batsim: {module}: {n} cases, {rec.pack_path(module).stat().st_size / 1024:.0f} KiB")
        return 0
    batsim = find_batsim(args.batsim)
    if not batsim:
        print("record_batsim: no Batsim binary: give --batsim, set BATSIM or put batsim on PATH", file=sys.stderr)
        return 2
    version = subprocess.run([batsim, "--version"], capture_output=True, text=True).stdout.strip()
    if version.lstrip("v").split()[:1] != ["4.2.1"]:
        print(f"record_batsim: {batsim} says {version!r}, not 4.2.1", file=sys.stderr)
        return 2
    selection = [a for a in args.pytest_args if a != "--"]
    with tempfile.TemporaryDirectory(prefix="batsim-record-") as staging:
        env = {**os.environ, "BATSIM": batsim, "COBURST_BATSIM_RECORD": staging}
        cmd = [sys.executable, "-m", "pytest", "-n", args.jobs, "-q", "-p", "no:cacheprovider", *(selection or ["tests"])]
        status = subprocess.run(cmd, cwd=REPO, env=env).returncode
        written = pack(Path(staging), fresh=not selection)
    for module, n in written:
        size = rec.pack_path(module).stat().st_size
        print(f"record_batsim: {module}: {n} cases, {size / 1024:.0f} KiB")
    print(f"record_batsim: {sum(n for _, n in written)} cases in {len(written)} packs (pytest exit {status})")
    return status


if __name__ == "__main__":
    sys.exit(main())
