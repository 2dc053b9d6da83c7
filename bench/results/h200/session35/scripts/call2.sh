#!/usr/bin/env bash
# Session 35, call 2: 256-token prescaled tiles (w8x1 f32, 64-K stages, one batch of wgmmas per
# stage: QGEMM_PS_STAGE_BATCH in the working build) against the 128-token ps tile and the hand-off
# at M = 512-4096; `qgemm tune`, plain, every candidate checked against the reference.
# Carry .device/s35.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
B=.device/s35
export QGEMM_NO_PDL=1 QGEMM_CACHE_DIR=/tmp/qc_sb QGEMM_KERNEL_DEFINES="#define QGEMM_PS_STAGE_BATCH 1"
t0=$(date +%s)
run() {  # weight m tiles [n k]
  timeout 200 $B/qgemm tune --n ${4:-8192} --k ${5:-8192} --weight $1 --m $2 --tiles "$3" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 M=$2 N=${4:-8192} K=${5:-8192} rc=$?"
  grep -E "^mma_gemm|^expand|error|fail" "$OUT/s.log" | sed 's/  */ /g'
  { echo "==== $1 M=$2 N=${4:-8192} K=${5:-8192}"; cat "$OUT/s.log"; } >> "$OUT/tune_call2.log"; rm -f "$OUT/t.json"
}
F16="w8x1 t1 f16 s5 k128 waves2 ws ps"
F32="w8x1 t1 f32 s6 k64 waves2 ws ps"
F32b="w8x1 t1 f32 s5 k64 waves2 ws ps"
for round in 1 2; do
  run int4/g128/bf16 512,1024,2048,4096 "$F16;$F32;$F32b"
done
for w in int4/channel/bf16 uint4/g128/bf16/zp e2m1/g32/ue8m0 int8/channel/bf16 e4m3/b128x128/fp32 int8/g128/bf16; do
  run $w 512,1024,4096 "$F16;$F32"
done
run int4/g128/bf16 1024,4096 "$F16;$F32" 28672 8192
run int4/g128/bf16 1024,4096 "$F16;$F32" 8192 28672
run int4/g128/bf16 1024 "$F16;$F32" 4096 4096
echo "total $(( $(date +%s) - t0 )) s"
