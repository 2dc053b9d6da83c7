#!/usr/bin/env bash
# Session 17, call 5 (~8.5 min): (1) transform tile with the tile's loads hoisted before its
# stores (.device/tx4; call 4's transform warps were busy, not waiting: ~155 instructions per
# 64-K stage, scales reloaded after every stmatrix); prediction f16 k64 s8 M = 256 78 -> 55-65 us.
# (2) the dense_w4a16 recipe on main 01f0488 (.device/main16). (3) main's full GPU suite.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
T='w8x1 t1 f8 s3 k256 waves1 ws;w8x1 t1 f16 s5 k128 waves1 ws;w8x1 t1 f16 s8 k64 waves1 tx;w8x1 t1 f16 s3 k128 waves1 tx;w8x1 t1 f8 s8 k64 waves1 tx'
QGEMM_NO_PDL=1 QGEMM_CACHE_DIR=/tmp/qc_tx4 timeout 60 .device/tx4/qgemm tune --n 8192 --k 8192 --weight int4/g128/bf16 --m 64,256,1024 \
  --tiles "$T" --out "$OUT/t.json" > "$OUT/tx4_tune.log" 2>&1
echo "== tx4 tune rc=$?"; grep -E "^(candidate|mma_gemm|expand)|wrong" "$OUT/tx4_tune.log"; rm -f "$OUT/t.json"
export QGEMM_CACHE_DIR=/tmp/qc_main
timeout 300 .device/main16/qgemm bench bench/recipes/dense_w4a16.yaml --out "$OUT/dense_w4a16.json" --plot "$OUT/dense_w4a16.svg" > "$OUT/bench_dense_w4a16.log" 2>&1
echo "== recipe rc=$?"; grep -E "M=|jit |cublas" "$OUT/bench_dense_w4a16.log" | head -0; tail -n 45 "$OUT/bench_dense_w4a16.log"
timeout 200 .device/main16/qgemm_gpu_tests > "$OUT/gpu_suite_main.log" 2>&1
echo "== suite rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]|tests ran" "$OUT/gpu_suite_main.log" | head
