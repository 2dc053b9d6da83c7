#!/usr/bin/env bash
# Session 34, call 4: the planner on the prescaled tiles (main + ps): the whole GPU suite in
# three shards side by side, then a random sweep of bf16 layers at 33..600 tokens
# (sweep_ps.txt, gen_sweep_ps.py) through `qgemm verify`. Carry .device/ps.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/ps; S=bench/results/h200/session34/scripts
t0=$(date +%s)
for i in 0 1 2; do
  QGEMM_CACHE_DIR=/tmp/qc_suite$i GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i \
    timeout ${SHARD_TIMEOUT:-330} $D/qgemm_gpu_tests > "$OUT/gpu_suite_shard$i.log" 2>&1 &
done
wait
echo "suite in $(( $(date +%s) - t0 )) s"
for i in 0 1 2; do
  echo "shard $i: $(grep -E 'tests ran|^\[  PASSED|^\[  FAILED  \] [0-9]|^\[  SKIPPED \] [0-9]' "$OUT/gpu_suite_shard$i.log" | tr '\n' '|')"
done
grep -hE "^\[  FAILED  \] [A-Z]|Failure" -A6 "$OUT"/gpu_suite_shard*.log | head -30
t0=$(date +%s)
QGEMM_CACHE_DIR=/tmp/qc_sweep timeout 200 xargs -P 12 -L 1 bash $S/one.sh < $S/sweep_ps.txt > "$OUT/sweep_call4.log" 2>&1
echo "sweep in $(( $(date +%s) - t0 )) s: $(grep -c '^PASS' "$OUT/sweep_call4.log") pass, $(grep -cE '^(FAIL|RC)' "$OUT/sweep_call4.log") not, of $(wc -l < $S/sweep_ps.txt); backends: $(awk '$1=="PASS"{print $3}' "$OUT/sweep_call4.log" | sort | uniq -c | tr '\n' ' ')"
grep -E '^(FAIL|RC)' -A12 "$OUT/sweep_call4.log" | head -40
