#!/usr/bin/env bash
# Session 37, device call 4: prescaled split pairs trading bf16 halves (kBf16PairSum) against
# main (22ccaa5). Carry .device/main (main's qgemm) and .device/bx (this build's qgemm and GPU
# tests). `qgemm tune`, plain launches, every candidate checked; then the wgmma GPU table (its
# prescaled tiles now also in 2 splits, global and as a cluster pair) and odd shapes.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_NO_PDL=1
t0=$(date +%s)
run() {  # build weight m tiles [n k]
  QGEMM_CACHE_DIR=/tmp/qc_$1 timeout 100 .device/$1/qgemm tune --n ${5:-8192} --k ${6:-8192} \
    --weight $2 --m $3 --tiles "$4" --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "== $1 $2 M=$3 N=${5:-8192} K=${6:-8192} rc=$? $(( $(date +%s) - t0 )) s"
  grep -E "^mma_gemm|error|rror|wrong" "$OUT/s.log" | sed 's/  */ /g'
  cat "$OUT/s.log" >> "$OUT/tune_call4.log"; rm -f "$OUT/t.json"
}
P32="w8x1 t1 f32 s6 k64 waves1 ws ps tma"
P16="w8x1 t1 f16 s5 k128 waves2 ws ps tma"
for b in main bx main bx; do run $b int4/g128/bf16 160,256 "$P32"; done
for b in main bx; do run $b int4/g128/bf16 96,128 "$P16"; done
for b in main bx; do run $b uint4/g128/bf16/zp 256 "$P32"; done
echo "tune total $(( $(date +%s) - t0 )) s"
QGEMM_CACHE_DIR=/tmp/qc_tests timeout $(( 590 - ($(date +%s) - t0) )) .device/bx/qgemm_gpu_tests \
  --gtest_filter='Formats/WgmmaGemmGpuTest.*:WgmmaGemmGpu.OddShapesWithChannelScales' \
  > "$OUT/gpu_wgmma.log" 2>&1
echo "gpu tests rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED) |tests ran|Failure|Which is" "$OUT/gpu_wgmma.log" | head -30
