#!/usr/bin/env bash
# Prepared in session 32 for the next device time (not run): one call of ~6 minutes. Carry
# .device/next and .device/parts (build_next.sh). Then next_ncu.sh in a second call
# (BIN=.device/next/main).
#   1. main: the new TunedPlanGpu.SplitKSumsAreBitwiseReproducible
#   2. the qdq patch: LinearGpu.* (the qdq backend's tests), then qdq_ab.yaml on main and patch
#   3. next_parts.sh: the ws tile without decode / copies (tune, two rounds)
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
S=bench/results/h200/session32/scripts
N=.device/next
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
t0=$(date +%s)
QGEMM_CACHE_DIR=/tmp/qc_next_main timeout 150 $N/main/qgemm_gpu_tests \
  --gtest_filter='TunedPlanGpu.SplitKSumsAreBitwiseReproducible' > "$OUT/gpu_split_repro.log" 2>&1
echo "1. repro rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E '^\[  PASSED|^\[  FAILED' "$OUT/gpu_split_repro.log" | tr '\n' '|')"
grep -E "Failure" -A8 "$OUT/gpu_split_repro.log" | head -20
t0=$(date +%s)
QGEMM_CACHE_DIR=/tmp/qc_next_qdq timeout 120 $N/qdq/qgemm_gpu_tests --gtest_filter='LinearGpu.*' \
  > "$OUT/gpu_qdq_patch.log" 2>&1
echo "2. qdq patch LinearGpu rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E '^\[  PASSED|^\[  FAILED' "$OUT/gpu_qdq_patch.log" | tr '\n' '|')"
grep -E "Failure" -A8 "$OUT/gpu_qdq_patch.log" | head -20
for b in main qdq; do
  QGEMM_CACHE_DIR=/tmp/qc_next_$b timeout 120 $N/$b/qgemm bench $S/qdq_ab.yaml --no-peaks \
    --out "$OUT/qdq_ab_$b.json" > "$OUT/qdq_ab_$b.log" 2>&1
  echo "   bench $b rc=$?"; grep -E "^[a-z0-9].* x |^ +[0-9]+ +(qdq|cublas)" "$OUT/qdq_ab_$b.log" | head -24
done
t0=$(date +%s)
bash $S/next_parts.sh
echo "3. parts in $(( $(date +%s) - t0 )) s"
