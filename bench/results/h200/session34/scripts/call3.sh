#!/usr/bin/env bash
# Session 34, call 3: data for the planner's use of the prescaled tiles. (a) mxfp4 / nvfp4 on
# the 128-token ps tile (no longer held to 64 tokens: without partial sums their short groups
# fit) against the 64-token one and the hand-off at 256-512 tokens; (b) where the 128-token
# tile beats the 64-token one between 64 and 128 tokens (the medium bucket's upper end), with
# ps where the planner would use it. `qgemm tune`, plain launches. Carry .device/ps.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
B=.device/ps
export QGEMM_NO_PDL=1 QGEMM_CACHE_DIR=/tmp/qc_ps
t0=$(date +%s)
run() {  # weight m tiles [n k]
  timeout 150 $B/qgemm tune --n ${4:-8192} --k ${5:-8192} --weight $1 --m $2 --tiles "$3" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 M=$2 N=${4:-8192} K=${5:-8192} rc=$?"; grep -E "^mma_gemm|^expand|error|fail" "$OUT/s.log" | sed 's/  */ /g'
  cat "$OUT/s.log" >> "$OUT/tune_call3.log"; rm -f "$OUT/t.json"
}
P="w8x1 t1 f8 s6 k128 waves1 ws ps;w8x1 t1 f16 s5 k128 waves2 ws ps"
run e2m1/g32/ue8m0 128,256,384,512 "$P"
run e2m1/g16/e4m3/global 128,256,384,512 "$P"
B8="w8x1 t1 f8 s3 k256 waves1 ws;w8x1 t1 f8 s6 k128 waves1 ws ps;w8x1 t1 f16 s5 k128 waves2 ws;w8x1 t1 f16 s5 k128 waves2 ws ps"
for w in int4/g128/bf16 uint4/g128/bf16/zp int8/channel/bf16 int4/channel/bf16; do
  run $w 72,96,112 "$B8"
done
run int4/g128/bf16 72,96,128 "$B8" 4096 4096
run int4/g128/bf16 72,96,128 "$B8" 28672 8192
run e2m1/g32/ue8m0 72,96 "$P"
echo "total $(( $(date +%s) - t0 )) s"
