#!/usr/bin/env bash
# For the session after 35, first device call (~400 s on a warm machine): the recipe on main
# with the 256-token prescaled tile (session 35 could not run it), then the GPU tests session 35
# changed and did not run: the wgmma tile table with the 256-token tile, and the tail-split
# test's new case. Build with scripts/setup.sh, copy build/qgemm and build/tests/qgemm_gpu_tests
# into .device/next, carry .device/next.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
BIN=.device/next OUT=$OUT BENCH_TIMEOUT=360 bash scripts/device_run.sh bench:dense_w4a16
QGEMM_CACHE_DIR=/tmp/qc_next timeout 200 .device/next/qgemm_gpu_tests \
  --gtest_filter='Formats/WgmmaGemmGpuTest.*:MmaGemmGpu.TailSplitOfThePartialLastWave' \
  > "$OUT/gpu_next.log" 2>&1
echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED|Failure" "$OUT/gpu_next.log" | head -20
