#!/usr/bin/env bash
# Branch ws-part-sets, one device call (~2 min): the warp-specialized 256-K stage tile with a
# partial set per scale group (one drain per two g128 groups) against the 128-K tile (one drain
# per group). GPU tests of the wgmma tiles first. Binaries in .device/bin; logs into $OUT.
set -u
OUT=${OUT:-/tmp/qgemm-out}
mkdir -p "$OUT"
export QGEMM_CACHE_DIR=${QGEMM_CACHE_DIR:-/tmp/qgemm-cache}
BIN=${BIN:-.device/bin}
timeout 150 $BIN/qgemm_gpu_tests --gtest_filter='*WgmmaGemmGpu*' > "$OUT/gputests.log" 2>&1
echo "WgmmaGemmGpu rc=$?"
grep -E "^\[  (PASSED|FAILED) |rel_frobenius|Which is" "$OUT/gputests.log" | head -20
tiles='w8x1 t1 f8 s6 k128 waves1 ws;w8x1 t1 f8 s4 k256 waves1 ws;w8x1 t1 f8 s3 k256 waves1 ws;w8x1 t1 f16 s5 k128 waves1 ws'
for w in int4/g128/bf16 uint4/g128/bf16/zp; do
  name=${w//\//_}
  timeout 120 $BIN/qgemm tune --n 8192 --k 8192 --weight "$w" --m 33,64,128,256 --tiles "$tiles" \
    --out "$OUT/tune_$name.json" > "$OUT/tune_$name.log" 2>&1
  echo "== $w rc=$?"
  grep -A6 "^candidate" "$OUT/tune_$name.log"
done
