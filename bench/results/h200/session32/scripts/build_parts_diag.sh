#!/usr/bin/env bash
# Builds the binaries of the ws-tile decomposition diagnostic (`../patches/s32-ws-parts-diag.patch`,
# not for main) on the CPU machine: a worktree of HEAD with the patch, built once (~2 min for the
# qgemm target), then one relink per
# variant with its defines put at the top of kernels/dense/mma_gemm.cuh (the kernels are
# embedded text). Output: .device/parts/{main,nodecode,nocopies,neither}/qgemm.
#   nodecode  QGEMM_DIAG_WS_NO_DECODE: the raw code words go into the wgmmas as A
#   nocopies  QGEMM_DIAG_WS_NO_COPIES: the copy warpgroup only hands the ring's slots over
# Results are wrong on purpose; `qgemm tune` times them anyway. Run with next_parts.sh.
set -euo pipefail
cd "$(dirname "$0")/../../../../.."
root=$PWD wt=/tmp/qgemm-parts-diag
if [ ! -d "$wt" ]; then
  git worktree add -f --detach "$wt" HEAD
  git -C "$wt" apply "$root/bench/results/h200/session32/patches/s32-ws-parts-diag.patch"
fi
cmake -S "$wt" -B "$wt/build" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
ninja -C "$wt/build" qgemm > /dev/null
mkdir -p "$root/.device/parts/main"
ninja -C build qgemm > /dev/null  # main's own build (build/ must be configured)
cp build/qgemm "$root/.device/parts/main/"
header="$wt/kernels/dense/mma_gemm.cuh"
cp "$header" /tmp/mma_gemm.cuh.orig
for variant in "nodecode QGEMM_DIAG_WS_NO_DECODE" "nocopies QGEMM_DIAG_WS_NO_COPIES" \
               "neither QGEMM_DIAG_WS_NO_DECODE QGEMM_DIAG_WS_NO_COPIES"; do
  set -- $variant
  name=$1; shift
  { for d in "$@"; do echo "#define $d 1"; done; cat /tmp/mma_gemm.cuh.orig; } > "$header"
  ninja -C "$wt/build" qgemm > /dev/null
  mkdir -p "$root/.device/parts/$name"
  cp "$wt/build/qgemm" "$root/.device/parts/$name/"
done
cp /tmp/mma_gemm.cuh.orig "$header"
ls -la "$root"/.device/parts/*/qgemm
