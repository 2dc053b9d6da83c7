#!/usr/bin/env bash
# Session 24, call 1: zero points folded with operand broadcasts (no PRMT, one fma per row pair).
# GPU tests of every zero-point format on the new build; `qgemm tune` A/B main 435322a (qgemm_old)
# against the change (qgemm_new), plain launches; 16-token tile stage variants.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s24
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
timeout 200 $D/qgemm_gpu_tests --gtest_brief=1 \
  --gtest_filter='*uint*:*zp*:*Zero*:MmaDequant*:TunedPlanGpu.*:LinearGpu.*:MmaGemmGpu.LongDecodeStagesOnLongRows:MmaGemmGpu.LlamaSizedLayer' \
  > "$OUT/gpu_zp_tests.log" 2>&1
echo "tests rc=$?"; grep -E "PASSED|FAILED|tests ran" "$OUT/gpu_zp_tests.log" | tail -8
export QGEMM_NO_PDL=1
run() {  # bin weight n k m tiles log
  QGEMM_CACHE_DIR=/tmp/qc_$1 timeout 90 $D/$1 tune --n $3 --k $4 --weight $2 --m $5 --tiles "$6" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 $2 ${3}x$4 M=$5 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/$7"; rm -f "$OUT/t.json"
}
S="w4x1 t1 f1 s4 k256 waves4"; L="w4x1 t1 f1 s2 k512 waves4"
for round in 1 2; do
for bin in qgemm_old qgemm_new; do
  run $bin uint4/g128/bf16/zp 8192 8192 1 "$S;$L;$L splits3;$L splits4" zp_ab_tune.log
  run $bin int4/g128/bf16 8192 8192 1 "$L" zp_ab_tune.log
done
done
for bin in qgemm_old qgemm_new; do
  run $bin uint4/g128/bf16/zp 6144 8192 1 "$S;$L" zp_ab_tune.log
  run $bin uint4/g128/bf16/zp 28672 8192 1 "$S;$L" zp_ab_tune.log
  run $bin uint4/g128/bf16/zp 8192 8192 16 "w4x1 t1 f2 s4 k256 waves4" zp_ab_tune.log
  run $bin uint4/g128/bf16/zp 8192 8192 64 "w8x1 t1 f8 s3 k256 ws" zp_ab_tune.log
  run $bin uint4/g128/fp16/zp 8192 8192 1 "$S" zp_ab_tune.log
  run $bin uint3/g128/bf16/zp 8192 8192 1 "$S" zp_ab_tune.log
done
F="w4x1 t1 f2 s2 k512 waves4"; F3="w4x1 t1 f2 s3 k512 waves4"
run qgemm_new int4/g128/bf16 8192 8192 16 "$F;$F3;$F3 splits1;$F3 splits3;w4x1 t1 f2 s6 k256 waves4" m16_tune.log
run qgemm_new int4/g128/bf16 8192 28672 16 "$F;$F3" m16_tune.log
