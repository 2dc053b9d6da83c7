#!/usr/bin/env bash
# Device-side A/B of decode timings: .device/bin/qgemm_old (a baseline build) against
# .device/bin/qgemm, and the new build with each tile given in AB_TILES ('|'-separated tile
# texts for the decode bucket), on bench/recipes/decode_tune.yaml in one session.
set -u
OUT=${OUT:-/tmp/qgemm-out}
mkdir -p "$OUT"
run() {  # name binary [env...]
  local name=$1 bin=$2; shift 2
  echo "== $name"
  env "$@" QGEMM_CACHE_DIR=/tmp/qgemm-ab "$bin" bench bench/recipes/decode_tune.yaml \
    --out "$OUT/ab_$name.json" > "$OUT/ab_$name.log" 2>&1
  grep -E "^\s+(1|16) jit|N=" "$OUT/ab_$name.log"
}
[ -x .device/bin/qgemm_old ] && run old .device/bin/qgemm_old
run new .device/bin/qgemm
i=0
IFS='|' read -ra tiles <<< "${AB_TILES:-}"
for t in "${tiles[@]}"; do
  i=$((i + 1))
  echo "   tile: $t"
  run "tile$i" .device/bin/qgemm "QGEMM_MMA_BUCKET0=$t"
done
