#!/usr/bin/env bash
# Session 24, call 6: why the bench times uint4/zp ~2% above `qgemm tune` while int4 agrees.
# The two-format M = 1 bench with its default rotation (300 MB: 9-10 launches per graph), then
# with 512 MiB (16 copies, as tune), then `qgemm tune` of both, same session.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s24
for r in m1_pair m1_pair_rot; do
  QGEMM_CACHE_DIR=/tmp/qc timeout 60 $D/qgemm_sel bench $D/$r.yaml --out "$OUT/$r.json" > "$OUT/$r.log" 2>&1
  echo "$r rc=$?"; grep -E "^ +1 jit|^u|^i" "$OUT/$r.log"
done
export QGEMM_NO_PDL=1
for w in uint4/g128/bf16/zp int4/g128/bf16; do
  QGEMM_CACHE_DIR=/tmp/qc timeout 40 $D/qgemm_sel tune --n 8192 --k 8192 --weight $w --m 1 --out "$OUT/t.json" > "$OUT/tune_$(echo $w | tr / _).log" 2>&1
  echo "tune $w rc=$?"; grep -E "^1 |device" "$OUT/tune_$(echo $w | tr / _).log"
done
