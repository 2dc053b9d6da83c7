#!/usr/bin/env bash
# Session 21, call 2: long decode stages (k512 / k1024, 2-3 stages) against the bucket tiles,
# across shapes and formats, plain launches. Call 1: N = 28672 M = 1 s4 k256 37.18 us, s2 k512 34.56.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_NO_PDL=1
Q=.device/s21/qgemm
t1() { echo "w4x1 t1 $1 s4 k256 waves4;w4x1 t1 $1 s2 k512 waves4;w4x1 t1 $1 s3 k512 waves4;w4x1 t1 $1 s2 k1024 waves4;w4x1 t1 $1 s4 k512 waves4"; }
run() { # n k weight m frag
  QGEMM_CACHE_DIR=/tmp/qc timeout 120 $Q tune --n $1 --k $2 --weight $3 --m $4 --tiles "$(t1 $5)" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "== $1 x $2 $3 M=$4 rc=$?"; grep -E "^mma_gemm|wrong|rror" "$OUT/s.log"
  cat "$OUT/s.log" >> "$OUT/long_stages.log"; rm -f "$OUT/t.json"
}
for nk in "8192 8192" "28672 8192" "57344 8192" "4096 14336" "14336 4096" "4096 4096" "10240 8192" "8192 28672" "1024 4096"; do
  run $nk int4/g128/bf16 1 f1
  run $nk int4/g128/bf16 16 f2
done
for w in int3/g128/bf16 int2/g128/bf16 uint4/g128/bf16/zp; do
  run 28672 8192 $w 1 f1
  run 8192 8192 $w 1 f1
done
run 8192 8192 uint4/g128/bf16/zp 16 f2
