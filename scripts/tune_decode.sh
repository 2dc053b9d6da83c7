#!/usr/bin/env bash
# Device-side sweep of decode tiles (M = 1 and 16) with `qgemm tune --tiles`: every candidate is
# checked against the CPU reference and timed as in the benchmark (graph replays, weights rotated
# past L2, medians). One table per layer; logs and tables go to $OUT/decode_<name>.{log,json}.
#
#   DECODE_TILES   ';'-separated tile texts (default: the list below)
#   DECODE_LAYERS  '|'-separated "name:N:K:weight" entries (default: the decode 'must' layers)
set -u
OUT=${OUT:-/tmp/qgemm-out}
BIN=${BIN:-.device/bin/qgemm}
export QGEMM_CACHE_DIR=${QGEMM_CACHE_DIR:-/tmp/qgemm-cache}
mkdir -p "$OUT"
# waves8: split-K fills one wave of the CTAs that fit (the planner never rounds up into a partial
# wave), so the stage count and the stage K decide the split.
tiles=${DECODE_TILES:-"w4x1 t1 f1 s4 k256 waves8;w4x1 t1 f1 s3 k256 waves8;w4x1 t1 f1 s5 k256 waves8;\
w4x1 t1 f1 s3 k512 waves8;w2x1 t1 f1 s4 k256 waves8;w4x1 t2 f1 s4 k256 waves8;\
w4x1 t1 f2 s4 k256 waves8;w4x1 t1 f2 s3 k256 waves8"}
layers=${DECODE_LAYERS:-"int4:8192:8192:int4/g128/bf16|int4_28672:28672:8192:int4/g128/bf16|\
int3_28672:28672:8192:int3/g128/bf16|int8:8192:8192:int8/channel/bf16|uint4zp:8192:8192:uint4/g128/bf16/zp"}
IFS='|' read -ra entries <<< "$layers"
for entry in "${entries[@]}"; do
  IFS=':' read -r name n k weight <<< "$entry"
  timeout "${TUNE_TIMEOUT:-120}" "$BIN" tune --n "$n" --k "$k" --weight "$weight" --m 1,16 \
    --tiles "$tiles" --out "$OUT/decode_$name.json" > "$OUT/decode_$name.log" 2>&1
  echo "== $name ($weight, N=$n K=$k) rc=$?"
  grep -A12 "^candidate" "$OUT/decode_$name.log" | grep -E "^(candidate|mma_gemm)"
done
