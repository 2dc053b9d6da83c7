#!/usr/bin/env bash
# Staged in session 18 for session 19 (~4.5 min): branch odd-groups (.device/oddg, e2e0a1b;
# compiled, never run): groups that are multiples of 16 but no power of two (g48, b32x96) run on
# the jit kernels of their largest power-of-two divisor (host packing only; the kernels are
# main's). (1) the tests it changes or adds, (2) verify on odd groups at every bucket, (3) the
# full suite. Prediction: all pass; odd groups leave qdq (dequant + cuBLAS) for jit.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qc_oddg
timeout 120 .device/oddg/qgemm_gpu_tests --gtest_filter='LinearGpu.*:*g48*:*b32x96*' > "$OUT/oddg_tests.log" 2>&1
rc=$?; echo "== oddg tests rc=$rc"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/oddg_tests.log" | head
for w in int4/g48/bf16 uint4/g96/fp16/zp e4m3/b128x96/fp32 int3/g192/bf16 uint8/g80/bf16/zp_fp32; do
  for m in 1 16 64 300 1000; do
    timeout 60 .device/oddg/qgemm verify --backend jit --m $m --n 1000 --k 1920 --weight $w --out fp16 > "$OUT/v.log" 2>&1
    echo "rc=$? $(grep -E '^(backend|rel error|result)' "$OUT/v.log" | tr -s ' ' | tr '\n' ' ') | $w M=$m"
  done
done
rm -f "$OUT/v.log"
if [ $rc -eq 0 ]; then
  timeout 330 .device/oddg/qgemm_gpu_tests > "$OUT/gpu_suite_oddg.log" 2>&1
  echo "== suite rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/gpu_suite_oddg.log" | head
fi
