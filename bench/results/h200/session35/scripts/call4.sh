#!/usr/bin/env bash
# Session 35, call 4: the 256-token tile's cluster sum at 129-256 tokens with 2 / 4 / 8 pieces
# per thread in flight (QGEMM_SUM_PIECES, compute threads only above 2), and with the global
# fix-up (QGEMM_SPLIT_CLUSTER=0); `qgemm tune`, plain, checked against the reference. Then the
# GPU tests of the wgmma tiles, planned layers, tuned plans and Linear with 8 pieces compiled in.
# Carry .device/s35 (the planner with the 256-token tile).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
B=.device/s35
export QGEMM_NO_PDL=1
t0=$(date +%s)
run() {  # pieces weight m tiles [n k]
  QGEMM_CACHE_DIR=/tmp/qc_p$1 QGEMM_KERNEL_DEFINES="#define QGEMM_SUM_PIECES $1" timeout 200 \
    $B/qgemm tune --n ${5:-8192} --k ${6:-8192} --weight $2 --m $3 --tiles "$4" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "[pieces $1] $2 M=$3 N=${5:-8192} K=${6:-8192} rc=$?"
  grep -E "^mma_gemm|^expand|error|fail" "$OUT/s.log" | sed 's/  */ /g'
  { echo "==== [pieces $1] $2 M=$3 N=${5:-8192} K=${6:-8192}"; cat "$OUT/s.log"; } >> "$OUT/tune_call4.log"; rm -f "$OUT/t.json"
}
F16="w8x1 t1 f16 s5 k128 waves2 ws ps"
F32="w8x1 t1 f32 s6 k64 waves1 ws ps"
for round in 1 2; do
  for pc in 2 4 8; do run $pc int4/g128/bf16 160,256 "$F16;$F32"; done
done
for pc in 2 8; do
  run $pc uint4/g128/bf16/zp 256 "$F32"
  run $pc int8/channel/bf16 256 "$F32"
  run $pc int4/g128/bf16 256 "$F32" 6144 8192
done
QGEMM_SPLIT_CLUSTER=0 run 2 int4/g128/bf16 256 "$F32"
echo "tune done $(( $(date +%s) - t0 )) s"
QGEMM_CACHE_DIR=/tmp/qc_p8 QGEMM_KERNEL_DEFINES="#define QGEMM_SUM_PIECES 8" timeout 330 \
  $B/qgemm_gpu_tests --gtest_filter='*WgmmaGemmGpu*:TunedPlanGpu.*:LinearGpu.*:MmaGemmGpu.*:Formats/MmaGemmGpuTest.*' > "$OUT/gpu_call4.log" 2>&1
echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |tests ran|FAILED|Failure" "$OUT/gpu_call4.log" | head -30
echo "total $(( $(date +%s) - t0 )) s"
