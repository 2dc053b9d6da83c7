#!/usr/bin/env bash
# For the session after 36, first device call (~350 s): what session 36 could not run on the
# TMA planner. The planned-layer GPU suite in full (call 4 reached 22 of its 120 cases), then
# `qgemm tune` of the planner rules left unmeasured: the 129-256 fill rule at 6144 and 10240
# rows (128-token TMA tile against the 256-token one), 8-bit codes at 3072 tokens (hand-off
# from 2049), 2-bit codes on the TMA tiles, fp16 layers at 65-128 tokens. Build with
# scripts/setup.sh, copy build/qgemm and build/tests/qgemm_gpu_tests into .device/next, carry
# .device/next.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
B=.device/next
t0=$(date +%s)
QGEMM_CACHE_DIR=/tmp/qc_next timeout 260 $B/qgemm_gpu_tests \
  --gtest_filter='Formats/MmaGemmGpuTest.*' > "$OUT/gpu_next.log" 2>&1
echo "gpu tests rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED) |tests ran|FAILED|Failure" "$OUT/gpu_next.log" | head -20
export QGEMM_NO_PDL=1 QGEMM_CACHE_DIR=/tmp/qc_next_tune
run() {  # weight m tiles n k [extra]
  timeout 120 $B/qgemm tune --n $4 --k $5 --weight $1 --m $2 --tiles "$3" --repetitions 21 \
    --out "$OUT/t.json" ${6:-} > "$OUT/s.log" 2>&1
  echo "$1 M=$2 N=$4 K=$5 ${6:-} rc=$?"
  grep -E "^mma_gemm|^expand|error|fail" "$OUT/s.log" | sed 's/  */ /g'
  cat "$OUT/s.log" >> "$OUT/tune_next.log"; rm -f "$OUT/t.json"
}
F16="w8x1 t1 f16 s5 k128 waves2 ws ps tma"
F32="w8x1 t1 f32 s6 k64 waves1 ws ps tma"
run int4/g128/bf16 160,256 "$F16;$F32" 10240 8192
run int4/g128/bf16 160,256 "$F16;$F32" 6144 8192
run int8/channel/bf16 2048,3072,4096 "$F32" 8192 8192
run int2/g128/bf16 128,256,512,1024 "w8x1 t1 f16 s5 k128 waves2 ws ps;w8x1 t1 f16 s5 k128 waves2 ws ps tma" 8192 8192
run int4/g128/fp16 96,128 "w8x1 t1 f16 s5 k128 waves2 ws;w8x1 t1 f16 s5 k128 waves2 ws tma" 8192 8192 "--act fp16 --out-type fp16"
echo "total $(( $(date +%s) - t0 )) s"
