#!/usr/bin/env bash
# For the session after 36: A/B of the TMA tiles without the per-stage proxy fence
# (`../patches/tma-no-proxy-fence.patch`: the compute warps' fence.proxy.async after each
# stage's mbarrier wait, MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S in SASS, which TMA stages do not
# need: their bytes come through the async proxy and the phase completion makes them visible).
# Build main into .device/next and main + the patch into .device/nofence (build/qgemm each);
# carry both. ~150 s. `qgemm tune`, plain launches, two rounds, every candidate checked.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_NO_PDL=1
for round in 1 2; do
  for b in next nofence; do
    QGEMM_CACHE_DIR=/tmp/qc_$b timeout 150 .device/$b/qgemm tune --n 8192 --k 8192 \
      --weight int4/g128/bf16 --m 96,256,320,1024,4096 \
      --tiles "w8x1 t1 f16 s5 k128 waves2 ws ps tma;w8x1 t1 f32 s6 k64 waves1 ws ps tma" \
      --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
    echo "round $round $b rc=$?"; grep -E "^mma_gemm|error" "$OUT/s.log" | sed 's/  */ /g'
    cat "$OUT/s.log" >> "$OUT/tune_ab_fence.log"; rm -f "$OUT/t.json"
  done
done
