#!/usr/bin/env bash
# Session 14 call 8: final main (hand-off rule, 128-thread wgmma clamp): full GPU suite, and
# `qgemm verify --backend jit` through the public Linear path on both sides of the new hand-offs.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
B=.device/main14
timeout 420 $B/qgemm_gpu_tests > "$OUT/gpu_suite_final.log" 2>&1; echo "== gpu suite rc=$?"
grep -E "^\\[  (PASSED|FAILED) |tests ran|Failure" "$OUT/gpu_suite_final.log" | head -20
{ for c in "int6/g128/bf16 300 1000 1152" "int6/g128/fp16 512 4100 2048" "int6/channel/bf16 511 333 1000" \
           "int8/g128/bf16 384 4100 2048" "int8/g128/bf16 385 4100 2048" "uint8/g128/bf16/zp 400 999 1152" \
           "int2/g128/bf16 257 4100 4224" "e4m3/channel/bf16 300 1000 1000"; do
    set -- $c
    $B/qgemm verify --weight $1 --m $2 --n $3 --k $4 --backend jit --bias --check-rows 64; echo "rc=$?"
  done; } > "$OUT/verify_final.log" 2>&1
grep -E "rel|rc=|error|FAIL|PASS" "$OUT/verify_final.log" | head -40
