#!/usr/bin/env bash
# Session 28, call 3: the final build of branch marked-partials (16-token tile: marked partials,
# batched re-read; fewer splits where the busiest SM's stages drop 10%) against session 27's main
# binary: `qgemm tune`'s heuristic-plan time (its last column), plain launches, one round. Then
# the planned-layer and mma GPU tests (with the new marked-partials test).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s28
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
export QGEMM_NO_PDL=1
run() {  # binary weight n k ms
  QGEMM_CACHE_DIR=/tmp/qc_s28_$1 timeout 60 $D/$1 tune --n $3 --k $4 --weight $2 --m $5 --tiles "w4x1 t1 f2 s4 k256 waves4" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 $2 ${3}x$4 rc=$? :: $(awk '$1 ~ /^[0-9]+$/ {print "M="$1" plan "$(NF-1)}' "$OUT/s.log" | tr '\n' ' ') $(grep -E 'wrong|rror' "$OUT/s.log" | head -2)"
  cat "$OUT/s.log" >> "$OUT/ab_$1.log"; rm -f "$OUT/t.json"
}
for b in qgemm_main qgemm; do
  run $b int4/g128/bf16 8192 8192 9,16,32
  run $b int4/g128/bf16 10240 8192 16
  run $b int4/g128/bf16 4096 4096 16
  run $b int4/g128/bf16 6144 8192 16
  run $b int4/g128/bf16 4096 14336 16
  run $b int4/g128/bf16 8192 28672 16
  run $b int4/g128/bf16 28672 8192 16
  run $b uint4/g128/bf16/zp 8192 8192 16
  run $b int3/g128/bf16 8192 8192 16
  run $b mxfp4 8192 8192 16
done
QGEMM_CACHE_DIR=/tmp/qc_s28t timeout 200 $D/qgemm_gpu_tests --gtest_brief=1 \
  --gtest_filter='TunedPlanGpu.*:MmaGemmGpu.*' > "$OUT/gpu_tests.log" 2>&1
echo "gpu rc=$? :: $(tail -3 "$OUT/gpu_tests.log" | tr '\n' '|')"
grep -E "FAILED|Failure" -A5 "$OUT/gpu_tests.log" | head -30
