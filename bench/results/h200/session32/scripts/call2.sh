#!/usr/bin/env bash
# Session 32, call 2: the recipe again on the machine call 1 left warm (call 1's 250 s limit cut
# the first run off; its kernel cache /tmp/qc_recipe was complete, so this run is timing only).
D=.device/s32
QGEMM_CACHE_DIR=/tmp/qc_recipe timeout 450 stdbuf -oL $D/qgemm bench bench/recipes/dense_w4a16.yaml \
  --out "$OUT/dense_w4a16.json" --plot "$OUT/dense_w4a16.svg" > "$OUT/bench_dense_w4a16.log" 2>&1
echo "bench rc=$?"
