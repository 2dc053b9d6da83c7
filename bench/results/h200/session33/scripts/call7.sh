#!/usr/bin/env bash
# Session 33, call 7, on main with the qdq dequantize kernel (the recipe's build): the qdq
# backend's GPU tests, then `qgemm verify --backend qdq` on formats and shapes that walk the
# chunk's scale groups (groups of 8, 20, 40 and 48 against 8-column chunks, block scales, odd K,
# zero points, fp16 activations and output). Carry .device/s33.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s33
export QGEMM_CACHE_DIR=/tmp/qc_qdq
timeout 120 $D/qgemm_gpu_tests --gtest_filter='LinearGpu.*' > "$OUT/gpu_linear.log" 2>&1
echo "LinearGpu rc=$? $(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]' "$OUT/gpu_linear.log" | tr '\n' '|')"
v() { timeout 60 $D/qgemm verify --backend qdq "$@" 2>&1 | tail -1; }
for w in int4/g8/bf16 uint4/g20/fp16/zp int3/g40/fp16 int5/g48/bf16 e2m1/g32/ue8m0 \
         e4m3/b128x128/fp32 int8/channel/bf16 e5m2/g16/fp16 uint2/g24/bf16/zp_bf16 int6/g40/fp16; do
  for shape in "--m 7 --n 1000 --k 1920" "--m 64 --n 333 --k 3840"; do
    echo "$w $shape: $(v --weight $w $shape --act fp16 --out fp16)"
    echo "$w $shape bf16: $(v --weight $w $shape --bias)"
  done
done
echo "int8/channel K=1003: $(v --weight int8/channel/bf16 --m 5 --n 520 --k 1003)"
echo "int4/g8 K=1000: $(v --weight int4/g8/fp16 --m 5 --n 520 --k 1000 --act fp16 --out fp16)"
