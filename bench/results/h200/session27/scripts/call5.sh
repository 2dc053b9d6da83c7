#!/usr/bin/env bash
# Session 27, call 5: the recipe on main 680c91a (the 8-token tile split in two sums in a cluster).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s27
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
QGEMM_CACHE_DIR=/tmp/qc_recipe timeout 480 $D/qgemm bench bench/recipes/dense_w4a16.yaml \
  --out "$OUT/dense_w4a16.json" --plot "$OUT/dense_w4a16.svg" > "$OUT/bench_dense_w4a16.log" 2>&1
echo "bench rc=$?"
grep -E "^ +(1|16|64|256|1024|4096) +(jit|cublas)" "$OUT/bench_dense_w4a16.log" | head -40
