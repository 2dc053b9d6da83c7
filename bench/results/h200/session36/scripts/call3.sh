#!/usr/bin/env bash
# Session 36, call 3: TMA copies of the weights and their tables too (" tmaw": the copy
# warpgroup is one thread issuing boxes, 72 registers, the compute warpgroups 216). The wgmma GPU
# tests with tma / tmaw tiles in their table; then `qgemm tune` A/Bs, plain launches, every
# candidate checked against the reference: tma against tmaw on the 256-token ps tile over
# M = 256-8192 (against the hand-off), the 128-token tiles with TMA at the 65-384 buckets,
# other formats, fp16 layers. Carry .device/s36.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
B=.device/s36
export QGEMM_NO_PDL=1 QGEMM_CACHE_DIR=/tmp/qc_s36
t0=$(date +%s)
timeout 150 $B/qgemm_gpu_tests \
  --gtest_filter='Formats/WgmmaGemmGpuTest.*:WgmmaGemmGpu.OddShapesWithChannelScales' \
  > "$OUT/gpu_call3.log" 2>&1
echo "gpu tests rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED) |tests ran|FAILED|Failure" "$OUT/gpu_call3.log" | head -20
run() {  # weight m tiles [n k] [extra args]
  timeout 200 $B/qgemm tune --n ${4:-8192} --k ${5:-8192} --weight $1 --m $2 --tiles "$3" \
    --repetitions 21 --out "$OUT/t.json" ${6:-} > "$OUT/s.log" 2>&1
  echo "$1 M=$2 N=${4:-8192} K=${5:-8192} ${6:-} rc=$?"
  grep -E "^mma_gemm|^expand|error|fail" "$OUT/s.log" | sed 's/  */ /g'
  { echo "==== $1 M=$2 N=${4:-8192} K=${5:-8192} ${6:-}"; cat "$OUT/s.log"; } >> "$OUT/tune_call3.log"; rm -f "$OUT/t.json"
}
F32T="w8x1 t1 f32 s6 k64 waves1 ws ps tma"
F32TW="w8x1 t1 f32 s6 k64 waves1 ws ps tma tmaw"
F16="w8x1 t1 f16 s5 k128 waves2 ws ps"
F16T="w8x1 t1 f16 s5 k128 waves2 ws ps tma"
F16TW="w8x1 t1 f16 s5 k128 waves2 ws ps tma tmaw"
for round in 1 2; do
  run int4/g128/bf16 256,512,1024 "$F32T;$F32TW"
done
run int4/g128/bf16 2048,4096,8192 "$F32T;$F32TW"
run int4/g128/bf16 96,128,160,192,320,384 "$F16;$F16T;$F16TW;$F32T;$F32TW"
for w in uint4/g128/bf16/zp int8/channel/bf16 e2m1/g32/ue8m0 e2m1/g16/e4m3/global; do
  run $w 256,1024,2048,4096 "$F32T;$F32TW"
done
NP="w8x1 t1 f16 s5 k128 waves2 ws"
run int4/g128/fp16 64,256,1024 "$NP;$NP tma;$NP tma tmaw" 8192 8192 "--act fp16 --out-type fp16"
run int4/g128/bf16 256,1024 "$F32T;$F32TW" 28672 8192
run int4/g128/bf16 256,1024 "$F32T;$F32TW" 4096 4096
echo "total $(( $(date +%s) - t0 )) s"
