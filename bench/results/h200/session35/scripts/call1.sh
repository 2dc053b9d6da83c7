#!/usr/bin/env bash
# Session 35, call 1: prescaled stages as one batch of wgmmas (QGEMM_PS_STAGE_BATCH in this
# session's working build, not kept) against main's per-unit batches (256-K prescaled stages
# were dropped before the run: they spill); `qgemm tune`, plain
# launches, every candidate checked against the reference. Then the wgmma GPU tests with the
# variant compiled in. Carry .device/s35.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
B=.device/s35
export QGEMM_NO_PDL=1
t0=$(date +%s)
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 200 > "$OUT/clocks.log" 2>&1 &
smi=$!
run() {  # variant weight m tiles [n k]
  local defs=""
  case $1 in
    base) defs="" ;;
    sb) defs="#define QGEMM_PS_STAGE_BATCH 1" ;;
  esac
  QGEMM_CACHE_DIR=/tmp/qc_$1 QGEMM_KERNEL_DEFINES="$defs" timeout 150 $B/qgemm tune \
    --n ${5:-8192} --k ${6:-8192} --weight $2 --m $3 --tiles "$4" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "[$1] $2 M=$3 N=${5:-8192} K=${6:-8192} rc=$?"
  grep -E "^mma_gemm|^expand|error|fail" "$OUT/s.log" | sed 's/  */ /g'
  { echo "==== [$1] $2 M=$3"; cat "$OUT/s.log"; } >> "$OUT/tune_call1.log"; rm -f "$OUT/t.json"
}
P="w8x1 t1 f16 s5 k128 waves2 ws ps"

for round in 1 2; do
  for v in base sb; do
    run $v int4/g128/bf16 256,1024 "$P"
  done
done
for v in base sb; do
  run $v int4/channel/bf16 256,1024 "$P"
  run $v uint4/g128/bf16/zp 256 "$P"
  run $v e2m1/g32/ue8m0 64,256 "w8x1 t1 f8 s6 k128 waves1 ws ps;$P"
  run $v int8/g128/bf16 256 "$P"
  run $v int2/g128/bf16 256 "$P"
  run $v int4/g128/bf16 512,4096 "$P"
done
echo "tune done $(( $(date +%s) - t0 )) s"
QGEMM_CACHE_DIR=/tmp/qc_sb QGEMM_KERNEL_DEFINES="#define QGEMM_PS_STAGE_BATCH 1" timeout 200 \
  $B/qgemm_gpu_tests --gtest_filter='WgmmaGemmGpu.*:TunedPlanGpu.*:LinearGpu.*' > "$OUT/gpu_sb.log" 2>&1
echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |tests ran|FAILED" "$OUT/gpu_sb.log" | head -20
kill $smi
echo "total $(( $(date +%s) - t0 )) s"
