#!/usr/bin/env bash
# Session 20 call 3: the kw2 activation-bytes diagnostic again, with tune timing the diag's
# (wrong on purpose) results (kw2-act-diag 39aa1c7). Call 1 skipped them as wrong results.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_NO_PDL=1
T8="w8x1 t1 f8 s6 k128 waves1 ws"; K8="w4x1 t1 f8 s6 k128 waves1 ws kw2"
for share in 1 2 0; do
  export QGEMM_DIAG_ACT_SHARE=$share
  for shape in "8192 8192" "4096 8192"; do
    set -- $shape
    QGEMM_CACHE_DIR=/tmp/qc_diag timeout 100 .device/diag/qgemm tune --n $1 --k $2 \
      --weight int4/g128/bf16 --m 33,64 --tiles "$T8;$K8" --out "$OUT/t.json" > "$OUT/s.log" 2>&1
    echo "== share=$share N=$1 K=$2 rc=$?"; grep -E "^(candidate|mma_gemm)|rror" "$OUT/s.log" | head -6
    cat "$OUT/s.log" >> "$OUT/kw2_act_diag.log"
  done
done
rm -f "$OUT/s.log" "$OUT/t.json"
