#!/usr/bin/env bash
# Staged in session 14 for session 15, call 1 (~5 min): (1) the bare MMA loop microbenchmark
# (branch wgmma-micro); (2) uniform wgmma descriptors (branch ws-uniform-desc) against main on
# the ws tiles. Predictions: (1) RS m64n64 with two warpgroups well under the tensor peak even
# without decode would put the M >= 64 gap in the loop's structure; (2) a few % at M = 64 (short
# m64n64 wgmmas issued back to back instead of 5 dependent instructions apart), less at M = 256.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
timeout 120 .device/micro/wgmma_micro > "$OUT/wgmma_micro.log" 2>&1; echo "== micro rc=$?"; cat "$OUT/wgmma_micro.log"
for b in main14 udesc; do
  for w in int4/g128/bf16 int8/channel/bf16; do
    timeout 90 .device/$b/qgemm tune --n 8192 --k 8192 --weight $w --m 64,128,256 \
      --tiles 'w8x1 t1 f8 s3 k256 waves1 ws;w8x1 t1 f16 s5 k128 waves1 ws' --out "$OUT/t.json" > "$OUT/udesc_${b}_${w//\//_}.log" 2>&1
    echo "== $b $w rc=$?"; grep -E "^(candidate|mma_gemm)|wrong" "$OUT/udesc_${b}_${w//\//_}.log"
  done
done
# (3) Branch decode-two-chains: odd k-steps of the mma.sync decode tiles go to a second partial
# set, halving each dependent MMA chain. Prediction: M = 1 -1 to -3% if the chain bounds the
# compute left after the single wave's last bytes (int8/channel, one chain across all of K, most).
for b in main14 chains; do
  for c in "int4/g128/bf16|w4x1 t1 f1 s4 k256 waves4;w4x1 t1 f2 s4 k256 waves4" \
           "int8/channel/bf16|w1x1 t1 f1 s3 k256 waves9;w4x1 t1 f2 s3 k256 waves4" \
           "int2/g128/bf16|w4x1 t1 f1 s4 k256 waves4;w4x1 t1 f2 s4 k256 waves4"; do
    w=${c%%|*}; t=${c#*|}
    timeout 60 .device/$b/qgemm tune --n 8192 --k 8192 --weight $w --m 1,16 --tiles "$t" --out "$OUT/t.json" > "$OUT/chains_${b}_${w//\//_}.log" 2>&1
    echo "== $b $w rc=$?"; grep -E "^(candidate|mma_gemm)|wrong|heuristic" "$OUT/chains_${b}_${w//\//_}.log" | head -6
  done
done
# (4) Branch ws-depth: the second compute warpgroup starts 256 / 512 / 1024 ns late (QGEMM_EXP
# 1024 / 2048 / 3072), so the two warpgroups' stage-end drains no longer coincide. Prediction: if
# the lockstep drain holds the tensor pipe idle (session 13's counters) and the offset persists,
# M = 256 gains up to ~10%; if the warpgroups fall back into step, nothing changes.
for e in 0 1024 2048 3072; do
  QGEMM_DISABLE_DISK_CACHE=1 QGEMM_EXP=$e timeout 90 .device/depth/qgemm tune --n 8192 --k 8192 --weight int4/g128/bf16 \
    --m 64,256 --tiles 'w8x1 t1 f8 s3 k256 waves1 ws;w8x1 t1 f16 s5 k128 waves1 ws' --out "$OUT/t.json" > "$OUT/offset_$e.log" 2>&1
  echo "== offset EXP=$e rc=$?"; grep -E "^(candidate|mma_gemm)|wrong" "$OUT/offset_$e.log"
done
rm -f "$OUT/t.json"
