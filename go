#!/usr/bin/env bash
# coburst set-up and entry point:  ./go demo  |  ./go test  [extra pytest args]  |  ./go docs
#
# Does all the set-up a fresh Debian/Ubuntu machine needs, then runs the main job or the
# test suite: system packages for building SimGrid (cmake, g++, Boost headers; installed with
# apt-get when running as root or with password-less sudo, otherwise an actionable message),
# uv (into .tools/ when not on PATH), the locked Python environment (uv sync --locked; the
# first time this builds simgrid==4.1 from its sdist: 10-20 minutes), then the command.
# ./go docs builds the documentation site (docs/, executing its tutorials) into docs/_build/html.
set -euo pipefail
cd "$(dirname "$0")"

die() { echo "go: $*" >&2; exit 1; }

need_py() {
  local py
  for py in python3.12 python3.11 python3; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c "import sys; sys.exit(sys.version_info < (3, 11))" 2>/dev/null; then
      PYTHON=$(command -v "$py"); return 0
    fi
  done
  die "Python >= 3.11 is required (on Debian/Ubuntu: sudo apt-get install python3 python3-venv)"
}

need_build_tools() {
  local missing=()
  command -v cmake >/dev/null 2>&1 || missing+=(cmake)
  command -v g++ >/dev/null 2>&1 || missing+=(g++)
  [ -f /usr/include/boost/version.hpp ] || missing+=(libboost-dev)
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else
      die "SimGrid's build needs: ${missing[*]}. Install them with:  sudo apt-get install -y ${missing[*]}"
    fi
  fi
  command -v apt-get >/dev/null 2>&1 || die "SimGrid's build needs ${missing[*]} (no apt-get here: install them with your package manager)"
  echo "go: installing ${missing[*]} (needed to build SimGrid)" >&2
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# Test-only tools: headless Chromium (the HTML report check) and nix-instantiate (the parse
# check of nix/shell.nix).  Installed with apt-get when possible; otherwise those tests skip,
# naming what is missing.
need_test_tools() {
  local missing=()
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  command -v nix-instantiate >/dev/null 2>&1 || missing+=(nix-bin)
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else
      echo "go: note: ${missing[*]} not installed (sudo apt-get install -y ${missing[*]}): their tests will skip" >&2; return 0
    fi
  fi
  command -v apt-get >/dev/null 2>&1 || { echo "go: note: ${missing[*]} not installed: their tests will skip" >&2; return 0; }
  echo "go: installing ${missing[*]} (used by the tests)" >&2
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null \
    || echo "go: note: could not install ${missing[*]}: their tests will skip" >&2
}

need_uv() {
  if command -v uv >/dev/null 2>&1; then UV=$(command -v uv); return 0; fi
  if [ ! -x .tools/bin/uv ]; then
    echo "go: installing uv into .tools/" >&2
    "$PYTHON" -m venv .tools || die "cannot create a virtual environment (sudo apt-get install python3-venv)"
    .tools/bin/pip install -q "uv==0.13.9"
  fi
  UV=$PWD/.tools/bin/uv
}

setup() {
  need_py
  need_build_tools
  need_uv
  "$UV" sync --locked --python "$PYTHON" -q
  # byte-compile once per lock file: imports stay fast even where PYTHONDONTWRITEBYTECODE is set
  local stamp=".venv/.bytecode-$(sha1sum uv.lock | cut -c1-12)"
  if [ ! -f "$stamp" ]; then
    "$UV" sync --locked --compile-bytecode --python "$PYTHON" -q && touch "$stamp"
  fi
  # compile the plan-based policies' numba kernel once per version of its source (~20-30 s;
  # numba caches the machine code), so that no run or test pays it inside a time-out
  local kstamp=".venv/.plan-kernel-$(cat coburst/core/plan_kernel.py coburst/core/plan.py | sha1sum | cut -c1-12)"
  if [ ! -f "$kstamp" ]; then
    echo "go: compiling the plan-based policies' kernel (once, ~30 s)" >&2
    "$UV" run --locked --no-sync python -c "from coburst.core.plan import warm_kernel; warm_kernel()" && touch "$kstamp"
  fi
}

cmd=${1:-}
[ -n "$cmd" ] && shift || true
case "$cmd" in
  demo) setup; exec "$UV" run --locked --no-sync coburst demo "$@" ;;
  test) setup; need_test_tools; exec "$UV" run --locked --no-sync python -m pytest -n 2 -q "$@" ;;
  docs) setup; exec "$UV" run --locked --no-sync sphinx-build -W --keep-going -n -b html docs docs/_build/html "$@" ;;
  setup) setup ;;
  *) echo "usage: ./go demo | ./go test [pytest args] | ./go docs [sphinx-build args] | ./go setup" >&2; exit 2 ;;
esac
