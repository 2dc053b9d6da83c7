#!/usr/bin/env bash
# Session 24, call 3: uint4/zp at M = 1 and 16, main (qgemm_old) against the broadcast helpers
# alone (qgemm_a: no PRMT, two fma per group and row pair as before) and the one-fma fold
# (qgemm_new); plain launches, three rounds.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s24
export QGEMM_NO_PDL=1
run() {  # bin weight n k m tiles log
  QGEMM_CACHE_DIR=/tmp/qc_$1 timeout 90 $D/$1 tune --n $3 --k $4 --weight $2 --m $5 --tiles "$6" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 $2 ${3}x$4 M=$5 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/$7"; rm -f "$OUT/t.json"
}
for round in 1 2 3; do for bin in qgemm_old qgemm_a qgemm_new; do
  run $bin uint4/g128/bf16/zp 8192 8192 1 "w4x1 t1 f1 s4 k256 waves4" ab3_tune.log
  run $bin uint4/g128/bf16/zp 8192 8192 16 "w4x1 t1 f2 s4 k256 waves4;w4x1 t1 f2 s3 k256 waves4" ab3_tune.log
done; done
run qgemm_new int4/g128/bf16 8192 8192 1 "w4x1 t1 f1 s2 k512 waves4" ab3_tune.log
