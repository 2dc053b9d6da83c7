#!/usr/bin/env bash
# Session 14 call 3: main + (equal bench launches, channel formats on the 128-token ws tile).
# (1) Full GPU suite. (2) f8 (before) against f16 (now) ws tiles for channel formats, M = 256 / 512.
# Prediction: int8/channel M = 256 108.5 -> ~65 us (one wave of 128 CTAs instead of 256 CTAs,
# half the decode per FMA); int2 / int6 channel gain alike.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
B=.device/main14
timeout 420 $B/qgemm_gpu_tests > "$OUT/gpu_suite.log" 2>&1; echo "== gpu suite rc=$?"
grep -E "^\[  (PASSED|FAILED) |tests ran|Failure" "$OUT/gpu_suite.log" | head -20
for w in int8/channel/bf16 e4m3/channel/bf16 int2/channel/bf16 int6/channel/bf16; do
  s=5; case $w in int8*|e4m3*) s=4;; esac
  timeout 120 $B/qgemm tune --n 8192 --k 8192 --weight $w --m 256,512 \
    --tiles "w8x1 t1 f8 s5 k128 waves1 ws;w8x1 t1 f16 s$s k128 waves1 ws" --out "$OUT/t.json" > "$OUT/tune_${w//\//_}.log" 2>&1
  echo "== $w rc=$?"; grep -E "^(candidate|mma_gemm)|wrong|rror" "$OUT/tune_${w//\//_}.log" | head -5
done
tar czf "$OUT/call3_logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log) && rm -f "$OUT"/tune_*.log "$OUT/t.json"
