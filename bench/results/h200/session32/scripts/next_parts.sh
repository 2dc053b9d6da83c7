#!/usr/bin/env bash
# Prepared in session 32 for the next device time (not run): where the ws tile's time goes on
# today's kernel, the decomposition session 12 measured on an older one (f16 tile at M = 256:
# as built 59.0 / 54.8 us g128 / channel, no decode 56.9 / 49.4, no copies 51.8 / 51.9,
# neither 50.0 / 41.9). Binaries from build_parts_diag.sh, carried as .device/parts.
# `qgemm tune`, plain launches, two interleaved rounds; ~2 minutes.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/parts
export QGEMM_NO_PDL=1
run() {  # variant weight m tiles
  QGEMM_CACHE_DIR=/tmp/qc_parts_$1 timeout 90 $D/$1/qgemm tune --n 8192 --k 8192 --weight $2 \
    --m $3 --tiles "$4" --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 $2 M=$3 rc=$? :: $(grep -E '^mma_gemm' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/tune_parts.log"; rm -f "$OUT/t.json"
}
for round in 1 2; do
  for v in main nodecode nocopies neither; do
    run $v int4/g128/bf16 256,1024 "w8x1 t1 f16 s5 k128 ws"
    run $v int4/channel/bf16 256 "w8x1 t1 f16 s5 k128 ws"
    run $v int4/g128/bf16 64 "w8x1 t1 f8 s3 k256 waves1 splits2 ws"
  done
done
