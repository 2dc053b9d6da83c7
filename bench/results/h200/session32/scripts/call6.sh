#!/usr/bin/env bash
# Session 32, call 6: the new GPU test TunedPlanGpu.SplitKSumsAreBitwiseReproducible (main +
# the test), cold kernel cache.
OUT=${OUT:-/tmp/qgemm-out}
QGEMM_CACHE_DIR=/tmp/qc_s32c6 timeout 140 .device/s32/qgemm_gpu_tests \
  --gtest_filter='TunedPlanGpu.SplitKSumsAreBitwiseReproducible' > "$OUT/gpu_split_repro.log" 2>&1
echo "rc=$?"; tail -4 "$OUT/gpu_split_repro.log"; grep -E "Failure" -A8 "$OUT/gpu_split_repro.log" | head -30
