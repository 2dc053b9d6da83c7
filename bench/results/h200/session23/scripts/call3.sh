#!/usr/bin/env bash
# Session 23, call 3: random format sweeps on main's build (8785e0a): `long` (K 8192..16384 at
# 1..32 tokens, where the long-stage rules pick tiles; 160 random + 40 targeted <= 4-bit cases)
# and `wide` seed 23 (120); then one tile shape at M = 64.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qc_sweep
S=.device/s23/sweep
for list in long wide; do
  timeout 240 xargs -P 8 -L 1 bash $S/one.sh < $S/${list}_cmds.txt > "$OUT/format_sweep_$list.log" 2>&1
  echo "== $list: $(grep -c '^PASS' "$OUT/format_sweep_$list.log") pass, $(grep -cE '^(FAIL|RC)' "$OUT/format_sweep_$list.log") not, of $(wc -l < $S/${list}_cmds.txt)"
  grep -E '^(FAIL|RC)' -A12 "$OUT/format_sweep_$list.log" | head -40
  awk '/^[A-Z]/{print $3}' "$OUT/format_sweep_$list.log" | sort | uniq -c
done
export QGEMM_NO_PDL=1
QGEMM_CACHE_DIR=/tmp/qc timeout 120 .device/s23/qgemm tune --n 8192 --k 8192 --weight int4/g128/bf16 \
  --m 64 --tiles "w8x1 t1 f8 s6 k128 waves1 ws;w4x1 t1 f8 s4 k128 waves2 ws;w4x1 t1 f8 s6 k128 waves2 ws" \
  --out "$OUT/t.json" > "$OUT/m64_w4_tune.log" 2>&1
grep -E '^mma_gemm|wrong|rror' "$OUT/m64_w4_tune.log"
