#!/usr/bin/env bash
# Staged in session 17 for session 18, call 2 (~2 min): how much the transform tile would gain
# if the CTAs of a cluster (token tiles of one weight tile) shared the decoded weights. Branch
# tx-share-diag (.device/txshare, DIAGNOSTIC: P > 1 gives wrong results by design; tune times
# them anyway with QGEMM_TUNE_TIME_WRONG=1): each CTA decodes 1/P of the rows with P warps per
# tile. Session 17: tx f16 s8 k64 M = 256 73.7 us (ws 55.5, cuBLAS 49.5), M = 1024 292 (hand-off
# 215, cuBLAS 173.5); the transform warps were busy. If halving their work per stage halves
# their time, P = 2 gives M = 256 ~45-50 us and P = 4 M = 1024 ~175-190: then building the real
# cluster version (remote stores into the peers' decoded slots, cluster mbarriers) pays.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_NO_PDL=1 QGEMM_TUNE_TIME_WRONG=1
for P in 1 2 4 8; do
  QGEMM_EXP_TX_SHARE=$P QGEMM_CACHE_DIR=/tmp/qc_share$P timeout 90 .device/txshare/qgemm tune \
    --n 8192 --k 8192 --weight int4/g128/bf16 --m 256,1024 \
    --tiles 'w8x1 t1 f16 s5 k128 waves1 ws;w8x1 t1 f16 s8 k64 waves1 tx;w8x1 t1 f16 s3 k128 waves1 tx' \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "== share $P rc=$?"; grep -E "^(candidate|mma_gemm|expand)" "$OUT/s.log"; grep -c "wrong result" "$OUT/s.log"
  cat "$OUT/s.log" >> "$OUT/tx_share_tune.log"
done
rm -f "$OUT/s.log" "$OUT/t.json"
