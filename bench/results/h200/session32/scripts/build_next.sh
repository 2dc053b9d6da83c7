#!/usr/bin/env bash
# Builds everything next_call.sh carries (session 32, for the next device time), on the CPU
# machine, from a configured build/ of main:
#   .device/next/main  main's qgemm and qgemm_gpu_tests
#   .device/next/qdq   the same with ../patches/qdq-vector-dequant.patch (a worktree of HEAD)
#   .device/parts/*    the ws decomposition variants (build_parts_diag.sh)
set -euo pipefail
cd "$(dirname "$0")/../../../../.."
root=$PWD
ninja -C build qgemm tests/qgemm_gpu_tests > /dev/null
mkdir -p .device/next/main .device/next/qdq
cp build/qgemm build/tests/qgemm_gpu_tests .device/next/main/
wt=/tmp/qgemm-qdq
if [ ! -d "$wt" ]; then
  git worktree add -f --detach "$wt" HEAD
  git -C "$wt" apply "$root/bench/results/h200/session32/patches/qdq-vector-dequant.patch"
fi
cmake -S "$wt" -B "$wt/build" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
ninja -C "$wt/build" qgemm tests/qgemm_gpu_tests > /dev/null
cp "$wt/build/qgemm" "$wt/build/tests/qgemm_gpu_tests" .device/next/qdq/
bash bench/results/h200/session32/scripts/build_parts_diag.sh
du -sh .device/next .device/parts
