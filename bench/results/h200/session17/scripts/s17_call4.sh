#!/usr/bin/env bash
# Session 17, call 4 (~2 min): transform tile with 3 decoded slots, no partial-set doubling and
# shorter stages before fewer (.device/tx3). Call 3's stall samples: compute warps waited ~80% of
# the time, transform ~36%, the copy warps too: the ring was too shallow (s3 with a one-stage
# late release; f8 tiles ran as k64 s2). Prediction: f16 k64 s8 M = 256 83 -> 50-60 us.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_NO_PDL=1 QGEMM_CACHE_DIR=/tmp/qc_tx3
timeout 100 .device/tx3/qgemm_gpu_tests --gtest_filter='Formats/WgmmaGemmGpuTest.*' > "$OUT/tx3_gpu.log" 2>&1
rc=$?; echo "== tx3 table tests rc=$rc"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|rel_frob|Which is" "$OUT/tx3_gpu.log" | head -20
if [ $rc = 124 ]; then tail -3 "$OUT/tx3_gpu.log"; exit 1; fi
T='w8x1 t1 f8 s3 k256 waves1 ws;w8x1 t1 f16 s5 k128 waves1 ws;w8x1 t1 f16 s3 k128 waves1 tx;w8x1 t1 f16 s8 k64 waves1 tx;w8x1 t1 f16 s6 k64 waves1 tx;w8x1 t1 f8 s8 k64 waves1 tx;w8x1 t1 f8 s4 k128 waves1 tx'
timeout 120 .device/tx3/qgemm tune --n 8192 --k 8192 --weight int4/g128/bf16 --m 64,128,256,512,1024 \
  --tiles "$T" --out "$OUT/t.json" > "$OUT/tx3_tune.log" 2>&1
echo "== tune rc=$?"; grep -E "^(candidate|mma_gemm|expand)|wrong" "$OUT/tx3_tune.log"
rm -f "$OUT/t.json"
ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
QGEMM_MMA_BUCKET3='w8x1 t1 f16 s8 k64 waves1 tx' timeout 60 "$ncu_bin" --clock-control none --set full --import-source no \
  --page source --print-source sass --csv -k regex:mma_gemm -c 1 .device/tx3/qgemm verify --backend jit \
  --weight int4/g128/bf16 --m 256 --n 8192 --k 8192 --check-rows 8 > "$OUT/sass_tx3_m256.csv" 2> "$OUT/sass_tx3_m256.err"
echo "== ncu rc=$?"
python3 scripts/sass_stalls.py "$OUT/sass_tx3_m256.csv" 12 > "$OUT/sass_tx3_m256.txt" 2>&1; head -32 "$OUT/sass_tx3_m256.txt"
gzip -f "$OUT/sass_tx3_m256.csv"
