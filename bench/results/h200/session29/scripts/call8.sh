#!/usr/bin/env bash
# Session 29, call 8 (branch pair16-exp): the 16-token tile's two K splits as a cluster pair
# (QGEMM_EXP_PAIR16=1: the 8-token tile's pair rule, up to 0.7 of a wave) against marked
# partials (main), same kernels, `qgemm tune` heuristic plan, plain, three interleaved rounds;
# then the planned-layer GPU tests with pairs.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s29
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
export QGEMM_CACHE_DIR=/tmp/qc_s29
run() {  # variant weight n k ms
  local envs="QGEMM_NO_PDL=1"; [ "$1" = pair ] && envs="$envs QGEMM_EXP_PAIR16=1"
  env $envs timeout 120 $D/qgemm_pair tune --n $3 --k $4 --weight $2 --m $5 --tiles "w4x1 t1 f2 s2 k512 waves4" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 $2 ${3}x$4 M=$5 rc=$? :: heur $(awk '$1 ~ /^[0-9]+$/ {print $(NF-1)}' "$OUT/s.log" | tr '\n' ' ') $(grep -E 'wrong|rror' "$OUT/s.log" | head -2)"
  cat "$OUT/s.log" >> "$OUT/tune_call8_$1.log"; rm -f "$OUT/t.json"
}
for round in 1 2 3; do
  for v in main pair; do
    run $v int4/g128/bf16 8192 8192 9,16
    run $v int2/g128/bf16 8192 8192 16
    run $v mxfp4 8192 8192 16
    run $v int4/g128/bf16 6144 4096 16
  done
done
QGEMM_EXP_PAIR16=1 timeout 200 $D/qgemm_gpu_tests --gtest_brief=1 --gtest_filter='TunedPlanGpu.*' > "$OUT/gpu_tests_call8.log" 2>&1
echo "gpu rc=$? :: $(tail -3 "$OUT/gpu_tests_call8.log" | tr '\n' '|')"
grep -E "FAILED|Failure" -A6 "$OUT/gpu_tests_call8.log" | head -20
