#!/usr/bin/env bash
# Session 25, call 6: is N = 28672 M = 1 (one split: no fix-up) slower on the new build? Its main
# loop is scheduled differently (the epilogue changed). `qgemm tune`, plain, three rounds.
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
for round in 1 2 3; do
for bin in qgemm_old qgemm_new; do
  run $bin int4/g128/bf16 28672 8192 1 "$L1" n28672_tune.log
done
done
