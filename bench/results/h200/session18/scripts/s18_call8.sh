#!/usr/bin/env bash
# Session 18, call 8: the two tests call 7 failed, as changed (LinearGpu falls back on g48; the
# tensor-scale zero-point case uses integer zero points), and whether float zero points with
# bf16 activations miss the fp16-output tolerance on grouped 7-bit codes too (main's code path):
# (q - z) is rounded to bf16 before the MMA.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qc_fix
timeout 200 .device/fix/qgemm_gpu_tests --gtest_filter='LinearGpu.*:*uint7_tensor*:*channel_fp16_zp*:*channel_bf16_zp*:*tensor_fp32_zp*' > "$OUT/gpu_fix_tests.log" 2>&1
echo "== tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/gpu_fix_tests.log" | head
for w in uint7/g128/fp32/zp_fp32 uint7/tensor/fp32/zp_fp32 uint4/g64/bf16/zp_fp16 uint7/g128/fp32/zp; do
  for m in 1 64 1000; do
    timeout 60 .device/fix/qgemm verify --backend jit --m $m --n 1000 --k 1536 --weight $w --act bf16 --out fp16 > "$OUT/v.log" 2>&1
    echo "rc=$? $(grep -E '^rel error' "$OUT/v.log" | tr -s ' ') | $w M=$m"
  done
done
rm -f "$OUT/v.log"
