#!/usr/bin/env bash
# Session 23, call 2: bias MMA (branch bias-mma) against main, plain launches, two interleaved
# rounds; then the mma.sync GPU tests on the bias build.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s23
export QGEMM_NO_PDL=1
run() {  # bin weight n k m tiles log
  QGEMM_CACHE_DIR=/tmp/qc_$1 timeout 150 $D/$1 tune --n $3 --k $4 --weight $2 --m $5 --tiles "$6" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 $2 ${3}x$4 M=$5 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/$7"; rm -f "$OUT/t.json"
}
m1="w4x1 t1 f1 s2 k512 waves4;w4x1 t1 f1 s4 k256 waves4"
m16="w4x1 t1 f2 s2 k512 waves4;w4x1 t1 f2 s4 k256 waves4"
for round in 1 2; do
  for bin in qgemm qgemm_bias; do
    for nk in "8192 8192" "28672 8192" "8192 28672"; do
      run $bin int4/g128/bf16 ${nk% *} ${nk#* } 1 "$m1" bias_ab_tune.log
      run $bin int4/g128/bf16 ${nk% *} ${nk#* } 16,32 "$m16" bias_ab_tune.log
    done
    run $bin int4/g128/bf16 10240 8192 16 "$m16" bias_ab_tune.log
    run $bin uint4/g128/bf16/zp 8192 8192 1 "$m1" bias_ab_tune.log
    run $bin uint4/g128/bf16/zp 8192 8192 16 "$m16" bias_ab_tune.log
  done
done
QGEMM_CACHE_DIR=/tmp/qc_t timeout 330 $D/qgemm_gpu_tests_bias \
  --gtest_filter='Formats/MmaGemmGpuTest.*:MmaGemmGpu.*:TunedPlanGpu.*' > "$OUT/bias_tests.log" 2>&1
echo "tests rc=$?"; grep -E "FAILED|PASSED|tests ran" "$OUT/bias_tests.log" | tail -15
