#!/usr/bin/env bash
# Session 26, call 1: main (d460443) against branch summing-split-asm2 (both mma.sync decode
# tiles sum on the last split; the acquire wait is one asm statement), `qgemm tune`, plain
# launches, two rounds; then the full GPU suite on the branch.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s26
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
export QGEMM_NO_PDL=1
run() {  # bin weight n k m tiles log
  QGEMM_CACHE_DIR=/tmp/qc_$1 timeout 90 $D/$1 tune --n $3 --k $4 --weight $2 --m $5 --tiles "$6" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 $2 ${3}x$4 M=$5 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/$7"; rm -f "$OUT/t.json"
}
L1="w4x1 t1 f1 s2 k512 waves4"; S1="w4x1 t1 f1 s4 k256 waves4"; L2="w4x1 t1 f2 s2 k512 waves4"
T0=$SECONDS
for round in 1 2; do
for bin in qgemm_main qgemm_branch; do
  run $bin int4/g128/bf16 8192 8192 1 "$L1" ab.log           # 4 splits
  run $bin int4/g128/bf16 28672 8192 1 "$L1" ab.log          # 1 split: must not lose
  run $bin uint4/g128/bf16/zp 8192 8192 1 "$S1" ab.log
  run $bin int4/g128/bf16 8192 8192 16 "$L2" ab.log          # main's 16-token form vs the branch's
done
done
for bin in qgemm_main qgemm_branch; do
  run $bin int3/g128/bf16 8192 8192 1 "$L1" ab.log
  run $bin int8/channel/bf16 8192 8192 1 "w4x1 t1 f1 s3 k256 waves4" ab.log
  run $bin int4/g128/bf16 4096 14336 1 "$L1" ab.log
  run $bin int4/g128/bf16 10240 8192 16 "w4x1 t1 f2 s4 k256 waves4" ab.log
done
echo "A/B took $((SECONDS - T0)) s"
timeout 330 $D/gpu_tests_branch --gtest_brief=1 > "$OUT/gpu_suite_branch.log" 2>&1
echo "suite rc=$?"; grep -E "PASSED|FAILED|tests ran" "$OUT/gpu_suite_branch.log" | tail -8
