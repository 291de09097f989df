#!/usr/bin/env bash
# Make the KTH-SP2 workloads of Kopański 2020 (§2.3, §4.1): the full log and its 16 equal
# time periods, for both job models (Alloc-Only and IO-Aware), on the thesis platform.
# Deterministic: the same SEED gives byte-identical files.
#
#   scripts/make_kth_workloads.sh [OUT_DIR]        (default OUT_DIR: out/workloads/kth)
#   SEED=3 scripts/make_kth_workloads.sh           (default SEED: 0)
#
# Writes OUT_DIR/kth_alloc_only.json, OUT_DIR/kth_alloc_only.part01.json .. part16.json,
# and the same for kth_io_aware. About 15 s and 45 MB in all.
set -euo pipefail
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
LOG=workloads/KTH-SP2-1996-2.1-cln.swf
PLATFORM=platforms/dragonfly96.xml
mkdir -p "$OUT"
for model in alloc-only io-aware; do
  name="kth_${model//-/_}"
  "${CMD[@]}" workload swf "$LOG" --model "$model" --seed "$SEED" -p "$PLATFORM" -o "$OUT/$name.json"
  "${CMD[@]}" workload swf "$LOG" --model "$model" --seed "$SEED" -p "$PLATFORM" --split 16 -o "$OUT/$name.json"
done
