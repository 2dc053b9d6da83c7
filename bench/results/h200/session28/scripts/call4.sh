#!/usr/bin/env bash
# Session 28, call 4: the recipe on the final build of marked-partials (d2013fc), then a random
# format sweep at 9..32 tokens (new seeds 2821-2823), plain launches.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s28
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
QGEMM_CACHE_DIR=/tmp/qc_recipe timeout 420 $D/qgemm bench bench/recipes/dense_w4a16.yaml \
  --out "$OUT/dense_w4a16.json" --plot "$OUT/dense_w4a16.svg" > "$OUT/bench_dense_w4a16.log" 2>&1
echo "bench rc=$?"
grep -E "^ +(1|16|64|256|1024|4096) +(jit|cublas)" "$OUT/bench_dense_w4a16.log" | head -40
export QGEMM_CACHE_DIR=/tmp/qc_sweep
QGEMM_NO_PDL=1 timeout 120 xargs -P 12 -L 1 bash $D/one.sh < $D/sweep_cmds_final.txt > "$OUT/sweep_m9_32_final.log" 2>&1
echo "== $(grep -c '^PASS' "$OUT/sweep_m9_32_final.log") pass, $(grep -cE '^(FAIL|RC)' "$OUT/sweep_m9_32_final.log") not, of $(wc -l < $D/sweep_cmds_final.txt)"
grep -E '^(FAIL|RC)' -A12 "$OUT/sweep_m9_32_final.log" | head -30
awk '/^[A-Z]/{print $3}' "$OUT/sweep_m9_32_final.log" | sort | uniq -c
