#!/usr/bin/env bash
# Session 18: random format sweep (seeded list .device/sweep/cmds.txt, made on the CPU box by
# /tmp/sweep/gen2.py: weight types int1-8, uint1-8 with integer / float zero points, e2m1 ..
# e5m2, channel / group 16-1024 / block / tensor scales in fp16, bf16, fp32, e4m3, ue8m0,
# optional global; odd N and K; M 1..1100; bf16 / fp16 / quantized activations; optional bias).
# Each case: qgemm verify --backend jit (auto where jit cannot run it) against the CPU reference.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qc_sweep
xargs -P 6 -L 1 bash .device/sweep/one.sh < .device/sweep/cmds.txt > "$OUT/format_sweep.log" 2>&1
echo "== sweep: $(grep -c '^PASS' "$OUT/format_sweep.log") pass, $(grep -cE '^(FAIL|RC)' "$OUT/format_sweep.log") not"
grep -E '^(FAIL|RC)' -A12 "$OUT/format_sweep.log" | head -80
awk '/^[A-Z]/{print $3}' "$OUT/format_sweep.log" | sort | uniq -c
