#!/usr/bin/env bash
# Session 18, call B (~5 min): ws tiles flush group sums while their own later wgmmas run
# (branch ws-flush-overlap, .device/fo): two-set tiles (f8, 256-K stages of g128) flush the first
# group's sums after the second group's first batch is issued; one-group-per-stage tiles (f16)
# issue each batch as two token halves and flush the first half while the second half runs.
# Prediction: f8 M = 64 22.6 -> ~22.0 us, f16 M = 256 55.3 -> ~53.5, M = 1024 ~218 -> ~211.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
timeout 150 .device/fo/qgemm_gpu_tests --gtest_filter='WgmmaGemmGpu.*:Formats/WgmmaGemmGpuTest.*' \
  > "$OUT/fo_wgmma_tests.log" 2>&1
echo "== wgmma tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/fo_wgmma_tests.log" | head -20
export QGEMM_NO_PDL=1
T='w8x1 t1 f8 s3 k256 waves1 ws;w8x1 t1 f16 s5 k128 waves1 ws'
for round in 1 2; do
  for b in main17 fo; do
    for w in int4/g128/bf16 uint4/g128/bf16/zp int2/g128/bf16; do
      QGEMM_CACHE_DIR=/tmp/qc_$b timeout 90 .device/$b/qgemm tune --n 8192 --k 8192 --weight $w \
        --m 64,128,256,1024 --tiles "$T" --out "$OUT/t.json" > "$OUT/s.log" 2>&1
      echo "== round $round $b $w rc=$?"; grep -E "^(candidate|mma_gemm|expand)|wrong" "$OUT/s.log"
      cat "$OUT/s.log" >> "$OUT/fo_ab_tune.log"
    done
  done
done
rm -f "$OUT/s.log" "$OUT/t.json"
