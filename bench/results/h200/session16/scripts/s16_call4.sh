#!/usr/bin/env bash
# Session 16 call 4: main + pushed cluster sum + cluster splits that fit (.device/s16c).
# Predictions: int4/g128 8192^2 M = 64 22.56 (pull, call 3) -> ~21.5 us; 4096^2 M = 64 19.79 ->
# ~12-14 us (3 splits if fewer than 32 clusters of 4 fit).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
t() { timeout 60 .device/s16c/qgemm tune "$@" --out "$OUT/t.json" > "$OUT/s.log" 2>&1; echo "== $* rc=$?"; grep -E "^mma_gemm|wrong" "$OUT/s.log"; cat "$OUT/s.log" >> "$OUT/push_tune.log"; }
T='w8x1 t1 f8 s3 k256 waves1 ws'
t --n 8192 --k 8192 --weight int4/g128/bf16 --m 33,64,128 --tiles "$T"
t --n 8192 --k 8192 --weight uint4/g128/bf16/zp --m 64 --tiles "$T"
t --n 8192 --k 8192 --weight int8/channel/bf16 --m 64 --tiles "$T"
t --n 4096 --k 4096 --weight int4/g128/bf16 --m 33,64,100 --tiles "$T"
t --n 4096 --k 14336 --weight int4/g128/bf16 --m 64 --tiles "$T"
t --n 10240 --k 8192 --weight int4/g128/bf16 --m 256 --tiles 'w8x1 t1 f16 s5 k128 waves1 ws'
rm -f "$OUT/s.log" "$OUT/t.json"
timeout 330 .device/s16c/qgemm_gpu_tests > "$OUT/gpu_suite.log" 2>&1
echo "== gpu suite rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/gpu_suite.log" | head -20
