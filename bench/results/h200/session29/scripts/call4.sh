#!/usr/bin/env bash
# Session 29, call 4: the 16-token tile's two stage shapes (s4 k256 against s2 k512) at M = 16
# and 32 over more shapes and formats, both at three CTAs per SM, `qgemm tune` (plain launches;
# the heuristic plan's time is the last column): which tile to take per M.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s29
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
export QGEMM_CACHE_DIR=/tmp/qc_s29
run() {  # weight n k ms tiles
  QGEMM_NO_PDL=1 timeout 120 $D/qgemm tune --n $2 --k $3 --weight $1 --m $4 --tiles "$5" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 ${2}x$3 M=$4 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|') heur $(awk '$1 ~ /^[0-9]+$/ {print $(NF-1)}' "$OUT/s.log" | tr '\n' ' ')"
  cat "$OUT/s.log" >> "$OUT/tune_call4.log"; rm -f "$OUT/t.json"
}
F2="w4x1 t1 f2"; T="$F2 s4 k256 waves4;$F2 s2 k512 waves4"
I4=int4/g128/bf16
run $I4 8192 8192 9,16,24,32 "$T"
run int2/g64/bf16 8192 8192 16,32 "$T"
run int2/g128/bf16 8192 8192 16,32 "$T"
run mxfp4 8192 8192 16,32 "$T"
run int4/g128/fp16 8192 8192 16,32 "$T"
run int4/channel/bf16 8000 8200 16,32 "$T"
run $I4 6144 8192 16,32 "$T"
run $I4 4096 14336 16,32 "$T"
run $I4 8192 28672 16,32 "$T"
run $I4 28672 8192 16,32 "$T"
run $I4 57344 8192 16,32 "$T"
run $I4 1024 8192 16,32 "$T"
run $I4 1536 16384 16,32 "$T"
run $I4 3072 8192 9,24 "$T"
run $I4 10240 8192 9,24 "$T"
run int2/g128/bf16 28672 8192 16,32 "$T"
run int2/g64/bf16 4096 8192 16,32 "$T"
