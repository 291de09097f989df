#!/usr/bin/env bash
# Make the KTH-SP2 workloads of Kopański 2020 (§2.3, §4.1): the full log and its 16 equal
# time periods, for both job models (Alloc-Only and IO-Aware), on the thesis platform.
# Deterministic: the same SEED gives byte-identical files.
#
#   scripts/make_kth_workloads.sh [--swf LOG] [OUT_DIR]   (default OUT_DIR: out/workloads/kth)
#   SEED=3 scripts/make_kth_workloads.sh                  (default SEED: 0)
#
# LOG is the Parallel Workloads Archive's KTH-SP2 log, by default KTH-SP2-1996-2.1-cln.swf in
# $COBURST_SWF_DIR, else in ../shared/data/swf beside the checkout (not in this repository).
# Writes OUT_DIR/kth_alloc_only.json, OUT_DIR/kth_alloc_only.part01.json .. part16.json,
# and the same for kth_io_aware. About 15 s and 45 MB in all.
set -euo pipefail
KTH=KTH-SP2-1996-2.1-cln.swf
WHAT="the KTH-SP2 log; set COBURST_SWF_DIR to the folder of SWF logs, or give --swf LOG"
if [ "${1:-}" = "--swf" ]; then
  [ -n "${2:-}" ] || { echo "make_kth_workloads.sh: --swf needs a path" >&2; exit 2; }
  LOG=$(realpath -m -- "$2") WHAT="--swf"
  shift 2
elif [ -n "${COBURST_SWF_DIR:-}" ]; then
  LOG=$(realpath -m -- "$COBURST_SWF_DIR")/$KTH
else
  LOG=$(realpath -m -- "$(dirname "$0")/../../shared/data/swf")/$KTH
fi
if [ ! -f "$LOG" ]; then
  echo "make_kth_workloads.sh: $LOG: not found ($WHAT)" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
OUT=${1:-out/workloads/kth}
SEED=${SEED:-0}
if [ -n "${COBURST:-}" ]; then
  read -r -a CMD <<< "$COBURST"
elif [ -x .venv/bin/python ]; then
  CMD=(.venv/bin/python -m coburst)
else
  CMD=(python3 -m coburst)
fi
PLATFORM=platforms/dragonfly96.xml
mkdir -p "$OUT"
for model in alloc-only io-aware; do
  name="kth_${model//-/_}"
  "${CMD[@]}" workload swf "$LOG" --model "$model" --seed "$SEED" -p "$PLATFORM" -o "$OUT/$name.json"
  "${CMD[@]}" workload swf "$LOG" --model "$model" --seed "$SEED" -p "$PLATFORM" --split 16 -o "$OUT/$name.json"
done
