#!/usr/bin/env bash
# Session 32, call 4: diagnostic (branch s32-wg1-delay-diag). The ws tile's second compute
# warpgroup starts 800 / 1600 cycles late (d800, d1600), against main (4af1271): if the two
# warpgroups' stage-end drains falling together hold the tensor pipe idle, the delayed builds
# are faster at M = 256 (a 128-K stage is ~1700 cycles there). `qgemm tune`, plain, two rounds.
# Then main's 16-token tile variants at 8192^2 M = 16.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s32
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
export QGEMM_NO_PDL=1
run() {  # bin tag weight m tiles
  QGEMM_CACHE_DIR=/tmp/qc_$2 timeout 90 $1 tune --n 8192 --k 8192 --weight $3 --m $4 --tiles "$5" \
    --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$2 $3 M=$4 rc=$? :: $(grep -E '^mma_gemm|^expand|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/tune_call4.log"; rm -f "$OUT/t.json"
}
WS="w8x1 t1 f16 s5 k128 ws"
for round in 1 2; do
  for b in main d800 d1600; do
    bin=$D/qgemm; [ $b != main ] && bin=$D/$b/qgemm
    run $bin $b int4/g128/bf16 256,1024 "$WS"
    run $bin $b int4/channel/bf16 256 "$WS"
  done
done
F="w4x1 t1"
run $D/qgemm main int4/g128/bf16 16 "$F f2 s2 k512 waves4;$F f2 s2 k512 waves4 splits2;$F f2 s2 k512 waves4 splits4;$F f2 s4 k256 waves4;$F f1 s2 k512 waves4;$F f1 s4 k256 waves4"
