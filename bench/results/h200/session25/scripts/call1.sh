#!/usr/bin/env bash
# Session 25, call 1: two MMA chains per group on the 16-token tile (qgemm_v1) against main
# (qgemm_old), `qgemm tune`, plain launches; decode GPU tests on v1; SM clocks of the fused
# M = 1024 kernel against cuBLAS under sustained load.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s25
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
timeout 150 $D/gpu_tests_v1 --gtest_brief=1 \
  --gtest_filter='MmaGemmGpu.*:TunedPlanGpu.*:Formats/MmaGemmGpuTest.*' > "$OUT/gpu_tests_v1.log" 2>&1
echo "tests rc=$?"; grep -E "PASSED|FAILED|tests ran" "$OUT/gpu_tests_v1.log" | tail -8
export QGEMM_NO_PDL=1
run() {  # bin weight n k m tiles log
  QGEMM_CACHE_DIR=/tmp/qc_$1 timeout 90 $D/$1 tune --n $3 --k $4 --weight $2 --m $5 --tiles "$6" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 $2 ${3}x$4 M=$5 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/$7"; rm -f "$OUT/t.json"
}
L="w4x1 t1 f2 s2 k512 waves4"; S="w4x1 t1 f2 s4 k256 waves4"
for round in 1 2; do
for bin in qgemm_old qgemm_v1; do
  run $bin int4/g128/bf16 8192 8192 16 "$L;$S" chains_tune.log
  run $bin int4/g128/bf16 8192 8192 32 "$L" chains_tune.log
done
done
for bin in qgemm_old qgemm_v1; do
  run $bin int4/g128/bf16 28672 8192 16 "$L;$S" chains_tune.log
  run $bin int4/g128/bf16 4096 14336 16 "$L" chains_tune.log
  run $bin uint4/g128/bf16/zp 8192 8192 16 "$S" chains_tune.log
  run $bin int3/g128/bf16 8192 8192 16 "$S" chains_tune.log
done
unset QGEMM_NO_PDL
# Clocks: sample every 100 ms while a ~6 s bench of one backend runs.
for b in jit cublas; do
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 100 > "$OUT/clocks_$b.csv" &
  SMI=$!
  QGEMM_CACHE_DIR=/tmp/qc_qgemm_old timeout 120 $D/qgemm_old bench $D/m1024_$b.yaml --out "$OUT/m1024_$b.json" > "$OUT/m1024_$b.log" 2>&1
  kill $SMI
  echo "clocks $b: $(grep -E 'jit|cublas' "$OUT/m1024_$b.log" | tail -2 | tr -s ' ' | tr '\n' '|')"
  awk -F', ' '{print $2, $3}' "$OUT/clocks_$b.csv" | sort | uniq -c | sort -rn | head -6
done
