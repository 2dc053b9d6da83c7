#!/usr/bin/env bash
# Session 29, call 2: (a) ws tiles with marked splits (" mk") now re-reading all marked pieces
# together until none is left, against the cluster sum; (b) the 16-token mma.sync tile with the
# same wait (QGEMM_EXP_POLL_TOGETHER=1, its own kernel cache) against main's wait (re-read once,
# then piece by piece). `qgemm tune`, plain launches, two rounds. Then the planned-layer GPU
# tests with each wait.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s29
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
export QGEMM_NO_PDL=1
run() {  # variant weight n k m tiles
  local v=$1; shift
  local envs="QGEMM_CACHE_DIR=/tmp/qc_s29_$v"
  [ "$v" = poll ] && envs="$envs QGEMM_EXP_POLL_TOGETHER=1"
  env $envs timeout 120 $D/qgemm tune --n $2 --k $3 --weight $1 --m $4 --tiles "$5" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$v $1 ${2}x$3 M=$4 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|') heur $(awk '$1 ~ /^[0-9]+$/ {print $(NF-1)}' "$OUT/s.log" | tr '\n' ' ')"
  cat "$OUT/s.log" >> "$OUT/tune_call2_$v.log"; rm -f "$OUT/t.json"
}
ab() { run main "$1" $2 $3 $4 "$5;$5 mk"; }
I4=int4/g128/bf16
F2="w4x1 t1 f2"
for round in 1 2; do
  ab $I4 8192 8192 64 "w8x1 t1 f8 s3 k256 waves1 splits2 ws"
  ab $I4 8192 28672 64 "w8x1 t1 f8 s3 k256 waves1 splits2 ws"
  ab $I4 4096 4096 64 "w8x1 t1 f8 s3 k256 waves1 splits4 ws"
  ab int3/g128/bf16 8192 8192 64 "w8x1 t1 f8 s5 k128 waves1 splits2 ws"
  for v in main poll; do
    run $v $I4 8192 8192 9,16,32 "$F2 s2 k512 waves4 splits2"
    run $v $I4 4096 4096 16 "$F2 s4 k256 waves4 splits3;$F2 s4 k256 waves4 splits4"
    run $v $I4 4096 14336 16 "$F2 s2 k512 waves4 splits4;$F2 s2 k512 waves4 splits6"
    run $v $I4 10240 8192 16 "$F2 s2 k512 waves4 splits2;$F2 s4 k256 waves4 splits3"
    run $v $I4 6144 8192 16 "$F2 s2 k512 waves4"
    run $v uint4/g128/bf16/zp 8192 8192 16 "$F2 s4 k256 waves4"
  done
done
for v in main poll; do
  envs="QGEMM_CACHE_DIR=/tmp/qc_s29t_$v"; [ "$v" = poll ] && envs="$envs QGEMM_EXP_POLL_TOGETHER=1"
  env $envs timeout 200 $D/qgemm_gpu_tests --gtest_brief=1 --gtest_filter='TunedPlanGpu.*' > "$OUT/gpu_tests_call2_$v.log" 2>&1
  echo "gpu $v rc=$? :: $(tail -3 "$OUT/gpu_tests_call2_$v.log" | tr '\n' '|')"
  grep -E "FAILED|Failure" -A6 "$OUT/gpu_tests_call2_$v.log" | head -30
done
