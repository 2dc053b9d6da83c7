#!/usr/bin/env bash
# One device call (~2 min): fixed K split counts (' splitsN' tiles) against the waves rule on the
# layers where wave quantization shows (bench/NOTES.md, session 9 "Left"): int4/g128 decode at
# N = 28672 (448 CTAs for 132 SMs), qkv N = 10240 at M = 64 and 256 (80 and 160 ws CTAs), and
# the 16-token tile at 8192^2. Binaries in $BIN (default .device/bin); logs into $OUT.
set -u
OUT=${OUT:-/tmp/qgemm-out}
BIN=${BIN:-.device/bin}
mkdir -p "$OUT"
export QGEMM_CACHE_DIR=${QGEMM_CACHE_DIR:-/tmp/qgemm-cache}
sweep() {  # name, base tile, split counts, qgemm tune arguments...
  local name=$1 base=$2 counts=$3 tiles
  shift 3
  tiles=$base
  for s in $counts; do tiles+=";$base splits$s"; done
  timeout 120 "$BIN/qgemm" tune "$@" --tiles "$tiles" --out "$OUT/split_$name.json" \
    > "$OUT/split_$name.log" 2>&1
  echo "== $name rc=$?"
  grep -A12 "^candidate" "$OUT/split_$name.log" | grep -E "^(candidate|mma_gemm|expand)"
}
sweep n28672_m1 "w4x1 t1 f1 s4 k256 waves4" "2 3 4 5 6 7 8" \
  --n 28672 --k 8192 --weight int4/g128/bf16 --m 1
sweep n57344_m1 "w4x1 t1 f1 s4 k256 waves4" "2 3 4" --n 57344 --k 8192 --weight int4/g128/bf16 --m 1
sweep n8192_m16 "w4x1 t1 f2 s4 k256 waves4" "2 4 5 6 8" \
  --n 8192 --k 8192 --weight int4/g128/bf16 --m 16
sweep qkv_m64 "w8x1 t1 f8 s6 k128 waves1 ws" "2 3 4 5 6 8" \
  --n 10240 --k 8192 --weight int4/g128/bf16 --m 64
sweep qkv_m256 "w8x1 t1 f16 s5 k128 waves1 ws" "2 3 4 5 6 8" \
  --n 10240 --k 8192 --weight int4/g128/bf16 --m 256
sweep n8192_m256 "w8x1 t1 f16 s5 k128 waves1 ws" "2 3 4" \
  --n 8192 --k 8192 --weight int4/g128/bf16 --m 256
