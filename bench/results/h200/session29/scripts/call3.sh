#!/usr/bin/env bash
# Session 29, call 3: the 16-token tile's long-stage rule with both tiles at three CTAs per SM
# (long wherever the 32-token grid fits one wave): `qgemm tune` of s4 k256 against s2 k512 at
# the shapes whose choice changed or is new, with the heuristic plan's time (last column); then
# `qgemm verify` at those shapes and the planned-layer GPU tests; then the recipe.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s29
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
export QGEMM_CACHE_DIR=/tmp/qc_s29
run() {  # weight n k ms tiles
  QGEMM_NO_PDL=1 timeout 120 $D/qgemm tune --n $2 --k $3 --weight $1 --m $4 --tiles "$5" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 ${2}x$3 M=$4 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|') heur $(awk '$1 ~ /^[0-9]+$/ {print $(NF-1)}' "$OUT/s.log" | tr '\n' ' ')"
  cat "$OUT/s.log" >> "$OUT/tune_call3.log"; rm -f "$OUT/t.json"
}
F2="w4x1 t1 f2"; T="$F2 s4 k256 waves4;$F2 s2 k512 waves4"
for n in 2048 3072 5120 10240 12288 14336; do run int4/g128/bf16 $n 8192 16,32 "$T"; done
run int2/g64/bf16 10240 8192 16,32 "$T"
run mxfp4 5120 8192 16,32 "$T"
S=bench/results/h200/session29/scripts
timeout 180 xargs -P 12 -L 1 bash $S/one.sh < $S/verify_cmds.txt > "$OUT/verify_call3.log" 2>&1
echo "verify: $(grep -c '^PASS' "$OUT/verify_call3.log") pass, $(grep -cE '^(FAIL|RC)' "$OUT/verify_call3.log") not, of $(wc -l < $S/verify_cmds.txt)"
grep -E '^(FAIL|RC)' -A12 "$OUT/verify_call3.log" | head -30
timeout 200 $D/qgemm_gpu_tests --gtest_brief=1 --gtest_filter='TunedPlanGpu.*:MmaGemmGpu.*' > "$OUT/gpu_tests_call3.log" 2>&1
echo "gpu rc=$? :: $(tail -3 "$OUT/gpu_tests_call3.log" | tr '\n' '|')"
grep -E "FAILED|Failure" -A6 "$OUT/gpu_tests_call3.log" | head -30
