#!/usr/bin/env bash
# Session 13: branch ws-tail-split (.device/tail). GPU tests (mma / Linear / wgmma), then the
# tail_split recipe on the branch and on main (.device/main12).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
timeout 200 .device/tail/qgemm_gpu_tests --gtest_filter='MmaGemmGpu.*:LinearGpu.*:TunedPlan*' > "$OUT/gputests_tail.log" 2>&1
echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests ran" "$OUT/gputests_tail.log" | head -20
for b in tail main12; do
  timeout 100 ".device/$b/qgemm" bench bench/recipes/tail_split.yaml --out "$OUT/tail_split_$b.json" > "$OUT/tail_split_$b.log" 2>&1
  echo "== $b rc=$?"; grep -E "^\s+[0-9]+ (jit|cublas)|x bf16" "$OUT/tail_split_$b.log"
done
