#!/usr/bin/env bash
# Session 26, call 8 (diagnostic): scripts/pdl_diag.yaml on main's build and on branch
# pdl-8bit-diag's, alternating, two rounds.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s26
for round in 1 2; do
for bin in qgemm qgemm_diag; do
  QGEMM_CACHE_DIR=/tmp/qc_$bin timeout 100 $D/$bin bench bench/results/h200/session26/scripts/pdl_diag.yaml \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "== $bin round $round rc=$?"
  cat "$OUT/s.log" >> "$OUT/pdl_diag_$bin.log"
  grep -E " x |^ +[0-9]+ jit" "$OUT/s.log" | awk '/ x /{h=$1" "$4; next} / jit /{j=$3; next} /jit-pdl/{printf "%-28s M=%-3s jit %7.2f pdl %7.2f %+5.1f%%\n", h, $1, j, $3, ($3/j-1)*100}'
done
done
rm -f "$OUT/t.json" "$OUT/s.log"
