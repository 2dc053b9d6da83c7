#!/usr/bin/env bash
# Staged in session 15 for session 16, call 2 (~3 min): one-warp against four-warp decode CTAs
# for 8-bit channel codes at M = 1 over shapes (binary .device/s15 = main aa13185).
# Session 15: int8/channel 8192^2 four-warp 21.48 vs one-warp 22.12 us (the must row misses by
# 0.2-0.8% with one-warp), but N = 28672 87.78 vs 69.64. Hypothesis: four-warp CTAs win where
# their grid balances over the SMs (8192^2: 256 CTAs, 1.94 per SM, max 2 = 1.03x the mean;
# N = 28672: 448 CTAs, 3.39 per SM, max 4 = 1.18x), one-warp CTAs (fine-grained) elsewhere.
# If the sweep agrees, the rule in plan_mma_gemm (NOTE "8-bit codes without group scales")
# becomes: four-warp CTAs when max CTAs per SM / mean <= ~1.05 at the split count chosen.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
for w in int8/channel/bf16 e4m3/channel/bf16; do
  for nk in "8192 8192" "4096 4096" "14336 4096" "8192 28672" "28672 8192" "4096 14336" "10240 8192" "57344 8192"; do
    set -- $nk
    timeout 60 .device/s15/qgemm tune --weight $w --n $1 --k $2 --m 1,8 \
      --tiles 'w1x1 t1 f1 s3 k256 waves9;w4x1 t1 f1 s3 k256 waves4;w2x1 t1 f1 s3 k256 waves6' \
      --out "$OUT/t.json" > "$OUT/s.log" 2>&1
    echo "== $w N=$1 K=$2 rc=$?"; grep -E "^mma_gemm|wrong" "$OUT/s.log"
    cat "$OUT/s.log" >> "$OUT/channel8_ctas.log"
  done
done
rm -f "$OUT/s.log" "$OUT/t.json"
# N = 28672 M = 1 int4 misses 0.33x by 3.5% against this session's faster cuBLAS (110 us; our
# 37.6 us, 3.1 TB/s): CTA shapes and ring depths around the default (448 CTAs, 52 SMs with 4 and
# 80 with 3). Prediction: within 2% of the default unless a shape balances the SMs.
timeout 90 .device/s15/qgemm tune --weight int4/g128/bf16 --n 28672 --k 8192 --m 1,8 \
  --tiles 'w4x1 t1 f1 s4 k256 waves4;w4x1 t1 f1 s3 k256 waves5;w4x1 t2 f1 s4 k256 waves2;w8x1 t1 f1 s4 k256 waves2;w4x1 t1 f1 s5 k256 waves3;w4x1 t1 f1 s6 k128 waves4;w4x1 t1 f1 s4 k256 waves4 splits2' \
  --out "$OUT/t.json" > "$OUT/n28672_int4.log" 2>&1
echo "== int4 N=28672 rc=$?"; grep -E "^mma_gemm|wrong" "$OUT/n28672_int4.log"; rm -f "$OUT/t.json"
