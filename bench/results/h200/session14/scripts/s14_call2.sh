#!/usr/bin/env bash
# Session 14 call 2. (1) ws-depth (branch ws-depth, checks on): QGEMM_EXP 4/8 = wgmma wait depth
# 2/3 inside a stage, 16 = two-unit batches. Prediction: f8 M = 64 (4 batches per stage) gains
# 0-5% with depth if decode latency shows between batches; f16 M = 256 unchanged (2 batches per
# stage, the stage-end drain is the same). (2) M = 4096 expansion: clocks and power while the bench
# runs (nvidia-smi every 50 ms), jit then cuBLAS. Prediction: if jit's slow samples (839 against a
# min of 727) are a clock effect, the SM clock drops during jit's graph replays.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_DISABLE_DISK_CACHE=1
tiles='w8x1 t1 f8 s3 k256 waves1 ws;w8x1 t1 f16 s5 k128 waves1 ws'
for e in 0 4 8 16 20; do
  QGEMM_EXP=$e timeout 90 .device/depth/qgemm tune --n 8192 --k 8192 --weight int4/g128/bf16 --m 64,256 \
    --tiles "$tiles" --out "$OUT/t.json" > "$OUT/depth_$e.log" 2>&1
  echo "== depth EXP=$e rc=$?"; grep -E "^(candidate|mma_gemm)|wrong|rror" "$OUT/depth_$e.log" | head -6
done
unset QGEMM_DISABLE_DISK_CACHE
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader -lms 50 > "$OUT/smi.csv" 2>&1 &
SMI=$!
timeout 240 .device/main13/qgemm bench .device/large_m_probe.yaml --no-peaks --out "$OUT/probe.json" > "$OUT/probe.log" 2>&1
echo "== probe rc=$?"; kill $SMI
grep -E "jit|cublas" "$OUT/probe.log" | head -12
python3 - "$OUT/smi.csv" <<'P'
import sys
rows=[l.strip().split(', ') for l in open(sys.argv[1]) if l.count(',')>=5]
print(len(rows),"samples")
for r in rows[::max(1,len(rows)//60)]: print(' '.join(r))
P
tar czf "$OUT/call2_logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log smi.csv) && rm -f "$OUT"/*.log "$OUT"/t.json
