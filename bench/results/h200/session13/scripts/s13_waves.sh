#!/usr/bin/env bash
# Session 13: wave quantization of the ws tiles. N = 10240 (Llama-70B qkv) at M = 256 runs 160
# CTAs on 132 SMs (2 waves, 116 us against 58.8 at N = 8192). Time K splits 1..8 (summed in a
# cluster) for the f16 and f8 ws tiles at M = 128, 256, 512.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qgemm-cache
B=${B:-.device/main12/qgemm}
F16="w8x1 t1 f16 s5 k128 waves1 ws"; F8="w8x1 t1 f8 s6 k128 waves1 ws"
T="$F16;$F16 splits2;$F16 splits3;$F16 splits4;$F16 splits5;$F16 splits6;$F16 splits8;$F8;$F8 splits2;$F8 splits3;$F8 splits4"
timeout 250 $B tune --weight int4/g128/bf16 --m 128,256,512 --n 10240 --k 8192 --tiles "$T" --out "$OUT/tw.json" > "$OUT/tune_waves.log" 2>&1; echo "tune rc=$?"
grep -E "^mma_gemm|^candidate|^[0-9]+ " "$OUT/tune_waves.log"
