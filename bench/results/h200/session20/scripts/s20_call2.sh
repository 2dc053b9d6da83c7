#!/usr/bin/env bash
# Staged in session 19 for session 20 (~5 min): the dense_w4a16 recipe on main d1c5b33
# (.device/final19), to refresh bench/results/h200/dense_w4a16.json (its recipe kernels are
# SASS-identical to session 17's, which the committed file measured).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qc_recipe
timeout 560 .device/final19/qgemm bench bench/recipes/dense_w4a16.yaml --out "$OUT/dense_w4a16.json" \
  --plot "$OUT/dense_w4a16.svg" > "$OUT/bench_dense_w4a16.log" 2>&1
echo "== recipe rc=$?"; tail -40 "$OUT/bench_dense_w4a16.log"
