#!/usr/bin/env bash
# Session 14 call 9 (for session 15): ncu raw counters of the decode tiles, int4/g128 8192^2,
# M = 1 (8-token tile) and M = 16 (16-token tile): is the compute they add issue-bound?
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -z "$ncu" ] && { echo "ncu not found"; exit 1; }
for m in 1 16; do
  QGEMM_DISABLE_DISK_CACHE=1 timeout 100 "$ncu" --clock-control none --set full --page raw --csv \
    -k regex:mma_gemm -c 1 .device/main14/qgemm verify --backend jit --weight int4/g128/bf16 \
    --m $m --n 8192 --k 8192 --check-rows 8 > "$OUT/ncu_decode_m$m.csv" 2> "$OUT/ncu_decode_m$m.err"
  echo "m=$m rc=$? $(wc -c < "$OUT/ncu_decode_m$m.csv") bytes"
done
