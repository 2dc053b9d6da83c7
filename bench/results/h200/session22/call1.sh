#!/usr/bin/env bash
# Session 22, call 1: the pushed cluster sum (st.async into the other CTAs' inboxes) against
# main ea7b905's pulled sum. (a) the GPU tests of the ws tiles and their cluster sums; (b) A/B
# `qgemm tune` of the planned ws tiles, plain launches, two interleaved rounds.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s22
timeout 240 $D/qgemm_gpu_tests --gtest_brief=1 \
  --gtest_filter='WgmmaGemm*:MmaGemmGpu.ClusterSplits*:MmaGemmGpu.TailSplit*:MmaGemmGpu.LlamaSized*:MmaGemmGpu.FloatZero*' \
  > "$OUT/push_tests.log" 2>&1
echo "tests rc=$?"; tail -4 "$OUT/push_tests.log"
f8="w8x1 t1 f8 s6 k128 waves1 ws"; f16="w8x1 t1 f16 s5 k128 waves1 ws"
export QGEMM_NO_PDL=1
run() {  # bin weight n k m tile
  QGEMM_CACHE_DIR=/tmp/qc timeout 100 $D/$1 tune --n $3 --k $4 --weight $2 --m $5 --tiles "$6" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 $2 ${3}x$4 M=$5 rc=$? :: $(grep -E '^mma_gemm|^expand' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/push_ab_tune.log"; rm -f "$OUT/t.json"
}
for round in 1 2; do
  for bin in qgemm_base qgemm; do
    run $bin int4/g128/bf16 8192 8192 33,64,128 "$f8"
    run $bin int4/g128/bf16 8192 8192 256 "$f16"
    run $bin uint4/g128/bf16/zp 8192 8192 64 "$f8"
    run $bin int8/channel/bf16 8192 8192 64 "$f8"
    run $bin int4/g128/bf16 4096 4096 64 "$f8"
    run $bin int4/g128/bf16 10240 8192 256 "$f16"
    run $bin int4/g128/bf16 2048 8192 128 "$f16"
  done
done
