#!/usr/bin/env bash
# Session 15 call 3: the GPU suite of branch s15 (main 0a45935 + uniform ws descriptors +
# in-flight split rule), then tile probes for the two near misses (M = 16; int8/channel M = 1),
# then pdl_ab on s15 (compare with call 2's main14 / splits rows).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
B=.device/s15
timeout 300 $B/qgemm_gpu_tests > "$OUT/gpu_suite_s15.log" 2>&1; echo "== suite rc=$?"; tail -3 "$OUT/gpu_suite_s15.log"; grep -E "FAILED|Failure" "$OUT/gpu_suite_s15.log" | head
probe() {  # weight m tile
  timeout 40 $B/qgemm tune --n 8192 --k 8192 --weight $1 --m $2 --tiles "$3" --out "$OUT/t.json" > "$OUT/p.log" 2>&1
  local rc=$?; printf "%-18s M=%-3s %-40s rc=%d %s\n" "$1" "$2" "$3" $rc "$(grep -E '^mma_gemm' "$OUT/p.log" | awk '{print $NF}')"
  [ $rc -ne 0 ] && grep -iE "error|invalid|wrong" "$OUT/p.log" | head -2
  cat "$OUT/p.log" >> "$OUT/probes.log"
}
for t in "w4x1 t1 f2 s4 k256 waves4" "w8x1 t1 f2 s4 k256 waves2" "w4x1 t2 f2 s4 k256 waves2" \
         "w4x1 t1 f2 s5 k256 waves3" "w4x1 t1 f2 s4 k128 waves4" "w4x1 t1 f2 s6 k128 waves4" \
         "w4x1 t1 f2 s4 k256 waves4 wg" "w8x1 t1 f2 s4 k256 waves1 ws" "w8x1 t1 f2 s6 k128 waves1 ws"; do
  probe int4/g128/bf16 16 "$t"
done
for t in "w4x1 t1 f2 s3 k256 waves4" "w8x1 t1 f2 s3 k256 waves2" "w4x1 t1 f2 s3 k256 waves4 wg" "w8x1 t1 f2 s4 k256 waves1 ws"; do
  probe int8/channel/bf16 16 "$t"
done
for t in "w1x1 t1 f1 s3 k256 waves9" "w1x1 t1 f1 s3 k256 waves9 splits1" "w1x1 t1 f1 s3 k256 waves9 splits3" \
         "w1x1 t1 f1 s4 k256 waves8" "w1x1 t1 f1 s5 k128 waves9" "w2x1 t1 f1 s3 k256 waves6" \
         "w4x1 t1 f1 s3 k256 waves4" "w4x1 t1 f1 s4 k256 waves4" "w4x1 t1 f1 s3 k256 waves4 splits2"; do
  probe int8/channel/bf16 1 "$t"
done
rm -f "$OUT/t.json" "$OUT/p.log"
timeout 100 $B/qgemm bench bench/recipes/pdl_ab.yaml --backend jit,cublas-bf16 --no-peaks > "$OUT/ab_s15.log" 2>&1
echo "== pdl_ab s15 rc=$?"; grep -E "^\s+[0-9]+ (jit|cublas)|x bf16" "$OUT/ab_s15.log" | head -40
