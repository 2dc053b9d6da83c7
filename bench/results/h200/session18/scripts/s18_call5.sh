#!/usr/bin/env bash
# Session 18, call C (~2 min). (1) .device/fo2: two-set ws tiles (f8, 256-K stages of g128) flush
# the first group's sums after the stage's last batch is committed (call B's placement, after
# the wait that retires group 0, was 7% slower: ptxas put the flush between the last batch's
# HGMMAs; here it still interleaves them, SASS checked on the CPU). Prediction: within +-2% of
# main17 (if the FFMAs next to in-flight RS wgmmas are what cost, slower again).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
timeout 120 .device/fo2/qgemm_gpu_tests --gtest_filter='WgmmaGemmGpu.*:Formats/WgmmaGemmGpuTest.*' \
  > "$OUT/fo2_wgmma_tests.log" 2>&1
echo "== wgmma tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/fo2_wgmma_tests.log" | head -20
export QGEMM_NO_PDL=1
for round in 1 2; do
  for b in main17 fo2; do
    for w in int4/g128/bf16 uint4/g128/bf16/zp int2/g128/bf16; do
      QGEMM_CACHE_DIR=/tmp/qc_$b timeout 60 .device/$b/qgemm tune --n 8192 --k 8192 --weight $w \
        --m 64,128 --tiles 'w8x1 t1 f8 s3 k256 waves1 ws' --out "$OUT/t.json" > "$OUT/s.log" 2>&1
      echo "== round $round $b $w rc=$?"; grep -E "^mma_gemm|wrong" "$OUT/s.log"
      cat "$OUT/s.log" >> "$OUT/fo2_ab_tune.log"
    done
  done
done
rm -f "$OUT/s.log" "$OUT/t.json"
