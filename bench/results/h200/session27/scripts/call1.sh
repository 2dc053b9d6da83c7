#!/usr/bin/env bash
# Session 27, call 1 (diagnostic, branch s27-diag): where the small-M must rows' last percent go.
# QGEMM_DIAG=1 no split-K fix-up in the mma.sync tiles; 2 / 3 ws tiles copy half / none of the
# activations; 4 no zero-table copy; 5 no zero fold in decode; 6 both. Results are wrong on
# purpose; `qgemm tune` times them anyway. Plain launches.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s27
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
export QGEMM_NO_PDL=1
run() {  # diag weight n k m tiles
  QGEMM_DIAG=$1 QGEMM_CACHE_DIR=/tmp/qc_s27_$1 timeout 120 $D/qgemm_diag tune --n $3 --k $4 --weight $2 --m $5 --tiles "$6" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "diag=$1 $2 ${3}x$4 M=$5 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/diag.log"; rm -f "$OUT/t.json"
}
F1="w4x1 t1 f1"; F2="w4x1 t1 f2"; WS="w8x1 t1 f8"
for round in 1 2; do  # call 1b: main (diag 0) figures came from call 1
  for d in 1; do
    run $d int4/g128/bf16 8192 8192 1 "$F1 s2 k512 waves4;$F1 s4 k256 waves4 splits4"
    run $d int4/g128/bf16 8192 8192 16 "$F2 s2 k512 waves4"
    run $d uint4/g128/bf16/zp 8192 8192 1 "$F1 s4 k256 waves4"
  done
  for d in 4 5 6; do
    run $d uint4/g128/bf16/zp 8192 8192 1 "$F1 s4 k256 waves4;$F1 s2 k512 waves4 splits4"
  done
  for d in 2 3; do
    run $d int4/g128/bf16 8192 8192 64 "$WS s3 k256 waves1 ws"
  done
done
