#!/usr/bin/env bash
# Session 19 call 3: branch ws-kw2 (main + 64-row ws tiles whose two compute warpgroups take
# alternate stages; .device/kw2). (1) WgmmaGemmGpu (the table has a kw2 tile, the odd shapes too)
# (2) tune kw2 against the default ws tiles at M = 33..128 on several shapes.
# Prediction: int4/g128 8192^2 M = 64 22.6 -> ~20.5 us (no cluster sum, twice the activation
# copies per CTA); M = 128 (f16 kw2, 128 CTAs unsplit) maybe faster than 36.5.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qc_kw2 QGEMM_NO_PDL=1
B=.device/kw2
timeout 200 $B/qgemm_gpu_tests --gtest_filter='WgmmaGemmGpu*' > "$OUT/kw2_tests.log" 2>&1
rc=$?; echo "== kw2 tests rc=$rc"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/kw2_tests.log" | head -20
[ $rc -eq 0 ] || exit 1
T8="w8x1 t1 f8 s6 k128 waves1 ws"; T16="w8x1 t1 f16 s5 k128 waves1 ws"
K8="w4x1 t1 f8 s6 k128 waves1 ws kw2"; K8b="w4x1 t1 f8 s8 k128 waves1 ws kw2"
K16="w4x1 t1 f16 s5 k128 waves1 ws kw2"; K16b="w4x1 t1 f16 s4 k128 waves1 ws kw2"
tune() {  # n k weight ms tiles
  timeout 120 $B/qgemm tune --n $1 --k $2 --weight $3 --m $4 --tiles "$5" --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "== $3 N=$1 K=$2 rc=$?"; grep -E "^(candidate|mma_gemm)|wrong|rror" "$OUT/s.log" | head -12
  cat "$OUT/s.log" >> "$OUT/kw2_tune.log"
}
tune 8192 8192 int4/g128/bf16 33,48,64,96,128 "$T8;$K8;$K8b;$T16;$K16;$K16b"
tune 8192 8192 uint4/g128/bf16/zp 64,128 "$T8;$K8;$T16;$K16"
tune 8192 8192 int8/channel/bf16 64,128 "$T8;$K8;$T16;$K16"
tune 8192 8192 int3/g128/bf16 64,128 "$T8;$K8"
tune 28672 8192 int4/g128/bf16 64,128 "$T8;$K8;$T16;$K16"
tune 14336 4096 int4/g128/bf16 64,128 "$T8;$K8;$T16;$K16"
tune 4096 14336 int4/g128/bf16 64,128 "$T8;$K8;$T16;$K16"
tune 4096 4096 int4/g128/bf16 64,128 "$T8;$K8;$T16;$K16"
rm -f "$OUT/s.log" "$OUT/t.json"
