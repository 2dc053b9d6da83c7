#!/usr/bin/env bash
# Session 19 call 7 (~1.5 min): 52842ca (float zero points in groups shorter than a ws stage hand
# off from 193): the float-zero-point and Linear GPU tests, and verify across the new boundary.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qc_c7
B=.device/kw2f
timeout 150 $B/qgemm_gpu_tests --gtest_filter='*zp_fp*:*zp_bf16*:*FloatZero*:LinearGpu*' > "$OUT/call7_tests.log" 2>&1
echo "== tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/call7_tests.log" | head
for m in 128 192 193 1000; do
  timeout 60 $B/qgemm verify --backend jit --m $m --n 4000 --k 4096 --weight uint4/g64/fp16/zp_fp16 --act fp16 --out fp16 --check-rows 64 > "$OUT/v.log" 2>&1
  echo "rc=$? $(grep -E '^(backend|kernel|rel error|result)' "$OUT/v.log" | tr -s ' ' | tr '\n' ' ') | M=$m"
done
rm -f "$OUT/v.log"
