#!/usr/bin/env bash
# Staged in session 19 for session 20 (~2.5 min): is kw2's loss at N = 8192 the activation
# bytes? Branch kw2-act-diag (.device/diag/qgemm, main d1c5b33 + a define): kw2 tiles copy only
# 1/QGEMM_DIAG_ACT_SHARE of their activation chunks (0: none); results are wrong on purpose.
# Session 19 (call 3): int4/g128 8192^2 M = 64 ws f8 22.17 us, kw2 24.45.
# Prediction if the bytes are the cause: half ~21-22 us, none ~19-20; if kw2 stays ~24 with no
# activation copies, the bytes are not the cause and multicast would not help.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_NO_PDL=1
T8="w8x1 t1 f8 s6 k128 waves1 ws"; K8="w4x1 t1 f8 s6 k128 waves1 ws kw2"
for share in none 2 0; do
  if [ $share = none ]; then unset QGEMM_DIAG_ACT_SHARE; else export QGEMM_DIAG_ACT_SHARE=$share; fi
  QGEMM_CACHE_DIR=/tmp/qc_diag_$share timeout 100 .device/diag/qgemm tune --n 8192 --k 8192 \
    --weight int4/g128/bf16 --m 33,64 --tiles "$T8;$K8" --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "== share=$share rc=$?"; grep -E "^(candidate|mma_gemm)|wrong|rror" "$OUT/s.log" | head -6
  cat "$OUT/s.log" >> "$OUT/kw2_act_diag.log"
done
rm -f "$OUT/s.log" "$OUT/t.json"
# Upper bound of any flush removal at M >= 256 (prescaled weights, etc.): int4 with channel
# scales has no group flush at all. Session 12: int4/channel 54.82 vs int4/g128 58.86 us (M = 256,
# older kernels). If channel is not well below 49.5 us at M = 256 (cuBLAS), no flush-free
# variant of the 128 x 128 ws tile reaches the M = 256 must.
unset QGEMM_DIAG_ACT_SHARE
for w in int4/g128/bf16 int4/channel/bf16; do
  QGEMM_CACHE_DIR=/tmp/qc_diag_none timeout 120 .device/diag/qgemm tune --n 8192 --k 8192 --weight $w \
    --m 256,1024 --tiles "w8x1 t1 f16 s5 k128 waves1 ws" --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "== $w rc=$?"; grep -E "^(candidate|mma_gemm|expand)|wrong|rror" "$OUT/s.log" | head -6
  cat "$OUT/s.log" >> "$OUT/flush_bound.log"
done
rm -f "$OUT/s.log" "$OUT/t.json"
