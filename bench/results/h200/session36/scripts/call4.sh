#!/usr/bin/env bash
# Session 36, call 4: the recipe on the planner with TMA stage copies (the 128- and 256-token
# ws tiles, no hand-off for 4-bit codes), then the GPU tests of planned layers (every format of
# the table at M = 1..4096, tuned plans, Linear, the mma tests). Carry .device/s36.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
t0=$(date +%s)
BIN=.device/s36 OUT=$OUT BENCH_TIMEOUT=330 bash scripts/device_run.sh bench:dense_w4a16
echo "bench done $(( $(date +%s) - t0 )) s"
QGEMM_CACHE_DIR=/tmp/qc_s36g timeout 240 .device/s36/qgemm_gpu_tests \
  --gtest_filter='Formats/MmaGemmGpuTest.*:LinearGpu.*:TunedPlanGpu.*:MmaGemmGpu.*' \
  > "$OUT/gpu_call4.log" 2>&1
echo "gpu tests rc=$? total $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED) |tests ran|FAILED|Failure" "$OUT/gpu_call4.log" | head -20
grep -c "^\[       OK" "$OUT/gpu_call4.log"
