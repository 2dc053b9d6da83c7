#!/usr/bin/env bash
# Session 26, call 7 (diagnostic): plain against programmatic launches by code width
# (scripts/pdl_8bit.yaml) on main's build.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
QGEMM_CACHE_DIR=/tmp/qc_pdl timeout 240 .device/s26/qgemm bench \
  bench/results/h200/session26/scripts/pdl_8bit.yaml --out "$OUT/pdl_8bit.json" \
  > "$OUT/pdl_8bit.log" 2>&1
echo "bench rc=$?"
awk '/ x /{h=$1" "$4" "$5} /^ +[0-9]+ jit /{j=$3} /^ +[0-9]+ jit-pdl /{printf "%-40s M=%-3s jit %7.2f pdl %7.2f %+5.1f%%\n", h, $1, j, $3, ($3/j-1)*100}' "$OUT/pdl_8bit.log"
