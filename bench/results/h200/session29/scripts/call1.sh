#!/usr/bin/env bash
# Session 29, call 1: warp-specialized tiles whose K splits sum through marked partials (" mk")
# against the same tile summed in a cluster, `qgemm tune` (checks every candidate against the
# reference before timing it), plain launches, two rounds. Then the 16-token split counts the
# notes list as misses, and the GPU tests of planned layers (with the new ws marked test).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s29
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
export QGEMM_NO_PDL=1 QGEMM_CACHE_DIR=/tmp/qc_s29
run() {  # weight n k m tiles
  timeout 120 $D/qgemm tune --n $2 --k $3 --weight $1 --m $4 --tiles "$5" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 ${2}x$3 M=$4 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|') heur $(awk '$1 ~ /^[0-9]+$/ {print $(NF-1)}' "$OUT/s.log" | tr '\n' ' ')"
  cat "$OUT/s.log" >> "$OUT/tune_call1.log"; rm -f "$OUT/t.json"
}
ab() { run "$1" $2 $3 $4 "$5;$5 mk"; }
I4=int4/g128/bf16
for round in 1 2; do
  ab $I4 8192 8192 64 "w8x1 t1 f8 s3 k256 waves1 splits2 ws"
  ab $I4 8192 8192 33 "w8x1 t1 f8 s3 k256 waves1 splits2 ws"
  ab $I4 8192 28672 64 "w8x1 t1 f8 s3 k256 waves1 splits2 ws"
  ab $I4 6144 8192 64 "w8x1 t1 f8 s3 k256 waves1 splits2 ws"
  ab $I4 4096 14336 128 "w8x1 t1 f8 s3 k256 waves1 splits2 ws"
  ab $I4 4096 14336 64 "w4x1 t1 f8 s3 k256 waves1 splits2 ws kw2"
  ab $I4 4096 4096 64 "w8x1 t1 f8 s3 k256 waves1 splits4 ws"
  ab uint4/g128/bf16/zp 8192 8192 64 "w8x1 t1 f8 s3 k256 waves1 splits2 ws"
  ab int8/channel/bf16 8192 8192 64 "w8x1 t1 f8 s6 k128 waves1 splits2 ws"
  ab int3/g128/bf16 8192 8192 64 "w8x1 t1 f8 s5 k128 waves1 splits2 ws"
  ab int4/g128/fp16 8192 8192 64 "w8x1 t1 f8 s3 k256 waves1 splits2 ws"
done
F2="w4x1 t1 f2"
run $I4 4096 4096 16 "$F2 s4 k256 waves4 splits3;$F2 s4 k256 waves4 splits4;$F2 s2 k512 waves4 splits2"
run $I4 10240 8192 16 "$F2 s4 k256 waves4 splits2;$F2 s4 k256 waves4 splits3;$F2 s2 k512 waves4 splits2;$F2 s2 k512 waves4 splits3"
run $I4 10240 8192 32 "$F2 s4 k256 waves4;$F2 s2 k512 waves4"
run $I4 5120 8192 32 "$F2 s4 k256 waves4;$F2 s2 k512 waves4"
run $I4 4096 14336 16 "$F2 s2 k512 waves4 splits3;$F2 s2 k512 waves4 splits4;$F2 s2 k512 waves4 splits6"
timeout 240 $D/qgemm_gpu_tests --gtest_brief=1 --gtest_filter='TunedPlanGpu.*' > "$OUT/gpu_tests_call1.log" 2>&1
echo "gpu rc=$? :: $(tail -3 "$OUT/gpu_tests_call1.log" | tr '\n' '|')"
grep -E "FAILED|Failure" -A6 "$OUT/gpu_tests_call1.log" | head -40
