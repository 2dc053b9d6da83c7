#!/usr/bin/env bash
# Session 33, call 5: the whole GPU suite on the same build, three shards side by side.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=${D:-.device/s33}
t0=$(date +%s)
for i in 0 1 2; do
  QGEMM_CACHE_DIR=/tmp/qc_suite$i GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i \
    timeout ${SHARD_TIMEOUT:-500} $D/qgemm_gpu_tests > "$OUT/gpu_suite_shard$i.log" 2>&1 &
done
wait
echo "suite in $(( $(date +%s) - t0 )) s"
for i in 0 1 2; do
  echo "shard $i: $(grep -E 'tests ran|^\[  PASSED|^\[  FAILED  \] [0-9]|^\[  SKIPPED \] [0-9]' "$OUT/gpu_suite_shard$i.log" | tr '\n' '|')"
done
grep -hE "^\[  FAILED  \] [A-Z]|Failure" -A6 "$OUT"/gpu_suite_shard*.log | head -30
