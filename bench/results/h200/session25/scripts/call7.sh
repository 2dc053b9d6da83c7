#!/usr/bin/env bash
# Session 25, call 7: variant F of the fix-up (the summing flag through shared memory, as main
# had it) against main and C: unsplit N = 28672 and split 8192^2 at M = 1. `qgemm tune`, plain.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s25
export QGEMM_NO_PDL=1
run() {  # bin weight n k m tiles log
  QGEMM_CACHE_DIR=/tmp/qc_$1 timeout 90 $D/$1 tune --n $3 --k $4 --weight $2 --m $5 --tiles "$6" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 $2 ${3}x$4 M=$5 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/$7"; rm -f "$OUT/t.json"
}
L1="w4x1 t1 f1 s2 k512 waves4"
for round in 1 2; do
for bin in qgemm_old qgemm_f qgemm_new; do
  run $bin int4/g128/bf16 28672 8192 1 "$L1" variant_f_tune.log
  run $bin int4/g128/bf16 8192 8192 1 "$L1" variant_f_tune.log
done
done
