#!/usr/bin/env bash
# Session 26, call 6: stage shapes around the planned tiles on main (a40cbc4's kernels), `qgemm
# tune`, plain launches: the 8- and 16-token tiles with a third 512-K stage, the M = 64 ws tile
# with other stage shapes and split counts.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s26
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
export QGEMM_NO_PDL=1
run() {  # weight n k m tiles log
  QGEMM_CACHE_DIR=/tmp/qc_s26 timeout 120 $D/qgemm tune --n $2 --k $3 --weight $1 --m $4 --tiles "$5" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 ${2}x$3 M=$4 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/$6"; rm -f "$OUT/t.json"
}
F1="w4x1 t1 f1"; F2="w4x1 t1 f2"; WS="w8x1 t1 f8"
for round in 1 2; do
run int4/g128/bf16 8192 8192 1 "$F1 s2 k512 waves4;$F1 s3 k512 waves4;$F1 s3 k512 waves4 splits3" stages.log
run int4/g128/bf16 28672 8192 1 "$F1 s2 k512 waves4;$F1 s3 k512 waves4" stages.log
run int4/g128/bf16 8192 8192 16 "$F2 s2 k512 waves4;$F2 s3 k512 waves4" stages.log
run int4/g128/bf16 8192 8192 64 "$WS s3 k256 waves1 ws;$WS s4 k256 waves1 ws;$WS s2 k512 waves1 ws;$WS s5 k128 waves1 ws;$WS s3 k256 waves1 ws splits3;$WS s3 k256 waves1 ws splits4" stages.log
done
