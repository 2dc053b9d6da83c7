#!/usr/bin/env bash
# Session 32, call 5 (main 4af1271): the 16-token tile with 384-K stages. At K = 8192 the
# planned 512-K stages split 16 stages 5 / 5 / 6 over 3 K splits; 384-K stages split 22 (the
# last a third full) 7 / 7 / 8, so the longest split reads 2816 instead of 3072 K. `qgemm tune`
# (each candidate checked against the CPU reference first), plain, two rounds.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s32
export QGEMM_NO_PDL=1 QGEMM_CACHE_DIR=/tmp/qc_s32c5
run() {  # weight n k m tiles
  timeout 90 $D/qgemm tune --n $2 --k $3 --weight $1 --m $4 --tiles "$5" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 ${2}x$3 M=$4 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/tune_call5.log"; rm -f "$OUT/t.json"
}
F="w4x1 t1 f2"
T="$F s2 k512 waves4;$F s3 k384 waves4;$F s2 k384 waves4"
for round in 1 2; do
  run int4/g128/bf16 8192 8192 16,32 "$T"
  run int4/g128/bf16 6144 8192 16 "$T"
done
