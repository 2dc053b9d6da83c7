#!/usr/bin/env bash
# Session 13, last: full GPU suite of branch ws-tail-split (final rule), then tail_split recipe.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
timeout 240 .device/tail/qgemm_gpu_tests > "$OUT/gputests_tail_full.log" 2>&1
echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests ran" "$OUT/gputests_tail_full.log" | head -20
timeout 80 .device/tail/qgemm bench bench/recipes/tail_split.yaml --out "$OUT/tail_split.json" > "$OUT/tail_split.log" 2>&1
echo "== bench rc=$?"; grep -E "^\s+[0-9]+ (jit|cublas)|x bf16" "$OUT/tail_split.log"
