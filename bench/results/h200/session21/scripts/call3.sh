#!/usr/bin/env bash
# Session 21, call 3: (a) zero points and int4 with 2 / 3 long stages, plain and programmatic;
# (b) the recipe with the long-stage rule (s2 k512 decode for <= 4-bit codes without zero points,
# K >= 8192, unsplit grid in one wave).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
Q=.device/s21/qgemm
tl="w4x1 t1 f1 s4 k256 waves4;w4x1 t1 f1 s2 k512 waves4;w4x1 t1 f1 s3 k512 waves4"
for mode in plain pdl; do
  if [ $mode = plain ]; then export QGEMM_NO_PDL=1; else unset QGEMM_NO_PDL; fi
  for w in uint4/g128/bf16/zp int4/g128/bf16 uint4/g128/fp16/zp; do
    for nk in "8192 8192" "28672 8192" "10240 8192" "4096 14336"; do
      QGEMM_CACHE_DIR=/tmp/qc timeout 100 $Q tune --n ${nk% *} --k ${nk#* } --weight $w --m 1 \
        --tiles "$tl" --out "$OUT/t.json" > "$OUT/s.log" 2>&1
      echo "== $mode $nk $w rc=$?"; grep -E "^mma_gemm|wrong|rror" "$OUT/s.log" | awk '{print $NF}' | tr '\n' ' '; echo
      cat "$OUT/s.log" >> "$OUT/zp_stages.log"; rm -f "$OUT/t.json"
    done
  done
done
unset QGEMM_NO_PDL
QGEMM_CACHE_DIR=/tmp/qc timeout 400 $Q bench bench/recipes/dense_w4a16.yaml --out "$OUT/dense_w4a16.json" \
  --plot "$OUT/dense_w4a16.svg" > "$OUT/bench_dense_w4a16.log" 2>&1
echo "bench rc=$?"; grep -vE "^\s*$" "$OUT/bench_dense_w4a16.log" | tail -60
