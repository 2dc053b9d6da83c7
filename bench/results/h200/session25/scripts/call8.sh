#!/usr/bin/env bash
# Session 25, call 8: a random format sweep at 9..32 tokens (where the 16-token tile runs, now
# with the summing split) on main's build: `gen_sweep.py long 2511 300` and `small 2512 300`,
# the cases with 9 <= M <= 32, first 130.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qc_sweep
S=.device/s25
timeout 200 xargs -P 12 -L 1 bash $S/one.sh < $S/sweep_cmds.txt > "$OUT/format_sweep_m9_32.log" 2>&1
echo "== $(grep -c '^PASS' "$OUT/format_sweep_m9_32.log") pass, $(grep -cE '^(FAIL|RC)' "$OUT/format_sweep_m9_32.log") not, of $(wc -l < $S/sweep_cmds.txt)"
grep -E '^(FAIL|RC)' -A12 "$OUT/format_sweep_m9_32.log" | head -40
awk '/^[A-Z]/{print $3}' "$OUT/format_sweep_m9_32.log" | sort | uniq -c
