#!/usr/bin/env bash
# Session 20 call 5: the full GPU suite on main 67f8a49+ (sm_75 support; sm_80/sm_90a kernels
# byte-identical), then random sweep 5: 160 `gen_sweep.py turing 2075 160` cases on the sm_75
# kernels (QGEMM_TARGET_ARCH=sm_75, fp16 activations, every weight format).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qc_suite
timeout 330 .device/s20/qgemm_gpu_tests > "$OUT/gpu_suite_s20.log" 2>&1
echo "== suite rc=$?"; grep -E "^\[  (PASSED|FAILED) |tests ran" "$OUT/gpu_suite_s20.log"
grep -E "FAILED  \]" "$OUT/gpu_suite_s20.log" | head
export QGEMM_TARGET_ARCH=sm_75 QGEMM=.device/s20/qgemm QGEMM_CACHE_DIR=/tmp/qc_sweep75
timeout 240 xargs -P 8 -L 1 bash .device/sweep/one2.sh < .device/sweep/turing.txt > "$OUT/format_sweep5_sm75.log" 2>&1
echo "== sweep5: $(grep -c '^PASS' "$OUT/format_sweep5_sm75.log") pass, $(grep -cE '^(FAIL|RC)' "$OUT/format_sweep5_sm75.log") not"
grep -E '^(FAIL|RC)' -A12 "$OUT/format_sweep5_sm75.log" | head -60
awk '/^[A-Z]/{print $3}' "$OUT/format_sweep5_sm75.log" | sort | uniq -c
