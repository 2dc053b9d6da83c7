#!/usr/bin/env bash
# Branches ws-tma and ws-alt, one device call (~7 min): the warp-specialized pipeline.
#   .device/tma  TMA activation tiles; tiles without group scales keep wgmmas in flight across
#                stages (slots given back one stage later)
#   .device/alt  the same, and the two compute warpgroups take turns on the tensor cores
# First the full GPU suite of $SUITE_BIN (default .device/alt, which has both changes), then
# `qgemm tune` of the ws tiles with every binary in $BINS (default "bin tma alt": main first),
# $ROUNDS rounds, same session; then, with NCU=1, the stall samples of alt's M = 64 and 256
# kernels (scripts/sass_stalls.py reads them). Everything but stdout goes into one archive.
set -u
OUT=${OUT:-/tmp/qgemm-out}
SUITE_BIN=${SUITE_BIN:-.device/alt}
mkdir -p "$OUT"
export QGEMM_CACHE_DIR=${QGEMM_CACHE_DIR:-/tmp/qgemm-cache}
if [ -n "$SUITE_BIN" ]; then
  timeout 300 "$SUITE_BIN/qgemm_gpu_tests" > "$OUT/suite_$(basename "$SUITE_BIN").log" 2>&1
  echo "full GPU suite of $SUITE_BIN rc=$?"
  grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/suite_$(basename "$SUITE_BIN").log" | head -20
fi
# int4/g128: the default ws tiles and a 16-token ws tile (M = 16 has no ws tile yet);
# int8/channel: one stage more too, for the slots given back later.
int4_tiles='w8x1 t1 f2 s6 k128 waves1 ws;w8x1 t1 f8 s6 k128 waves1 ws;w8x1 t1 f16 s5 k128 waves1 ws'
int8_tiles='w8x1 t1 f8 s5 k128 waves1 ws;w8x1 t1 f8 s6 k128 waves1 ws'
for round in $(seq 1 "${ROUNDS:-1}"); do
  for b in ${BINS:-bin tma alt}; do
    for spec in "int4/g128/bf16|16,64,256,1024|$int4_tiles" "int8/channel/bf16|64,256|$int8_tiles"; do
      IFS='|' read -r w ms tiles <<< "$spec"
      name="tune_${b}_${w//\//_}_$round"
      timeout 60 ".device/$b/qgemm" tune --n 8192 --k 8192 --weight "$w" --m "$ms" --tiles "$tiles" \
        --out "$OUT/$name.json" > "$OUT/$name.log" 2>&1
      echo "== $w $b round $round rc=$?"
      grep -A4 "^candidate" "$OUT/$name.log" | grep -E "^(candidate|mma_gemm|expand)"
    done
  done
done
if [ "${NCU:-0}" = 1 ]; then
  BIN=.device/alt NCU_SRC_M="64 256" OUT=$OUT scripts/device_run.sh ncusrc | tail -4
fi
# Fewer files come back from a device call than this writes: one archive of everything.
(cd "$OUT" && tar czf ws_pipeline_logs.tgz -- *.log *.csv *.json 2>/dev/null &&
  rm -f -- *.log *.csv *.json)
