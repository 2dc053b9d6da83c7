#!/usr/bin/env bash
# Session 34, call 1: prescaled ws tiles (" ps": group scales multiply the decoded weights in
# bf16, no partial sums, no flush, no stage-end drain; a stage's slot is released after the next
# stage's first batch) against main's tiles. WgmmaGemmGpu.* first (its table has three ps tiles),
# then `qgemm tune`, plain launches, two interleaved rounds on the M = 256 / 1024 layer; every
# candidate is checked against the reference before it is timed. Carry .device/ps.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
B=.device/ps
export QGEMM_NO_PDL=1 QGEMM_CACHE_DIR=/tmp/qc_ps
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
t0=$(date +%s)
timeout 240 $B/qgemm_gpu_tests --gtest_filter='*WgmmaGemmGpu*' > "$OUT/gpu_wgmma.log" 2>&1
echo "WgmmaGemmGpu rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]' "$OUT/gpu_wgmma.log" | tr '\n' '|')"
grep -E "Failure| ps sm_90a|rel_frob|Which is" "$OUT/gpu_wgmma.log" | head -20
run() {  # weight m tiles
  timeout 150 $B/qgemm tune --n 8192 --k 8192 --weight $1 --m $2 --tiles "$3" --repetitions 21 \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 M=$2 rc=$?"; grep -E "^mma_gemm|^expand|error|fail" "$OUT/s.log" | sed 's/  */ /g'
  cat "$OUT/s.log" >> "$OUT/tune_ps.log"; rm -f "$OUT/t.json"
}
G="w8x1 t1 f16 s5 k128 waves2 ws;w8x1 t1 f16 s5 k128 waves2 ws ps"
for round in 1 2; do
  run int4/g128/bf16 256,512,1024 "$G"
  run int4/channel/bf16 256,1024 "$G"
done
run int4/g128/bf16 64,128 "w8x1 t1 f8 s3 k256 waves1 ws;w8x1 t1 f8 s6 k128 waves1 ws ps;w8x1 t1 f8 s3 k256 waves1 ws ps"
run uint4/g128/bf16/zp 256 "$G"
run e2m1/g32/ue8m0 256 "w8x1 t1 f8 s6 k128 waves2 ws;w8x1 t1 f8 s6 k128 waves2 ws ps"
run int8/channel/bf16 256 "$G"
run int4/g128/bf16 4096 "$G"
echo "total $(( $(date +%s) - t0 )) s"
