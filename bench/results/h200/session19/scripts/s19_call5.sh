#!/usr/bin/env bash
# Session 19 call 5 (~1.5 min): float zero points with g64 on the ws tiles (one partial set: two
# drains per 128-K stage, +31-35% in call 1). Candidates: 64-K stages (one group per stage, the
# flush after the stage's own drain), the wg tile, kw2. Prediction: s8 k64 within ~10% of
# main's 33.0 / 57.5 us at M = 64 / 128.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qc_final QGEMM_NO_PDL=1
B=.device/kw2f
for w in uint4/g64/fp16/zp_fp16 uint4/g64/bf16/zp; do
  timeout 150 $B/qgemm tune --n 8192 --k 8192 --weight $w --m 64,128 --out "$OUT/t.json" --tiles \
    "w8x1 t1 f8 s6 k128 waves1 ws;w8x1 t1 f8 s8 k64 waves1 ws;w8x1 t1 f8 s6 k64 waves1 ws;w4x2 t1 f4 s4 k128 waves1 wg;w4x1 t1 f8 s6 k128 waves1 ws kw2;w8x1 t1 f16 s5 k128 waves1 ws" \
    > "$OUT/s.log" 2>&1
  echo "== $w rc=$?"; grep -E "^(candidate|mma_gemm)|wrong|rror" "$OUT/s.log" | head -8
  cat "$OUT/s.log" >> "$OUT/fzp_g64_tune.log"
done
rm -f "$OUT/s.log" "$OUT/t.json"
