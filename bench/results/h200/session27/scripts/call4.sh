#!/usr/bin/env bash
# Session 27, call 4: main + the paired decode cluster (8-token tile split in two, summed in a
# cluster). GPU tests of plans and the mma kernels; a random format sweep at 1..8 tokens with
# plain launches (36 of its 248 cases plan a cluster pair); A/B of the rule against the global
# fix-up (QGEMM_SPLIT_CLUSTER=0), `qgemm tune`'s heuristic-plan time.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
S=.device/s27
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
QGEMM_CACHE_DIR=/tmp/qc_s27t timeout 200 $S/qgemm_gpu_tests --gtest_brief=1 --gtest_filter='TunedPlanGpu.*:MmaGemmGpu.*' > "$OUT/gpu_tests.log" 2>&1
echo "gpu tests rc=$? :: $(tail -3 "$OUT/gpu_tests.log" | tr '\n' ' ')"
export QGEMM_CACHE_DIR=/tmp/qc_sweep
QGEMM_NO_PDL=1 timeout 240 xargs -P 12 -L 1 bash $S/one.sh < $S/sweep_cmds.txt > "$OUT/format_sweep_m1_8_plain.log" 2>&1
echo "== $(grep -c '^PASS' "$OUT/format_sweep_m1_8_plain.log") pass, $(grep -cE '^(FAIL|RC)' "$OUT/format_sweep_m1_8_plain.log") not, of $(wc -l < $S/sweep_cmds.txt)"
grep -E '^(FAIL|RC)' -A12 "$OUT/format_sweep_m1_8_plain.log" | head -30
awk '/^[A-Z]/{print $3}' "$OUT/format_sweep_m1_8_plain.log" | sort | uniq -c
run() {  # pdl weight n k
  for c in 0 1; do
    if [ "$1" = plain ]; then export QGEMM_NO_PDL=1; else unset QGEMM_NO_PDL; fi
    QGEMM_SPLIT_CLUSTER=$c QGEMM_CACHE_DIR=/tmp/qc_s27 timeout 100 $S/qgemm tune --n $3 --k $4 --weight $2 --m 1,8 \
      --tiles "w4x1 t1 f1 s4 k256 waves4 splits1" --repetitions 21 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
    echo "$1 cluster=$c $2 ${3}x$4 rc=$? :: $(awk '$1=="1"||$1=="8"{print "M="$1" "$(NF-1)}' "$OUT/s.log" | tr '\n' ' ') $(grep -E 'wrong|rror' "$OUT/s.log" | head -2)"
    cat "$OUT/s.log" >> "$OUT/pair_ab.log"; rm -f "$OUT/t.json"
  done
}
for round in 1 2; do
run plain uint4/g128/bf16/zp 8192 8192
run plain int4/g128/bf16 1000 2048
run plain int4/g128/bf16 5000 2048
run plain uint4/g128/fp16/zp 7000 4096
run plain int4/g128/bf16 8000 6144
run plain int4/g128/bf16 10240 8192
run pdl int8/channel/bf16 10240 8192
done
run plain int3/g64/bf16 5000 2048
run plain int8/channel/bf16 8192 8192
run plain nvfp4 8192 8192
run plain int4/g128/bf16 8192 8192
