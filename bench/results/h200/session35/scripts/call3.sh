#!/usr/bin/env bash
# Session 35, call 3: the 256-token prescaled tile (f32, built in: a batch of wgmmas per 64-K
# stage) against the 128-token ps tile at 129-384 tokens (2 K splits in a cluster at <= 256) and
# against the hand-off at 2048-4096; other shapes; then the wgmma GPU tests with the 256-token
# tile in their table. `qgemm tune`, plain launches, every candidate checked against the
# reference. Carry .device/s35.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
B=.device/s35
export QGEMM_NO_PDL=1 QGEMM_CACHE_DIR=/tmp/qc_s35
t0=$(date +%s)
run() {  # weight m tiles [n k]
  timeout 200 $B/qgemm tune --n ${4:-8192} --k ${5:-8192} --weight $1 --m $2 --tiles "$3" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 M=$2 N=${4:-8192} K=${5:-8192} rc=$?"
  grep -E "^mma_gemm|^expand|error|fail" "$OUT/s.log" | sed 's/  */ /g'
  { echo "==== $1 M=$2 N=${4:-8192} K=${5:-8192}"; cat "$OUT/s.log"; } >> "$OUT/tune_call3.log"; rm -f "$OUT/t.json"
}
F16="w8x1 t1 f16 s5 k128 waves2 ws ps"
F32="w8x1 t1 f32 s6 k64 waves1 ws ps"
F32s1="w8x1 t1 f32 s6 k64 waves1 splits1 ws ps"
for round in 1 2; do
  run int4/g128/bf16 160,192,256,320,384 "$F16;$F32;$F32s1"
done
for w in int4/channel/bf16 uint4/g128/bf16/zp e2m1/g32/ue8m0 int8/channel/bf16 e2m1/g16/e4m3/global; do
  run $w 256 "$F16;$F32"
done
run int4/g128/bf16 2048,3072,4096 "$F16;$F32"
run e2m1/g32/ue8m0 2048 "$F32"
run int4/g128/bf16 256,512,1024 "$F16;$F32" 4096 4096
run int4/g128/bf16 256,512,1024 "$F16;$F32" 14336 4096
run int4/g128/bf16 256,512 "$F16;$F32" 28672 8192
run int4/g128/bf16 300,1000 "$F16;$F32" 8200 8320
echo "tune done $(( $(date +%s) - t0 )) s"
timeout 300 $B/qgemm_gpu_tests --gtest_filter='WgmmaGemmGpu*' > "$OUT/gpu_wgmma.log" 2>&1
echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |tests ran|FAILED|Failure" "$OUT/gpu_wgmma.log" | head -20
echo "total $(( $(date +%s) - t0 )) s"
