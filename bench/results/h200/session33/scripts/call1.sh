#!/usr/bin/env bash
# Session 33, call 1: session 32's prepared next_call.sh (split-K reproducibility test, the qdq
# patch's tests and A/B, the ws decomposition). Carry .device/next and .device/parts.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
bash bench/results/h200/session32/scripts/next_call.sh 2>&1 | tee "$OUT/call1.log"
