#!/usr/bin/env bash
# Session 14 call 10: M = 1 tiles around the defaults (int4/g128 0.403-0.407x, int8/channel
# 0.663x against 0.40 / 0.65): other split counts, stage depths and stage sizes. Prediction:
# within 1-2% of the defaults; a candidate 2% faster would move the rule.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
B=.device/main14/qgemm
timeout 100 $B tune --n 8192 --k 8192 --weight int4/g128/bf16 --m 1 --tiles 'w4x1 t1 f1 s4 k256 waves4;w4x1 t1 f1 s4 k256 waves4 splits2;w4x1 t1 f1 s4 k256 waves4 splits3;w4x1 t1 f1 s4 k256 waves4 splits6;w4x1 t1 f1 s5 k256 waves4;w4x1 t1 f1 s3 k512 waves4;w4x1 t1 f1 s6 k128 waves4' --out "$OUT/t1.json" > "$OUT/m1_int4.log" 2>&1
echo "== int4 rc=$?"; grep -E "^(candidate|mma_gemm)|wrong|rror" "$OUT/m1_int4.log"
timeout 100 $B tune --n 8192 --k 8192 --weight int8/channel/bf16 --m 1 --tiles 'w1x1 t1 f1 s3 k256 waves9;w1x1 t1 f1 s3 k256 waves9 splits1;w1x1 t1 f1 s3 k256 waves9 splits3;w1x1 t1 f1 s4 k256 waves9;w1x1 t1 f1 s2 k512 waves9;w1x1 t1 f1 s5 k128 waves9' --out "$OUT/t8.json" > "$OUT/m1_int8.log" 2>&1
echo "== int8 rc=$?"; grep -E "^(candidate|mma_gemm)|wrong|rror" "$OUT/m1_int8.log"
rm -f "$OUT"/t1.json "$OUT"/t8.json
