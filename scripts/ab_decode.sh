#!/usr/bin/env bash
# Device-side A/B of timings in one session, on bench/recipes/${AB_RECIPE:-decode_tune}.yaml.
#
#   AB_RUNS='name binary [VAR=VALUE;VAR=VALUE...]|...'   one run per '|'-separated entry; the
#            environment assignments (';'-separated, values may hold spaces) apply to that run.
#   Without AB_RUNS: .device/bin/qgemm_old (when present) against .device/bin/qgemm, then one run
#   of .device/bin/qgemm per decode tile in AB_TILES ('|'-separated tile texts for bucket 0,
#   which on Hopper runs M <= 8 only; bucket 1 runs 9-32 there).
#
# Example: AB_RUNS='main .device/bin/qgemm|partial .device/bin/qgemm QGEMM_SPLIT_PARTIAL_WAVES=1;
#   QGEMM_MMA_BUCKET0=w4x1 t1 f1 s4 k256 waves4' scripts/ab_decode.sh
# Logs and JSON go to $OUT/ab_<name>.{log,json}; the jit rows are printed.
set -u
OUT=${OUT:-/tmp/qgemm-out}
RECIPE=bench/recipes/${AB_RECIPE:-decode_tune}.yaml
if [ ! -f "$RECIPE" ]; then
  echo "ab_decode.sh: no recipe $RECIPE (AB_RECIPE names a file in bench/recipes/, without .yaml)"
  exit 2
fi
mkdir -p "$OUT"

run() {  # name binary [VAR=VALUE...]
  local name=$1 bin=$2
  shift 2
  echo "== $name $*"
  if [ ! -x "$bin" ]; then
    echo "ab_decode.sh: run '$name': '$bin' is not an executable file; skipped"
    return
  fi
  env "$@" QGEMM_CACHE_DIR=/tmp/qgemm-ab "$bin" bench "$RECIPE" --out "$OUT/ab_$name.json" \
    > "$OUT/ab_$name.log" 2>&1
  grep -E "^\s+[0-9]+ jit|N=" "$OUT/ab_$name.log"
}

if [ -n "${AB_RUNS:-}" ]; then
  IFS='|' read -ra entries <<< "$AB_RUNS"
  for entry in "${entries[@]}"; do
    read -r name bin rest <<< "$entry"
    assignments=()
    if [ -n "${rest:-}" ]; then IFS=';' read -ra assignments <<< "$rest"; fi
    # Trim the blanks around each assignment.
    for i in "${!assignments[@]}"; do
      a=${assignments[$i]}
      a=${a#"${a%%[![:space:]]*}"}
      assignments[$i]=${a%"${a##*[![:space:]]}"}
    done
    run "$name" "$bin" "${assignments[@]}"
  done
  exit 0
fi

[ -x .device/bin/qgemm_old ] && run old .device/bin/qgemm_old
run new .device/bin/qgemm
i=0
IFS='|' read -ra tiles <<< "${AB_TILES:-}"
for t in "${tiles[@]}"; do
  i=$((i + 1))
  run "tile$i" .device/bin/qgemm "QGEMM_MMA_BUCKET0=$t"
done
