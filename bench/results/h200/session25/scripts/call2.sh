#!/usr/bin/env bash
# Session 25, call 2: does the decode tiles' time follow the activation rows they copy?
# Same kernels, token counts 1/4/8 (8-token tile) and 9/12/16 (16-token tile), `qgemm tune`,
# plain launches. Then SM clocks and power of the M = 256 ws tile against cuBLAS under load.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s25
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
export QGEMM_NO_PDL=1
run() {  # bin weight n k m tiles log
  QGEMM_CACHE_DIR=/tmp/qc_$1 timeout 90 $D/$1 tune --n $3 --k $4 --weight $2 --m $5 --tiles "$6" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 $2 ${3}x$4 M=$5 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/$7"; rm -f "$OUT/t.json"
}
F2="w4x1 t1 f2 s2 k512 waves4"; F1="w4x1 t1 f1 s2 k512 waves4"
for round in 1 2; do
  for m in 9 12 16; do run qgemm_old int4/g128/bf16 8192 8192 $m "$F2" tokens_tune.log; done
  for m in 1 4 8; do run qgemm_old int4/g128/bf16 8192 8192 $m "$F1" tokens_tune.log; done
  for m in 1 8; do run qgemm_old uint4/g128/bf16/zp 8192 8192 $m "w4x1 t1 f1 s4 k256 waves4" tokens_tune.log; done
done
unset QGEMM_NO_PDL
for b in jit cublas; do
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 100 > "$OUT/clocks_$b.csv" &
  SMI=$!
  QGEMM_CACHE_DIR=/tmp/qc_qgemm_old timeout 120 $D/qgemm_old bench $D/m256_$b.yaml --out "$OUT/m256_$b.json" > "$OUT/m256_$b.log" 2>&1
  kill $SMI
  echo "bench $b: $(grep -iE 'int4|us' "$OUT/m256_$b.log" | tail -3 | tr -s ' ' | tr '\n' '|')"
  awk -F', ' '{print $2, $3}' "$OUT/clocks_$b.csv" | sort | uniq -c | sort -rn | head -8
done
