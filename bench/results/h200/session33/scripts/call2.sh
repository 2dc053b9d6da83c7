#!/usr/bin/env bash
# Session 33, call 2: Nsight Compute's full set for cuBLAS's BF16 kernel at M = 256 and 1024
# (qdq backend: dequantize, then cuBLASLt; only the GEMM is profiled) and for our f16 ws tile
# at M = 256 (int4/g128, int4/channel), 8192^2, plain launches; then per-SASS stall samples of
# the M = 256 tile. What tile, grid, clock and pipe utilization does cuBLAS reach where we miss?
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
BIN=${BIN:-.device/next/main}
export QGEMM_NO_PDL=1 QGEMM_CACHE_DIR=/tmp/qc_ncu
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
echo "ncu: $ncu"
prof() {  # name backend weight m regex
  echo "==== $1: $2 $3 M=$4 8192^2 /$5/" >> "$OUT/ncu.log"
  timeout 100 "$ncu" --clock-control none --set full -k "regex:$5" -c 1 "$BIN/qgemm" verify \
    --backend "$2" --weight "$3" --m "$4" --n 8192 --k 8192 --check-rows 8 >> "$OUT/ncu.log" 2>&1
  echo "$1 rc=$?"
}
prof cublas_m256 qdq int4/g128/bf16 256 'nvjet|xmma|cutlass|sm90|gemm'
prof cublas_m1024 qdq int4/g128/bf16 1024 'nvjet|xmma|cutlass|sm90|gemm'
prof ws_g128_m256 jit int4/g128/bf16 256 mma_gemm
prof ws_channel_m256 jit int4/channel/bf16 256 mma_gemm
grep -E "^==== |^  [a-zA-Z_].*\(|Duration|SM Frequency|Elapsed Cycles|SM Active Cycles|Compute \(SM\) Throughput|Memory Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|Registers Per|Grid Size|Block Size|Dynamic Shared|Cluster Size|Issue Slots Busy|Executed Ipc Active|Achieved Occupancy|Theoretical Occupancy|No Eligible|Eligible Warps" "$OUT/ncu.log" | head -150
timeout 100 "$ncu" --clock-control none --set full --import-source no --page source --print-source sass \
  --csv -k regex:mma_gemm -c 1 "$BIN/qgemm" verify --backend jit --weight int4/g128/bf16 --m 256 \
  --n 8192 --k 8192 --check-rows 8 > "$OUT/sass_m256.csv" 2> "$OUT/sass_m256.err"
echo "sass m256 rc=$? $(wc -c < "$OUT/sass_m256.csv") bytes"
