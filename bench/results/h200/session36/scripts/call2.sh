#!/usr/bin/env bash
# Session 36, call 2: TMA activation copies (tile part " tma") in the ws tiles. First the wgmma
# GPU tests with TMA tiles in their table; then `qgemm tune` A/Bs, plain launches, every
# candidate checked against the reference: the 256-token ps tile with and without TMA, the
# 64-row 256-token kw2 tile (unsplit at M = 256) with and without, the 128-token ps tile, the
# 64-token tile. Carry .device/s36.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
B=.device/s36
export QGEMM_NO_PDL=1 QGEMM_CACHE_DIR=/tmp/qc_s36
t0=$(date +%s)
timeout 150 $B/qgemm_gpu_tests \
  --gtest_filter='Formats/WgmmaGemmGpuTest.*:WgmmaGemmGpu.OddShapesWithChannelScales' \
  > "$OUT/gpu_call2.log" 2>&1
echo "gpu tests rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED) |tests ran|FAILED|Failure" "$OUT/gpu_call2.log" | head -20
run() {  # weight m tiles [n k]
  timeout 200 $B/qgemm tune --n ${4:-8192} --k ${5:-8192} --weight $1 --m $2 --tiles "$3" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 M=$2 N=${4:-8192} K=${5:-8192} rc=$?"
  grep -E "^mma_gemm|^expand|error|fail" "$OUT/s.log" | sed 's/  */ /g'
  { echo "==== $1 M=$2 N=${4:-8192} K=${5:-8192}"; cat "$OUT/s.log"; } >> "$OUT/tune_call2.log"; rm -f "$OUT/t.json"
}
F32="w8x1 t1 f32 s6 k64 waves1 ws ps"
F32T="w8x1 t1 f32 s6 k64 waves1 ws ps tma"
KW2="w4x1 t1 f32 s6 k64 waves1 splits1 ws kw2 ps"
KW2T="w4x1 t1 f32 s6 k64 waves1 splits1 ws kw2 ps tma"
F16="w8x1 t1 f16 s5 k128 waves2 ws ps"
F16T="w8x1 t1 f16 s5 k128 waves2 ws ps tma"
F8="w8x1 t1 f8 s3 k256 waves1 ws"
F8T="w8x1 t1 f8 s3 k256 waves1 ws tma"
run int4/g128/bf16 256,512,1024 "$F32;$F32T;$KW2;$KW2T;$F16;$F16T"
run int4/g128/bf16 256,1024 "$F32;$F32T;$KW2T"
run int4/g128/bf16 64 "$F8;$F8T;$F16;$F16T"
run int4/g128/bf16 2048,4096 "$F32;$F32T"
for w in uint4/g128/bf16/zp int8/channel/bf16 e2m1/g32/ue8m0; do
  run $w 256,1024 "$F32;$F32T;$KW2T"
done
echo "total $(( $(date +%s) - t0 )) s"
