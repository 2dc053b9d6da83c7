#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang in build-fuzz/ (ASan + UBSan) and runs each
# for a while:
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# SECONDS_PER_TARGET defaults to 60; TARGETs default to all of them (weight_spec act_spec recipe
# tuning_table cache_entry safetensors). Each target reads its seeds from fuzz/corpus/<target>/ and keeps
# what it finds in build-fuzz/corpus/<target>/, so the committed corpus stays as it is and later
# runs go on from earlier ones. Crashing inputs land in build-fuzz/artifacts/<target>/; replay
# one with build-fuzz/fuzz/<target>_fuzzer FILE.
# Environment:
#   QGEMM_FUZZ_JOBS  targets run at once (default: the number of CPUs)
# Prints the executions per target and in total; exits non-zero when a target crashes, leaks,
# hangs or runs out of memory.
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets=(weight_spec act_spec recipe tuning_table cache_entry safetensors)
seconds=60
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi
targets=("$@")
((${#targets[@]})) || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  [ -d "fuzz/corpus/$t" ] || {
    echo "fuzz.sh: unknown target '$t'; targets: ${all_targets[*]}" >&2
    exit 2
  }
done
jobs=${QGEMM_FUZZ_JOBS:-$(nproc)}

scripts/setup.sh --packages-only --fuzz
# -O1 keeps the build short on small CI machines; -g1 gives crash reports their lines.
cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DQGEMM_BUILD_FUZZERS=ON \
  -DQGEMM_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" >/dev/null
ninja -C build-fuzz qgemm_fuzzers

export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

# Runs target $1; its output goes to build-fuzz/logs/$1.log and its exit status to .status.
run_target() {
  local t=$1 status=0 dict=()
  [ -f "fuzz/$t.dict" ] && dict=("-dict=fuzz/$t.dict")
  mkdir -p "build-fuzz/corpus/$t" "build-fuzz/artifacts/$t" build-fuzz/logs
  # The first directory takes new inputs; fuzz/corpus/<t> is only read. A slow input (over 25 s)
  # is a hang and fails the run like a crash.
  "build-fuzz/fuzz/${t}_fuzzer" -max_total_time="$seconds" -timeout=25 -print_final_stats=1 \
    -artifact_prefix="build-fuzz/artifacts/$t/" "${dict[@]}" \
    "build-fuzz/corpus/$t" "fuzz/corpus/$t" >"build-fuzz/logs/$t.log" 2>&1 || status=$?
  echo "$status" >"build-fuzz/logs/$t.status"
}

echo "fuzz.sh: ${targets[*]}, ${seconds} s each, ${jobs} at a time"
running=0
for t in "${targets[@]}"; do
  if ((running >= jobs)); then
    wait -n
    running=$((running - 1))
  fi
  run_target "$t" &
  running=$((running + 1))
done
wait

failed=()
total=0
for t in "${targets[@]}"; do
  log="build-fuzz/logs/$t.log"
  status=$(cat "build-fuzz/logs/$t.status")
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  execs=${execs:-0}
  total=$((total + execs))
  corpus=$(find "build-fuzz/corpus/$t" -type f | wc -l)
  if ((status == 0)); then
    printf '%-14s %12d executions  %5d corpus inputs  ok\n' "$t" "$execs" "$corpus"
  else
    printf '%-14s %12d executions  FAILED (exit %d), log %s\n' "$t" "$execs" "$status" "$log"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|artifact_prefix|Test unit written)' "$log" \
      | head -20 || true
    failed+=("$t")
  fi
done
printf '%-14s %12d executions\n' total "$total"
if ((${#failed[@]})); then
  echo "fuzz.sh: failed: ${failed[*]}" >&2
  exit 1
fi
