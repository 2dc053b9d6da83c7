#!/usr/bin/env bash
# Session 14 call 4: grouped 2-, 6- and 8-bit codes on the 128-token ws tile (A batches of 64 K).
# (1) Full GPU suite (new: WgmmaGemmGpu.GroupedWideCodesOnThe128TokenWsTile). (2) f8 (before)
# against f16 (now), M = 256 / 512. Prediction: int2/g128 M = 256 78.5 -> ~58 us, the others
# gain 25-35% as the channel formats did.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
B=.device/main14
timeout 420 $B/qgemm_gpu_tests > "$OUT/gpu_suite.log" 2>&1; echo "== gpu suite rc=$?"
grep -E "^\[  (PASSED|FAILED) |tests ran|Failure" "$OUT/gpu_suite.log" | head -20
for w in int2/g128/bf16 int6/g128/bf16 int8/g128/bf16 uint8/g128/bf16/zp; do
  s=5; case $w in *int8*) s=4;; esac
  timeout 120 $B/qgemm tune --n 8192 --k 8192 --weight $w --m 256,512 \
    --tiles "w8x1 t1 f8 s5 k128 waves1 ws;w8x1 t1 f16 s$s k128 waves1 ws" --out "$OUT/t.json" > "$OUT/tune_${w//\//_}.log" 2>&1
  echo "== $w rc=$?"; grep -E "^(candidate|mma_gemm)|wrong|rror" "$OUT/tune_${w//\//_}.log" | head -5
done
tar czf "$OUT/call4_logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log) && rm -f "$OUT"/tune_*.log "$OUT/t.json"
