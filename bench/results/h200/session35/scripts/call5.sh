#!/usr/bin/env bash
# Session 35, call 5: the recipe on the planner with the 256-token prescaled tile, then the
# tail-split GPU test (its first case moved off the 256-token tile) with what time is left.
# Carry .device/s35.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
BIN=.device/s35 OUT=$OUT BENCH_TIMEOUT=330 bash scripts/device_run.sh bench:dense_w4a16
QGEMM_CACHE_DIR=/tmp/qc_t timeout 40 .device/s35/qgemm_gpu_tests \
  --gtest_filter='MmaGemmGpu.TailSplitOfThePartialLastWave' > "$OUT/gpu_call5.log" 2>&1
echo "tail split test rc=$?"; grep -E "^\[  (PASSED|FAILED) |Failure" "$OUT/gpu_call5.log"
