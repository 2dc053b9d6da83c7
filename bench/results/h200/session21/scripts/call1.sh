#!/usr/bin/env bash
# Session 21, call 1. (a) 256-token ws tiles (f32: 64 rows x 256 tokens per warpgroup, copy
# warpgroup at 56 registers with compact activation sources, compute at 224): int4/channel (no
# group flush), against the planned f16 tile and the hand-off. (b) N = 28672 M = 1 decode sweep.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_NO_PDL=1
Q=.device/s21/qgemm
F16="w8x1 t1 f16 s5 k128 waves1 ws"
tiles="$F16;w8x1 t1 f32 s3 k128 waves1 ws;w8x1 t1 f32 s4 k64 waves1 ws;w8x1 t1 f32 s2 k256 waves1 ws;w8x1 t1 f32 s3 k128 ws splits2"
for w in int4/channel/bf16; do
  QGEMM_CACHE_DIR=/tmp/qc timeout 200 $Q tune --n 8192 --k 8192 --weight $w --m 256,1024,4096 \
    --tiles "$tiles" --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "== $w rc=$?"; grep -vE "^\s*$" "$OUT/s.log" | tail -40
  cat "$OUT/s.log" >> "$OUT/f32_channel.log"
done
rm -f "$OUT/s.log" "$OUT/t.json"
D="w4x1 t1 f1 s4 k256 waves4"
dt="$D;$D splits2;$D splits3;w4x1 t1 f1 s3 k256 waves4;w4x1 t1 f1 s5 k256 waves4;w4x1 t1 f1 s6 k256 waves4;w2x1 t2 f1 s3 k256 waves4;w4x1 t2 f1 s4 k256 waves4;w4x1 t1 f1 s8 k128 waves4;w4x1 t1 f1 s2 k512 waves4"
QGEMM_CACHE_DIR=/tmp/qc timeout 200 $Q tune --n 28672 --k 8192 --weight int4/g128/bf16 --m 1 \
  --tiles "$dt" --out "$OUT/t.json" > "$OUT/s.log" 2>&1
echo "== n28672 rc=$?"; grep -vE "^\s*$" "$OUT/s.log" | tail -30
cat "$OUT/s.log" >> "$OUT/n28672_m1.log"
rm -f "$OUT/s.log" "$OUT/t.json"
