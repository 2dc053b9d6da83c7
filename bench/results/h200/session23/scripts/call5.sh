#!/usr/bin/env bash
# Session 23, call 5: K splits of the decode tiles against a per-SM balance model (the most
# stage-units any SM gets, with CTAs spread evenly over 132 SMs), plain launches, main 271929d.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s23
export QGEMM_NO_PDL=1
run() {  # weight n k m tiles log
  QGEMM_CACHE_DIR=/tmp/qc timeout 150 $D/qgemm_main2 tune --n $2 --k $3 --weight $1 --m $4 --tiles "$5" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 ${2}x$3 M=$4 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/$6"; rm -f "$OUT/t.json"
}
L="w4x1 t1 f1 s2 k512 waves4"
sp() { local t=$1; shift; local out=""; for s in "$@"; do out+="$t splits$s;"; done; echo "${out%;}"; }
run int4/g128/bf16 8192 8192 1 "$L;$(sp "$L" 2 3 4)" splits_tune.log
run int4/g128/bf16 6144 8192 1 "$L;$(sp "$L" 2 3 4)" splits_tune.log
run int4/g128/bf16 5120 8192 1 "$L;$(sp "$L" 3 4 6)" splits_tune.log
run int4/g128/bf16 4096 14336 1 "$L;$(sp "$L" 2 3 4 6)" splits_tune.log
run int4/g128/bf16 10240 8192 1 "$L;$(sp "$L" 2 3)" splits_tune.log
run int4/g128/bf16 8192 28672 1 "$L;$(sp "$L" 2 3 4)" splits_tune.log
S="w4x1 t1 f1 s4 k256 waves4"
run nvfp4 6144 8192 1 "$S;$(sp "$S" 2 3 4)" splits_tune.log
run uint4/g128/bf16/zp 8192 8192 1 "$S;$(sp "$S" 2 3 4)" splits_tune.log
L16="w4x1 t1 f2 s2 k512 waves4"
run int4/g128/bf16 8192 8192 16 "$L16;$(sp "$L16" 1 2 3)" splits_tune.log
