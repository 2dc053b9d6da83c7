#!/usr/bin/env bash
# Session 18, call 7: the format-sweep fixes (channel / tensor scales with zero points on the jit
# kernels as one whole-row group; qdq declines mixed halves so the router reaches the CPU).
# (1) the two sweep cases that failed, and a mixed-halves layer jit declines; (2) the full GPU
# suite on this build (new cases: uint4/channel/fp16/zp, uint7/tensor/fp32/zp_fp32 in the
# MmaGemm, Wgmma and dequant tables).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qc_fix
for args in "--m 65 --n 1780 --k 1568 --weight uint7/tensor/fp32/zp_fp32 --act bf16 --out fp16" \
            "--m 1000 --n 2903 --k 2449 --weight uint4/channel/ue8m0/zp_fp32 --act bf16 --out fp16" \
            "--m 300 --n 704 --k 1440 --weight int4/g48/bf16 --act bf16 --out fp16" \
            "--m 4096 --n 4096 --k 4096 --weight uint4/channel/fp16/zp --act fp16 --out fp16" \
            "--m 1 --n 8192 --k 8192 --weight uint8/channel/bf16/zp --act bf16 --out bf16"; do
  timeout 120 .device/fix/qgemm verify --backend auto $args > "$OUT/v.log" 2>&1
  echo "rc=$? $(grep -E '^(backend|rel error|result)' "$OUT/v.log" | tr -s ' ' | tr '\n' ' ') | $args"
  cat "$OUT/v.log" >> "$OUT/sweep_fixes.log"
done
rm -f "$OUT/v.log"
timeout 360 .device/fix/qgemm_gpu_tests > "$OUT/gpu_suite_fix.log" 2>&1
echo "== suite rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]|tests ran" "$OUT/gpu_suite_fix.log" | head -20
