#!/usr/bin/env bash
# Session 13, last call: M = 16 candidates (wgmma 16-token tiles, two tiles per warp) on main,
# then the full dense_w4a16 recipe (jit plain, jit-pdl, qdq, cuBLAS) for the committed results.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
B=.device/main12/qgemm
T16="w4x1 t1 f2 s4 k256 waves4;w4x1 t1 f2 s4 k256 waves4 wg;w4x1 t1 f2 s6 k128 waves4 wg;w4x1 t2 f2 s4 k256 waves4;w4x1 t1 f2 s5 k256 waves4"
timeout 100 $B tune --weight int4/g128/bf16 --m 16 --n 8192 --k 8192 --tiles "$T16" --out "$OUT/t16.json" > "$OUT/tune16.log" 2>&1; echo "tune16 rc=$?"
grep -E "^mma_gemm|^candidate" "$OUT/tune16.log"
timeout 420 $B bench bench/recipes/dense_w4a16.yaml --out "$OUT/dense_w4a16.json" --plot "$OUT/dense_w4a16.svg" > "$OUT/bench_dense_w4a16.log" 2>&1
echo "bench rc=$?"
grep -E "^\s+[0-9]+ (jit|cublas)|x bf16|x fp16" "$OUT/bench_dense_w4a16.log" | head -150
