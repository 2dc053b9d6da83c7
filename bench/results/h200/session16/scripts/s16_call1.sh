#!/usr/bin/env bash
# Staged in session 15 for session 16, call 1 (~2 min). Binaries: .device/s15 (main aa13185's
# kernels), .device/micro/wgmma_micro (branch wgmma-micro bf8db55).
# (1) wgmma_micro's new table: the ws stage loop built up feature by feature (lds+decode,
#     stage-end drain, group flush, mbarrier handshake), 64 tokens x 256-K stages and 128 x 128-K.
#     Prediction: at 64 tokens lds+decode ~66% of peak (as DECODE 2), each of drain, flush and
#     handshake a few points, all together ~50%. If all together stay near 50% while the ws
#     kernel without copies runs at ~31% at M = 64 (session 14 diag: 25.6 us), the loss is
#     outside the loop (prologue, ring fill, cluster sum, epilogue); if they fall to ~31%, it is
#     inside and the increments say which part.
# (2) The ws f8 tile at M = 64 over K (fixed cost vs per-stage cost): K = 2048 .. 16384.
#     Prediction: ~6 us intercept (launch, fill, cluster sum, epilogue), ~1.2 us per 256-K stage.
#     Also the 64-row ws tile (w4x1: one compute warpgroup, 128 CTAs at 8192 rows, no K split,
#     no cluster sum), never measured: the micro's one-warpgroup loop runs at 56% against 66%
#     for two, but it drops the split's fixed cost; a win at M = 64 if the intercept is large.
#     And 512-K stages (s2 k512: half the stage boundaries, one stage copied ahead): a win if
#     the per-stage boundary (drain, flush, handshake) is what the micro's table blames.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
timeout 120 .device/micro/wgmma_micro > "$OUT/wgmma_micro_stages.log" 2>&1; echo "== micro rc=$?"; cat "$OUT/wgmma_micro_stages.log"
for k in 2048 4096 8192 16384; do
  timeout 60 .device/s15/qgemm tune --n 8192 --k $k --weight int4/g128/bf16 --m 64,128 \
    --tiles 'w8x1 t1 f8 s3 k256 waves1 ws;w8x1 t1 f8 s3 k256 waves1 ws splits1;w8x1 t1 f16 s5 k128 waves1 ws;w4x1 t1 f8 s3 k256 waves1 ws;w8x1 t1 f8 s2 k512 waves1 ws' \
    --out "$OUT/t.json" > "$OUT/ws_over_k_$k.log" 2>&1
  echo "== K=$k rc=$?"; grep -E "^(candidate|mma_gemm)|wrong" "$OUT/ws_over_k_$k.log"
done
rm -f "$OUT/t.json"
