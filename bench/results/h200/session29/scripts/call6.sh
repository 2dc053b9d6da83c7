#!/usr/bin/env bash
# Session 29, call 6 (main 1ae32d8): `qgemm verify` where the 16-token tile now takes long stages
# at K 4096..8191; `qgemm tune` of both stage shapes at small layers of K = 4096 (the third-of-a-
# wave guard); the planned-layer and Linear GPU tests on the final binary.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s29
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
export QGEMM_CACHE_DIR=/tmp/qc_s29
S=bench/results/h200/session29/scripts
timeout 150 xargs -P 12 -L 1 bash $S/one.sh < $S/verify_cmds6.txt > "$OUT/verify_call6.log" 2>&1
echo "verify: $(grep -c '^PASS' "$OUT/verify_call6.log") pass, $(grep -cE '^(FAIL|RC)' "$OUT/verify_call6.log") not, of $(wc -l < $S/verify_cmds6.txt)"
grep -E '^(FAIL|RC)' -A12 "$OUT/verify_call6.log" | head -30
run() {  # weight n k ms tiles
  QGEMM_NO_PDL=1 timeout 120 $D/qgemm tune --n $2 --k $3 --weight $1 --m $4 --tiles "$5" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 ${2}x$3 M=$4 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|') heur $(awk '$1 ~ /^[0-9]+$/ {print $(NF-1)}' "$OUT/s.log" | tr '\n' ' ')"
  cat "$OUT/s.log" >> "$OUT/tune_call6.log"; rm -f "$OUT/t.json"
}
F2="w4x1 t1 f2"; T="$F2 s4 k256 waves4;$F2 s2 k512 waves4"
for n in 1024 2048 3072; do run int4/g128/bf16 $n 4096 16,32 "$T"; done
timeout 240 $D/qgemm_gpu_tests --gtest_brief=1 --gtest_filter='TunedPlanGpu.*:LinearGpu.*' > "$OUT/gpu_tests_call6.log" 2>&1
echo "gpu rc=$? :: $(tail -3 "$OUT/gpu_tests_call6.log" | tr '\n' '|')"
grep -E "FAILED|Failure" -A6 "$OUT/gpu_tests_call6.log" | head -30
