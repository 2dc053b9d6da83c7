#!/usr/bin/env bash
# Session 13: every raw counter of ncu's full set (CSV) for the ws kernel at M = 256: as built
# (main12), copies off (ws-ceiling QGEMM_EXP=2), compute off (QGEMM_EXP=1); and M = 64 as built.
set -u
OUT=${OUT:-/tmp/qgemm-out}
mkdir -p "$OUT"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -z "$ncu" ] && { echo "ncu not found"; exit 1; }
run() {  # NAME BIN EXP M
  QGEMM_DISABLE_DISK_CACHE=1 QGEMM_EXP=$3 timeout 120 "$ncu" --clock-control none --set full \
    --page raw --csv -k regex:mma_gemm -c 1 \
    ".device/$2/qgemm" verify --backend jit --weight int4/g128/bf16 --m "$4" --n 8192 --k 8192 \
    --check-rows 8 > "$OUT/ncu_$1.csv" 2> "$OUT/ncu_$1.err"
  echo "$1 rc=$? $(wc -c < "$OUT/ncu_$1.csv") bytes"
}
run main256 main12 "" 256
run nocopy256 exp 2 256
run nocompute256 exp 1 256
run main64 main12 "" 64
run nocopy64 exp 2 64
