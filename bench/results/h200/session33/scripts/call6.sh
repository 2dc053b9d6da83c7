#!/usr/bin/env bash
# Session 33, call 6: token halves (" th": the 128-token ws tile's wgmmas as two 64-token
# halves, each flushed while the other runs; 64-K stages) against main's tiles, `qgemm tune`,
# plain, two rounds, every candidate checked against the reference; then WgmmaGemmGpu.* (its
# table has a th tile). Carry .device/th.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
B=.device/th
export QGEMM_NO_PDL=1 QGEMM_CACHE_DIR=/tmp/qc_th
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
run() {  # weight m tiles
  timeout 150 $B/qgemm tune --n 8192 --k 8192 --weight $1 --m $2 --tiles "$3" --repetitions 21 \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 M=$2 rc=$?"; grep -E "^mma_gemm|^expand|error|fail" "$OUT/s.log" | sed 's/  */ /g'
  cat "$OUT/s.log" >> "$OUT/tune_th.log"; rm -f "$OUT/t.json"
}
G="w8x1 t1 f16 s5 k128 waves2 ws;w8x1 t1 f16 s8 k64 waves2 ws th;w8x1 t1 f16 s8 k64 waves2 ws"
for round in 1 2; do
  run int4/g128/bf16 256,1024 "$G"
done
run uint4/g128/bf16/zp 256 "$G"
run int4/g128/fp16 256 "$G"
run int4/g128/bf16 512,4096 "$G"
t0=$(date +%s)
timeout 200 $B/qgemm_gpu_tests --gtest_filter='*WgmmaGemmGpu*' > "$OUT/gpu_wgmma.log" 2>&1
echo "WgmmaGemmGpu rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]' "$OUT/gpu_wgmma.log" | tr '\n' '|')"
grep -E "Failure|th sm_90a" -A4 "$OUT/gpu_wgmma.log" | head -20
