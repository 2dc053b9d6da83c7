#!/usr/bin/env bash
# Session 14 call 7: where the 128-token ws tile should hand off to expansion + cuBLASLt for
# 2-, 6- and 8-bit codes. `qgemm tune` times the tile against the hand-off (expand+cublaslt) at
# M = 256 / 384 / 512. Prediction: 6-bit stays faster on the tile up to 512 (124.5 against ~135);
# 8-bit codes are close at 512 (int8/g128 147 against ~136: the hand-off may win there).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
for w in int6/g128/bf16 int6/channel/bf16 int8/g128/bf16 int8/channel/bf16 uint8/g128/bf16/zp int2/g128/bf16 e4m3/channel/bf16; do
  s=5; case $w in *int8*|e4m3*) s=4;; esac
  timeout 120 .device/main14/qgemm tune --n 8192 --k 8192 --weight $w --m 256,384,512 \
    --tiles "w8x1 t1 f16 s$s k128 waves1 ws" --out "$OUT/t.json" > "$OUT/h_${w//\//_}.log" 2>&1
  echo "== $w rc=$?"; grep -E "^(candidate|mma_gemm|expand)|wrong|rror" "$OUT/h_${w//\//_}.log" | head -4
done
for f in "$OUT"/h_*.log; do echo "===== $(basename $f)"; cat $f; done > "$OUT/handoff_tune.log"; rm -f "$OUT"/h_*.log "$OUT/t.json"
