#!/usr/bin/env bash
# Session 30, call 2: the whole GPU suite on the change (relaxed exit barrier of the cluster
# sum, and MmaGemmGpu.LongStagesFor16TokenTiles at K = 8576) in three shards run side by side,
# then `qgemm bench exit_ab.yaml` (jit, plain) with main 3806f08 (old) and the change (new),
# two interleaved rounds.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s30; S=bench/results/h200/session30/scripts
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
t0=$(date +%s)
for i in 0 1 2; do
  QGEMM_CACHE_DIR=/tmp/qc_suite$i GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i \
    timeout 420 $D/new/qgemm_gpu_tests > "$OUT/gpu_suite_call2_shard$i.log" 2>&1 &
done
wait
echo "suite in $(( $(date +%s) - t0 )) s"
for i in 0 1 2; do
  echo "shard $i: $(grep -E 'tests ran|^\[  PASSED|^\[  FAILED  \] [0-9]|^\[  SKIPPED \] [0-9]' "$OUT/gpu_suite_call2_shard$i.log" | tr '\n' '|')"
done
grep -hE "^\[  FAILED  \] [A-Z]|Failure" -A6 "$OUT"/gpu_suite_call2_shard*.log | head -30
for r in 1 2; do
  for b in old new; do
    bin=$D/qgemm; [ $b = new ] && bin=$D/new/qgemm
    QGEMM_CACHE_DIR=/tmp/qc_ab_$b timeout 200 $bin bench $S/exit_ab.yaml --backend jit --no-peaks \
      --out "$OUT/exit_ab_${b}_$r.json" > "$OUT/exit_ab_${b}_$r.log" 2>&1
    echo "bench $b round $r rc=$?"
  done
done
python3 $S/ab_table.py "$OUT"/exit_ab_old_1.log "$OUT"/exit_ab_new_1.log "$OUT"/exit_ab_old_2.log "$OUT"/exit_ab_new_2.log
