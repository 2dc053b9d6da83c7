#!/usr/bin/env bash
# Session 22, call 3 (main with the 16-token long-stage rule): (a) the rule's picks against both
# tiles at formats and shapes not in call 2, M = 16 / 32, plain; (b) the full GPU suite.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s22
export QGEMM_NO_PDL=1
m16="w4x1 t1 f2 s4 k256 waves4;w4x1 t1 f2 s2 k512 waves4"
run() {  # weight n k m act
  QGEMM_CACHE_DIR=/tmp/qc timeout 120 $D/qgemm tune --n $2 --k $3 --weight $1 --m $4 --act $5 \
    --tiles "$m16" --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 $5 ${2}x$3 rc=$? :: $(grep -E '^mma_gemm|wrong|rror|^(16|32) ' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/m16_rule_tune.log"; rm -f "$OUT/t.json"
}
run int2/g128/bf16 8192 8192 16,32 bf16
run mxfp4 8192 8192 16,32 bf16
run int4/channel/bf16 8192 8192 16,32 bf16
run int4/g128/bf16 5120 8192 16,32 bf16
run int4/g128/bf16 6144 8192 16,32 bf16
run int4/g128/fp16 8192 8192 16,32 fp16
run int4/g128/bf16 8192 8192 9,24 bf16
unset QGEMM_NO_PDL
timeout 420 $D/qgemm_gpu_tests --gtest_brief=1 > "$OUT/gpu_suite_s22.log" 2>&1
echo "suite rc=$?"; tail -5 "$OUT/gpu_suite_s22.log"
