#!/usr/bin/env bash
# Staged in session 16 for session 17, call 1 (~2 min): main 7d317ec (.device/main16) against
# branch ws-arrive-early (.device/ae: the ws cluster sum arrives at its closing barrier once its
# remote reads are done, then stores the last pass's pieces, then waits). Non-ws kernels are
# SASS-identical in both. Prediction: int4/g128 8192^2 M = 64 22.6 -> 22.2-22.4 us (the last
# pass's 16-byte stores overlap the barrier; session 16 put ~1.1 us in the two cluster
# barriers); M = 128 / 256 (no splits) unchanged. Then the cluster GPU tests on the branch.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_NO_PDL=1
T='w8x1 t1 f8 s3 k256 waves1 ws'
for round in 1 2; do
  for b in main16 ae; do
    for c in "int4/g128/bf16 8192 8192 64,128" "uint4/g128/bf16/zp 8192 8192 64" "int8/channel/bf16 8192 8192 64" "int4/g128/bf16 4096 4096 64"; do
      set -- $c
      QGEMM_CACHE_DIR=/tmp/qc_$b timeout 40 .device/$b/qgemm tune --weight $1 --n $2 --k $3 --m $4 --tiles "$T" --out "$OUT/t.json" > "$OUT/s.log" 2>&1
      echo "$round $b $1 N=$2 K=$3 M=$4: $(grep -E '^mma_gemm' "$OUT/s.log" | head -1) wrong=$(grep -c wrong "$OUT/s.log")"
    done
  done
done | tee "$OUT/arrive_early_ab.log"
rm -f "$OUT/s.log" "$OUT/t.json"
timeout 150 .device/ae/qgemm_gpu_tests --gtest_filter='*Cluster*:*TailSplit*:*Llama*:WgmmaGemmGpu.*' > "$OUT/gpu_subset_ae.log" 2>&1
echo "== gpu subset (ae) rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/gpu_subset_ae.log" | head
