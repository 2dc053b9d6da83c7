#!/usr/bin/env bash
# Branch fields-layout, one device call (~6 min): every code width packed as whole fields (5-, 6-
# and 7-bit codes no longer in bit planes), so first the full GPU suite, then `qgemm tune` of the
# changed widths with the main binary ($BIN_MAIN) and this branch's ($BIN), same session.
set -u
OUT=${OUT:-/tmp/qgemm-out}
BIN=${BIN:-.device/fl}
BIN_MAIN=${BIN_MAIN:-.device/bin}
mkdir -p "$OUT"
export QGEMM_CACHE_DIR=${QGEMM_CACHE_DIR:-/tmp/qgemm-cache}
timeout 300 "$BIN/qgemm_gpu_tests" > "$OUT/fields_gputests.log" 2>&1
echo "full GPU suite rc=$?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/fields_gputests.log" | head -20
tiles='w4x1 t1 f1 s3 k256 waves4;w4x1 t1 f2 s3 k256 waves4;w8x1 t1 f4 s6 k128 waves1 ws'
for w in int5/g128/bf16 int6/g128/bf16 int7/g128/bf16 mxfp6_e3m2 uint7/g64/fp16/zp; do
  for b in "$BIN_MAIN" "$BIN"; do
    name="fields_$(basename "$b")_${w//\//_}"
    timeout 90 "$b/qgemm" tune --n 8192 --k 8192 --weight "$w" --m 1,16,64 --tiles "$tiles" \
      --out "$OUT/$name.json" > "$OUT/$name.log" 2>&1
    echo "== $w $(basename "$b") rc=$?"
    grep -A5 "^candidate" "$OUT/$name.log" | grep -E "^(candidate|mma_gemm)"
  done
done
