#!/usr/bin/env bash
# Staged in session 12 for session 13 (~6 min, one call): the full GPU suite of main e75cced
# (.device/main12; the final programmatic-launch build ran only the mma/wgmma/Linear subset),
# then bench/recipes/pdl_ab.yaml (jit plain and jit-pdl rows) on main and on branch
# ws-first-stage (.device/ws1: the ws copy warpgroup copies only the first stage's weights
# before griddepcontrol.wait). Prediction: ws1's plain M = 64 back to ~26.1 us (main 26.9),
# jit-pdl M = 64 / 256 within 1% of main's. lt (branch pdl-late-trigger): dependents triggered
# after the main loop, one-warp CTAs programmatic too: int8/channel M = 1 jit-pdl back to ~22 us
# or below, int4 jit-pdl within 3% of main's.
set -u
OUT=${OUT:-/tmp/qgemm-out}
mkdir -p "$OUT"
export QGEMM_CACHE_DIR=${QGEMM_CACHE_DIR:-/tmp/qgemm-cache}
timeout 250 .device/main12/qgemm_gpu_tests > "$OUT/gputests_main12.log" 2>&1
echo "GPU tests of main rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/gputests_main12.log" | head -20
for b in main12 ws1 lt main12; do
  timeout 100 ".device/$b/qgemm" bench bench/recipes/pdl_ab.yaml --out "$OUT/pdl_ab_$b.json" > "$OUT/pdl_ab_$b.log" 2>&1
  echo "== $b rc=$?"
  grep -E "^\s+(1|16|64|256) |N=" "$OUT/pdl_ab_$b.log"
done
# If ws1 wins: its full suite before merging (~3.3 min; a second call).
# timeout 250 .device/ws1/qgemm_gpu_tests > "$OUT/gputests_ws1.log" 2>&1
