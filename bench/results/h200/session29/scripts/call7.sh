#!/usr/bin/env bash
# Session 29, call 7 (main 1ae32d8): the 8-token decode tile's two stage shapes (four 256-K /
# two 512-K) at K = 4096, left out of its long-stage rule (session 21: 4096^2 6.60 / 7.24),
# `qgemm tune`, plain, M = 1 and 8.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s29
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
export QGEMM_CACHE_DIR=/tmp/qc_s29
run() {  # weight n k ms tiles
  QGEMM_NO_PDL=1 timeout 120 $D/qgemm tune --n $2 --k $3 --weight $1 --m $4 --tiles "$5" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 ${2}x$3 M=$4 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|') heur $(awk '$1 ~ /^[0-9]+$/ {print $(NF-1)}' "$OUT/s.log" | tr '\n' ' ')"
  cat "$OUT/s.log" >> "$OUT/tune_call7.log"; rm -f "$OUT/t.json"
}
F1="w4x1 t1 f1"; T="$F1 s4 k256 waves4;$F1 s2 k512 waves4"
for n in 4096 6144 12288 14336 28672; do run int4/g128/bf16 $n 4096 1,8 "$T"; done
run mxfp4 6144 4096 1,8 "$T"
run int4/g128/bf16 14336 8192 1,8 "$T"
