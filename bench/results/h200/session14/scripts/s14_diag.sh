#!/usr/bin/env bash
# Staged in session 13 for session 14 (~4 min): which copies slow the ws kernel down.
# Branch ws-ceiling2 (.device/diag), QGEMM_EXP after the ring's first round: 0 as built,
# 64 weights only (activations stale), 128 activations only (weights stale), 2 no copies,
# 1 no compute. Session 12 (old ceiling): f16 M = 256 as built 59.0, no copies 51.8, copies
# alone 24.2. Prediction: if 64 lands near 2, the activation copies (L2 -> shared memory writes,
# 32 of a stage's 40 KB) are what the compute warpgroups lose to; if 128 does, the weight stream.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_DISABLE_DISK_CACHE=1
tiles='w8x1 t1 f8 s6 k128 waves1 ws;w8x1 t1 f16 s5 k128 waves1 ws'
for w in int4/g128/bf16 int4/channel/bf16; do
  for e in 0 64 128 2 1; do
    QGEMM_EXP=$e timeout 60 .device/diag/qgemm tune --n 8192 --k 8192 --weight "$w" --m 64,256 \
      --tiles "$tiles" --out "$OUT/d.json" > "$OUT/d_${w//\//_}_$e.log" 2>&1
    echo "== $w EXP=$e rc=$?"
    grep -A3 "^candidate" "$OUT/d_${w//\//_}_$e.log" | grep -E "^(candidate|mma_gemm)"
  done
done
tar czf "$OUT/diag_logs.tgz" -C "$OUT" $(cd "$OUT" && ls d_*.log) && rm -f "$OUT"/d_*.log "$OUT/d.json"
# Deeper ring for the 64-token ws tile on main (.device/main13): session 13's counters have the
# copy pipeline alone at ~11 us of streaming for M = 64 (2.9 TB/s of weights), three 48 KB
# stages in flight. s8 k128 becomes four 256-K stages (201 KB), s7 k128 seven 128-K ones.
# Prediction: M = 64 26.9 -> ~25 us with four stages if the ring's depth limits the stream.
unset QGEMM_DISABLE_DISK_CACHE
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
timeout 90 .device/main13/qgemm tune --n 8192 --k 8192 --weight int4/g128/bf16 --m 64,128 \
  --tiles 'w8x1 t1 f8 s6 k128 waves1 ws;w8x1 t1 f8 s8 k128 waves1 ws;w8x1 t1 f8 s7 k128 waves1 ws' \
  --out "$OUT/ring.json" > "$OUT/ring_depth.log" 2>&1
echo "== ring depth rc=$?"; grep -E "^(candidate|mma_gemm)" "$OUT/ring_depth.log"
# M = 16 (plain 16.59 us, 0.479x; the must is 0.45x): two-warp CTAs (32 rows, 4-6 per SM, 64
# threads: launched plainly) and other split counts of the default tile.
timeout 90 .device/main13/qgemm tune --n 8192 --k 8192 --weight int4/g128/bf16 --m 16 \
  --tiles 'w4x1 t1 f2 s4 k256 waves4;w4x1 t1 f2 s4 k256 waves4 splits2;w4x1 t1 f2 s4 k256 waves4 splits4;w2x1 t1 f2 s4 k256 waves8;w2x1 t1 f2 s3 k256 waves8' \
  --out "$OUT/m16.json" > "$OUT/m16.log" 2>&1
echo "== M = 16 rc=$?"; grep -E "^(candidate|mma_gemm)" "$OUT/m16.log"
