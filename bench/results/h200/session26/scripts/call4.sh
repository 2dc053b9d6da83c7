#!/usr/bin/env bash
# Session 26, call 4: a random format sweep at 1..8 tokens (where the 8-token tile runs, now with
# the summing split) on main a40cbc4's build: `gen_sweep.py long 2611 300`, `small 2612 300` and
# `wide 2613 300`, the 236 cases with M <= 8.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qc_sweep
S=.device/s26
timeout 400 xargs -P 12 -L 1 bash $S/one.sh < $S/sweep_cmds.txt > "$OUT/format_sweep_m1_8.log" 2>&1
echo "== $(grep -c '^PASS' "$OUT/format_sweep_m1_8.log") pass, $(grep -cE '^(FAIL|RC)' "$OUT/format_sweep_m1_8.log") not, of $(wc -l < $S/sweep_cmds.txt)"
grep -E '^(FAIL|RC)' -A12 "$OUT/format_sweep_m1_8.log" | head -40
awk '/^[A-Z]/{print $3}' "$OUT/format_sweep_m1_8.log" | sort | uniq -c
