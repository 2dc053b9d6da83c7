#!/usr/bin/env bash
# Session 32, call 3 (main 4af1271): the 9 GPU tests call 1's shards did not reach
# (rest_tests.txt, three processes side by side), then random format sweeps with new seeds
# (`gen_sweep.py wide 3201 120`, `odd 3202 60`).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s32; S=bench/results/h200/session32/scripts
t0=$(date +%s)
for i in 0 1 2; do
  f=$(awk -v i=$i 'NR % 3 == i' $S/rest_tests.txt | paste -sd:)
  QGEMM_CACHE_DIR=/tmp/qc_rest$i timeout 240 $D/qgemm_gpu_tests --gtest_filter="$f" \
    > "$OUT/gpu_rest$i.log" 2>&1 &
done
wait
echo "tests in $(( $(date +%s) - t0 )) s"
for i in 0 1 2; do
  echo "part $i: $(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]|tests ran' "$OUT/gpu_rest$i.log" | tr '\n' '|')"
done
grep -hE "^\[  FAILED  \] [A-Z]|Failure" -A6 "$OUT"/gpu_rest*.log | head -30
t0=$(date +%s)
cat $S/sweep_wide.txt $S/sweep_odd.txt > /tmp/sweep.txt
QGEMM_CACHE_DIR=/tmp/qc_sweep timeout 150 xargs -P 12 -L 1 bash $S/one.sh < /tmp/sweep.txt > "$OUT/sweep_call3.log" 2>&1
echo "sweep in $(( $(date +%s) - t0 )) s: $(grep -c '^PASS' "$OUT/sweep_call3.log") pass, $(grep -cE '^(FAIL|RC)' "$OUT/sweep_call3.log") not, of $(wc -l < /tmp/sweep.txt); backends: $(awk '$1=="PASS"{print $3}' "$OUT/sweep_call3.log" | sort | uniq -c | tr '\n' ' ')"
grep -E '^(FAIL|RC)' -A12 "$OUT/sweep_call3.log" | head -40
