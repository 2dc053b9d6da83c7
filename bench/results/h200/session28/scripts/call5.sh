#!/usr/bin/env bash
# Session 28, call 5: the two marked-partials GPU tests on main (back-to-back plain and
# programmatic calls of one layer on different activations; repeated launches and replays).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
QGEMM_CACHE_DIR=/tmp/qc_s28t timeout 150 .device/s28/qgemm_gpu_tests --gtest_brief=0 \
  --gtest_filter='TunedPlanGpu.BackToBack*:TunedPlanGpu.SixteenToken*' > "$OUT/gpu_marked_tests.log" 2>&1
echo "rc=$?"; grep -E "^\[ +(OK|FAILED|PASSED) " "$OUT/gpu_marked_tests.log"; grep -B2 -A8 "Failure" "$OUT/gpu_marked_tests.log" | head -40
