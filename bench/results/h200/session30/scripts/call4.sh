#!/usr/bin/env bash
# Session 30, call 4, on the final build (ws copy warpgroup: first stage's weights first, 5- and
# 7-bit codes keep the whole ring): the wgmma / ws and planned-layer GPU tests in three shards
# side by side, then the recipe (bench/results/h200/dense_w4a16.json and .svg).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=${D:-.device/s30/final}  # the binaries carried (qgemm, qgemm_gpu_tests)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
t0=$(date +%s)
for i in 0 1 2; do
  QGEMM_CACHE_DIR=/tmp/qc_t$i GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i \
    timeout 150 $D/qgemm_gpu_tests --gtest_filter='WgmmaGemmGpu.*:TunedPlanGpu.*:MmaGemmGpu.Cluster*' \
    > "$OUT/t$i.log" 2>&1 &
done
wait
cat "$OUT"/t0.log "$OUT"/t1.log "$OUT"/t2.log > "$OUT/gpu_tests_call4.log"; rm -f "$OUT"/t?.log
echo "tests in $(( $(date +%s) - t0 )) s: $(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]|tests ran' "$OUT/gpu_tests_call4.log" | tr '\n' '|')"
grep -E "^\[  FAILED  \] [A-Z]|Failure" -A6 "$OUT/gpu_tests_call4.log" | head -20
t0=$(date +%s)
QGEMM_CACHE_DIR=/tmp/qc_recipe timeout 380 $D/qgemm bench bench/recipes/dense_w4a16.yaml \
  --out "$OUT/dense_w4a16.json" --plot "$OUT/dense_w4a16.svg" > "$OUT/bench_dense_w4a16.log" 2>&1
echo "bench rc=$? in $(( $(date +%s) - t0 )) s"
grep -E "^(copy|cuBLAS|peak)" "$OUT/bench_dense_w4a16.log" | head -4
grep -E "^ +(1|16|64|256|1024|4096) +(jit|cublas-bf16) " "$OUT/bench_dense_w4a16.log" | head -24
