#!/usr/bin/env bash
# Staged in session 16 for session 17, call 2 (~3 min): branch ws-transform (.device/tx), never
# run on a GPU before. (1) The wgmma table tests, which include two transform tiles (f16 k128,
# f8 k256) over 7 formats x bf16/fp16 at M = 1 .. 1000, split-K global and in a cluster.
# (2) If they pass: transform tiles against the ws tiles and the hand-off, int4/g128 8192^2.
# Prediction (bench/NOTES.md Left 1): tx f16 M = 256 ~48 us (ws f16 55.3), M = 1024 ~185 us
# (expansion + cuBLAS 213), M = 64 tx f8 ~18-20 us (ws f8 22.6).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qc_tx QGEMM_NO_PDL=1
timeout 240 .device/tx/qgemm_gpu_tests --gtest_filter='Formats/WgmmaGemmGpuTest.*' > "$OUT/tx_gpu.log" 2>&1
echo "== tx table tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|rel_frob|Which is" "$OUT/tx_gpu.log" | head -30
for w in int4/g128/bf16 uint4/g128/fp16/zp; do
  timeout 120 .device/tx/qgemm tune --n 8192 --k 8192 --weight $w --m 64,128,256,512,1024 \
    --tiles 'w8x1 t1 f8 s3 k256 waves1 ws;w8x1 t1 f16 s5 k128 waves1 ws;w8x1 t1 f8 s4 k256 waves1 tx;w8x1 t1 f16 s4 k128 waves1 tx;w8x1 t1 f16 s3 k256 waves1 tx' \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "== $w rc=$?"; grep -E "^(candidate|mma_gemm|expand)|wrong" "$OUT/s.log"; cat "$OUT/s.log" >> "$OUT/tx_tune.log"
done
rm -f "$OUT/s.log" "$OUT/t.json"
