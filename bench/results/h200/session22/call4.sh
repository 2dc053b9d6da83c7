#!/usr/bin/env bash
# Session 22, call 4 (main with the final 16-token long-stage rule): the GPU tests that plan
# layers (MmaGemmGpu, LinearGpu, TunedPlanGpu: every case with K >= 8192 the rule can touch, and
# the new LongStagesFor16TokenTiles), then the recipe (committed dense_w4a16.json / .svg).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s22
timeout 200 $D/qgemm_gpu_tests --gtest_brief=1 --gtest_filter='MmaGemmGpu.*:LinearGpu.*:TunedPlanGpu.*' \
  > "$OUT/gpu_planned_s22.log" 2>&1
echo "tests rc=$?"; tail -3 "$OUT/gpu_planned_s22.log"
QGEMM_CACHE_DIR=/tmp/qc timeout 380 $D/qgemm bench bench/recipes/dense_w4a16.yaml --out "$OUT/dense_w4a16.json" \
  --plot "$OUT/dense_w4a16.svg" > "$OUT/bench_dense_w4a16.log" 2>&1
echo "bench rc=$?"; grep -vE "^\s*$" "$OUT/bench_dense_w4a16.log" | tail -45
