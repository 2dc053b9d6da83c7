#!/usr/bin/env bash
# A/B of two or more builds on one recipe, on the GPU machine, within one call:
#
#   scripts/ab.sh RECIPE NAME=DIR [NAME=DIR ...]
#
# DIR holds a `qgemm` binary (built here and carried, e.g. .device/base and .device/new). Each
# round runs `qgemm bench RECIPE` once per build, odd rounds in the order given and even ones in
# reverse (so drifting clocks hit each build alike); every run measures its own cuBLAS baseline,
# and the comparison is of each row's ratio to that baseline, the median over rounds.
# Environment:
#   AB_BACKENDS  backends to time (default jit,cublas-bf16)
#   AB_ROUNDS    rounds (default 1)
#   AB_BASELINE  the baseline the ratios use (default cublas-bf16)
#   OUT          where the JSON reports and logs go (default /tmp/qgemm-ab)
#   AB_CACHE     kernel cache prefix: build NAME uses AB_CACHE-NAME (default $TMPDIR/qgemm-ab-cache;
#                `qgemm jit warm RECIPE --arch sm_90a` fills one ahead of time)
# Prints, per problem and M, each build's median and ratio, and the change of the ratio
# against the first build; rows more than 3% worse are marked. Exits non-zero when a run fails.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 RECIPE NAME=DIR [NAME=DIR ...]" >&2
  exit 2
fi
recipe=$1
shift
[ -f "$recipe" ] || { echo "ab.sh: no recipe '$recipe'" >&2; exit 2; }
out=${OUT:-/tmp/qgemm-ab}
mkdir -p "$out"
rounds=${AB_ROUNDS:-1}
reports=()
builds=("$@")
for round in $(seq 1 "$rounds"); do
  # Even rounds go in reverse order, so that drift over the run falls on every build alike.
  order=("${builds[@]}")
  if ((round % 2 == 0)); then
    order=()
    for ((i = ${#builds[@]} - 1; i >= 0; --i)); do order+=("${builds[$i]}"); done
  fi
  for build in "${order[@]}"; do
    name=${build%%=*} dir=${build#*=}
    [ -x "$dir/qgemm" ] || { echo "ab.sh: '$dir/qgemm' is not an executable" >&2; exit 2; }
    report="$out/ab_${name}_r$round.json"
    echo "== round $round: $name ($dir)"
    QGEMM_CACHE_DIR="${AB_CACHE:-${TMPDIR:-/tmp}/qgemm-ab-cache}-$name" "$dir/qgemm" bench "$recipe" \
      --backend "${AB_BACKENDS:-jit,cublas-bf16}" --no-peaks --out "$report" \
      > "$out/ab_${name}_r$round.log" 2>&1 || { tail -n 20 "$out/ab_${name}_r$round.log"; exit 1; }
    reports+=("$name=$report")
  done
done
python3 "$(dirname "$0")/ab_compare.py" --baseline "${AB_BASELINE:-cublas-bf16}" "${reports[@]}"
