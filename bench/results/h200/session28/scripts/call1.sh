#!/usr/bin/env bash
# Session 28, call 1 (branch marked-partials): the 16-token tile's split-K through marked
# partials (QGEMM_MARKED_PARTIALS=2; layout 1 = per-thread float4, 2 = [split][token][row])
# against the counter protocol (unset), plain launches, qgemm tune (checks every candidate
# against the reference before timing it). Then the GPU tests of the mma.sync tiles per layout.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s28
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
export QGEMM_NO_PDL=1
run() {  # variant weight n k m tiles
  local v=$1; shift
  local envs=""
  case $v in off) envs="";; L1) envs="QGEMM_MARKED_PARTIALS=2 QGEMM_MARKED_LAYOUT=1";; L2) envs="QGEMM_MARKED_PARTIALS=2 QGEMM_MARKED_LAYOUT=2";; esac
  env $envs QGEMM_CACHE_DIR=/tmp/qc_s28_$v timeout 60 $D/qgemm tune --n $2 --k $3 --weight $1 --m $4 --tiles "$5" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$v $1 ${2}x$3 M=$4 rc=$? :: $(grep -E '^mma_gemm|wrong|rror|^[0-9]+ ' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/tune_$v.log"; rm -f "$OUT/t.json"
}
F2="w4x1 t1 f2"
for round in 1 2; do
  for v in off L1 L2; do
    run $v int4/g128/bf16 8192 8192 16 "$F2 s2 k512 waves4 splits2;$F2 s2 k512 waves4 splits3"
    run $v int4/g128/bf16 10240 8192 16 "$F2 s4 k256 waves4"
    run $v int4/g128/bf16 28672 8192 16 "$F2 s4 k256 waves4"
    run $v int4/g128/bf16 4096 4096 16 "$F2 s4 k256 waves4"
    run $v int4/g128/bf16 6144 8192 16 "$F2 s2 k512 waves4"
    run $v int4/g128/bf16 8192 28672 16 "$F2 s2 k512 waves4"
    run $v int4/g128/bf16 8192 8192 32 "$F2 s2 k512 waves4"
    run $v uint4/g128/bf16/zp 8192 8192 16 "$F2 s4 k256 waves4"
  done
done
for v in L1 L2; do
  env QGEMM_MARKED_PARTIALS=2 QGEMM_MARKED_LAYOUT=${v#L} QGEMM_CACHE_DIR=/tmp/qc_s28t_$v timeout 120 $D/qgemm_gpu_tests --gtest_brief=1 \
    --gtest_filter='TunedPlanGpu.*:MmaGemmGpu.*' > "$OUT/gpu_$v.log" 2>&1
  echo "gpu $v rc=$? :: $(tail -3 "$OUT/gpu_$v.log" | tr '\n' '|')"
done
