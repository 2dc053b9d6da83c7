#!/usr/bin/env bash
# Session 26, call 3: the full GPU suite on the merge build (summing-split-asm2 at its final
# form: the 8-token tile's last split sums with the asm wait, every other kernel byte-identical
# to main d460443's, `scripts/compare_sass.sh`).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s26
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
timeout 400 $D/gpu_tests_hyb2 --gtest_brief=1 > "$OUT/gpu_suite_merge.log" 2>&1
echo "suite rc=$?"; grep -E "PASSED|FAILED|tests ran" "$OUT/gpu_suite_merge.log" | tail -8
