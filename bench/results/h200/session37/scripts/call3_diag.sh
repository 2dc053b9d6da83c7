#!/usr/bin/env bash
# Session 37, device call 3 (diagnostic build, branch s37-diag): where the 2-split 256-token
# tile's extra ~5 us at M = 256 go. QGEMM_DIAG bits compiled into the kernel: 1 no cluster sum
# (each split stores its own partial as C), 2 prefetch.tensormap of the four maps at the start,
# 4 no epilogue at all (the sums kept live). QGEMM_TUNE_NO_CHECK=1 times wrong results.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_NO_PDL=1 QGEMM_TUNE_NO_CHECK=1
t0=$(date +%s)
run() {  # diag m tiles
  QGEMM_DIAG=$1 QGEMM_CACHE_DIR=/tmp/qc_diag timeout 100 .device/diag/qgemm tune --n 8192 --k 8192 \
    --weight int4/g128/bf16 --m $2 --tiles "$3" --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "== diag $1 M=$2 rc=$? $(( $(date +%s) - t0 )) s"
  grep -E "^mma_gemm|error|rror" "$OUT/s.log" | sed 's/  */ /g'
  cat "$OUT/s.log" >> "$OUT/tune_call3_diag.log"; rm -f "$OUT/t.json"
}
P32="w8x1 t1 f32 s6 k64 waves1 ws ps tma"
P16="w8x1 t1 f16 s5 k128 waves2 ws ps tma"
for round in 1 2; do
  for d in 0 1 2 4 6; do run $d 256,512 "$P32"; done
done
for d in 0 1 2 4; do run $d 128 "$P16"; done
echo "diag total $(( $(date +%s) - t0 )) s"
# The planned-layer GPU suite on main's build (22ccaa5, the TMA planner), which session 36
# could run only 22 of 120 cases of. Carry .device/maintests.
QGEMM_CACHE_DIR=/tmp/qc_maintests timeout $(( 590 - ($(date +%s) - t0) )) \
  .device/maintests/qgemm_gpu_tests --gtest_filter='Formats/MmaGemmGpuTest.*' \
  > "$OUT/gpu_planned.log" 2>&1
echo "gpu tests rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED) |tests ran|Failure|Which is" "$OUT/gpu_planned.log" | head -30
grep -c "^\[       OK" "$OUT/gpu_planned.log"
