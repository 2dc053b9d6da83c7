#!/usr/bin/env bash
# Session 33, call 4, on main with the qdq dequantize kernel (8 outputs per thread): the recipe,
# timed alone. Carry .device/s33 (qgemm, qgemm_gpu_tests of that build).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=${D:-.device/s33}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
t0=$(date +%s)
QGEMM_CACHE_DIR=/tmp/qc_recipe timeout 560 stdbuf -oL $D/qgemm bench bench/recipes/dense_w4a16.yaml \
  --out "$OUT/dense_w4a16.json" --plot "$OUT/dense_w4a16.svg" > "$OUT/bench_dense_w4a16.log" 2>&1
echo "bench rc=$? in $(( $(date +%s) - t0 )) s"
grep -E "^(copy|cuBLAS|peak)" "$OUT/bench_dense_w4a16.log" | head -4
