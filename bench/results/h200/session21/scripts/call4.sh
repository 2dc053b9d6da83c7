#!/usr/bin/env bash
# Session 21, call 4: long decode stages with registers capped for 4 CTAs per SM (" ctas4"):
# uint4/zp compiled to 134 registers with s2 k512 (3 CTAs per SM); int4 and mxfp4 alongside.
# Plain launches, M = 1.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_NO_PDL=1
Q=.device/s21/qgemm
tl="w4x1 t1 f1 s4 k256 waves4;w4x1 t1 f1 s2 k512 waves4;w4x1 t1 f1 s2 k512 waves4 ctas4;w4x1 t1 f1 s3 k512 waves4 ctas4"
for w in uint4/g128/bf16/zp int4/g128/bf16 mxfp4; do
  for nk in "8192 8192" "28672 8192" "10240 8192" "4096 14336"; do
    QGEMM_CACHE_DIR=/tmp/qc timeout 100 $Q tune --n ${nk% *} --k ${nk#* } --weight $w --m 1 \
      --tiles "$tl" --out "$OUT/t.json" > "$OUT/s.log" 2>&1
    echo "== $nk $w rc=$?"; grep -E "^mma_gemm|wrong|rror" "$OUT/s.log" | awk '{print $NF}' | tr '\n' ' '; echo
    cat "$OUT/s.log" >> "$OUT/ctas4.log"; rm -f "$OUT/t.json"
  done
done
