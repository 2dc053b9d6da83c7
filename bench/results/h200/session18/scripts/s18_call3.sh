#!/usr/bin/env bash
# Staged in session 17 for session 18, call 3 (~3 min): branch tx-cluster (.device/txc, never run
# on a GPU): transform tiles whose clusters of P token tiles share the decoded weights (txc2,
# txc4). Run it after s18_call2.sh says sharing can pay. (1) The wgmma table tests, which
# include txc2 k64 and txc4 k128 at M = 1 .. 1000 (one token tile padded to a cluster, too);
# stops at a hang. (2) int4/g128 8192^2 M = 64 / 256 / 1024 against the ws tile, the unshared
# transform tile and the hand-off. Prediction: between call 2's P = 1 and P = 2 / 4 figures
# (the remote copies cost ~1 store per 8 weights and peer).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_NO_PDL=1 QGEMM_CACHE_DIR=/tmp/qc_txc
timeout 150 .device/txc/qgemm_gpu_tests --gtest_filter='Formats/WgmmaGemmGpuTest.*' > "$OUT/txc_gpu.log" 2>&1
rc=$?; echo "== txc table tests rc=$rc"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|rel_frob|Which is|txc" "$OUT/txc_gpu.log" | head -20
if [ $rc = 124 ]; then tail -3 "$OUT/txc_gpu.log"; exit 1; fi
timeout 120 .device/txc/qgemm tune --n 8192 --k 8192 --weight int4/g128/bf16 --m 64,256,1024 \
  --tiles 'w8x1 t1 f16 s5 k128 waves1 ws;w8x1 t1 f16 s8 k64 waves1 tx;w8x1 t1 f16 s8 k64 waves1 txc2;w8x1 t1 f16 s8 k64 waves1 txc4;w8x1 t1 f16 s3 k128 waves1 txc2;w8x1 t1 f16 s3 k128 waves1 txc4;w8x1 t1 f8 s8 k64 waves1 txc2' \
  --out "$OUT/t.json" > "$OUT/txc_tune.log" 2>&1
echo "== tune rc=$?"; grep -E "^(candidate|mma_gemm|expand)|wrong" "$OUT/txc_tune.log"; rm -f "$OUT/t.json"
