#!/usr/bin/env bash
# Session 23, call 6: balanced decode splits (branch split-balance): plans it changes, main
# 271929d (qgemm_main2) against the branch (qgemm_bal), plain launches, each binary's own splits;
# the GPU tests that plan decode layers; then the recipe on the branch.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s23
export QGEMM_NO_PDL=1
run() {  # bin weight n k m tiles log
  QGEMM_CACHE_DIR=/tmp/qc_$1 timeout 60 $D/$1 tune --n $3 --k $4 --weight $2 --m $5 --tiles "$6" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 $2 ${3}x$4 M=$5 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/$7"; rm -f "$OUT/t.json"
}
for bin in qgemm_main2 qgemm_bal; do
  run $bin uint4/g128/bf16/zp 10240 8192 1 "w4x1 t1 f1 s4 k256 waves4" balance_ab_tune.log
  run $bin uint4/g128/bf16/zp 6144 8192 1 "w4x1 t1 f1 s4 k256 waves4" balance_ab_tune.log
  run $bin nvfp4 10240 8192 1 "w4x1 t1 f1 s4 k256 waves4" balance_ab_tune.log
  run $bin int8/channel/bf16 6144 8192 1 "w4x1 t1 f1 s3 k256 waves4" balance_ab_tune.log
  run $bin mxfp4 8192 8192 1 "w4x1 t1 f1 s2 k512 waves4" balance_ab_tune.log
  run $bin int4/g128/bf16 8192 8192 1 "w4x1 t1 f1 s2 k512 waves4" balance_ab_tune.log
done
unset QGEMM_NO_PDL
timeout 70 $D/qgemm_gpu_tests_bal --gtest_brief=1 \
  --gtest_filter='MmaGemmGpu.LongDecodeStagesOnLongRows:MmaGemmGpu.LlamaSizedLayer:LinearGpu.*:TunedPlanGpu.*' \
  > "$OUT/gpu_planned_bal.log" 2>&1
echo "tests rc=$?"; tail -3 "$OUT/gpu_planned_bal.log"
QGEMM_CACHE_DIR=/tmp/qc timeout 360 $D/qgemm_bal bench bench/recipes/dense_w4a16.yaml --out "$OUT/dense_w4a16.json" \
  --plot "$OUT/dense_w4a16.svg" > "$OUT/bench_dense_w4a16.log" 2>&1
echo "bench rc=$?"; grep -vE "^\s*$" "$OUT/bench_dense_w4a16.log" | tail -45
