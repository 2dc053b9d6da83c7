#!/usr/bin/env bash
# Session 16 call 5: the final main (8-bit channel CTA rule, cluster sum by pieces, cluster
# splits that fit): the whole dense_w4a16 recipe, then the layers whose clusters are lowered,
# then the GPU tests that run clusters, tail splits and the one-warp path.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
timeout 330 .device/s16d/qgemm bench bench/recipes/dense_w4a16.yaml --out "$OUT/dense_w4a16.json" --plot "$OUT/dense_w4a16.svg" > "$OUT/bench_dense_w4a16.log" 2>&1
echo "== recipe rc=$?"; tail -45 "$OUT/bench_dense_w4a16.log"
t() { timeout 60 .device/s16d/qgemm tune "$@" --out "$OUT/t.json" > "$OUT/s.log" 2>&1; echo "== $* rc=$?"; grep -E "^mma_gemm|wrong" "$OUT/s.log"; cat "$OUT/s.log" >> "$OUT/fit_tune.log"; }
T='w8x1 t1 f8 s3 k256 waves1 ws'
t --n 4096 --k 4096 --weight int4/g128/bf16 --m 33,64,100 --tiles "$T"
t --n 4096 --k 14336 --weight int4/g128/bf16 --m 64 --tiles "$T"
rm -f "$OUT/s.log" "$OUT/t.json"
timeout 150 .device/s16d/qgemm_gpu_tests --gtest_filter='*Cluster*:*TailSplit*:*Llama*:*OneWarp*:WgmmaGemmGpu.*:*int4_g128_bf16*' > "$OUT/gpu_subset.log" 2>&1
echo "== gpu subset rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/gpu_subset.log" | head
