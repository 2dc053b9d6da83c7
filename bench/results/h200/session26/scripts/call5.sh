#!/usr/bin/env bash
# Session 26, call 5: tensor-core rate probe (bench/probes/mma_rate.cu): mma.sync m16n8k16
# against wgmma m64nNk16 (A in registers) at the warp counts the decode tiles run.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
timeout 120 .device/s26/mma_rate | tee "$OUT/mma_rate.log"
echo "rc=$?"
