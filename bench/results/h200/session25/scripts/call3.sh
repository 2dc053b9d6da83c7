#!/usr/bin/env bash
# Session 25, call 3: the split-K fix-up where the last split sums (waits for the others'
# release arrivals with acquire loads, no atomic round trip of its own) against main: split-K
# GPU tests on the new build, then `qgemm tune` A/B, plain launches.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s25
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
timeout 170 $D/gpu_tests_new --gtest_brief=1 --gtest_filter='MmaGemmGpu.*:TunedPlanGpu.*' \
  > "$OUT/gpu_tests_new.log" 2>&1
echo "tests rc=$?"; grep -E "PASSED|FAILED|tests ran" "$OUT/gpu_tests_new.log" | tail -8
export QGEMM_NO_PDL=1
run() {  # bin weight n k m tiles log
  QGEMM_CACHE_DIR=/tmp/qc_$1 timeout 90 $D/$1 tune --n $3 --k $4 --weight $2 --m $5 --tiles "$6" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 $2 ${3}x$4 M=$5 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/$7"; rm -f "$OUT/t.json"
}
L1="w4x1 t1 f1 s2 k512 waves4"; S1="w4x1 t1 f1 s4 k256 waves4"; L2="w4x1 t1 f2 s2 k512 waves4"
for round in 1 2; do
for bin in qgemm_old qgemm_new; do
  run $bin int4/g128/bf16 8192 8192 1 "$L1" fixup_tune.log
  run $bin uint4/g128/bf16/zp 8192 8192 1 "$S1" fixup_tune.log
  run $bin int4/g128/bf16 8192 8192 16 "$L2" fixup_tune.log
done
done
for bin in qgemm_old qgemm_new; do
  run $bin int4/g128/bf16 4096 14336 1 "$L1" fixup_tune.log
  run $bin int4/g128/bf16 10240 8192 16 "w4x1 t1 f2 s4 k256 waves4" fixup_tune.log
  run $bin int8/channel/bf16 8192 8192 1 "w4x1 t1 f1 s3 k256 waves4" fixup_tune.log
  run $bin int3/g128/bf16 8192 8192 1 "$L1" fixup_tune.log
done
