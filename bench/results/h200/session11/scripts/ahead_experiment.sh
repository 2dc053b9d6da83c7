#!/usr/bin/env bash
# Session 11: ws tiles decode a stage's first unit while the previous stage's last wgmmas run
# (.device/ahead) against main (.device/bin): full GPU suite of ahead, then qgemm tune A/B.
set -u
OUT=${OUT:-/tmp/qgemm-out}
mkdir -p "$OUT"
export QGEMM_CACHE_DIR=${QGEMM_CACHE_DIR:-/tmp/qgemm-cache}
timeout 240 .device/ahead/qgemm_gpu_tests > "$OUT/suite_ahead.log" 2>&1
echo "full GPU suite of ahead rc=$?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/suite_ahead.log" | head -20
for round in 1 2; do
  for b in bin ahead; do
    for spec in "int4/g128/bf16|64,128,256,1024|w8x1 t1 f8 s6 k128 waves1 ws;w8x1 t1 f16 s5 k128 waves1 ws" \
                "int8/channel/bf16|64,256|w8x1 t1 f8 s5 k128 waves1 ws" \
                "int3/g128/bf16|256|w8x1 t1 f8 s5 k128 waves1 ws"; do
      IFS='|' read -r w ms tiles <<< "$spec"
      name="ahead_${b}_${w//\//_}_$round"
      timeout 60 ".device/$b/qgemm" tune --n 8192 --k 8192 --weight "$w" --m "$ms" --tiles "$tiles" \
        --out "$OUT/$name.json" > "$OUT/$name.log" 2>&1
      echo "== $w $b round $round rc=$?"
      grep -A4 "^candidate" "$OUT/$name.log" | grep -E "^(candidate|mma_gemm|expand)"
    done
  done
done
(cd "$OUT" && tar czf ahead_logs.tgz -- *.log *.json 2>/dev/null; rm -f -- *.json ahead_*.log)
