#!/usr/bin/env bash
# Session 25, call 4: the full GPU suite on the summing-split fix-up, then forced split counts
# at M = 1 and 16 on it (`qgemm tune`, plain launches): does a cheaper fix-up move the best count?
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s25
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
timeout 420 $D/gpu_tests_new --gtest_brief=1 > "$OUT/gpu_suite_s25.log" 2>&1
echo "suite rc=$?"; grep -E "PASSED|FAILED|tests ran" "$OUT/gpu_suite_s25.log" | tail -12
export QGEMM_NO_PDL=1
run() {  # bin weight n k m tiles log
  QGEMM_CACHE_DIR=/tmp/qc_$1 timeout 90 $D/$1 tune --n $3 --k $4 --weight $2 --m $5 --tiles "$6" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 $2 ${3}x$4 M=$5 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/$7"; rm -f "$OUT/t.json"
}
L1="w4x1 t1 f1 s2 k512 waves4"; S1="w4x1 t1 f1 s4 k256 waves4"; L2="w4x1 t1 f2 s2 k512 waves4"
run qgemm_new uint4/g128/bf16/zp 8192 8192 1 "$S1;$S1 splits2;$S1 splits3;$S1 splits4" splits_tune.log
run qgemm_new int4/g128/bf16 8192 8192 1 "$L1;$L1 splits3;$L1 splits4" splits_tune.log
run qgemm_new int4/g128/bf16 8192 8192 16 "$L2;$L2 splits2;$L2 splits3" splits_tune.log
