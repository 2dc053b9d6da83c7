#!/usr/bin/env bash
# Session 17, call 3 (~4 min): branch ws-transform with 8 transform warps, stmatrix stores and one
# stage of wgmmas in flight (.device/tx2) against call 2's transform tile (.device/tx).
# (1) wgmma table tests of tx2; (2) tune int4/g128 8192^2 M = 64 .. 1024; (3) ncu stall samples
# of tx2's f16 tile at M = 256. Prediction: tx2 f16 M = 256 79 -> ~45-50 us (transform warps
# were latency-bound, one per sub-partition).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_NO_PDL=1
timeout 100 .device/tx2/qgemm_gpu_tests --gtest_filter='Formats/WgmmaGemmGpuTest.*' > "$OUT/tx2_gpu.log" 2>&1
rc=$?; echo "== tx2 table tests rc=$rc"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|rel_frob|Which is" "$OUT/tx2_gpu.log" | head -20
if [ $rc = 124 ]; then tail -3 "$OUT/tx2_gpu.log"; exit 1; fi
T='w8x1 t1 f8 s3 k256 waves1 ws;w8x1 t1 f16 s5 k128 waves1 ws;w8x1 t1 f16 s4 k128 waves1 tx;w8x1 t1 f16 s3 k128 waves1 tx;w8x1 t1 f8 s4 k128 waves1 tx;w8x1 t1 f8 s3 k256 waves1 tx'
for b in tx2; do
  tiles="$T"; [ $b = tx ] && tiles='w8x1 t1 f16 s4 k128 waves1 tx'
  QGEMM_CACHE_DIR=/tmp/qc_$b timeout 100 .device/$b/qgemm tune --n 8192 --k 8192 --weight int4/g128/bf16 --m 64,128,256,512,1024 \
    --tiles "$tiles" --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "== $b rc=$?"; grep -E "^(candidate|mma_gemm|expand)|wrong" "$OUT/s.log"; cat "$OUT/s.log" >> "$OUT/tx2_tune.log"
done
rm -f "$OUT/s.log" "$OUT/t.json"
ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
QGEMM_CACHE_DIR=/tmp/qc_tx2 QGEMM_MMA_BUCKET3='w8x1 t1 f16 s4 k128 waves1 tx' timeout 90 "$ncu_bin" --clock-control none --set full --import-source no \
  --page source --print-source sass --csv -k regex:mma_gemm -c 1 .device/tx2/qgemm verify --backend jit \
  --weight int4/g128/bf16 --m 256 --n 8192 --k 8192 --check-rows 8 > "$OUT/sass_tx2_m256.csv" 2> "$OUT/sass_tx2_m256.err"
echo "== ncu rc=$? $(wc -c < "$OUT/sass_tx2_m256.csv") bytes"
python3 scripts/sass_stalls.py "$OUT/sass_tx2_m256.csv" 30 > "$OUT/sass_tx2_m256.txt" 2>&1; head -60 "$OUT/sass_tx2_m256.txt"
gzip -f "$OUT/sass_tx2_m256.csv"
