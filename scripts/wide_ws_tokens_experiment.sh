#!/usr/bin/env bash
# Branch wide-ws-tokens, one device call (~3 min): warp-specialized tiles of 3- and 6-bit codes
# hold 64 tokens per warpgroup instead of 32 (the copy warpgroup keeps 120 registers), so M = 64
# reads the weight once. GPU tests of the wgmma tiles and the planner paths, then `qgemm tune`
# of 32- against 64-token tiles (and the hand-off). Binaries in $BIN (default .device/wt).
set -u
OUT=${OUT:-/tmp/qgemm-out}
BIN=${BIN:-.device/wt}
mkdir -p "$OUT"
export QGEMM_CACHE_DIR=${QGEMM_CACHE_DIR:-/tmp/qgemm-cache}
timeout 200 "$BIN/qgemm_gpu_tests" --gtest_filter='*WgmmaGemmGpu*:TunedPlanGpu*:LinearGpu*' \
  > "$OUT/wide_ws_gputests.log" 2>&1
echo "GPU tests rc=$?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/wide_ws_gputests.log" | head -20
tiles='w8x1 t1 f4 s6 k128 waves1 ws;w8x1 t1 f8 s6 k128 waves1 ws;w8x1 t1 f16 s5 k128 waves1 ws'
for w in int3/g128/bf16 uint3/g128/bf16/zp int6/g128/bf16 mxfp6_e3m2; do
  name="wide_ws_${w//\//_}"
  timeout 120 "$BIN/qgemm" tune --n 8192 --k 8192 --weight "$w" --m 33,64,128,256 --tiles "$tiles" \
    --out "$OUT/$name.json" > "$OUT/$name.log" 2>&1
  echo "== $w rc=$?"
  grep -A6 "^candidate" "$OUT/$name.log" | grep -E "^(candidate|mma_gemm|expand)"
done
