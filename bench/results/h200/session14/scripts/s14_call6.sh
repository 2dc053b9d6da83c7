#!/usr/bin/env bash
# Session 14 call 6: what bounds the 16-token decode tile (M = 16 streams at ~3.2 TB/s, M = 1 at
# ~3.9). Branch ws-depth, QGEMM_EXP 256: the mma.sync loop copies only weights after the ring's
# first round (activations stale); 512: no decode/MMA; 768: both. Prediction: if the activation
# copies (as many bytes per stage as the weights at M = 16) bound it, 256 brings M = 16 near
# M = 1's time (~13.6 us); if the MMAs/ldmatrix do, 512 does.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_DISABLE_DISK_CACHE=1
for e in 0 256 512 768; do
  QGEMM_EXP=$e timeout 90 .device/depth/qgemm tune --n 8192 --k 8192 --weight int4/g128/bf16 --m 1,16 \
    --tiles 'w4x1 t1 f1 s4 k256 waves4;w4x1 t1 f2 s4 k256 waves4' --out "$OUT/t.json" > "$OUT/m16diag_$e.log" 2>&1
  echo "== EXP=$e rc=$?"; grep -E "^(candidate|mma_gemm)|wrong" "$OUT/m16diag_$e.log" | head -4
done
for f in "$OUT"/m16diag_*.log; do echo "===== $(basename $f)"; cat $f; done > "$OUT/m16_diag.log"; rm -f "$OUT"/m16diag_*.log "$OUT/t.json"
