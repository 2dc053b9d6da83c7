#!/usr/bin/env bash
# Session 20 call 6: GPUs described as an older target (device_target.cpp) on the H200: the format
# table with QGEMM_TARGET_ARCH=sm_80 (all 120 cases: sm_80 PTX finished by the driver, the path
# GPUs newer than sm_90 take) and =sm_75 (60 fp16 cases), then the plain Linear / MmaGemmGpu tests.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
B=.device/s20
for t in sm_80 sm_75; do
  QGEMM_TARGET_ARCH=$t QGEMM_CACHE_DIR=/tmp/qc_$t $B/qgemm info 2>&1 | grep -E "GPU 0|jit:"
  QGEMM_TARGET_ARCH=$t QGEMM_CACHE_DIR=/tmp/qc_$t timeout 200 $B/qgemm_gpu_tests \
    --gtest_filter='Formats/MmaGemmGpuTest.*' > "$OUT/table_as_$t.log" 2>&1
  echo "== table as $t rc=$?"; grep -E "^\[  (PASSED|FAILED) |tests ran|SKIPPED \] [0-9]" "$OUT/table_as_$t.log"
  grep "FAILED  \]" "$OUT/table_as_$t.log" | head
done
QGEMM_CACHE_DIR=/tmp/qc_plain timeout 150 $B/qgemm_gpu_tests --gtest_filter='LinearGpu.*:MmaGemmGpu.*' \
  > "$OUT/plain_tests.log" 2>&1
echo "== plain rc=$?"; grep -E "^\[  (PASSED|FAILED) |tests ran" "$OUT/plain_tests.log"
