#!/usr/bin/env bash
# coburst set-up and entry point:  ./go demo  |  ./go test  [extra pytest args]  |  ./go docs
#
# Does all the set-up a fresh Debian/Ubuntu machine needs, then runs the main job or the
# test suite: SimGrid's Python binding (Debian's python3-simgrid, SimGrid 3.32, the library the
# real Batsim 4.2.1 runs on: installed with apt-get in seconds when running as root or with
# password-less sudo; where it is not available for this Python, SimGrid 4.1 is built from its
# PyPI sdist instead, the `simgrid` extra: cmake, g++ and Boost headers, then 5-10 minutes the
# first time), uv (into .tools/ when not on PATH), the locked Python environment
# (uv sync --locked), then the command.  COBURST_SIMGRID=system|build forces one of the two.
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

# runs apt-get (as root, or with password-less sudo) when it can: "$@" are its arguments
apt_get() {
  local sudo=""
  command -v apt-get >/dev/null 2>&1 || return 1
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null || return 1
    sudo="sudo -n"
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get "$@"
}

need_build_tools() {
  local missing=()
  command -v cmake >/dev/null 2>&1 || missing+=(cmake)
  command -v g++ >/dev/null 2>&1 || missing+=(g++)
  [ -f /usr/include/boost/version.hpp ] || missing+=(libboost-dev)
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null 2>&1 || die "SimGrid's build needs ${missing[*]} (no apt-get here: install them with your package manager)"
  echo "go: installing ${missing[*]} (needed to build SimGrid)" >&2
  { apt_get update -qq >/dev/null && apt_get install -y -qq "${missing[@]}" >/dev/null; } \
    || die "SimGrid's build needs: ${missing[*]}. Install them with:  sudo apt-get install -y ${missing[*]}"
}

# Debian's SimGrid 3.32 binding, built for this Python (coburst/_simgrid_finder.py loads it)
system_simgrid() {
  local status
  status=$(dpkg-query -W -f='${Status} ${Version}' python3-simgrid 2>/dev/null) || return 1
  [[ $status == "install ok installed 3.32-"* ]] && "$PYTHON" -c "import importlib.machinery as m, os, sys
sys.exit(not os.path.isfile('/usr/lib/python3/dist-packages/simgrid' + m.EXTENSION_SUFFIXES[0]))"
}

# SimGrid's Python binding: Debian's python3-simgrid when it fits this Python (installed with
# apt-get if need be), otherwise SimGrid 4.1 built from its sdist (the `simgrid` extra)
need_simgrid() {
  local want=${COBURST_SIMGRID:-auto}
  SYNC_ARGS=()
  case "$want" in auto|system|build) ;; *) die "COBURST_SIMGRID must be system or build (got '$want')" ;; esac
  if [ "$want" != build ]; then
    if ! system_simgrid && command -v apt-cache >/dev/null 2>&1; then
      local policy
      policy=$(apt-cache policy python3-simgrid 2>/dev/null || true)
      if [[ $policy != *"Candidate: 3.32-"* ]]; then  # (package lists never fetched?)
        apt_get update -qq >/dev/null 2>&1 || true
        policy=$(apt-cache policy python3-simgrid 2>/dev/null || true)
      fi
      if [[ $policy == *"Candidate: 3.32-"* ]]; then
        echo "go: installing python3-simgrid (SimGrid 3.32's Python binding)" >&2
        apt_get install -y -qq python3-simgrid >/dev/null 2>&1 \
          || { apt_get update -qq >/dev/null 2>&1 && apt_get install -y -qq python3-simgrid >/dev/null 2>&1; } || true
      fi
    fi
    system_simgrid && return 0
    [ "$want" = system ] && die "no SimGrid 3.32 binding for $PYTHON (sudo apt-get install -y python3-simgrid; Debian 12's is for Python 3.11)"
    echo "go: python3-simgrid (SimGrid 3.32) is not available for $PYTHON: building SimGrid 4.1 instead (5-10 minutes;" \
         "on Debian 12, sudo apt-get install -y python3-simgrid then ./go again avoids it)" >&2
  fi
  need_build_tools
  SYNC_ARGS=(--extra simgrid)
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
  need_simgrid
  need_uv
  "$UV" sync --locked ${SYNC_ARGS[@]+"${SYNC_ARGS[@]}"} --python "$PYTHON" -q
  # byte-compile once per lock file: imports stay fast even where PYTHONDONTWRITEBYTECODE is set
  local stamp=".venv/.bytecode-$(sha1sum uv.lock | cut -c1-12)"
  if [ ! -f "$stamp" ]; then
    "$UV" sync --locked ${SYNC_ARGS[@]+"${SYNC_ARGS[@]}"} --compile-bytecode --python "$PYTHON" -q && touch "$stamp"
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
