#!/usr/bin/env bash
# Session 16 call 3: main + cluster sum by pieces (.device/s16b): full GPU suite, then the
# ws layers that split K in a cluster. Prediction: int4/g128 8192^2 M = 64 25.0 -> ~22.0 us
# (branch ws-split-cost's float4 pull: 22.36; padded partial tile and 16-byte stores on top).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
for w in int4/g128/bf16 uint4/g128/bf16/zp int8/channel/bf16 int3/g128/bf16; do
  timeout 60 .device/s16b/qgemm tune --n 8192 --k 8192 --weight $w --m 64,128,256 \
    --tiles 'w8x1 t1 f8 s3 k256 waves1 ws' --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "== $w rc=$?"; grep -E "^mma_gemm|^[0-9]+ +mma|wrong" "$OUT/s.log"; cat "$OUT/s.log" >> "$OUT/cluster_sum_tune.log"
done
timeout 60 .device/s16b/qgemm tune --n 4096 --k 4096 --weight int4/g128/bf16 --m 33,64,100 \
    --tiles 'w8x1 t1 f8 s3 k256 waves1 ws' --out "$OUT/t.json" > "$OUT/s.log" 2>&1
echo "== 4096^2 rc=$?"; grep -E "^mma_gemm|^[0-9]+ +mma|wrong" "$OUT/s.log"; cat "$OUT/s.log" >> "$OUT/cluster_sum_tune.log"
rm -f "$OUT/s.log" "$OUT/t.json"
timeout 330 .device/s16b/qgemm_gpu_tests > "$OUT/gpu_suite.log" 2>&1
echo "== gpu suite rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]|tests ran" "$OUT/gpu_suite.log" | head -20
