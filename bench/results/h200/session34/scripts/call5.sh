#!/usr/bin/env bash
# Session 34, call 5: (1) TunedPlanGpu.SixteenTokenSplits... (failed once in call 4's shards, all
# outputs NaN at M = 13: the poison on the legacy stream landing after the launch on the test's
# non-blocking stream) in three processes side by side, twice, on main's build (.device/base)
# and on this session's, whose test orders the fills first; (2) the recipe on this session's
# build. Carry .device/ps and .device/base.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
T='TunedPlanGpu.SixteenTokenSplitsLeaveTheirMarkedPartialsReadyForTheNextLaunch'
for build in base ps; do
  for round in 1 2; do
    for i in 0 1 2; do
      QGEMM_CACHE_DIR=/tmp/qc_t$build$i timeout 120 .device/$build/qgemm_gpu_tests --gtest_filter="$T" \
        > "$OUT/t_$build$round$i.log" 2>&1 &
    done
    wait
    echo "$build round $round: $(cat "$OUT"/t_$build$round?.log | grep -cE '^\[       OK') OK, $(cat "$OUT"/t_$build$round?.log | grep -cE '^\[  FAILED  \] Tuned') failed"
  done
done
cat "$OUT"/t_*.log | grep -E "Failure|Which is|trace|tuned_plan_test.cpp:2[0-9][0-9]: M" | sort | uniq -c | head
rm -f "$OUT"/t_*.log
BIN=.device/ps OUT=$OUT BENCH_TIMEOUT=420 bash scripts/device_run.sh bench:dense_w4a16
