#!/usr/bin/env bash
# Session 16 call 2: (a) main af93cd6+test: 8-bit channel GPU tests, heuristic check;
# (b) branch ws-split-cost: where the 2-split ws tile's ~5 us of fixed cost goes (QGEMM_EXP bits:
# 256 no remote sum, 512 no cluster sum at all, 1024 float4 pull (correct), 2048 no partial write).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
timeout 200 .device/s16a/qgemm_gpu_tests --gtest_filter='*int8*:*e4m3*:*OneWarp*:*Channel*:*Llama*' > "$OUT/gpu_subset.log" 2>&1
echo "== gpu rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/gpu_subset.log" | head
for nk in "8192 8192" "28672 8192" "10240 8192"; do set -- $nk
  timeout 60 .device/s16a/qgemm tune --weight int8/channel/bf16 --n $1 --k $2 --m 1,8 --tiles 'w1x1 t1 f1 s3 k256 waves9;w4x1 t1 f1 s3 k256 waves4' --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "== int8 N=$1 K=$2 rc=$?"; grep -E "^mma_gemm|^[0-9]+ +mma|wrong" "$OUT/s.log"; cat "$OUT/s.log" >> "$OUT/int8_heuristic.log"
done
for e in 0 256 512 2048 1024; do
  for k in 2048 8192; do
    QGEMM_EXP=$e QGEMM_CACHE_DIR=/tmp/qc$e timeout 60 .device/wsx/qgemm tune --n 8192 --k $k --weight int4/g128/bf16 --m 64 \
      --tiles 'w8x1 t1 f8 s3 k256 waves1 ws;w8x1 t1 f8 s3 k256 waves1 splits1 ws;w8x1 t1 f8 s3 k256 waves1 splits4 ws' \
      --out "$OUT/t.json" > "$OUT/s.log" 2>&1
    echo "== EXP=$e K=$k rc=$?"; grep -E "^mma_gemm|wrong" "$OUT/s.log"; cat "$OUT/s.log" >> "$OUT/split_cost.log"
  done
done
rm -f "$OUT/s.log" "$OUT/t.json"
