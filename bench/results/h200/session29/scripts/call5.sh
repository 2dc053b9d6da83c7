#!/usr/bin/env bash
# Session 29, call 5 (main 5b89a35): the 16-token tile's two stage shapes at K = 4096 (left out
# of the long-stage rule so far), `qgemm tune`, plain; `qgemm verify` at the shapes whose
# 16-token tile changed (long stages past a wave); then the recipe.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s29
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
export QGEMM_CACHE_DIR=/tmp/qc_s29
run() {  # weight n k ms tiles
  QGEMM_NO_PDL=1 timeout 120 $D/qgemm tune --n $2 --k $3 --weight $1 --m $4 --tiles "$5" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 ${2}x$3 M=$4 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|') heur $(awk '$1 ~ /^[0-9]+$/ {print $(NF-1)}' "$OUT/s.log" | tr '\n' ' ')"
  cat "$OUT/s.log" >> "$OUT/tune_call5.log"; rm -f "$OUT/t.json"
}
F2="w4x1 t1 f2"; T="$F2 s4 k256 waves4;$F2 s2 k512 waves4"
for n in 4096 6144 12288 14336 28672; do run int4/g128/bf16 $n 4096 16,32 "$T"; done
run int2/g128/bf16 4096 4096 16,32 "$T"
S=bench/results/h200/session29/scripts
timeout 150 xargs -P 12 -L 1 bash $S/one.sh < $S/verify_cmds5.txt > "$OUT/verify_call5.log" 2>&1
echo "verify: $(grep -c '^PASS' "$OUT/verify_call5.log") pass, $(grep -cE '^(FAIL|RC)' "$OUT/verify_call5.log") not, of $(wc -l < $S/verify_cmds5.txt)"
grep -E '^(FAIL|RC)' -A12 "$OUT/verify_call5.log" | head -30
QGEMM_CACHE_DIR=/tmp/qc_recipe timeout 400 $D/qgemm bench bench/recipes/dense_w4a16.yaml \
  --out "$OUT/dense_w4a16.json" --plot "$OUT/dense_w4a16.svg" > "$OUT/bench_dense_w4a16.log" 2>&1
echo "bench rc=$?"
grep -E "^ +(1|16|64|256|1024|4096) +(jit|cublas)" "$OUT/bench_dense_w4a16.log" | head -60
