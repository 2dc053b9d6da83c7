#!/usr/bin/env bash
# Session 28, call 2 (branch marked-partials): marked partials on the 16-token tile, L1
# (per-thread float4 layout, as call 1) against L3 (the same with __nanosleep while a partial is
# still marked); L3's split counts by shape; GPU tests and a random sweep at 9..32 tokens on L3.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s28
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
export QGEMM_NO_PDL=1 QGEMM_MARKED_PARTIALS=2
run() {  # layout weight n k m tiles
  QGEMM_MARKED_LAYOUT=$1 QGEMM_CACHE_DIR=/tmp/qc_s28_L$1 timeout 60 $D/qgemm tune --n $3 --k $4 --weight $2 --m $5 --tiles "$6" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "L$1 $2 ${3}x$4 M=$5 rc=$? :: $(grep -E '^mma_gemm|wrong|rror|^[0-9]+ ' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/tune_L$1.log"; rm -f "$OUT/t.json"
}
S="w4x1 t1 f2 s4 k256 waves4"; L="w4x1 t1 f2 s2 k512 waves4"
for l in 1 3; do
  run $l int4/g128/bf16 4096 4096 16 "$S splits2;$S splits3;$S splits4"
  run $l int4/g128/bf16 5120 8192 16 "$S splits2;$S splits3"
done
run 3 int4/g128/bf16 8192 8192 16 "$L splits2;$L splits3"
run 3 int4/g128/bf16 8192 28672 16 "$L splits2;$L splits3"
run 3 int4/g128/bf16 4096 14336 16 "$L splits3;$L splits4;$L splits6"
run 3 int4/g128/bf16 6144 8192 16 "$L splits2;$L splits3;$L splits4"
run 3 int4/g128/bf16 14336 8192 16 "$S splits1;$S splits2"
run 3 int4/g128/bf16 10240 8192 16 "$S splits2;$S splits3"
run 3 int4/g128/bf16 8192 8192 32 "$L splits1;$L splits2"
run 3 int4/g128/bf16 8192 8192 9 "$L splits2;$L splits3"
run 3 uint4/g128/bf16/zp 8192 8192 16 "$S splits2;$S splits3"
QGEMM_MARKED_LAYOUT=3 QGEMM_CACHE_DIR=/tmp/qc_s28t timeout 150 $D/qgemm_gpu_tests --gtest_brief=1 \
  --gtest_filter='TunedPlanGpu.*:MmaGemmGpu.*' > "$OUT/gpu_L3.log" 2>&1
echo "gpu L3 rc=$? :: $(tail -3 "$OUT/gpu_L3.log" | tr '\n' '|')"
export QGEMM_MARKED_LAYOUT=3 QGEMM_CACHE_DIR=/tmp/qc_sweep
timeout 150 xargs -P 12 -L 1 bash $D/one.sh < $D/sweep_cmds.txt > "$OUT/sweep_m9_32.log" 2>&1
echo "== $(grep -c '^PASS' "$OUT/sweep_m9_32.log") pass, $(grep -cE '^(FAIL|RC)' "$OUT/sweep_m9_32.log") not, of $(wc -l < $D/sweep_cmds.txt)"
grep -E '^(FAIL|RC)' -A12 "$OUT/sweep_m9_32.log" | head -30
awk '/^[A-Z]/{print $3}' "$OUT/sweep_m9_32.log" | sort | uniq -c
