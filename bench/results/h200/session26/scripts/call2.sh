#!/usr/bin/env bash
# Session 26, call 2: the recipe on the merge candidate (summing-split-asm2: the 8-token tile's
# last split sums, the wait as one asm statement; the 16-token tile as on main), then split
# counts on it, `qgemm tune`, plain launches.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s26
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
QGEMM_CACHE_DIR=/tmp/qc_recipe timeout 400 $D/qgemm_hyb bench bench/recipes/dense_w4a16.yaml \
  --out "$OUT/dense_w4a16.json" --plot "$OUT/dense_w4a16.svg" > "$OUT/bench_dense_w4a16.log" 2>&1
echo "bench rc=$?"
grep -E "^ +(1|16|64|256|1024|4096) +(jit|cublas)" "$OUT/bench_dense_w4a16.log" | head -40
export QGEMM_NO_PDL=1
run() {  # bin weight n k m tiles log
  QGEMM_CACHE_DIR=/tmp/qc_$1 timeout 90 $D/$1 tune --n $3 --k $4 --weight $2 --m $5 --tiles "$6" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 $2 ${3}x$4 M=$5 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/$7"; rm -f "$OUT/t.json"
}
L1="w4x1 t1 f1 s2 k512 waves4"; S1="w4x1 t1 f1 s4 k256 waves4"; L2="w4x1 t1 f2 s2 k512 waves4"
run qgemm_hyb uint4/g128/bf16/zp 8192 8192 1 "$S1 splits2;$S1 splits3;$S1;$S1 splits6;$S1 splits8" splits.log
run qgemm_hyb int4/g128/bf16 8192 8192 1 "$L1 splits2;$L1 splits3;$L1;$L1 splits6;$L1 splits8" splits.log
run qgemm_hyb int4/g128/bf16 8192 8192 16 "$L2;$L2 splits4;$L2 splits3" splits.log
run qgemm_hyb int4/g128/bf16 28672 8192 1 "$L1;$L1 splits2" splits.log
