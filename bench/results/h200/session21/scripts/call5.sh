#!/usr/bin/env bash
# Session 21, call 5: the recipe on the final build (main with the long-stage rule), and nvfp4
# (groups of 16, kept out of the rule) with short and long decode stages.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
Q=.device/s21/qgemm
export QGEMM_NO_PDL=1
for nk in "8192 8192" "28672 8192"; do
  QGEMM_CACHE_DIR=/tmp/qc timeout 60 $Q tune --n ${nk% *} --k ${nk#* } --weight nvfp4 --m 1 \
    --tiles "w4x1 t1 f1 s4 k256 waves4;w4x1 t1 f1 s2 k512 waves4" --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "== $nk nvfp4 rc=$?"; grep -E "^mma_gemm|wrong|rror" "$OUT/s.log"
  cat "$OUT/s.log" >> "$OUT/nvfp4_stages.log"; rm -f "$OUT/t.json" "$OUT/s.log"
done
unset QGEMM_NO_PDL
QGEMM_CACHE_DIR=/tmp/qc timeout 480 $Q bench bench/recipes/dense_w4a16.yaml --out "$OUT/dense_w4a16.json" \
  --plot "$OUT/dense_w4a16.svg" > "$OUT/bench_dense_w4a16.log" 2>&1
echo "bench rc=$?"; grep -E "^[a-z0-9].* x |^ +(1|16|64|256|1024|4096) (jit |cublas)" "$OUT/bench_dense_w4a16.log" | head -80
