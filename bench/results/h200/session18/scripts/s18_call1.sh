#!/usr/bin/env bash
# Staged in session 17 for session 18, call 1 (~2-3 min): decode CTA heights that spread the grid
# evenly over the SMs, with main 01f0488's own binary (.device/main17; its full GPU suite passed
# 155/155 in session 17). Hypothesis (bench/NOTES.md Left 2): each SM streams at a fixed rate, so
# the most loaded SM decides; at N = 28672 the default four-warp CTAs put 4 on 52 SMs and 3 on
# 80 (256 rows on the most loaded), seven-warp CTAs 2 on 124 (224 rows). Prediction if it holds:
# int4 N = 28672 M = 1 37.4 -> ~34 us with w7x1 (0.31x); against it, two-warp CTAs lost 4-7% in
# session 15. 8192^2 (512 CTAs at 3.9 per SM, balanced) should not move.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_NO_PDL=1 QGEMM_CACHE_DIR=/tmp/qc_main17
tiles() { local f=$1 t=""; for w in 4 7 5 3 6 2; do t="$t;w${w}x1 t1 f$f s4 k256 waves4"; done; echo "${t#;}"; }
for shape in "28672 8192 int4/g128/bf16" "28672 8192 int3/g128/bf16" "28672 8192 int2/g128/bf16" \
             "57344 8192 int4/g128/bf16" "10240 8192 int4/g128/bf16" "8192 8192 int4/g128/bf16" \
             "8192 28672 int4/g128/bf16"; do
  set -- $shape
  for mf in "1 1" "16 2"; do
    set -- $shape $mf
    timeout 60 .device/main17/qgemm tune --n $1 --k $2 --weight $3 --m $4 --tiles "$(tiles $5)" \
      --out "$OUT/t.json" > "$OUT/s.log" 2>&1
    echo "== N=$1 K=$2 $3 M=$4 rc=$?"; grep -E "^mma_gemm|wrong" "$OUT/s.log"; cat "$OUT/s.log" >> "$OUT/balance_tune.log"
  done
done
rm -f "$OUT/s.log" "$OUT/t.json"
# M = 64 (0.605x, must 0.60x): the default 2-split cluster tile against a 32-token tile with no
# split (two token tiles read each weight tile, hopefully from L2; no cluster sum) and a deeper
# ring. Prediction: f4 splits1 loses (decode per token doubles), s4 within 1%.
timeout 60 .device/main17/qgemm tune --n 8192 --k 8192 --weight int4/g128/bf16 --m 64 \
  --tiles 'w8x1 t1 f8 s3 k256 waves1 ws;w8x1 t1 f4 s4 k256 waves1 splits1 ws;w8x1 t1 f8 s4 k256 waves1 ws;w8x1 t1 f4 s6 k256 waves1 ws' \
  --out "$OUT/t.json" > "$OUT/m64_tune.log" 2>&1
echo "== M=64 rc=$?"; grep -E "^mma_gemm|wrong" "$OUT/m64_tune.log"; rm -f "$OUT/t.json"
