#!/usr/bin/env bash
# Session 24, call 5: the full GPU suite on the change (qgemm_gpu_tests of qgemm_sel's build),
# then a two-format M = 1 bench (uint4/zp first) to compare with the recipe's ordering.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s24
QGEMM_CACHE_DIR=/tmp/qc timeout 470 $D/qgemm_gpu_tests --gtest_brief=1 > "$OUT/gpu_suite_s24.log" 2>&1
echo "suite rc=$?"; grep -E "PASSED|FAILED|tests ran|SKIPPED" "$OUT/gpu_suite_s24.log" | tail -12
QGEMM_CACHE_DIR=/tmp/qc timeout 70 $D/qgemm_sel bench $D/m1_pair.yaml --out "$OUT/m1_pair.json" > "$OUT/m1_pair.log" 2>&1
echo "bench rc=$?"; grep -E "^ +1 |^u|^i" "$OUT/m1_pair.log"
