#!/usr/bin/env bash
# Session 33, call 3: the " sa" ws tiles (weights decoded, scaled and staged in shared memory,
# SS wgmma, no per-stage drain) against main's tiles, `qgemm tune`, plain launches, two rounds.
# Every candidate is checked against the reference before it is timed. Carry .device/sa.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
B=.device/sa
export QGEMM_NO_PDL=1 QGEMM_CACHE_DIR=/tmp/qc_sa
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
run() {  # weight m tiles
  timeout 150 $B/qgemm tune --n 8192 --k 8192 --weight $1 --m $2 --tiles "$3" --repetitions 21 \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 M=$2 rc=$?"; grep -E "^mma_gemm|^expand|rel|error|fail" "$OUT/s.log" | sed 's/  */ /g'
  cat "$OUT/s.log" >> "$OUT/tune_sa.log"; rm -f "$OUT/t.json"
}
G="w8x1 t1 f16 s5 k128 waves2 ws;w8x1 t1 f16 s6 k64 waves2 ws sa;w8x1 t1 f16 s8 k64 waves2 ws sa;w8x1 t1 f16 s3 k128 waves2 ws sa"
for round in 1 2; do
  run int4/g128/bf16 256,1024 "$G"
  run int4/channel/bf16 256 "$G"
done
run int4/g128/bf16 64,128 "w8x1 t1 f8 s6 k128 waves1 ws;w8x1 t1 f8 s6 k128 waves1 ws sa;w8x1 t1 f8 s8 k64 waves1 ws sa"
run uint4/g128/bf16/zp 256 "$G"
run int8/channel/bf16 256 "$G"
run int4/g128/bf16 4096 "w8x1 t1 f16 s5 k128 waves2 ws;w8x1 t1 f16 s6 k64 waves2 ws sa"
