#!/usr/bin/env bash
# Session 30, call 3: `qgemm bench early_ab.yaml` (jit plain and programmatic), base 6fe991f
# (the ws copy warpgroup loads the whole ring's weights before the wait) against fs (only the
# first stage's), two interleaved rounds.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s30; S=bench/results/h200/session30/scripts
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
for r in 1 2; do
  for b in new fs; do
    QGEMM_CACHE_DIR=/tmp/qc_ab_$b timeout 200 $D/$b/qgemm bench $S/early_ab.yaml --no-peaks \
      --out "$OUT/early_ab_${b}_$r.json" > "$OUT/early_ab_${b}_$r.log" 2>&1
    echo "bench $b round $r rc=$?"
  done
done
python3 $S/ab_table.py "$OUT"/early_ab_new_1.log "$OUT"/early_ab_fs_1.log "$OUT"/early_ab_new_2.log "$OUT"/early_ab_fs_2.log
