#!/usr/bin/env bash
# Session 32, call 1, on main 4af1271 (session 30's ws changes): the recipe first (timed alone),
# then the whole GPU suite in three shards side by side.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=${D:-.device/s32}  # the binaries carried (qgemm, qgemm_gpu_tests)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
t0=$(date +%s)
QGEMM_CACHE_DIR=/tmp/qc_recipe timeout 250 $D/qgemm bench bench/recipes/dense_w4a16.yaml \
  --out "$OUT/dense_w4a16.json" --plot "$OUT/dense_w4a16.svg" > "$OUT/bench_dense_w4a16.log" 2>&1
echo "bench rc=$? in $(( $(date +%s) - t0 )) s"
grep -E "^(copy|cuBLAS|peak)" "$OUT/bench_dense_w4a16.log" | head -4
t0=$(date +%s)
for i in 0 1 2; do
  QGEMM_CACHE_DIR=/tmp/qc_suite$i GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i \
    timeout 300 $D/qgemm_gpu_tests > "$OUT/gpu_suite_shard$i.log" 2>&1 &
done
wait
echo "suite in $(( $(date +%s) - t0 )) s"
for i in 0 1 2; do
  echo "shard $i: $(grep -E 'tests ran|^\[  PASSED|^\[  FAILED  \] [0-9]|^\[  SKIPPED \] [0-9]' "$OUT/gpu_suite_shard$i.log" | tr '\n' '|')"
done
grep -hE "^\[  FAILED  \] [A-Z]|Failure" -A6 "$OUT"/gpu_suite_shard*.log | head -30
