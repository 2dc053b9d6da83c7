#!/usr/bin/env bash
# Session 27, call 3 (diagnostic, branch s27-diag): the 8-token tile's plan as on main
# (QGEMM_DECODE_CLUSTER2=0) against "2 K splits summed in a cluster of two wherever the plan
# splits" (=1), plain launches, across shapes and formats. Prints `qgemm tune`'s heuristic-plan
# time per M.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s27
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
export QGEMM_NO_PDL=1
run() {  # weight n k
  for e in 0 1; do
    QGEMM_DECODE_CLUSTER2=$e QGEMM_CACHE_DIR=/tmp/qc_s27 timeout 100 $D/qgemm_diag tune --n $2 --k $3 --weight $1 --m 1,8 \
      --tiles "w4x1 t1 f1 s4 k256 waves4 splits1" --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
    echo "c2=$e $1 ${2}x$3 rc=$? :: $(awk '$1=="1"||$1=="8"{print "M="$1" "$(NF-1)}' "$OUT/s.log" | tr '\n' ' ') $(grep -E 'wrong|rror' "$OUT/s.log" | head -2)"
    cat "$OUT/s.log" >> "$OUT/c2.log"; rm -f "$OUT/t.json"
  done
}
run int4/g128/bf16 8192 8192
run uint4/g128/bf16/zp 8192 8192
run int4/g128/bf16 4096 14336
run int4/g128/bf16 14336 4096
run int4/g128/bf16 10240 8192
run int4/g128/bf16 6144 8192
run int4/g128/bf16 4096 4096
run int4/g128/bf16 2048 8192
run int4/g128/bf16 8192 28672
run uint4/g128/bf16/zp 4096 14336
run uint4/g128/bf16/zp 10240 8192
run int3/g128/bf16 8192 8192
run int2/g128/bf16 8192 8192
run mxfp4 8192 8192
run nvfp4 8192 8192
run int8/channel/bf16 8192 8192
run int4/channel/bf16 8192 8192
run uint8/g128/bf16/zp 8192 8192
