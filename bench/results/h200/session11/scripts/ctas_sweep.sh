#!/usr/bin/env bash
# Session 11: decode tiles with registers capped for N CTAs per SM (tile part "ctasN" =
# __launch_bounds__ minimum), int4/g128 at N = 8192 and 28672, two rounds, binary .device/ctas.
set -u
OUT=${OUT:-/tmp/qgemm-out}
mkdir -p "$OUT"
export QGEMM_CACHE_DIR=${QGEMM_CACHE_DIR:-/tmp/qgemm-cache}
B=.device/ctas
dec='w4x1 t1 f1 s4 k256 waves4;w4x1 t1 f1 s4 k256 waves4 ctas4;w4x1 t1 f1 s3 k256 waves5 ctas5;w4x1 t1 f1 s6 k128 waves6 ctas6;w4x1 t1 f1 s5 k128 waves7 ctas7;w4x1 t1 f1 s4 k128 waves8 ctas8;w2x1 t1 f1 s4 k256 waves8 ctas8'
small='w4x1 t1 f2 s4 k256 waves4;w4x1 t1 f2 s3 k256 waves4 ctas4;w4x1 t1 f2 s6 k128 waves4 ctas4;w4x1 t1 f2 s5 k128 waves5 ctas5;w4x1 t1 f2 s4 k128 waves6 ctas6'
for round in 1 2; do
  for n in 8192 28672; do
    for spec in "1,8|$dec" "16,32|$small"; do
      IFS='|' read -r ms tiles <<< "$spec"
      name="ctas_${n}_${ms//,/_}_$round"
      timeout 90 "$B/qgemm" tune --n "$n" --k 8192 --weight int4/g128/bf16 --m "$ms" --tiles "$tiles" \
        --out "$OUT/$name.json" > "$OUT/$name.log" 2>&1
      echo "== int4/g128 N=$n round $round rc=$?"
      grep -A8 "^candidate" "$OUT/$name.log" | grep -E "^(candidate|mma_gemm)"
    done
  done
done
(cd "$OUT" && tar czf ctas_logs.tgz -- *.log *.json 2>/dev/null; rm -f -- *.log *.json)
