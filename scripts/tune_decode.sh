#!/usr/bin/env bash
# Device-side sweep of decode tile and split-K settings (one qgemm bench run per setting).
# Prints "setting | M=1 and M=16 median us" lines; full logs go to $OUT/tune_*.log.
set -u
OUT=${OUT:-/tmp/qgemm-out}
BIN=.device/bin/qgemm
export QGEMM_CACHE_DIR=${QGEMM_CACHE_DIR:-/tmp/qgemm-cache}
run() {
  local label=$1; shift
  env "$@" "$BIN" bench bench/recipes/decode_tune.yaml --no-peaks > "$OUT/tune_$label.log" 2>&1
  echo "$label [$*]: $(grep -E '^ +(1|16) jit' "$OUT/tune_$label.log" | awk '{print $1"="$3}' | tr '\n' ' ')"
}
run base
run waves4 QGEMM_SPLIT_WAVES=4
run waves4min2 QGEMM_SPLIT_WAVES=4 QGEMM_SPLIT_MIN_STAGES=2
run t1s6 QGEMM_MMA_BUCKET0=4,1,1,1,6,256
run t1k128s8w4 QGEMM_MMA_BUCKET0=4,1,1,1,8,128 QGEMM_SPLIT_WAVES=4
run w2t2s6w4 QGEMM_MMA_BUCKET0=2,1,2,1,6,256 QGEMM_SPLIT_WAVES=4
run w8t1 QGEMM_MMA_BUCKET0=8,1,1,1,4,256 QGEMM_SPLIT_WAVES=4
run t2s6w3 QGEMM_MMA_BUCKET0=4,1,2,1,6,256 QGEMM_SPLIT_WAVES=3
run b1t1s6 QGEMM_MMA_BUCKET1=4,1,1,4,6,128 QGEMM_SPLIT_WAVES=4
run b1t2k256 QGEMM_MMA_BUCKET1=4,1,2,4,4,256
