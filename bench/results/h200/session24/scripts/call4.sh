#!/usr/bin/env bash
# Session 24, call 4: the change as it will merge (qgemm_sel: paired zero points on the 8-token
# mma.sync tile only): the GPU tests of every zero-point format, then the dense_w4a16 recipe.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s24
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
timeout 200 $D/qgemm_gpu_tests --gtest_brief=1 \
  --gtest_filter='*uint*:*zp*:*Zero*:MmaDequant*:TunedPlanGpu.*:LinearGpu.*:MmaGemmGpu.LongDecodeStagesOnLongRows:MmaGemmGpu.LlamaSizedLayer' \
  > "$OUT/gpu_zp_tests_sel.log" 2>&1
echo "tests rc=$?"; grep -E "PASSED|FAILED|tests ran" "$OUT/gpu_zp_tests_sel.log" | tail -8
QGEMM_CACHE_DIR=/tmp/qc timeout 380 $D/qgemm_sel bench bench/recipes/dense_w4a16.yaml --out "$OUT/dense_w4a16.json" \
  --plot "$OUT/dense_w4a16.svg" > "$OUT/bench_dense_w4a16.log" 2>&1
echo "bench rc=$?"; grep -vE "^\s*$" "$OUT/bench_dense_w4a16.log" | tail -45
