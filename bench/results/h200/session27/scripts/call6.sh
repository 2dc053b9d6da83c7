#!/usr/bin/env bash
# Session 27, call 6: the rest of the GPU suite on main 680c91a (call 4 ran TunedPlanGpu.* and
# MmaGemmGpu.*).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
QGEMM_CACHE_DIR=/tmp/qc_s27t timeout 285 .device/s27/qgemm_gpu_tests --gtest_brief=1 \
  --gtest_filter='-TunedPlanGpu.*:MmaGemmGpu.*' > "$OUT/gpu_suite_rest.log" 2>&1
echo "rc=$?"; tail -5 "$OUT/gpu_suite_rest.log"
