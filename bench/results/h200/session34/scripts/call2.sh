#!/usr/bin/env bash
# Session 34, call 2: prescaled ws tiles (" ps") against main's across formats and token counts
# (`qgemm tune`, plain launches; every candidate checked against the reference), for the
# planner's rules; int4/g128 and int4/channel at M = 1024 again with the SM clock sampled.
# Carry .device/ps.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
B=.device/ps
export QGEMM_NO_PDL=1 QGEMM_CACHE_DIR=/tmp/qc_ps
t0=$(date +%s)
run() {  # weight m tiles [n k]
  timeout 150 $B/qgemm tune --n ${4:-8192} --k ${5:-8192} --weight $1 --m $2 --tiles "$3" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 M=$2 N=${4:-8192} K=${5:-8192} rc=$?"; grep -E "^mma_gemm|^expand|error|fail" "$OUT/s.log" | sed 's/  */ /g'
  cat "$OUT/s.log" >> "$OUT/tune_call2.log"; rm -f "$OUT/t.json"
}
T="w8x1 t1 f8 s6 k128 waves1 ws;w8x1 t1 f8 s6 k128 waves1 ws ps;w8x1 t1 f16 s5 k128 waves2 ws;w8x1 t1 f16 s5 k128 waves2 ws ps"
for w in uint4/g128/bf16/zp e2m1/g32/ue8m0 e2m1/g16/e4m3/global int8/channel/bf16 \
         int4/channel/bf16 int8/g128/bf16 int3/g128/bf16 int2/g128/bf16 uint4/g64/bf16/zp \
         e4m3/b128x128/fp32 int4/g128/bf16; do
  run $w 128,256,512,1024 "$T"
done
# M = 64 on the f8 tiles (main's planned 256-K stages of two partial sets, where they apply)
F="w8x1 t1 f8 s3 k256 waves1 ws;w8x1 t1 f8 s6 k128 waves1 ws ps;w8x1 t1 f8 s3 k256 waves1 ws ps"
for w in uint4/g128/bf16/zp e2m1/g32/ue8m0 int8/channel/bf16 int4/channel/bf16; do
  run $w 64 "$F"
done
# Other shapes: N = 28672 and the down projection (K = 28672) at M = 256.
run int4/g128/bf16 256 "w8x1 t1 f16 s5 k128 waves2 ws;w8x1 t1 f16 s5 k128 waves2 ws ps" 28672 8192
run uint4/g128/bf16/zp 256 "w8x1 t1 f16 s5 k128 waves2 ws;w8x1 t1 f16 s5 k128 waves2 ws ps" 8192 28672
# M = 1024 again, with the SM clock sampled every 100 ms.
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 100 > "$OUT/clocks.log" 2>&1 &
smi=$!
G="w8x1 t1 f16 s5 k128 waves2 ws;w8x1 t1 f16 s5 k128 waves2 ws ps"
for round in 1 2; do
  echo "clock sample $(wc -l < "$OUT/clocks.log")"
  run int4/g128/bf16 1024 "$G"
  echo "clock sample $(wc -l < "$OUT/clocks.log")"
  run int4/channel/bf16 1024 "$G"
done
kill $smi
echo "total $(( $(date +%s) - t0 )) s"
