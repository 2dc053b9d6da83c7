#!/usr/bin/env bash
# Staged in session 14 for session 15 (~5 min): the split count of the decode tiles over shapes
# and code widths. Session 14 (bench/NOTES.md, "split count of the 8-token decode tile"): two
# splits beat the whole-wave rule's four for int4 at 8192^2 (M = 1 13.61 -> 13.2, M = 8 14.11 ->
# 13.31) but lose for int2 / int3 and at 4096^2. Hypothesis to test: fewer, longer CTAs win while
# each SM keeps >= ~40 KB of weights in flight (CTAs per SM x (stages - 1) x stage bytes) and
# the grid covers every SM: int3 8192^2 would take 3 splits, int2 4, int4 N = 14336 K = 4096 one.
# Usage: OUT=$OUT bash .device/s15_split_sweep.sh [binary dir, default .device/main14]
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
B=${1:-.device/main14}/qgemm
tiles() {  # base tile -> the same tile at 1, 2, 3, 4, 6, 8 splits
  local t="$1" s out=""
  for s in 1 2 3 4 6 8; do out="$out${out:+;}$t splits$s"; done
  echo "$t;$out"
}
for w in int4/g128/bf16 int3/g128/bf16 int2/g128/bf16; do
  for nk in "8192 8192" "4096 4096" "14336 4096" "8192 28672" "28672 8192" "4096 14336" "10240 8192"; do
    set -- $nk
    timeout 60 $B tune --weight $w --n $1 --k $2 --m 1,8 --tiles "$(tiles 'w4x1 t1 f1 s4 k256 waves4')" \
      --out "$OUT/t.json" > "$OUT/s.log" 2>&1
    echo "== $w N=$1 K=$2 rc=$?"; grep -E "^mma_gemm|wrong" "$OUT/s.log"
    cat "$OUT/s.log" >> "$OUT/split_sweep_f1.log"
  done
done
for nk in "8192 8192" "28672 8192" "4096 4096"; do
  set -- $nk
  timeout 60 $B tune --weight int4/g128/bf16 --n $1 --k $2 --m 16 --tiles "$(tiles 'w4x1 t1 f2 s4 k256 waves4')" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "== int4 f2 M=16 N=$1 K=$2 rc=$?"; grep -E "^mma_gemm|wrong" "$OUT/s.log"
  cat "$OUT/s.log" >> "$OUT/split_sweep_f2.log"
done
for c in "nvfp4 8192 8192 1,8 w4x1 t1 f1 s4 k256 waves4" "int8/channel/bf16 8192 8192 16 w4x1 t1 f2 s3 k256 waves4"; do
  set -- $c; w=$1 n=$2 k=$3 m=$4; shift 4
  timeout 60 $B tune --weight $w --n $n --k $k --m $m --tiles "$(tiles "$*")" --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "== $w N=$n K=$k M=$m rc=$?"; grep -E "^mma_gemm|wrong" "$OUT/s.log"
  cat "$OUT/s.log" >> "$OUT/split_sweep_f1.log"
done
rm -f "$OUT/s.log" "$OUT/t.json"
# Branch decode-inflight-splits (.device/splits, the rule this sweep tests) on the recipe's
# decode rows, against main in the same process is not possible: run both binaries back to back.
for b in .device/main14 .device/splits; do
  timeout 100 $b/qgemm bench bench/recipes/pdl_ab.yaml --backend jit,cublas-bf16 --no-peaks > "$OUT/ab_$(basename $b).log" 2>&1
  echo "== pdl_ab $b rc=$?"; grep -E "^\s+[0-9]+ (jit|cublas)|x bf16" "$OUT/ab_$(basename $b).log" | head -20
done
