#!/usr/bin/env bash
# Session 27, call 2 (diagnostic, branch s27-diag): the mma.sync decode tiles' split-K summed in a
# thread-block cluster (QGEMM_SPLIT_CLUSTER=all) against main's summing split, plain launches.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s27
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
export QGEMM_NO_PDL=1
run() {  # cluster weight n k m tiles
  QGEMM_SPLIT_CLUSTER=$1 QGEMM_CACHE_DIR=/tmp/qc_s27 timeout 120 $D/qgemm_diag tune --n $3 --k $4 --weight $2 --m $5 --tiles "$6" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "cluster=$1 $2 ${3}x$4 M=$5 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/cluster.log"; rm -f "$OUT/t.json"
}
F1="w4x1 t1 f1"; F2="w4x1 t1 f2"
for round in 1 2; do
  for c in 1 all; do
    run $c int4/g128/bf16 8192 8192 1 "$F1 s2 k512 waves4 splits2;$F1 s2 k512 waves4 splits3;$F1 s2 k512 waves4 splits4"
    run $c int4/g128/bf16 8192 8192 16 "$F2 s2 k512 waves4 splits2;$F2 s2 k512 waves4 splits3;$F2 s4 k256 waves4 splits3"
    run $c uint4/g128/bf16/zp 8192 8192 1 "$F1 s4 k256 waves4 splits2;$F1 s4 k256 waves4 splits4;$F1 s2 k512 waves4 splits4"
    run $c int8/channel/bf16 8192 8192 1 "w4x1 t1 f1 s3 k128 waves4"
    run $c int4/g128/bf16 10240 8192 16 "$F2 s4 k256 waves4"
    run $c int4/g128/bf16 4096 14336 1 "$F1 s2 k512 waves4"
  done
done
