#!/usr/bin/env bash
# Session 37, device call 1: multicast pairs (tile part " mc2") and the TMA tiles without the
# per-stage proxy fence, against main (22ccaa5). Carry .device/main (main's build/qgemm) and
# .device/mc2 (this build's qgemm). `qgemm tune`, plain launches, every candidate checked
# against the CPU reference, interleaved rounds.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_NO_PDL=1
t0=$(date +%s)
run() {  # build weight m tiles [n k extra]
  QGEMM_CACHE_DIR=/tmp/qc_$1 timeout 150 .device/$1/qgemm tune --n ${5:-8192} --k ${6:-8192} \
    --weight $2 --m $3 --tiles "$4" --repetitions 21 --out "$OUT/t.json" ${7:-} > "$OUT/s.log" 2>&1
  echo "== $1 $2 M=$3 N=${5:-8192} K=${6:-8192} rc=$? $(( $(date +%s) - t0 )) s"
  grep -E "^mma_gemm|^expand|error|rror|fail|mismatch" "$OUT/s.log" | sed 's/  */ /g'
  cat "$OUT/s.log" >> "$OUT/tune_call1.log"; rm -f "$OUT/t.json"
}
P32="w8x1 t1 f32 s6 k64 waves1 ws ps tma"
P16="w8x1 t1 f16 s5 k128 waves2 ws ps tma"
K32="w4x1 t1 f32 s6 k64 waves1 splits1 ws kw2 ps tma"
M32="w4x1 t1 f32 s6 k64 waves1 ws kw2 ps tma mc2"
W32="w8x1 t1 f32 s6 k64 waves1 ws ps tma mc2"
for round in 1 2; do
  run main int4/g128/bf16 160,256 "$P32"
  run mc2 int4/g128/bf16 160,256 "$P32;$K32;$M32;$W32"
done
run main int4/g128/bf16 128,512,1024,4096 "$P16;$P32"
run mc2 int4/g128/bf16 128,512,1024,4096 "$P16;$P32;$W32"
run mc2 int4/g128/bf16 1024,4096 "$M32"
run mc2 uint4/g128/bf16/zp 256 "$P32;$M32"
run mc2 int8/channel/bf16 256 "$P32;$M32"
run mc2 int4/g128/bf16 256 "$P32;$M32;$W32" 28672 8192
run mc2 int4/g128/bf16 256 "$P32;$M32" 10240 8192
echo "total $(( $(date +%s) - t0 )) s"
# Correctness of the multicast tiles (the wgmma table and odd shapes; .device/mc2 carries the
# GPU test binary of this build).
QGEMM_CACHE_DIR=/tmp/qc_tests timeout $(( 590 - ($(date +%s) - t0) )) .device/mc2/qgemm_gpu_tests \
  --gtest_filter='Formats/WgmmaGemmGpuTest.*:WgmmaGemmGpu.OddShapesWithChannelScales' \
  > "$OUT/gpu_wgmma.log" 2>&1
echo "gpu tests rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED) |tests ran|Failure|Which is|mc2" "$OUT/gpu_wgmma.log" | head -30
