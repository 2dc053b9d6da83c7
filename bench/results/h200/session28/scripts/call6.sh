#!/usr/bin/env bash
# Session 28, call 6: TunedPlanGpu.* on main e77047d (the planned-layer tests after the test
# helpers were factored out; includes both marked-partials tests).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
QGEMM_CACHE_DIR=/tmp/qc_s28t timeout 200 .device/s28/qgemm_gpu_tests --gtest_brief=0 \
  --gtest_filter='TunedPlanGpu.*' > "$OUT/gpu_tuned_plan_tests.log" 2>&1
echo "rc=$?"; grep -E "^\[ +(OK|FAILED|PASSED) " "$OUT/gpu_tuned_plan_tests.log"; grep -B2 -A8 "Failure" "$OUT/gpu_tuned_plan_tests.log" | head -30
