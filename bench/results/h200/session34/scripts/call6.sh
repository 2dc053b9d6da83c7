#!/usr/bin/env bash
# Session 34, call 6: the GPU tests of the Linear layer and of planned layers (TunedPlanGpu.*,
# LinearGpu.*) on the final build, whose prepare() waits for its buffer fills and whose tests
# order their legacy-stream fills before launches on non-blocking streams. Carry .device/ps.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
t0=$(date +%s)
QGEMM_CACHE_DIR=/tmp/qc6 timeout 200 .device/ps/qgemm_gpu_tests --gtest_filter='TunedPlanGpu.*:LinearGpu.*' \
  > "$OUT/gpu_call6.log" 2>&1
echo "rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]' "$OUT/gpu_call6.log" | tr '\n' '|')"
grep -E "Failure" -A6 "$OUT/gpu_call6.log" | head -20
