#!/usr/bin/env bash
# Session 13: decode tiles with __launch_bounds__ min blocks from shared memory (.device/mb,
# branch min-blocks). Tune M = 16 and N = 28672 candidates; pdl_ab bench of mb.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
B=.device/mb/qgemm
T16="w4x1 t1 f2 s4 k256 waves4;w4x1 t1 f2 s3 k256 waves4;w4x1 t1 f2 s4 k128 waves4;w4x1 t1 f2 s6 k128 waves4;w4x1 t1 f2 s3 k256 waves4 splits3;w4x1 t1 f2 s6 k128 waves4 splits3;w8x1 t1 f2 s3 k256 waves2"
T1="w4x1 t1 f1 s4 k256 waves4;w4x1 t1 f1 s3 k256 waves4;w4x1 t1 f1 s6 k128 waves4;w4x1 t1 f1 s8 k128 waves4;w4x1 t1 f1 s4 k256 waves4 splits2;w4x1 t1 f1 s3 k256 waves4 splits2;w8x1 t1 f1 s3 k256 waves2"
timeout 150 $B tune --weight int4/g128/bf16 --m 16 --n 8192 --k 8192 --tiles "$T16" --out "$OUT/t16.json" > "$OUT/tune16.log" 2>&1; echo "tune16 rc=$?"
timeout 150 $B tune --weight int4/g128/bf16 --m 1,16 --n 28672 --k 8192 --tiles "$T1;$T16" --out "$OUT/t28.json" > "$OUT/tune28.log" 2>&1; echo "tune28 rc=$?"
timeout 100 $B tune --weight int4/g128/bf16 --m 1 --n 8192 --k 8192 --tiles "$T1" --out "$OUT/t1.json" > "$OUT/tune1.log" 2>&1; echo "tune1 rc=$?"
grep -vE "^(mma_gemm|expand)" "$OUT/tune16.log" | tail -25
grep -vE "^(mma_gemm|expand)" "$OUT/tune28.log" | tail -40
grep -vE "^(mma_gemm|expand)" "$OUT/tune1.log" | tail -20
timeout 100 $B bench bench/recipes/pdl_ab.yaml --out "$OUT/pdl_ab_mb.json" > "$OUT/pdl_ab_mb.log" 2>&1; echo "bench rc=$?"
grep -E "^\s+(1|16|64|256) |N=" "$OUT/pdl_ab_mb.log"
